"""Batching rules: ember op name -> function that emits the batched op(s).

A rule gets the :class:`BatchContext`, the op, its operands as ``(value, bdim)`` pairs
(``bdim`` is the batch dimension of the value, or None when it is not batched) and the
decoded attributes, and returns ``(value, bdim)`` for each result. Rules move a batch
dimension only when they must: elementwise ops keep it where their operands agree, reductions
and contractions shift their axes around it, and unbatched operands stay unbatched unless the
op needs equal shapes (lax semantics), where they are broadcast (IREE fuses that broadcast).
"""

from __future__ import annotations

from collections.abc import Callable

from ember._mlir import ir, tensor_type, walk
from ember.errors import PassError
from ember.rules.base import OPS, aval_of_type, clone_mapped, decode_attrs, emit, rule_registrar

BATCHING: dict[str, Callable] = {}


batching = rule_registrar(BATCHING)


class BatchContext:
    """Emits ember ops (typed by the dialect's rules) where the batched code goes."""

    def __init__(self, size: int, axis_name: str | None = None):
        self.size, self.axis_name = size, axis_name

    def emit(self, name: str, operands, **attrs) -> list[ir.Value]:
        return emit(name, operands, **attrs)

    def move(self, value, bdim: int, to: int):
        """``value`` with its batch dimension moved from ``bdim`` to ``to``."""
        if bdim == to:
            return value
        perm = list(range(aval_of_type(value.type).ndim))
        perm.insert(to, perm.pop(bdim))
        return self.emit("ember.transpose", [value], permutation=tuple(perm))[0]

    def materialize(self, value, bdim, to: int = 0):
        """``value`` batched at ``to``: moved there, or broadcast if it is not batched."""
        if bdim is not None:
            return self.move(value, bdim, to)
        aval = aval_of_type(value.type)
        shape = list(aval.shape)
        shape.insert(to, self.size)
        dims = [d if d < to else d + 1 for d in range(aval.ndim)]
        return self.emit("ember.broadcast_in_dim", [value], shape=tuple(shape),
                         broadcast_dimensions=tuple(dims))[0]


def shift(axes, bdim: int) -> tuple[int, ...]:
    """Per-example axes as axes of the batched value whose batch dimension is ``bdim``."""
    return tuple(a + (a >= bdim) for a in axes)


# --- elementwise: one rule for every elementwise op (each family registers its ops) --------

def batch_elementwise(ctx: BatchContext, op, inputs, attrs):
    """Operands that agree keep their batch dimension; the others are moved to it or, when
    not batched, broadcast to the batched shape (lax ops need equal shapes)."""
    target = next(b for _, b in inputs if b is not None)
    operands = [ctx.materialize(v, b, target) for v, b in inputs]
    return [(r, target) for r in ctx.emit(op.name, operands, **attrs)]


# --- the engine -------------------------------------------------------------------------------

class Batcher:
    """Expands the ``ember.vmap`` ops of a module's functions, innermost first (the engine of
    ``ember-batch``; ``ember-differentiate`` batches a callee holding a vmap with it)."""

    def __init__(self, module_op):
        self.table = ir.SymbolTable(module_op)
        self.done: set[str] = set()

    def batch_function(self, f) -> set[str]:
        name = ir.StringAttr(f.attributes["sym_name"]).value
        if name in self.done:
            return set()
        self.done.add(name)
        mapped = set()
        # Functions it calls first: a mapped function's ``ember.call`` is batched by inlining
        # its callee's body (control flow's ``_batch_call``), which must hold no
        # ``ember.vmap`` by then.
        for op in [o for o in walk(f.operation) if o.name == "ember.call"]:
            mapped |= self.batch_function(
                self.table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value])
        for op in [o for o in walk(f.operation) if o.name == "ember.vmap"]:
            mapped |= self.replace_vmap(op)
        return mapped

    def replace_vmap(self, op) -> set[str]:
        attrs = decode_attrs(OPS["ember.vmap"], op)
        callee = self.table[attrs["callee"]]
        mapped = {attrs["callee"]} | self.batch_function(callee)   # innermost first
        ctx = BatchContext(attrs["axis_size"], attrs["axis_name"])
        inputs = [(v, None if a < 0 else a) for v, a in zip(op.operands, attrs["in_axes"])]
        with op.location, ir.InsertionPoint(op):
            outs = batch_body(ctx, callee, inputs)
            results = []
            for i, ((v, b), axis) in enumerate(zip(outs, attrs["out_axes"])):
                if axis < 0:
                    if b is not None:
                        raise PassError(
                            f"{op.location}: error: vmap has out_axes=None for output {i}, "
                            "but that output is batched (it depends on a mapped argument); "
                            "give it an out_axes entry")
                    results.append(v)
                else:
                    results.append(ctx.materialize(v, b, axis))
        for old, new in zip(op.results, results):
            old.replace_all_uses_with(new)
        op.erase()
        return mapped


