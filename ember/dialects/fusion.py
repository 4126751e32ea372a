"""``ember.fusion``: a group of ember ops that ``ember-fuse`` decided to compute together.

``%r:n = ember.fusion(%a, %b, ...) {kind = "loop"}`` holds one region with one block whose
arguments stand for the operands (the region is isolated from above: its ops read only the
block arguments and each other) and which ends in ``ember.yield`` of the results. Its
results are typed by its verifier (the yielded types), not by a result-type rule. ``kind``
names the kind of fusion, after XLA's names (``duplicate_limit`` and ``multi_result``: see the
lowering):

- ``loop``: elementwise ops (selects and converts included), broadcasts, unit-dim reshapes,
  iotas, concatenations and gathers (transposes lower too, but ember-fuse keeps them apart);
- ``input``: reductions with their elementwise producers (and consumers);
- ``output``: one ``dot_general`` with its elementwise epilogue;
- ``multi_output``: a loop or input fusion with several results of one iteration space.

Batching a fusion batches its body: the batched ops come out unfused, and ember-fuse (which
runs after ember-batch) groups them again.

Lowering (``ember-to-linalg``)
------------------------------

The body is lowered as a whole, into as few ``linalg.generic`` ops as it can, rather than op
by op.

Some values of the body are *materialized* (computed into a tensor): the yielded results,
reductions, ``dot_general`` results, any op this module cannot inline (lowered by its own rule),
an elementwise value read by several consumers whose producers cost more than the fusion's
``duplicate_limit`` (``ember.rules.cost.op_cost``) or read a reduction's result, the
operand of a broadcast that is computed by anything but index maps (inlined, it would be
computed once per element of the broadcast result), the operand of a gather, and the parts
of a concatenation whose parts cost more than the duplicate limit together (each element of
an inlined one computes every part).
Every other op is *inlined*: its scalar body (``lowering.SCALAR``) is emitted inside the
``linalg.generic`` of each materialized value that reads it, and broadcasts, transposes,
unit-dim reshapes and iotas become indexing maps and ``linalg.index``.

With ``multi_result`` (off by default), materialized values of one iteration space that do
not depend on each other share one ``linalg.generic`` with several results: elementwise
values of one shape, or reductions of one operand shape over the same axes (e.g. ``sum(x)``
and ``sum(x * x)``). It is off because IREE 3.13 mis-compiles such a generic when one of its
results is transposed afterwards ("expected number of yield values (2) to match the number
of inits"), as ``vmap`` with ``out_axes=1`` does, see ``tests/test_fusion.py``); without it each
materialized value has its own generic and IREE forms the multi-result dispatch itself.

A ``dot_general`` lowers by its own rule; its elementwise epilogue becomes one generic,
which IREE fuses into the matmul's dispatch.

Where the fusion's generics are a chain IREE's CPU codegen takes as one dispatch (chained
reductions, as in layernorm) they are wrapped in one ``flow.dispatch.region``: IREE keeps an
existing region as one dispatch whatever its own heuristics and opt level (at its default
level it splits layernorm in two). ``ember-to-linalg{dispatch-regions=false}`` leaves them
bare; it is what the GPU backends use (``DISPATCH_REGIONS`` in ``ember/backends/``).

In a region, a reduction along the contiguous last axis of a fusion argument is split in
two generics (``split_reduction``): 8 partial results per row, then their combination.
Measured (IREE 3.13, O3): layernorm 1.5x faster. Outside a region it does not pay: IREE
makes the partial reduction a dispatch of its own. So that more rows are split, an
elementwise value a row reduction reads is recomputed in a region up to twice the duplicate
limit (exp(x) in a softmax: 0.85 -> 0.72 ms), and even when it reads a reduction's result.

A summed product (``acc + a * b``) is written ``acc + copysign(p, p)`` (``_hide_product``):
IREE's vectorizer would make it a ``vector.contract`` it lowers to scalar code (rmsnorm
0.55 -> 0.30 ms).
"""

from __future__ import annotations

import numpy as np

from ember._mlir import arith, flow, ir, linalg, math_d, signless, tensor
from ember.dialects.indexing import clamp_index
from ember.rules.base import (
    OPS,
    Attr,
    OpTypeError,
    aval_of_type,
    decode_attrs,
    define,
    is_splat_constant,
)
from ember.rules.batching import batch_body, batching
from ember.rules.cost import op_cost
from ember.rules.lowering import (
    COMBINE,
    LOWERINGS,
    SCALAR,
    LowerCall,
    dims_map,
    elem,
    emit_scalar,
    empty,
    filled,
    generic,
    identity_map,
    index_of,
    lower_elementwise,
    lowering,
    reassociation,
    reduce_init,
    scalar_const,
    to_index,
)
from ember.rules.type_rules import fmt

