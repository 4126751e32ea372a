"""``ember-simplify``: what MLIR's DCE, CSE and canonicalize cannot do for unregistered ops.

- dead-op removal of pure ember ops whose results are unused;
- CSE of pure ember ops (same name, operands, attributes and result types);
- constant folding of ops whose operands are all small constants, by running the op's own
  rule on NumPy data (``FOLDERS``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ember._mlir import ir
from ember.dialects import OPS, OpTypeError, aval_of_type, decode_attrs
from ember.dialects.base import encode_attr
from ember.passes.folding import FOLDERS
from ember.passes.registry import Pass, func_ops, register


def _pure(op) -> bool:
    opdef = OPS.get(op.name)
    return opdef is not None and opdef.pure and not op.regions


def _removable(op) -> bool:
    """Pure ops and region ops (no side effects) may go when their results are unused."""
    return _pure(op) or ("regions" in OPS[op.name].traits if op.name in OPS else False)


def _key(op):
    attrs = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))
    return (op.name, tuple(op.operands), attrs, tuple(str(r.type) for r in op.results))


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
