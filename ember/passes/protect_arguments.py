"""``ember-protect-arguments``: keep IREE from writing into the caller's argument buffers.

IREE 3.13 updates an argument's buffer in place when the lowered program writes into the
argument (``tensor.insert_slice`` into it, a scatter or a sort whose destination it is):
its copy-on-write misses tied ops on imported values (iree-org/iree#16168). The caller's
array changed, and a result that returns the argument itself came back modified:
``jit(lambda x: (dynamic_update_slice(x, u, (1, 0)), x))`` returned the updated array twice.
IREE elides an explicit ``flow.tensor.clone`` of the argument too, and a barrier keeping
the argument alive to the end breaks its stream conversion when a result is a constant it
hoists. What it cannot elide: an elementwise kernel multiplying the argument's bits by a 1
behind an optimization barrier (one pass over it, exact for every value). A loop whose carry
ember-pin-loop-carries pinned writes into that carry's buffer in place, so a pinned loop that
starts from an argument it writes into gets a copy of its own, which nothing else reads.
"""

from __future__ import annotations

from ember._mlir import arith, ir, tensor
from ember.passes.registry import Pass, func_ops, register
from ember.rules.lowering import generic, identity_map, optimization_barrier

# Ops whose result is a view of their first operand, so that writing into the view writes
# into it; and clones, which IREE elides for arguments (the sort's own, say).
VIEW_OPS = frozenset({"tensor.expand_shape", "tensor.collapse_shape", "tensor.extract_slice",
                      "tensor.cast", "tensor.bitcast", "tensor.reshape", "flow.tensor.clone",
                      "flow.tensor.barrier"})


def _written(value, seen=None) -> bool:
    """Whether an op may write its result into ``value``'s buffer (through views, and through
    the carries of loops that ember-pin-loop-carries lets IREE update in place)."""
    seen = set() if seen is None else seen
    if value in seen:                   # a carry that a step passes on unchanged
        return False
    seen.add(value)
    return any(_writes(use, seen) for use in value.uses)


def _writes(use, seen) -> bool:
    """Whether ``use`` may write into its operand's buffer (``_written``)."""
    op, i = use.owner, use.operand_number
    name = op.name
    if name in ("tensor.insert_slice", "tensor.insert") and i == 1:
        return True
    if name == "iree_linalg_ext.sort":
        return True
    if "operandSegmentSizes" in op.attributes and name.startswith(("linalg.", "iree_linalg")):
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        return i >= sum(segments[:-1])          # destination-style: the outs come last
    if name in VIEW_OPS and i == 0:
        return any(_written(r, seen) for r in op.results)
    aliases = pinned_carry(op, i)  # (IREE copies a carry that is not pinned before each use)
    return any(_written(v, seen) for v in aliases)


def pinned_carry(op, i: int) -> list[ir.Value]:
    """If operand ``i`` of ``op`` starts an ``scf.for`` or ``scf.while`` carry that
    ember-pin-loop-carries pinned: the block arguments that carry it and the loop's result,
    which share its buffer ([] otherwise)."""
    if op.name == "scf.for" and i >= 3:                 # lower, upper, step, then the inits
        args, result = [op.regions[0].blocks[0].arguments[i - 2]], op.results[i - 3]
    elif op.name == "scf.while" and forwards_arguments(op):  # the condition's, the body's
        args, result = [r.blocks[0].arguments[i] for r in op.regions], op.results[i]
    else:
        return []
    if not any(u.owner.name == "flow.tensor.barrier" for u in args[-1].uses):
        return []
    return [*args, result]


def forwards_arguments(loop) -> bool:
    """Whether the condition of the ``scf.while`` ``loop`` passes its arguments on to the body
    unchanged (as ember's lowering builds it), so that its carries are the loop's operands."""
    before = loop.regions[0].blocks[0]
    condition = before.operations[len(before.operations) - 1]
    return list(condition.operands)[1:] == list(before.arguments)


def donated_arguments(f) -> set[int]:
    """The indices of the arguments of ``f`` its caller gave up (ember-donate-buffers)."""
    if "ember.donation" not in f.attributes:
        return set()
    return set(list(ir.DenseI64ArrayAttr(f.attributes["ember.donation"]))[0::2])


# IREE quirk: tests/test_iree_quirks.py::test_argument_updated_in_place
@register
class ProtectArguments(Pass):
    """Give each argument the lowered program writes into a copy of its own to write into,
    and each pinned loop that writes into an argument a copy of its own (see the module
    docstring). Donated arguments are left to be written: the caller gave them up."""

    name = "ember-protect-arguments"
    summary = "Copy arguments the program writes into (IREE would update the caller's buffer)"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                if not f.regions[0].blocks:
                    continue
                block = f.regions[0].blocks[0]
                donated = donated_arguments(f)
                args = [a for i, a in enumerate(block.arguments) if i not in donated
                        and isinstance(a.type, ir.RankedTensorType)]
                loops = [(a, u) for a in args for u in a.uses
                         if pinned_carry(u.owner, u.operand_number) and _writes(u, set())]
                with ir.InsertionPoint(block.operations[0]):
                    for a, use in loops:                   # each loop a copy of its own
                        use.owner.operands[use.operand_number] = _fresh_copy(a)[0]
                    for a in args:
                        if _written(a):
                            copy, reader = _fresh_copy(a)
                            a.replace_all_uses_except(copy, reader)


def _fresh_copy(a: ir.Value):
    """(``a`` copied into a new buffer, the op reading ``a``). An integer or float tensor is
    multiplied, as integer bits, by a 1 behind an optimization barrier of its own (IREE would
    merge two copies that shared one): one elementwise pass, exact for every value, that IREE
    can neither fold nor elide. Other element types (complex) go through ``_padded_copy``."""
    t = ir.RankedTensorType(a.type)
    dt = t.element_type
    if not isinstance(dt, (ir.IntegerType, ir.FloatType)):
        return _padded_copy(a)
    bits = ir.IntegerType.get_signless(dt.width)
    one = optimization_barrier(arith.ConstantOp(bits, ir.IntegerAttr.get(bits, 1)).result)

    def body(x, _):
        if bits != dt:
            x = arith.BitcastOp(bits, x).result
        x = arith.MulIOp(x, one).result
        return [x if bits == dt else arith.BitcastOp(dt, x).result]

    rank = len(t.shape)
    init = tensor.EmptyOp(list(t.shape), dt).result
    (copy,) = generic([a], [identity_map(rank)], [init], [identity_map(rank)],
                      ["parallel"] * rank, body)
    return copy, copy.owner.operation


def _padded_copy(a: ir.Value):
    """``_fresh_copy`` for any element type: ``a`` inserted into a buffer one row longer, read
    back at an offset that is 0 behind an optimization barrier (two copies IREE makes)."""
    index = ir.IndexType.get()
    zero = optimization_barrier(arith.ConstantOp(index, ir.IntegerAttr.get(index, 0)).result)
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
