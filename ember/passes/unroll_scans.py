"""``ember-unroll-scans``: run several steps of a loop with a small step in each step of its
host loop.

IREE runs a loop from the host: each step of a ``scan`` or ``fori_loop`` is a command buffer
that the calling thread records and submits, and each op in it a dispatch, whatever the step
computes. A step that computes little (an RNN cell on a small batch) costs mostly that
overhead, where XLA's loop costs next to nothing. A scan of ``n`` steps, at least
``min-length``, whose step is small (its estimated work, ``op_work``, at most
``max-step-work``) and whose carries are small (at most ``max-carry-bytes``: IREE keeps
several copies of an unrolled step's carries alive) becomes a scan of ``n / k`` steps, each
running ``k`` steps of the original body (``k`` the largest power of two up to ``factor``
that divides ``n``): its xs are viewed as ``(n / k, k, ...)``, each copy of the body reads
its slice, and each copy's ys go into the group's ys at its position (copies in the reverse
order for ``reverse=True``; the ys keep their positions). A ``for`` of constant bounds
likewise, each copy at its index. This is what ``lax.scan(..., unroll=k)`` does when
traced, done on the IR: the scans that differentiation makes (a scan's backward pass is a
scan) and ``vmap`` makes are unrolled too. Bodies that hold loops of their own are left as
they are.

Example:
    ember-opt f.mlir --ember-unroll-scans='factor=8 max-step-work=4000000'
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ember._mlir import ir, tensor_type, walk
from ember.config import DEFAULT_SCAN_UNROLL
from ember.passes.liveness import tensor_bytes
from ember.passes.plan_memory import op_work
from ember.passes.registry import Pass, func_ops, register
from ember.rules.base import KERNEL_ATTR, aval_of_type, clone_block, emit
from ember.rules.lowering import int_constant

_LOOPS = ("ember.scan", "ember.while", "ember.for")


@register
@dataclasses.dataclass
class UnrollScans(Pass):
    """Run ``factor`` steps of a long scan with a small step in each step of its loop."""

    name = "ember-unroll-scans"
    summary = "Run several steps of a long scan with a small step in each loop step"
    factor: int = dataclasses.field(default=DEFAULT_SCAN_UNROLL, metadata={
        "help": "the most steps of the scan in one step of its loop (1: unroll nothing)"})
    max_step_work: float = dataclasses.field(default=4e6, metadata={
        "help": "unroll only scans whose step's estimated work (elements, flops for "
                "contractions) is at most this"})
    min_length: int = dataclasses.field(default=16, metadata={
        "help": "unroll only scans of at least this many steps"})
    max_carry_bytes: int = dataclasses.field(default=128 * 1024, metadata={
        "help": "unroll only loops whose carries take at most this many bytes"})

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                for loop in [op for op in walk(f) if op.name in ("ember.scan", "ember.for")]:
                    k = self.unroll_factor(loop)
                    if k > 1:
                        with loop.location:
                            (_unroll_scan if loop.name == "ember.scan" else _unroll_for)(loop, k)

    def unroll_factor(self, loop) -> int:
        """The steps of ``loop`` (a scan, or a for of constant bounds) to run in each step of
        its loop (1: leave it)."""
        if KERNEL_ATTR in loop.attributes:      # it runs as one kernel (ember-loop-kernels)
            return 1
        n = _trip_count(loop, self.factor)
        body = loop.regions[0].blocks[0]
        ops = [op.operation for op in body.operations]
        if n is None or n < max(self.min_length, 2) or any(
                inner.name in _LOOPS for op in ops for inner in walk(op)):
            return 1
        if any(0 in aval_of_type(v.type).shape for v in [*loop.operands, *loop.results]):
            return 1
        if sum(op_work(op) for op in ops) > self.max_step_work or \
                _carry_bytes(loop) > self.max_carry_bytes:
            return 1
        k = 1
        while 2 * k <= self.factor and n % (2 * k) == 0:
            k *= 2
        return k


def _carry_bytes(loop) -> int:
    """The bytes of ``loop``'s carries. IREE keeps several of an unrolled step's carries
    alive at once, more memory than the rolled loop's and than ember's memory model
    predicts (docs/benchmarks.md); small carries (an RNN's state and its gradients) cost
    little."""
    nc = len(loop.results) if loop.name == "ember.for" else \
        ir.IntegerAttr(loop.attributes["num_carry"]).value
    return sum(tensor_bytes(r.type) for r in list(loop.results)[:nc])


def trip_count(loop) -> int | None:
    """The steps of ``loop``: a scan's length, a for's of constant bounds (None otherwise)."""
    if loop.name == "ember.scan":
        return ir.IntegerAttr(loop.attributes["length"]).value
    if loop.name != "ember.for":
        return None
    bounds = [_int_constant(v) for v in list(loop.operands)[:2]]
    return None if None in bounds else bounds[1] - bounds[0]


def _trip_count(loop, factor: int) -> int | None:
    """:func:`trip_count`, None too where the unrolled for's indices could overflow."""
    n = trip_count(loop)
    if n is None or loop.name == "ember.scan":
        return n
    # (the copies' indices, k * j and its offsets, must not overflow the index's dtype)
    info = np.iinfo(aval_of_type(loop.operands[0].type).dtype)
    bounds = [_int_constant(v) for v in list(loop.operands)[:2]]
    if (max(abs(b) for b in bounds) + 1) * 2 * factor > info.max:
        return None
    return n


def _int_constant(v) -> int | None:
    value = int_constant(v)
    return None if value is None else int(value.reshape(()))


def _unroll_scan(scan, k: int) -> None:
    nc = ir.IntegerAttr(scan.attributes["num_carry"]).value
    n = ir.IntegerAttr(scan.attributes["length"]).value
    reverse = ir.BoolAttr(scan.attributes["reverse"]).value
    carries, xs = list(scan.operands[:nc]), list(scan.operands[nc:])
    old = scan.regions[0].blocks[0]
    ys_avals = [aval_of_type(r.type) for r in list(scan.results)[nc:]]
    with ir.InsertionPoint(scan):
        groups = [emit("ember.reshape", [x], new_sizes=(n // k, k, *aval_of_type(x.type)
                                                        .shape[1:]))[0] for x in xs]
    attrs = _attributes(scan)
    attrs["length"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n // k)
    new = ir.Operation.create(
        "ember.scan", results=[v.type for v in carries] + [
            tensor_type((n // k, k, *a.shape[1:]), a.dtype) for a in ys_avals],
        operands=carries + groups, attributes=attrs, regions=1, ip=ir.InsertionPoint(scan))
    block = new.regions[0].blocks.append(*[v.type for v in carries],
                                         *[tensor_type(aval_of_type(g.type).shape[1:],
                                                       aval_of_type(g.type).dtype)
                                           for g in groups])
    args = list(block.arguments)
    carry, ys = args[:nc], {}
    with ir.InsertionPoint(block):
        for u in (range(k - 1, -1, -1) if reverse else range(k)):
            step = []
            for g in args[nc:]:
                shape = aval_of_type(g.type).shape
                row = emit("ember.slice", [g], start_indices=(u,) + (0,) * (len(shape) - 1),
                           limit_indices=(u + 1, *shape[1:]), strides=(1,) * len(shape))[0]
                step.append(emit("ember.reshape", [row], new_sizes=tuple(shape[1:]))[0])
            _, out = clone_block(old, carry + step)
            carry = out[:nc]
            ys[u] = [emit("ember.reshape", [y], new_sizes=(1, *aval_of_type(y.type).shape))[0]
                     for y in out[nc:]]
        stacked = [emit("ember.concatenate", [ys[u][j] for u in range(k)], dimension=0)[0]
                   for j in range(len(ys_avals))]
        ir.Operation.create("ember.yield", operands=carry + stacked)
    with ir.InsertionPoint(scan):
        flat = [emit("ember.reshape", [r], new_sizes=a.shape)[0]
                for r, a in zip(list(new.results)[nc:], ys_avals)]
    for r, v in zip(scan.results, list(new.results)[:nc] + flat):
        r.replace_all_uses_with(v)
    scan.erase()


def _unroll_for(loop, k: int) -> None:
    """``for i in [lo, hi)`` as ``for j in [lo, lo + (hi - lo) / k)``, whose step runs the
    body at ``i = k * j - (k - 1) * lo + u`` for ``u`` in ``0 .. k-1``."""
    lo, hi = (_int_constant(v) for v in list(loop.operands)[:2])
    index = aval_of_type(loop.operands[0].type).dtype

    def const(value):
        return emit("ember.constant", [], value=np.asarray(value, index))[0]
    with ir.InsertionPoint(loop):
        upper = const(lo + (hi - lo) // k)
    new = ir.Operation.create(
        "ember.for", results=[r.type for r in loop.results],
        operands=[loop.operands[0], upper, *list(loop.operands)[2:]],
        attributes=_attributes(loop),
        regions=1, ip=ir.InsertionPoint(loop))
    old = loop.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in old.arguments])
    j, *carry = list(block.arguments)
    with ir.InsertionPoint(block):
        first = emit("ember.mul", [j, const(k)])[0]
        for u in range(k):
            i = emit("ember.add", [first, const(u - (k - 1) * lo)])[0]
            _, carry = clone_block(old, [i, *carry])
        ir.Operation.create("ember.yield", operands=carry)
    for r, v in zip(loop.results, new.results):
        r.replace_all_uses_with(v)
    loop.erase()


def _attributes(op) -> dict:
    return {named.name: named.attr for named in
            (op.attributes[i] for i in range(len(op.attributes)))}
