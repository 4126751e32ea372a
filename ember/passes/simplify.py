"""``ember-simplify``: what MLIR's DCE, CSE and canonicalize cannot do for unregistered ops.

- dead-op removal of pure ember ops whose results are unused;
- CSE of pure ember ops (same name, operands, attributes and result types; the operands of
  ``add`` and ``mul`` in either order);
- constant folding of ops whose operands are all small constants, by running the op's own
  rule on NumPy data (``FOLDERS``);
- a contraction with a broadcast that is constant along the contracted dimensions
  (``ones((n, k)) @ y``, a broadcast scalar) becomes a sum and a product.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ember import dtypes
from ember._mlir import ir
from ember.dialects import OPS, OpTypeError, aval_of_type, decode_attrs, emit
from ember.passes.folding import FOLDERS
from ember.passes.registry import Pass, func_ops, register
from ember.rules.base import encode_attr, is_splat_constant


def _pure(op) -> bool:
    opdef = OPS.get(op.name)
    return opdef is not None and opdef.pure and not op.regions


def _removable(op) -> bool:
    """Pure ops and region ops (no side effects) may go when their results are unused."""
    return _pure(op) or ("regions" in OPS[op.name].traits if op.name in OPS else False)


# Ops whose value does not depend on the order of their two operands (IEEE addition and
# multiplication are exactly commutative): CSE takes ``mul(a, b)`` and ``mul(b, a)`` as one.
# Besides the saved work, IREE 3.13 computes the pair wrongly when it fuses both into one
# dispatch (tests/test_iree_quirks.py::test_equal_products_fused_into_one_dispatch).
_COMMUTATIVE = frozenset({"ember.add", "ember.mul"})


def _key(op):
    attrs = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))
    operands = tuple(op.operands)
    if op.name in _COMMUTATIVE and len(operands) == 2 and operands[0] != operands[1]:
        operands = frozenset(operands)
    return (op.name, operands, attrs, tuple(str(r.type) for r in op.results))


@register
@dataclasses.dataclass
class Simplify(Pass):
    """Dead-op removal, CSE and constant folding over ember ops."""

    name = "ember-simplify"
    summary = "Remove dead ember ops, CSE pure ones, fold ops on small constants"
    fold_limit: int = dataclasses.field(default=1024, metadata={
        "help": "fold only ops whose result has at most this many elements"})

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                for block in f.regions[0].blocks:
                    self._simplify_block(block)

    def _simplify_block(self, block) -> None:
        # Blocks of ember region ops (cond branches, loop bodies) first, each on its own.
        for op in block.operations:
            if op.operation.name in OPS and op.operation.regions:
                for region in op.operation.regions:
                    for inner in region.blocks:
                        self._simplify_block(inner)
        self._fold_and_cse(block)
        self._dce(block)

    def _fold_and_cse(self, block) -> None:
        seen = {}
        for op in list(block.operations):
            op = op.operation
            if not _pure(op):
                continue
            folded = self._fold(op)
            if folded is None:
                folded = _contract_broadcast(op)
            if folded is not None:
                op.results[0].replace_all_uses_with(folded)
                op.erase()
                continue
            key = _key(op)
            prev = seen.get(key)
            if prev is not None:
                for old, new in zip(op.results, prev.results):
                    old.replace_all_uses_with(new)
                op.erase()
            else:
                seen[key] = op

    def _fold(self, op):
        folder = FOLDERS.get(op.name)
        if folder is None or len(op.results) != 1:
            return None
        values = []
        for v in op.operands:
            owner = v.owner
            if not isinstance(owner, ir.OpView | ir.Operation) or \
                    owner.name != "ember.constant":
                return None
            values.append(decode_attrs(OPS["ember.constant"], owner.operation)["value"])
        out = aval_of_type(op.results[0].type)
        if out.size > self.fold_limit or op.name == "ember.constant":
            return None
        try:
            result = folder(values, decode_attrs(OPS[op.name], op), out)
        except (OpTypeError, FloatingPointError, ValueError, ZeroDivisionError):
            return None
        if result is None:
            return None
        result = np.asarray(result).astype(out.dtype).reshape(out.shape)
        with op.location, ir.InsertionPoint(op):
            new = ir.Operation.create("ember.constant", results=[op.results[0].type],
                                      attributes={"value": encode_attr("dense", result)})
        return new.results[0]

    def _dce(self, block) -> None:
        changed = True
        while changed:
            changed = False
            for op in reversed(list(block.operations)):
                op = op.operation
                if _removable(op) and all(not list(r.uses) for r in op.results):
                    op.erase()
                    changed = True


def _contract_broadcast(op):
    """``dot_general(broadcast_in_dim(v), y)`` where the broadcast does not vary along the
    contracted dimensions, as ``v * sum(y over them)`` (either operand): O(n^2) work, where
    IREE folds the broadcast into the contraction and runs a generic loop nest 3-7x slower
    than a matmul (``ones((512, 512)) @ y``: 16 ms, the sum and product 0.2 ms). Floats of 32
    bits and more and integers only: a narrower float's product accumulates in float32, its
    sum would not (complex numbers: as their parts). None otherwise."""
    if op.name != "ember.dot_general":
        return None
    out = aval_of_type(op.results[0].type)
    avals = [aval_of_type(v.type) for v in op.operands]
    if not (dtypes.is_float(out.dtype) and out.dtype.itemsize >= 4
            or dtypes.is_complex(out.dtype) or np.issubdtype(out.dtype, np.integer)) or \
            any(a.dtype != out.dtype for a in avals) or 0 in avals[0].shape + avals[1].shape:
        return None
    attrs = decode_attrs(OPS[op.name], op)
    con = [attrs["lhs_contracting"], attrs["rhs_contracting"]]
    bat = [attrs["lhs_batch"], attrs["rhs_batch"]]
    free = [[d for d in range(a.ndim) if d not in con[i] + bat[i]] for i, a in enumerate(avals)]

    def out_dim(i, d):                    # where dim d of operand i lands in the result
        if d in bat[i]:
            return bat[i].index(d)
        return len(bat[0]) + (len(free[0]) if i else 0) + free[i].index(d)

    for i in (0, 1):
        owner = op.operands[i].owner
        if not isinstance(owner, ir.OpView | ir.Operation):
            continue
        if owner.name == "ember.broadcast_in_dim":
            src, dims = owner.operands[0], \
                decode_attrs(OPS[owner.name], owner.operation)["broadcast_dimensions"]
        elif is_splat_constant(owner):   # a small broadcast constant, already folded
            src, dims = None, ()
        else:
            continue
        if any(d in con[i] for d in dims):
            continue                      # v varies along a contracted dim
        summed = tuple(sorted(con[1 - i]))
        vdims = tuple(out_dim(i, d) for d in dims)
        sdims = tuple(out_dim(1 - i, d) for d in range(avals[1 - i].ndim) if d not in summed)
        if list(vdims) != sorted(vdims) or list(sdims) != sorted(sdims):
            continue                      # broadcast_in_dim keeps the order of dims
        with op.location, ir.InsertionPoint(op):
            if src is None:
                value = decode_attrs(OPS[owner.name], owner.operation)["value"]
                src = emit("ember.constant", [], value=value.reshape(-1)[:1].reshape(()))[0]
            v = emit("ember.broadcast_in_dim", [src], shape=out.shape,
                     broadcast_dimensions=vdims)[0]
            (total,) = emit("ember.reduce_sum", [op.operands[1 - i]], axes=summed)
            total = emit("ember.broadcast_in_dim", [total], shape=out.shape,
                         broadcast_dimensions=sdims)[0]
            return emit("ember.mul", [v, total] if i == 0 else [total, v])[0]
    return None
