"""Partitioning rules: how an op of a whole-array function runs on one device's block.

``ember.jit(f, in_shardings=...)`` traces ``f`` on the whole arrays; ember-spmd partitions it
over a one-axis mesh of ``n`` devices before copying it per device. Each value is either
whole on every device (replicated, split None) or split in ``n`` equal blocks along one
dimension (split ``d``: device ``i`` holds block ``i``). An op whose operands are all
replicated is copied as it is. Otherwise its rule (``PARTITION``, registered by its family;
every elementwise op shares :func:`partition_elementwise`) emits the op on the blocks and
says how its results are split, adding collectives where the op needs other devices' parts
(a sum over a split dimension: the block's sum, then ``psum``). An op without a rule gets its
split operands gathered whole (``all_gather``) and runs replicated: always right, and only
slower than a rule would be.

Example:
    >>> @partition("transpose")
    ... def _partition_transpose(ctx, op, ins, attrs): ...
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ember._mlir import ir, tensor_type, walk
from ember.errors import PassError
from ember.rules.base import (
    OPS,
    aval_of_type,
    clone_mapped,
    decode_attrs,
    emit,
    is_splat_constant,
    rule_registrar,
)

PARTITION: dict[str, Callable] = {}

partition = rule_registrar(PARTITION, declared=True)


class PartitionContext:
    """The mesh axis (``axis_name``, ``n`` devices) a function is partitioned over."""

    def __init__(self, axis_name: str, n: int):
        self.axis_name, self.n = axis_name, n

    def emit(self, name: str, operands, **attrs) -> list[ir.Value]:
        return emit(name, operands, **attrs)

    def gather(self, value, split):
        """The whole of a value split along ``split`` (None: already whole)."""
        if split is None:
            return value
        return self.emit("ember.all_gather", [value], axis_name=self.axis_name,
                         axis_size=self.n, axis=split, tiled=True)[0]

    def block(self, value, dim: int):
        """This device's block along ``dim`` of a whole (replicated) value: a broadcast along
        ``dim`` (a bias added to a batch) or a splat constant is made at the block's size;
        anything else is sliced."""
        a = aval_of_type(value.type)
        size = a.shape[dim] // self.n
        shape = tuple(size if d == dim else s for d, s in enumerate(a.shape))
        owner = ir.OpResult(value).owner.operation if isinstance(value, ir.OpResult) \
            else None
        if owner is not None and owner.name == "ember.broadcast_in_dim":
            attrs = decode_attrs(OPS[owner.name], owner)
            if dim not in attrs["broadcast_dimensions"]:
                return self.emit(owner.name, [owner.operands[0]], shape=shape,
                                 broadcast_dimensions=attrs["broadcast_dimensions"])[0]
        if owner is not None and is_splat_constant(owner):
            splat = ir.DenseElementsAttr(owner.attributes["value"]).get_splat_value()
            return ir.Operation.create(owner.name, results=[tensor_type(shape, a.dtype)],
                                       attributes={"value": ir.DenseElementsAttr.get_splat(
                                           tensor_type(shape, a.dtype), splat)}).result
        me = self.emit("ember.axis_index", [], axis_name=self.axis_name)[0]
        start = self.emit("ember.mul", [me, self.emit("ember.constant", [], value=np.array(
            size, np.int32))[0]])[0]
        zero = self.emit("ember.constant", [], value=np.zeros((), np.int32))[0]
        starts = [start if d == dim else zero for d in range(a.ndim)]
        return self.emit("ember.dynamic_slice", [value, *starts], slice_sizes=shape)[0]

    def as_split(self, value, split, dim: int):
        """``value`` split along ``dim``: its block if whole, itself if split there, else
        None (split along another dimension)."""
        if split == dim:
            return value
        if split is None:
            return self.block(value, dim)
        return None


def partition_elementwise(ctx: PartitionContext, op, ins, attrs):
    """Blocks in, blocks out, where the split operands agree (whole operands are cut to this
    device's block); split along different dimensions, everything is gathered."""
    dims = {s for _, s in ins if s is not None}
    if len(dims) != 1:
        return None
    (dim,) = dims
    operands = [ctx.as_split(v, s, dim) for v, s in ins]
    return [(r, dim) for r in ctx.emit(op.name, operands, **attrs)]


def partition_function(ctx: PartitionContext, func, in_splits, out_splits, name: str):
    """A new private function ``name``: ``func`` (whole arrays) partitioned, its arguments
    split as ``in_splits`` say and its results made to be split as ``out_splits`` say
    (-1: replicated)."""
    block = func.regions[0].blocks[0]
    ftype = ir.TypeAttr(func.attributes["function_type"]).value
    arg_types = [_local_type(t, s, ctx.n) for t, s in zip(ftype.inputs, in_splits)]
    res_types = [_local_type(t, s, ctx.n) for t, s in zip(ftype.results, out_splits)]
    with ir.InsertionPoint(func):
        new = ir.Operation.create(
            "func.func", regions=1,
            attributes={"sym_name": ir.StringAttr.get(name),
                        "sym_visibility": ir.StringAttr.get("private"),
                        "function_type": ir.TypeAttr.get(ir.FunctionType.get(arg_types,
                                                                             res_types))})
    body = new.regions[0].blocks.append(*arg_types)
    env = {old: (arg, None if s < 0 else s)
           for old, arg, s in zip(block.arguments, body.arguments, in_splits)}
    with ir.InsertionPoint(body):
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                outs = [_to_split(ctx, *env[v], s) for v, s in zip(op.operands, out_splits)]
                ir.Operation.create("func.return", operands=outs)
                break
            with op.location:
                results = _partition_op(ctx, op, env)
            env.update(zip(op.results, results))
    return new


def _partition_op(ctx, op, env):
    ins = [env[v] for v in op.operands]
    inner = _read_from_regions(op, env)
    if all(s is None for _, s in ins) and all(env[v][1] is None for v in inner):
        return [(r, None) for r in _clone(op, [v for v, _ in ins], env)]
    rule = PARTITION.get(op.name)
    if rule is None and op.name in OPS and OPS[op.name].family == "elementwise":
        rule = partition_elementwise
    if rule is not None and not inner:
        out = rule(ctx, op, ins, decode_attrs(OPS[op.name], op))
        if out is not None:
            return out
    # No rule (or none for these splits): the op runs on the whole arrays.
    local = dict(env)
    for v in inner:
        local[v] = (ctx.gather(*env[v]), None)
    return [(r, None) for r in _clone(op, [ctx.gather(v, s) for v, s in ins], local)]


def _clone(op, operands, env):
    return list(clone_mapped(op, operands, env, pick=lambda vs: vs[0]).results)


def _read_from_regions(op, env) -> list:
    """Values of the enclosing function that the op's regions read."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for nested in walk(inner):
                    out += [v for v in nested.operands if v in env and v not in out]
    return out


def _to_split(ctx, value, split, want: int):
    if want < 0:
        return ctx.gather(value, split)
    got = ctx.as_split(value, split, want)
    if got is None:
        got = ctx.block(ctx.gather(value, split), want)
    return got


def split_aval(aval, split: int, n: int):
    """A device's part of ``aval`` split in ``n`` equal blocks along dimension ``split``
    (-1: all of it).

    Example:
        >>> split_aval(ShapedArray((8, 3), np.float32), 0, 4).shape
        (2, 3)
    """
    if split < 0:
        return aval
    return aval._replace(shape=tuple(s // n if d == split else s
                                     for d, s in enumerate(aval.shape)))


def _local_type(t, split: int, n: int):
    a = aval_of_type(t)
    if split >= 0 and (split >= a.ndim or a.shape[split] % n):
        raise PassError(f"cannot split {a.str_short()} along dimension {split} over {n} "
                        "devices")
    local = split_aval(a, split, n)
    return tensor_type(local.shape, local.dtype)