__all__ = ["FUSION_KINDS"]

FUSION_KINDS = ("loop", "input", "output", "multi_output")


def _verify_fusion(op: ir.Operation, attrs) -> None:
    if len(op.regions) != 1 or len(list(op.regions[0].blocks)) != 1:
        raise OpTypeError("must have one region with one block")
    block = op.regions[0].blocks[0]
    operands = [aval_of_type(v.type) for v in op.operands]
    args = [aval_of_type(a.type) for a in block.arguments]
    if [(a.shape, a.dtype) for a in args] != [(a.shape, a.dtype) for a in operands]:
        raise OpTypeError(f"block arguments ({fmt(args)}) differ from the operands "
                          f"({fmt(operands)})")
    ops = [o.operation for o in block.operations]
    if not ops or ops[-1].name != "ember.yield":
        raise OpTypeError("region must end with ember.yield")
    yielded = [aval_of_type(v.type) for v in ops[-1].operands]
    results = [aval_of_type(r.type) for r in op.results]
    if [(a.shape, a.dtype) for a in yielded] != [(a.shape, a.dtype) for a in results]:
        raise OpTypeError(f"yields ({fmt(yielded)}) but has results ({fmt(results)})")
    inside = set(block.arguments) | {r for o in ops for r in o.results}
    for inner in ops:
        if inner.regions:
            raise OpTypeError(f"holds '{inner.name}', an op with regions")
        if not inner.name.startswith("ember."):
            raise OpTypeError(f"holds '{inner.name}', which is not an ember op")
        for v in inner.operands:
            if v not in inside:
                raise OpTypeError(f"'{inner.name}' inside reads a value from outside the "
                                  "region (pass it as an operand)")


define(
    "fusion", None, None, family="fusion", pure=True, traits=("regions", "own_body"),
    attrs=(Attr("kind", "str", "loop", choices=FUSION_KINDS),
           Attr("duplicate_limit", "i64", 3), Attr("multi_result", "bool", False)),
    verify_op=_verify_fusion,
    doc="A group of ember ops computed together (ember-fuse): one region, isolated from "
        "above, whose block arguments are the operands and whose ember.yield gives the "
        "results; lowered as a whole into as few linalg.generic ops as possible.")


# === lowering =============================================================================

# Inlined ops whose scalar code can read the generic's loop indices (linalg.index).
_READS_INDICES = frozenset(("ember.iota", "ember.concatenate", "ember.gather"))

_INLINE_SHAPE = ("ember.broadcast_in_dim", "ember.transpose", "ember.reshape", "ember.iota",
                 "ember.concatenate", "ember.gather")


def _inlinable(op) -> bool:
    return (LOWERINGS.get(op.name) is lower_elementwise or op.name in _INLINE_SHAPE
            or is_splat_constant(op))


def _root_kind(op) -> str:
    if op.name.startswith("ember.reduce_"):
        return "reduce"
    if _inlinable(op):
        return "elementwise"
    return "opaque"


