"""``ember-loop-kernels``: a loop whose step computes little runs as one kernel.

IREE runs a loop from the host, each step a command buffer and each op of it a dispatch:
microseconds a step whatever it computes, where XLA compiles such a loop into its code
(``benchmarks/small_loops.py``). A ``scan``, ``for`` or ``while`` whose step is small enough
to run as scalar code in less time than that (its estimated work, ``op_work``, at most
``max-step-work``; every value in it at most ``max-value-bytes`` and all of them together at
most ``max-step-bytes``, which IREE keeps on the stack; at most ``max-bindings`` buffers read
and written) and that holds no loop, branch or call of its own gets the attribute
``ember.kernel`` (a ``while``: its condition and body together). ``ember-to-linalg`` then
lowers it into one ``flow.dispatch.region`` (see :mod:`ember.rules.scalarize`) where the
target takes dispatch regions and the lowered step is one it can run that way, and as a host
loop otherwise. ``ember-unroll-scans`` leaves these loops rolled.

Example:
    ember-opt f.mlir --ember-loop-kernels='max-step-work=4096'
"""

from __future__ import annotations

import dataclasses

from ember._mlir import captured, ir, walk
from ember.passes.liveness import tensor_bytes
from ember.passes.plan_memory import op_work
from ember.passes.registry import Pass, func_ops, register
from ember.passes.unroll_scans import trip_count
from ember.rules.base import KERNEL_ATTR

_LOOPS = ("ember.scan", "ember.for", "ember.while")
# Region ops a kernel's step may not hold: their lowerings are host control flow or calls.
_HOST = ("ember.scan", "ember.while", "ember.for", "ember.cond", "ember.call", "ember.fusion")


@register
@dataclasses.dataclass
class LoopKernels(Pass):
    """Mark loops whose step computes little ``ember.kernel``: each runs as one kernel."""

    name = "ember-loop-kernels"
    summary = "Run a loop whose step computes little as one kernel"
    max_step_work: float = dataclasses.field(default=16384.0, metadata={
        "help": "a kernel's step computes at most this estimated work (elements, flops for "
                "contractions; 0: no kernels)"})
    max_value_bytes: int = dataclasses.field(default=4096, metadata={
        "help": "each value a kernel's step computes or carries takes at most this many "
                "bytes"})
    max_step_bytes: int = dataclasses.field(default=16384, metadata={
        "help": "the values a kernel's step computes and carries take at most this many "
                "bytes together (IREE keeps them on the stack, 32 KiB a workgroup)"})
    max_bindings: int = dataclasses.field(default=16, metadata={
        "help": "a kernel reads and writes at most this many buffers (the least any "
                "target's dispatch may bind: ember-limit-bindings)"})

    def run(self, module: ir.Module) -> None:
        with module.context:
            for f in func_ops(module):
                for loop in [op for op in walk(f) if op.name in _LOOPS]:
                    if self.fits(loop):
                        loop.attributes[KERNEL_ATTR] = ir.UnitAttr.get()

    def fits(self, loop) -> bool:
        """Whether ``loop``'s step is small enough to run as one kernel."""
        blocks = [r.blocks[0] for r in loop.regions]    # (a while's condition and body)
        ops = [op.operation for b in blocks for op in b.operations]
        if self.max_step_work <= 0 or _trips(loop) < 2 or any(
                inner.name in _HOST for op in ops for inner in walk(op)):
            return False
        args = [a for b in blocks for a in b.arguments]
        values = [*args, *(r for op in ops for r in op.results)]
        if not all(isinstance(v.type, ir.RankedTensorType)
                   and ir.RankedTensorType(v.type).has_static_shape
                   and isinstance(ir.RankedTensorType(v.type).element_type,
                                  ir.IntegerType | ir.FloatType) for v in values):
            return False    # (complex values: left to the host loop, untried in kernels)
        # (IREE 3.13 folds a carry's unit dimension with a reshape it then moves out of the
        # dispatch region, above the loop that defines the carry: a crash)
        if any(1 in ir.RankedTensorType(v.type).shape for v in [*args, *loop.results]):
            return False
        sizes = [tensor_bytes(v.type) for v in values]
        return (_buffers(loop) <= self.max_bindings
                and sum(op_work(op) for op in ops) <= self.max_step_work
                and max(sizes, default=0) <= self.max_value_bytes
                and sum(sizes) <= self.max_step_bytes)


def _buffers(loop) -> int:
    """The buffers a kernel of ``loop`` binds at most: its operands and results and the
    tensors from outside that its step reads."""
    read = {*captured(loop), *loop.operands}
    return sum(isinstance(v.type, ir.RankedTensorType) for v in read) + len(loop.results)


def _trips(loop) -> float:
    """The steps of ``loop`` (inf where its bounds are traced or it is a while): a loop of
    one step is its body, which MLIR's canonicalization inlines."""
    n = trip_count(loop)
    return float("inf") if n is None else n
