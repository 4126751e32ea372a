"""``ember-limit-bindings``: keep IREE from forming a dispatch that binds more buffers than
its target allows.

IREE's runtime refuses to load a module with a dispatch of more bindings (distinct buffers
read or written) than the target has: 32 in the HAL module of every backend
(``IREE_HAL_MODULE_MAX_DESCRIPTOR_BINDING_COUNT``: "binding count 34 > 32" when the module
is loaded), 32 storage buffers on Mesa's lavapipe ("pipeline_layouts[0] declares 34 storage
buffers, exceeding device limit 32"), 16 on CUDA (``IREE_HAL_CUDA_MAX_DISPATCH_BINDING_COUNT``).
IREE 3.13's compiler does not check it: its elementwise fusion stops at 16 operands, but the
fusion of multi-use producers after it does not, and fused a chain of 32 adds (``a0 + a1 +
... + a32``, each add its own ``linalg.generic``) into one dispatch of 33 inputs. ember-fuse
keeps ember's own fusions within the limit (``max-bindings``); this pass does the same for
what IREE fuses.

In each block, every value gets the set of buffers a dispatch would bind for it if IREE
fused its producer into the dispatch reading it: a function argument, a loop carry, a
non-splat constant and the result of an op IREE does not fuse (a ``flow.dispatch.region``, a
``tensor.insert_slice``, which IREE makes a copy, a loop, a barrier) is one buffer; a
``tensor.empty`` or splat constant none; the result of any other op (linalg, tensor reshapes
and slices, scalar arithmetic) the union of its operands' sets. Counting every distinct value
is an upper bound: IREE gives the intermediate values of one execution region one buffer.
Where an op's operands and results would bind more than ``max-bindings`` buffers, its
operands from the producers that bring most are cut off until they fit: a linalg producer
becomes a ``flow.dispatch.region`` of its own, any other goes behind a
``util.optimization_barrier`` (IREE fuses across neither; a barrier makes it wait on the
host). A contraction's operands are buffers of their own.

Example:
    ``ember-opt in.mlir --ember-limit-bindings=max-bindings=16``
"""

from __future__ import annotations

import dataclasses

from ember._mlir import flow, ir
from ember.passes.registry import Pass, func_ops, register
from ember.rules.lowering import optimization_barrier

__all__ = ["LimitBindings"]

# Ops IREE never fuses into a dispatch with others: each result is a buffer of its own.
_UNFUSED = frozenset({"flow.dispatch.region", "tensor.insert_slice", "util.optimization_barrier",
                      "func.call", "scf.for", "scf.while", "scf.if", "scf.index_switch"})
# Dialects whose ops IREE may fuse into the dispatch of their consumer (or consumers into
# theirs); values of other dialects' ops (hal, flow, util) are buffers of their own.
_FUSED_DIALECTS = frozenset({"linalg", "iree_linalg_ext", "tensor", "arith", "math", "index",
                             "complex"})


@register
@dataclasses.dataclass
class LimitBindings(Pass):
    """Put barriers where IREE could fuse ops into a dispatch binding more than
    ``max-bindings`` buffers (see the module docstring).

    Example:
        >>> run_pipeline(module, [LimitBindings(max_bindings=16)])
    """

    name = "ember-limit-bindings"
    summary = "Keep IREE from fusing a dispatch that binds more buffers than the target allows"
    max_bindings: int = dataclasses.field(default=32, metadata={
        "help": "the most buffers (operands and results) one dispatch may bind; 0: no limit "
                "(32 on the CPU and Vulkan, 16 on CUDA: ember.backends' max_bindings trait)"})

    dispatch_regions: bool = dataclasses.field(default=True, metadata={
        "help": "cut a linalg producer off as a flow.dispatch.region of its own (false: "
                "always a barrier; the GPU backends, whose codegen does not take regions)"})

    def run(self, module: ir.Module) -> None:
        if not self.max_bindings:
            return
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                for block in f.regions[0].blocks:
                    self._block(block)

    def _block(self, block) -> None:
        buffers: dict = {}            # value of this block -> frozenset of buffers it binds

        def source(v) -> frozenset:
            if v in buffers:
                return buffers[v]
            # A block argument, a value from an enclosing block, a scalar of no op here.
            return frozenset((v,)) if _is_tensor(v) else frozenset()

        for op in list(block.operations):
            op = op.operation
            # Nested blocks (a loop's step, a branch) form dispatches of their own; a dispatch
            # region's body is one already, bounded by ember-fuse.
            if op.name != "flow.dispatch.region":
                for region in op.regions:
                    for inner in region.blocks:
                        if _dialect(op) not in ("linalg", "iree_linalg_ext"):
                            self._block(inner)
            if _fused(op) and not _own_buffer(op):
                reads = _reads(op)
                need = sum(_is_tensor(r) for r in op.results)
                # A contraction's operands are buffers of their own: IREE fuses no producer
                # into it (with data tiling, the producer fuses into the packing's dispatch).
                # Unions through contractions grew past the limit on a 16-layer MLP's
                # gradient, whose 17 barriers split it into 18 host-synchronized submissions.
                total = frozenset().union(*(
                    (frozenset((v,)) if source(v) else frozenset())
                    if _contraction(op) else source(v) for v in reads))
                if len(total) + need > self.max_bindings:
                    total = self._cut(op, reads, source, need)
                for r in op.results:
                    buffers[r] = total
            else:
                for r in op.results:
                    buffers[r] = frozenset((r,)) if _is_tensor(r) else frozenset()

    def _cut(self, op, reads, source, need) -> frozenset:
        """Cut ``op``'s operands from the producers that bring most buffers off (see the
        module's docstring) until its dispatch binds at most ``max_bindings``; the buffers it
        binds then."""
        # Only an operand bringing two buffers or more gains by a barrier (then one).
        cuttable = sorted((v for v in reads if _is_tensor(v) and len(source(v)) > 1),
                          key=lambda v: -len(source(v)))
        cut: dict = {}
        for v in cuttable:
            srcs = [frozenset((cut[w],)) if w in cut else source(w) for w in reads]
            if len(frozenset().union(*srcs)) + need <= self.max_bindings:
                break
            region = _own_dispatch(v) if self.dispatch_regions else None
            if region is not None:
                cut[v] = region
                continue
            with ir.InsertionPoint(op):
                cut[v] = optimization_barrier(v)
            for use in list(v.uses):
                owner = use.owner.operation
                if _within(owner, op):
                    owner.operands[use.operand_number] = cut[v]
        return frozenset().union(*(frozenset((cut[w],)) if w in cut else source(w)
                                   for w in reads))