def _reduced_along_rows(v) -> bool:
    """Whether a reduction over the last axis reads ``v``, directly or through elementwise
    ops of its fusion."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        for use in x.uses:
            op = use.owner
            if op.name.startswith("ember.reduce_"):
                rank = len(aval_of_type(x.type).shape)
                if tuple(decode_attrs(OPS[op.name], op)["axes"]) == (rank - 1,):
                    return True
            elif LOWERINGS.get(op.name) is lower_elementwise and op.results[0] not in seen:
                seen.add(op.results[0])
                stack.append(op.results[0])
    return False


class _Fusion:
    def __init__(self, c: LowerCall, split: bool = False):
        self.c = c
        self.split = split      # split row reductions (``split_reduction``)
        block = c.op.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        self.ops, self.yielded = ops[:-1], list(ops[-1].operands)
        self.limit = c.attrs["duplicate_limit"]
        self.multi_result = c.attrs["multi_result"]
        self.opaque: set = set()     # results of inlinable ops lowered by their own rule
        self.reads_indices = False   # whether the generic being lowered reads loop indices
        self.collected: dict = {}    # id(inputs list) -> (value, map, root) walked into it
        # Tensors of values computed so far: block arguments, then materialized values.
        self.tensor = dict(zip(block.arguments, c.operands))
        self.roots = self._materialized()

    def _kind(self, op) -> str:
        return "opaque" if op.results and op.results[0] in self.opaque else _root_kind(op)

    # --- what to materialize ------------------------------------------------------------

    def _materialized(self) -> list:
        consumers: dict = {}
        for op in self.ops:
            for v in set(op.operands):
                consumers[v] = consumers.get(v, 0) + 1
        roots = set(self.yielded)
        for op in self.ops:
            if not _inlinable(op):
                roots.update(op.results)
                # a reduction inlines its operand; dots and opaque ops read tensors
                if self._kind(op) == "opaque":
                    roots.update(v for v in op.operands if not isinstance(v.owner, ir.Block))
        for op in self.ops:     # program order: producers are decided before consumers
            if op.name == "ember.concatenate":
                self._concatenate_parts(op, roots)
            if op.name == "ember.gather":
                # The operand is read from memory: IREE 3.13 failed to compile a gather whose
                # operand was converted to int8 inline ("LLVM Translation failed for
                # operation: builtin.unrealized_conversion_cast"); its indices stay inline.
                x = op.operands[0]
                if not isinstance(x.owner, ir.Block):
                    roots.add(x)
            if op.name == "ember.broadcast_in_dim":
                # Inlined through a broadcast, the operand's ops would run once per element
                # of the result instead of once per element of the operand.
                (x,) = op.operands
                grows = aval_of_type(op.results[0].type).size > aval_of_type(x.type).size
                if grows and not isinstance(x.owner, ir.Block) and x not in roots \
                        and self._cone(x, roots)[0] > 0:
                    roots.add(x)
            r = op.results[0] if len(op.results) == 1 else None
            if r is None or r in roots or consumers.get(r, 0) < 2:
                continue
            cost, after_reduction = self._cone(r, roots)
            # In a region, recomputing a value for a row reduction lets that reduction be
            # split (``split_reduction``), which pays for twice the work: softmax without
            # max, exp(x) recomputed, ran 0.85 -> 0.72 ms (IREE 3.13, O3, 1024x1024).
            rows = self.split and _reduced_along_rows(r)
            limit = 2 * self.limit if rows else self.limit
            if cost > limit or (after_reduction and not rows):
                roots.add(r)
        return [r for op in self.ops for r in op.results if r in roots]

    def _concatenate_parts(self, op, roots) -> None:
        """Each element of an inlined concatenation computes every part and selects one: when
        the inlined parts cost more than the duplicate limit together, the concatenation is
        lowered by its own rule (insert_slice) from materialized parts instead. (Measured:
        parts read back by tensor.extract ran 1.4x slower than IREE's copies.)"""
        cost = sum(self._cone(v, roots)[0] for v in op.operands
                   if not isinstance(v.owner, ir.Block) and v not in roots)
        if cost > self.limit:
            self.opaque.add(op.results[0])
            roots.update(op.results)
            roots.update(v for v in op.operands if not isinstance(v.owner, ir.Block))

    def _cone(self, v, roots) -> tuple[int, bool]:
        """The cost of the inlined ops ``v`` is computed from (each counted once), and
        whether they read a reduction's result."""
        seen, stack, total, after_reduction = set(), [v], 0, False
        while stack:
            x = stack.pop()
            if isinstance(x.owner, ir.Block) or x in seen:
                continue
            if x in roots and x != v:
                after_reduction |= self._kind(x.owner.operation) == "reduce"
                continue
            seen.add(x)
            op = x.owner.operation
            total += op_cost(op.name)
            stack.extend(op.operands)
        return total, after_reduction

    # --- emission -----------------------------------------------------------------------

    def lower(self) -> list[ir.Value]:
        level = {}
        for r in self.roots:
            level[r] = 1 + max([level[x] for x in self._leaves(r) if x in level], default=0)
        groups: dict = {}
        for r in self.roots:
            op = r.owner.operation
            kind = self._kind(op)
            if not self.multi_result and kind != "opaque":
                key = (level[r], kind, len(groups))     # a generic of its own
            elif kind == "elementwise":
                key = (level[r], kind, aval_of_type(r.type).shape)
            elif kind == "reduce":
                key = (level[r], kind, aval_of_type(op.operands[0].type).shape,
                       decode_attrs(OPS[op.name], op)["axes"])
            else:
                key = (level[r], kind, id(r))
            groups.setdefault(key, []).append(r)
        for key in sorted(groups, key=lambda k: k[0]):
            rs = groups[key]
            if key[1] == "opaque":
                self._lower_opaque(rs[0].owner.operation)
            else:
                self._lower_generic(rs, key[1])
        return [self.tensor[v] for v in self.yielded]

    def _leaves(self, r) -> set:
        """The materialized values and block arguments root ``r``'s inlined cone reads."""
        out, seen = set(), set()
        op = r.owner.operation
        stack = list(op.operands)
        while stack:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            if isinstance(x.owner, ir.Block) or x in self.roots:
                out.add(x)
            elif self._kind(x.owner.operation) != "opaque":
                stack.extend(x.owner.operation.operands)
        return out

    def _lower_opaque(self, op) -> None:
        if op.results[0] in self.tensor:     # an op with several results, done already
            return
        name = op.name
        operands = [self.tensor[v] for v in op.operands]
        call = LowerCall(op, operands, [aval_of_type(v.type) for v in op.operands],
                         [aval_of_type(r.type) for r in op.results],
                         decode_attrs(OPS[name], op))
        with op.location:
            new = LOWERINGS[name](call)
        self.tensor.update(zip(op.results, new))

    def _lower_generic(self, roots, kind) -> None:
        first = roots[0].owner.operation
        if kind == "reduce":
            space = aval_of_type(first.operands[0].type).shape
            axes = decode_attrs(OPS[first.name], first)["axes"]
        else:
            space, axes = aval_of_type(roots[0].type).shape, ()
        rank = len(space)
        ident = tuple(range(rank))
        out_map = tuple(d for d in range(rank) if d not in axes)
        # First walk: the tensors the generic reads, each with its indexing map.
        inputs: list = []
        self.reads_indices = False
        for r in roots:
            start = r.owner.operation.operands[0] if kind == "reduce" else r
            self._walk(start, ident, inputs, None, r)
        if kind == "reduce" and not inputs:
            # A reduction of a constant body (of a broadcast constant): IREE 3.13 miscomputes
            # such a generic (a sum of 1.0 over 3000 gave 94); it reads the operand computed.
            for r in roots:
                x = r.owner.operation.operands[0]
                if x not in self.tensor:
                    self.roots.append(x)
                    self._lower_generic([x], "elementwise")
                self._walk(x, ident, inputs, None, r)
        inits = []
        for r in roots:
            aval = aval_of_type(r.type)
            if kind == "reduce":
                op = r.owner.operation
                inits.append(filled(aval, reduce_init(op.name.split("_", 1)[1],
                                                       aval.dtype)))
            else:
                inits.append(empty(aval))
        tensors = [self.tensor[v] for v, _ in inputs]
        maps = [m for _, m in inputs]
        # Reduced dims no input is read along (the reduction of a broadcast): linalg takes
        # loop bounds from operand shapes, so an unread i8 tensor of those dims gives them.
        unread = [d for d in axes if not any(d in m for m in maps)]
        if unread:
            tensors.append(tensor.EmptyOp([space[d] for d in unread],
                                          ir.IntegerType.get_signless(8)).result)
            maps.append(tuple(unread))
        n_in = len(tensors)

        def body(*args):
            scalars = {key: a for key, a in zip(inputs, args)}
            out = []
            for r, acc in zip(roots, args[n_in:]):
                if kind == "reduce":
                    op = r.owner.operation
                    x = self._walk(op.operands[0], ident, inputs, scalars, r)
                    dt = aval_of_type(r.type).dtype
                    how = op.name.split("_", 1)[1]
                    if how == "sum":
                        x = _hide_product(x, args[:n_in])
                    out.append(SCALAR[COMBINE[how]]([acc, x], dt, dt, {}))
                else:
                    out.append(self._walk(r, ident, inputs, scalars, r))
            return out

        iters = ["reduction" if d in axes else "parallel" for d in range(rank)]
        # Only rows of fusion arguments: splitting a row the region computes itself, IREE
        # tiled it onto the stack and went over its limit (softmax without max). Nor bodies
        # that read loop indices, which the split would renumber.
        if self.split and axes == (rank - 1,) and rank >= 2 and not self.reads_indices \
                and not unread and all(isinstance(v.owner, ir.Block)
                                       for v, m in inputs if rank - 1 in m):
            results = split_reduction(tensors, maps, inits, out_map, iters, body,
                                      [_combine(r) for r in roots])
        else:
            results = generic(tensors, [dims_map(rank, m) for m in maps], inits,
                              [dims_map(rank, out_map)] * len(roots), iters, body)
        self.tensor.update(zip(roots, results))

    def _walk(self, v, m, inputs, scalars, root):
        """Visit value ``v`` read at index ``m`` (a tuple of loop dims or ("const", k)).

        Without ``scalars`` it records the (tensor, map) inputs; with it, it emits the
        scalar IR of ``v`` in the generic's body and returns it (memoized per (v, m))."""
        if isinstance(v.owner, ir.Block) or (v in self.roots and v != root):
            key = (v, m)
            dynamic = any(isinstance(e, tuple) and e[0] == "val" for e in m)
            if scalars is None:
                if not dynamic and key not in inputs:
                    inputs.append(key)
                return None
            if dynamic:     # an index computed in the body (concatenate): read by extract
                if key not in scalars:
                    scalars[key] = _extract(self.tensor[v], [_index_value(e) for e in m])
            return scalars[key]
        if scalars is not None and (v, m) in scalars:
            return scalars[(v, m)]
        if scalars is None:     # visit each (value, map) once: a DAG (x * x, n times) is not
            seen = self.collected.setdefault(id(inputs), set())    # walked 2**n times
            if (v, m, root) in seen:
                return None
            seen.add((v, m, root))
        op = v.owner.operation
        name = op.name
        out = aval_of_type(v.type)
        attrs = decode_attrs(OPS[name], op)
        if name in _READS_INDICES:
            self.reads_indices = True
        if name == "ember.broadcast_in_dim":
            xa = aval_of_type(op.operands[0].type)
            sub = tuple(("const", 0) if xa.shape[i] == 1 and out.shape[d] != 1 else m[d]
                        for i, d in enumerate(attrs["broadcast_dimensions"]))
            res = self._walk(op.operands[0], sub, inputs, scalars, root)
        elif name == "ember.transpose":
            perm = attrs["permutation"]
            sub = [None] * len(perm)
            for j, p in enumerate(perm):
                sub[p] = m[j]
            res = self._walk(op.operands[0], tuple(sub), inputs, scalars, root)
        elif name == "ember.reshape":
            xa = aval_of_type(op.operands[0].type)
            kept = iter(e for e, d in zip(m, out.shape) if d != 1)
            sub = tuple(("const", 0) if d == 1 else next(kept) for d in xa.shape)
            res = self._walk(op.operands[0], sub, inputs, scalars, root)
        elif name == "ember.concatenate":
            res = self._concatenate(op, attrs["dimension"], m, inputs, scalars, root)
        elif name == "ember.gather":
            res = self._gather(op, attrs["axes"], m, inputs, scalars, root)
        elif scalars is None:
            for x in op.operands:
                self._walk(x, m, inputs, None, root)
            return None
        elif name == "ember.iota":
            e = m[attrs["dimension"]]
            if isinstance(e, int):
                res = index_of(e, out.dtype)
            elif e[0] == "const":
                res = scalar_const(e[1], out.dtype)
            else:
                res = _cast_index(e[1], out.dtype)
        elif name == "ember.constant":
            res = scalar_const(attrs["value"].flat[0], out.dtype)
        else:
            args = [self._walk(x, m, inputs, scalars, root) for x in op.operands]
            in_dt = aval_of_type(op.operands[0].type).dtype if op.operands else out.dtype
            res = emit_scalar(name.split(".", 1)[1], args, in_dt, out.dtype, attrs)
        if scalars is not None:
            scalars[(v, m)] = res
        return res


    def _concatenate(self, op, dim, m, inputs, scalars, root):
        """Part k of the result along ``dim`` where the index is in its range: statically
        for a constant index, else every part read at its clamped index and selected."""
        sizes = [aval_of_type(x.type).shape[dim] for x in op.operands]
        offsets = [sum(sizes[:k]) for k in range(len(sizes))]
        e = m[dim]
        if isinstance(e, tuple) and e[0] == "const":
            k = max(i for i, o in enumerate(offsets) if o <= e[1] and sizes[i] > 0)
            sub = m[:dim] + (("const", e[1] - offsets[k]),) + m[dim + 1:]
            return self._walk(op.operands[k], sub, inputs, scalars, root)
        if scalars is None:
            for x in op.operands:
                self._walk(x, m[:dim] + (("val", None),) + m[dim + 1:], inputs, None, root)
            return None
        idx = _index_value(e)
        parts = []
        for x, n, o in zip(op.operands, sizes, offsets):
            if n == 0:
                continue
            local = arith.SubIOp(idx, _const_index(o)).result
            local = arith.MinSIOp(arith.MaxSIOp(local, _const_index(0)).result,
                                  _const_index(n - 1)).result
            parts.append((o, self._walk(x, m[:dim] + (("val", local),) + m[dim + 1:], inputs,
                                        scalars, root)))
        if not parts:       # every part is empty, so is the result: nothing reads this
            return scalar_const(0, aval_of_type(op.result.type).dtype)
        res = parts[-1][1]
        for (_, value), (next_offset, _) in reversed(list(zip(parts, parts[1:]))):
            below = arith.CmpIOp(arith.CmpIPredicate.slt, idx, _const_index(next_offset))
            res = arith.SelectOp(below.result, value, res).result
        return res


    def _gather(self, op, axes, m, inputs, scalars, root):
        """The operand read where the indices (computed inline, clamped as the indexing
        family's lowering does) point: ``result[b..., r...] = x[idx[b..., :], r...]``."""
        x, idx = op.operands
        xa, ia = aval_of_type(x.type), aval_of_type(idx.type)
        nb = ia.ndim - 1
        coords = [None] * xa.ndim
        # The index tensor is read by tensor.extract at computed coordinates (as the
        # indexing family's lowering does), not as a generic input: IREE then loads one
        # index per row.
        at = tuple(("val", None if scalars is None else _index_value(e)) if isinstance(e, int)
                   else e for e in m[:nb])
        for j, a in enumerate(axes):
            v = self._walk(idx, at + (("const", j),), inputs, scalars, root)
            coords[a] = ("val", None if scalars is None else
                         clamp_index(to_index(v, ia.dtype), xa.shape[a] - 1))
        rest = iter(m[nb:])
        coords = tuple(next(rest) if c is None else c for c in coords)
        return self._walk(x, coords, inputs, scalars, root)


def _const_index(n: int) -> ir.Value:
    index = ir.IndexType.get()
    return arith.ConstantOp(index, ir.IntegerAttr.get(index, n)).result


def _extract(source: ir.Value, indices: list) -> ir.Value:
    """``tensor.extract``; from a static ``tensor.extract_slice``, read its source at the
    shifted indices instead: IREE 3.13 fails to compile ("LLVM Translation failed for
    operation: builtin.unrealized_conversion_cast") a generic extracting from a slice."""
    owner = source.owner
    if not isinstance(owner, ir.Block) and owner.name == "tensor.extract_slice" and \
            len(owner.operands) == 1:
        offsets = list(ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]))
        strides = list(ir.DenseI64ArrayAttr(owner.attributes["static_strides"]))
        if len(offsets) == len(indices):      # not rank-reducing
            index = ir.IndexType.get()
            shifted = []
            for i, off, stride in zip(indices, offsets, strides):
                if stride != 1:
                    i = arith.MulIOp(i, arith.ConstantOp(index, stride).result).result
                if off:
                    i = arith.AddIOp(i, arith.ConstantOp(index, off).result).result
                shifted.append(i)
            return tensor.ExtractOp(owner.operands[0], shifted).result
    return tensor.ExtractOp(source, indices).result


