"""``ember-protect-arguments``: keep IREE from writing into the caller's argument buffers.

IREE 3.13 updates an argument's buffer in place when the lowered program writes into the
argument (``tensor.insert_slice`` into it, a scatter or a sort whose destination it is):
its copy-on-write misses tied ops on imported values (iree-org/iree#16168). The caller's
array changed, and a result that returns the argument itself came back modified:
``jit(lambda x: (dynamic_update_slice(x, u, (1, 0)), x))`` returned the updated array twice.
IREE elides an explicit ``flow.tensor.clone`` of the argument too, and a barrier keeping
the argument alive to the end breaks its stream conversion when a result is a constant it
hoists. What it cannot elide: the argument inserted into a buffer one row longer and read
back at an offset that is 0 behind an optimization barrier.
"""

from __future__ import annotations

from ember._mlir import arith, ir, tensor
from ember.passes.registry import Pass, func_ops, register

# Ops whose result is a view of their first operand, so that writing into the view writes
# into it; and clones, which IREE elides for arguments (the sort's own, say).
_VIEWS = frozenset({"tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice",
                    "tensor.cast", "tensor.bitcast", "tensor.reshape", "flow.tensor.clone"})


def _written(value) -> bool:
    """Whether an op may write its result into ``value``'s buffer (through views). (A loop
    carry that starts as an argument is copied by IREE itself: checked with a
    dynamic_update_slice in a fori_loop, tests/test_jit.py.)"""
    for use in value.uses:
        op, i = use.owner, use.operand_number
        name = op.name
        if name in ("tensor.insert_slice", "tensor.insert") and i == 1:
            return True
        if name == "iree_linalg_ext.sort":
            return True
        if "operandSegmentSizes" in op.attributes and name.startswith(("linalg.",
                                                                        "iree_linalg")):
            segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
            if i >= sum(segments[:-1]):          # destination-style: the outs come last
                return True
        if name in _VIEWS and i == 0 and any(_written(r) for r in op.results):
            return True
    return False


@register
class ProtectArguments(Pass):
    """Give each argument the lowered program writes into a copy of its own to write into
    (see the module docstring). Donated arguments are left to be written: the caller gave
    them up."""

    name = "ember-protect-arguments"
    summary = "Copy arguments the program writes into (IREE would update the caller's buffer)"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                if not f.regions[0].blocks:
                    continue
                block = f.regions[0].blocks[0]
                donated = set()     # given up by the caller (ember-donate-buffers): writable
                if "ember.donation" in f.attributes:
                    donated = set(list(ir.DenseI64ArrayAttr(f.attributes["ember.donation"]))[0::2])
                written = [a for i, a in enumerate(block.arguments) if i not in donated
                           and isinstance(a.type, ir.RankedTensorType) and _written(a)]
                if not written:
                    continue
                with ir.InsertionPoint(block.operations[0]):
                    index = ir.IndexType.get()
                    zero = ir.Operation.create(
                        "util.optimization_barrier", results=[index],
                        operands=[arith.ConstantOp(index, ir.IntegerAttr.get(index, 0)).result]
                    ).result
                    for a in written:
                        copy, reader = _fresh_copy(a, zero)
                        a.replace_all_uses_except(copy, reader)


def _fresh_copy(a: ir.Value, zero: ir.Value):
    """(``a`` copied into a new buffer, the op reading ``a``): inserted into a buffer one
    row longer, read back at the opaque offset ``zero``."""
    t = ir.RankedTensorType(a.type)
    shape, dt = list(t.shape), t.element_type
    src = a
    if not shape:                           # a scalar: as one element
        shape = [1]
        src = tensor.ExpandShapeOp(ir.RankedTensorType.get(shape, dt), a, ir.ArrayAttr.get([]),
                                   [], shape).result
    rank = len(shape)
    padded = tensor.EmptyOp([shape[0] + 1] + shape[1:], dt).result
    p = tensor.InsertSliceOp(src, padded, [], [], [], [0] * rank, shape, [1] * rank).result
    dyn = ir.ShapedType.get_dynamic_size()
    copy = tensor.ExtractSliceOp(ir.RankedTensorType.get(shape, dt), p, [zero], [], [],
                                 [dyn] + [0] * (rank - 1), shape, [1] * rank).result
    if rank != len(t.shape):
        copy = tensor.CollapseShapeOp(t, copy, ir.ArrayAttr.get([])).result
    return copy, (src.owner if src is not a else p.owner).operation