def _own_dispatch(v):
    """``v``'s producer (a linalg op) wrapped in a ``flow.dispatch.region`` of its own, which
    IREE fuses with nothing: ``v`` is then one buffer for every op reading it. A region is
    asynchronous; a barrier made IREE wait on the host (a transformer's gradient: 30 barriers,
    22 submissions). Returns the region's result standing for ``v``, or None when its
    producer is no linalg op (a reshape, a slice, a block argument)."""
    owner = v.owner
    if isinstance(owner, ir.Block) or _dialect(owner) != "linalg":
        return None
    owner = owner.operation
    region = flow.DispatchRegionOp([r.type for r in owner.results], [], [],
                                   ip=ir.InsertionPoint(owner))
    block = region.body.blocks.append()
    results = list(owner.results)
    for r, new in zip(results, region.results):
        r.replace_all_uses_with(new)
    with ir.InsertionPoint(block):
        flow.ReturnOp(results)
    owner.move_before(list(block.operations)[0])
    return region.results[results.index(v)]


def _within(inner, op) -> bool:
    """Whether ``inner`` is ``op`` or nested in it."""
    while inner is not None and inner.name != "func.func":
        if inner == op:
            return True
        inner = inner.parent
    return False


def _dialect(op) -> str:
    return op.name.split(".", 1)[0]


def _fused(op) -> bool:
    return op.name not in _UNFUSED and _dialect(op) in _FUSED_DIALECTS


_CONTRACTIONS = frozenset({"linalg.matmul", "linalg.batch_matmul", "linalg.matvec",
                           "linalg.vecmat", "linalg.batch_matvec", "linalg.dot"})


def _contraction(op) -> bool:
    """A named contraction, or a ``linalg.generic`` of two inputs that multiplies them and
    accumulates along a reduction dimension (how ember lowers a transposed dot_general)."""
    if op.name in _CONTRACTIONS or op.name.startswith("linalg.conv"):
        return True
    if op.name != "linalg.generic" or "reduction" not in str(op.attributes["iterator_types"]):
        return False
    if len(op.operands) - len(op.results) != 2:
        return False
    names = {x.operation.name for x in op.regions[0].blocks[0].operations}
    return bool(names & {"arith.mulf", "arith.muli"}) and bool(
        names & {"arith.addf", "arith.addi"}) and names <= _CONTRACTION_BODY


_CONTRACTION_BODY = frozenset({"arith.mulf", "arith.muli", "arith.addf", "arith.addi",
                               "arith.extf", "arith.truncf", "arith.extsi", "arith.extui",
                               "arith.sitofp", "linalg.yield"})


def _own_buffer(op) -> bool:
    """A constant that is not a splat: IREE keeps it in a buffer (a splat is made inside the
    dispatch reading it, as a ``tensor.empty`` is)."""
    if op.name != "arith.constant" or not _is_tensor(op.results[0]):
        return False
    try:
        return not ir.DenseElementsAttr(op.attributes["value"]).is_splat
    except ValueError:          # a dense_resource constant
        return True


def _is_tensor(v) -> bool:
    return isinstance(v.type, ir.RankedTensorType)


def _reads(op) -> list:
    """The values ``op`` reads: its operands, then values from outside it that the ops in its
    regions read (a linalg.generic's body may read scalars computed before it)."""
    out = list(op.operands)
    inside = set()
    stack = [op]
    nested = []
    while stack:
        o = stack.pop()
        for region in o.regions:
            for b in region.blocks:
                inside.update(b.arguments)
                for x in b.operations:
                    x = x.operation
                    nested.append(x)
                    inside.update(x.results)
                    stack.append(x)
    for x in nested:
        out.extend(v for v in x.operands if v not in inside)
    seen, unique = set(), []
    for v in out:
        if v not in seen:
            seen.add(v)
            unique.append(v)
    return unique