def _index_value(e) -> ir.Value:
    """An ``index`` value in a generic's body for a map entry (dim, const or computed)."""
    if isinstance(e, int):
        return linalg.IndexOp(e).result
    if e[0] == "const":
        return _const_index(e[1])
    return e[1]


def _cast_index(v: ir.Value, dtype) -> ir.Value:
    if np.dtype(dtype).kind == "f":
        i64 = ir.IntegerType.get_signless(64)
        return arith.SIToFPOp(elem(dtype), arith.IndexCastOp(i64, v).result).result
    return arith.IndexCastOp(elem(dtype), v).result


def _is_copy(op) -> bool:
    """A generic that only moves its input (a reshape or transpose written as a generic): as
    the last op of a region after a reduction, IREE 3.13 failed to compile it."""
    body = op.regions[0].blocks[0]
    ops = list(body.operations)
    return len(ops) == 1 and list(ops[0].operands) == [body.arguments[0]]


def _combine(r):
    """``(acc, x) -> acc ⊕ x`` for reduction result ``r``."""
    dt = aval_of_type(r.type).dtype
    fn = SCALAR[COMBINE[r.owner.operation.name.split("_", 1)[1]]]
    return lambda acc, x: fn([acc, x], dt, dt, {})


def _hide_product(x: ir.Value, block_inputs) -> ir.Value:
    """``x``, summed by a reduction, as ``copysign(x, x)`` (the same value) when it is a float
    product that is no matmul's (a square, or a product of computed values). IREE's CPU
    vectorizer turns ``acc + a * b`` into a ``vector.contract`` and, in a dispatch that also
    computes the reduction's consumers, lowers that to scalar code; LLVM folds the copysign
    away after vectorization. Measured (IREE 3.13, O3, 1024x1024): rmsnorm 0.55 -> 0.30 ms.
    A product of two different inputs is left alone: IREE may take it for a matmul."""
    op = x.owner
    if isinstance(op, ir.Block) or op.name != "arith.mulf":
        return x
    a, b = op.operands
    if a != b and a in block_inputs and b in block_inputs:
        return x
    return math_d.CopySignOp(x, x).result