def batched_results(module, callee: str, in_batched, size: int,
                    axis_name: str | None = None) -> list[bool]:
    """Which results of ``callee`` a vmap with the given batched arguments maps (carries a
    batch dimension in): found by batching a scratch copy of ``module`` exactly as the pass
    will, so that the frontend can check ``out_axes`` before anything is compiled.

    Example:
        >>> batched_results(module, "f_per_example", [True, False], 8)   # f(x, w)
        [True, False]
    """
    with module.context, ir.Location.unknown():
        scratch = module.operation.clone()
        try:
            batch = Batcher(scratch)
            func = batch.table[callee]
            batch.batch_function(func)       # nested vmaps inside the callee first
            block = func.regions[0].blocks[0]
            types = [_type_with_batch(a.type, size) if b else a.type
                     for a, b in zip(block.arguments, in_batched)]
            with ir.InsertionPoint(scratch.regions[0].blocks[0]):
                holder = ir.Operation.create("ember.region_holder", regions=1)
            args = holder.regions[0].blocks.append(*types)
            with ir.InsertionPoint(args):
                outs = batch_body(BatchContext(size, axis_name), func, [
                    (v, 0 if b else None) for v, b in zip(args.arguments, in_batched)])
            return [b is not None for _, b in outs]
        finally:
            scratch.erase()


def _type_with_batch(t, size: int):
    a = aval_of_type(t)
    return tensor_type((size,) + tuple(a.shape), a.dtype)


def _value_of(value_bdim):
    return value_bdim[0]


def batch_body(ctx: BatchContext, func, inputs):
    """Emit the batched body of ``func`` (a function, or any op with one region, such as a
    fusion) at the current insertion point; ``inputs`` are the (value, bdim) of its
    arguments. Returns (value, bdim) of its results."""
    block = func.regions[0].blocks[0]
    return batch_block(ctx, block, dict(zip(block.arguments, inputs)))


def batch_block(ctx: BatchContext, block, env: dict):
    """Emit the batched ops of ``block`` (all but its terminator) at the current insertion
    point and return the (value, bdim) of the terminator's operands (``func.return`` or
    ``ember.yield``).

    ``env`` maps values to their batched (value, bdim): the block's arguments and, for the
    block of a region, the values of the enclosing blocks its ops read. It is extended with
    the block's values and is ``ctx.env`` while the rules run, so that rules of region ops
    (see ``ember/dialects/control_flow.py``) can batch their regions' blocks with it.
    """
    outer_env = getattr(ctx, "env", None)
    ctx.env = env
    try:
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "ember.yield"):
                return [env[v] for v in op.operands]
            ins = [env[v] for v in op.operands]
            if all(b is None for _, b in ins) and not _names_axis(op, ctx.axis_name) and \
                    not _uses_batched_from_regions(op, env, ctx.axis_name):
                new = clone_mapped(op, [v for v, _ in ins], env, pick=_value_of)
                for old, r in zip(op.results, new.results):
                    env[old] = (r, None)
                continue
            rule = BATCHING.get(op.name)     # ember.call: batching._call inlines the callee
            if rule is None:
                raise NotImplementedError(
                    f"ember-batch: no batching rule for '{op.name}' (at {op.location})")
            with op.location:
                outs = rule(ctx, op, ins, decode_attrs(OPS[op.name], op)
                            if op.name in OPS else {})
            for old, vb in zip(op.results, outs):
                env[old] = vb
    finally:
        ctx.env = outer_env
    raise PassError(f"{block.owner.location}: error: block has no terminator "
                    "(func.return or ember.yield)")


def callees(op) -> set[str]:
    """The functions that ops in ``op`` (and ``op`` itself) call."""
    return {ir.FlatSymbolRefAttr(o.attributes["callee"]).value for o in walk(op)
            if "callee" in o.attributes}


def _names_axis(op, axis_name) -> bool:
    """Whether ``op`` is a collective over the axis being batched."""
    return axis_name is not None and "axis_name" in op.attributes and \
        op.name != "ember.vmap" and ir.StringAttr(op.attributes["axis_name"]).value == axis_name


def _uses_batched_from_regions(op, env, axis_name=None) -> bool:
    """Whether an op's nested regions read a batched value of the enclosing body or hold a
    collective over the axis being batched."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for nested in walk(inner):
                    if _names_axis(nested, axis_name):
                        return True
                    for v in nested.operands:
                        if v in env and env[v][1] is not None:
                            return True
    return False