def _grows(v) -> bool:
    """Whether ``v`` is a broadcast to more elements (through index-map ops)."""
    while not isinstance(v.owner, ir.Block):
        op = v.owner.operation
        if op.name == "ember.broadcast_in_dim":
            x = op.operands[0]
            if aval_of_type(v.type).size > aval_of_type(x.type).size:
                return True
        elif op.name not in ("ember.reshape", "ember.transpose"):
            return False
        v = op.operands[0]
    return False


_SETUP = frozenset(("tensor.empty", "linalg.fill", "arith.constant", "tensor.expand_shape"))


@lowering("fusion")
def _lower_fusion(c: LowerCall) -> list[ir.Value]:
    if not c.options.get("dispatch_regions"):
        return _Fusion(c).lower()
    region = flow.DispatchRegionOp([signless(r.type) for r in c.op.results], [], [])
    block = region.body.blocks.append()
    with ir.InsertionPoint(block):
        flow.ReturnOp(_Fusion(c, split=True).lower())
    if _one_dispatch(c, [op.operation for op in block.operations]):
        return list(region.results)
    region.operation.erase()        # bare generics, and their rows unsplit
    return _Fusion(c).lower()


# Lanes of a split row reduction, and the shortest row worth splitting.
SPLIT_LANES = 8
SPLIT_MIN_EXTENT = 64


def split_reduction(inputs, input_exprs, inits, out_dims, iterators, body,
                    combines) -> list[ir.Value]:
    """A ``linalg.generic`` reducing over its last loop dim (arguments as for ``generic``,
    maps as ``dims_map`` expressions), as two when the rows allow: [..., N] read as
    [..., N / SPLIT_LANES, SPLIT_LANES] and reduced over the middle axis into SPLIT_LANES
    partial results, then those combined by ``combines[i](acc, x)`` into ``inits``. The
    body must not read loop indices (``linalg.index``): the split renumbers them."""
    rank = len(iterators)
    last = rank - 1
    extents = {ir.RankedTensorType(v.type).shape[-1] for v, e in zip(inputs, input_exprs)
               if last in e}
    if len(extents) != 1 or any(last in e[:-1] for e in input_exprs) or \
            min(extents) % SPLIT_LANES or min(extents) < SPLIT_MIN_EXTENT:
        return generic(inputs, [dims_map(rank, e) for e in input_exprs], inits,
                       [dims_map(rank, out_dims)] * len(inits), iterators, body)
    n = min(extents)
    split_inputs, split_exprs = [], []
    for v, e in zip(inputs, input_exprs):
        if last in e:
            t = ir.RankedTensorType(v.type)
            shape = list(t.shape[:-1]) + [n // SPLIT_LANES, SPLIT_LANES]
            groups = [[d] for d in range(t.rank - 1)] + [[t.rank - 1, t.rank]]
            v = tensor.ExpandShapeOp(ir.RankedTensorType.get(shape, t.element_type), v,
                                     reassociation(groups), [], shape).result
            e = tuple(e) + (rank,)
        split_inputs.append(v)
        split_exprs.append(e)
    partial_inits = []
    for init in inits:      # each is the fill of the reduction's identity
        t = ir.RankedTensorType(init.type)
        partial_inits.append(linalg.fill(init.owner.opview.inputs[0], outs=[
            tensor.EmptyOp(list(t.shape) + [SPLIT_LANES], t.element_type).result]))
    lanes_map = dims_map(rank + 1, tuple(out_dims) + (rank,))
    partial = generic(split_inputs, [dims_map(rank + 1, e) for e in split_exprs],
                      partial_inits, [lanes_map] * len(inits), list(iterators) + ["parallel"],
                      body)
    k, n_out = len(out_dims), len(inits)
    return generic(partial, [identity_map(k + 1)] * n_out, inits,
                   [dims_map(k + 1, range(k))] * n_out, ["parallel"] * k + ["reduction"],
                   lambda *a: [f(acc, x) for f, x, acc in zip(combines, a[:n_out], a[n_out:])])


def _one_dispatch(c: LowerCall, ops: list) -> bool:
    """Whether the fusion's linalg ops (``ops``, ending with ``flow.return``) should stay in
    one ``flow.dispatch.region``: IREE then makes them one dispatch at every opt level (at
    its default level it splits a layernorm's chained reductions in two, for example).

    Only fusions IREE's codegen takes as one dispatch: several ``linalg.generic`` that all
    feed one last generic, which computes every result. IREE 3.13 fails to compile a region
    with two independent generics ("write affecting operations on global resources are
    restricted to workgroup distributed contexts") or with ``tensor.insert_slice``; should it
    fail on another, ``Lowered.compile`` compiles the program again without regions. A matmul
    with its epilogue is one dispatch anyway (kind "output"); a result that is a broadcast,
    or that a matmul reads, is better fused into its consumers, which a region would forbid.
    """
    compute = [op for op in ops[:-1] if op.name not in _SETUP]
    if c.attrs["kind"] == "output" or len(compute) < 2 or \
            any(op.name != "linalg.generic" for op in compute):
        return False
    if set(ops[-1].operands) != set(compute[-1].results) or _is_copy(compute[-1]):
        return False
    if any(not list(r.uses) for op in compute[:-1] for r in op.results):
        return False
    # each earlier result an operand of a generic: one read inside a body (a gather's
    # tensor.extract) is no producer IREE fuses, and leaves two roots, which fail as above
    # (lax.map's rows put back in order)
    members = {op.operation for op in compute}
    if any(use.owner.operation not in members for op in compute[:-1] for r in op.results
           for use in r.uses):
        return False
    if _reads_reduction_at_constant(compute):
        return False
    yielded = c.op.regions[0].blocks[0].operations[-1].operands
    return not any(_grows(v) for v in yielded) and not _feeds_contraction(c.op)


def _reads_reduction_at_constant(compute) -> bool:
    """Whether a generic of ``compute`` reads the result of a reduction among them through a
    map with a constant (a keepdims reduction squeezed, as ``matrix_norm`` does): IREE
    3.13's code generation fails on such a region, where it compiles the generics left bare.
    (Elementwise results read so, as a layernorm's keepdims mean, compile in a region; read
    through a ``tensor.collapse_shape`` in the region instead, the reduction compiled but an
    elementwise producer of a reduction's operand failed as two independent generics do.)"""
    reduced = {r for c in compute if "reduction" in str(c.attributes["iterator_types"])
               for r in c.results}
    return any(v in reduced and any(isinstance(e, ir.AffineConstantExpr)
                                    for e in ir.AffineMapAttr(m).value.results)
               for op in compute
               for v, m in zip(op.operands, ir.ArrayAttr(op.attributes["indexing_maps"])))


def _feeds_contraction(op) -> bool:
    """Whether a result of ``op`` is an operand of a ``dot_general`` (in a fusion or not):
    IREE fuses an elementwise producer into the packing of a matmul operand, which a region
    would forbid (layernorm then a projection: 4 MiB of transients instead of 3)."""
    for r in op.results:
        for use in r.uses:
            user = use.owner
            if user.name == "ember.dot_general":
                return True
            if user.name == "ember.fusion":
                arg = user.regions[0].blocks[0].arguments[use.operand_number]
                if any(u.owner.name == "ember.dot_general" for u in arg.uses):
                    return True
    return False


# === batching =============================================================================

@batching("fusion")
def _batch_fusion(ctx, op, inputs, attrs):
    """Batching a fusion is batching its body: the batched ops come out unfused, and
    ember-fuse (which runs after ember-batch) groups them again."""
    return batch_body(ctx, op, inputs)
