"""``ember-split-loop-inits``: let IREE free a loop's first carried buffer after its first step,
keep the buffers of carries that start empty apart (``_distinct_empties``), and give the
results of a loop that a branch returns buffers of their own (``_branch_results_apart``).

IREE 3.13 allocates the values that leave one of its execution regions in one block of
memory, freed when the last of them is. A loop starts from values computed before it, in
one region: its output buffers (a ``scan``'s ys, a ``tensor.empty`` the steps fill in
place, living through the loop) and its carries. A carry that each step computes anew (a
``scan`` that decays its buffer) is done with the buffer it started in after the first step,
but that buffer shared the ys buffers' block and lived through the loop too: a 64-step
``scan`` over a 1 MiB buffer kept 1 MiB more resident to its end (benchmarks/memory.py,
scan_update: 5.0-6.1 -> 4.0-4.3 MiB; JAX 3.7-4.3 MiB). A ``util.optimization_barrier`` ends a
region: one right after the op making each carry's init gives each init an allocation of
its own, and the loop's output buffers come after the last (a scan carrying a buffer it
decays and one it updates in place beside its ys: 6.6 -> 5.6 MiB, against barriers placed
together before the loop).

Only the inits of carries whose buffer is the loop's own (those ember-pin-loop-carries
pinned, the copies ember-protect-arguments gave them) that are computed from the function's
arguments are put behind a barrier: IREE's copy-on-write does not see through one, and a
constant behind it would be written into (ember/passes/pin_carries.py). A carry's init computed
from constants only (``zeros_like``) is made a constant by IREE, which the loop then copies;
a barrier on the constants it reads keeps it computed at each call (``_computed_each_call``).
"""

from __future__ import annotations

import numpy as np

from ember._mlir import arith, ir, tensor, walk_host
from ember.passes.protect_arguments import pinned_carry
from ember.passes.registry import Pass, PassError, func_ops, register
from ember.rules.base import aval_of_type
from ember.rules.lowering import distinct_copy, filled, optimization_barrier, scalar_const


@register
class SplitLoopInits(Pass):
    """Put the inits of each loop's own carries behind a barrier and its output buffers
    after it (see the module docstring)."""

    name = "ember-split-loop-inits"
    summary = "Allocate a loop's carries apart from its output buffers, so IREE frees them"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                for loop in [op for op in walk_host(f) if op.name in ("scf.for", "scf.while")]:
                    _distinct_empties(loop)
                    _split(loop)
                    _branch_results_apart(loop)


def _branch_results_apart(loop) -> None:
    """IREE 3.13 packs a loop's carries into one allocation; when an ``scf.if`` branch
    returns them as they leave the loop, its runtime then binds a null buffer ("indirect
    buffer reference slot 0 is out range of the declared binding capacity": a ``cond``
    running a ``scan`` of two carries whose step holds a ``cond``;
    tests/iree_quirks/loop_results_leaving_branch.mlir). Each such result passes through a
    barrier of its own before the branch's yield, which copies nothing."""
    block = loop.operation.block
    term = block.operations[len(block.operations) - 1]
    if term.name != "scf.yield" or block.owner.name != "scf.if":
        return
    for k, v in enumerate(list(term.operands)):
        if isinstance(v, ir.OpResult) and v.owner == loop.operation:
            with ir.InsertionPoint(term):
                term.operands[k] = optimization_barrier(v)


def _distinct_empties(loop) -> None:
    """IREE 3.13 gives loop carries that start from equal values one buffer: a scan's two ys,
    both starting from a ``tensor.empty`` (cse merges equal ones), came back equal. Barriers
    do not keep them apart, nor do fills of one value; fills of distinct values do. So
    the k-th carry of a type that starts empty starts filled with k instead (a memset of
    the ys buffer); bools, which have two values only, see :func:`_distinct_init`.

    The fills are computed at each call: IREE made a constant of a fill, and failed to
    compile loops starting from one ("successor operand type '!stream.resource<constant>'
    should match ... '<external>'": the gradient of two scans from one carry, a scan's second
    derivative; tests/iree_quirks/constant_fill_loop_inits.mlir).
    """
    count: dict = {}
    with ir.InsertionPoint(loop):
        for i, v in enumerate(list(loop.operands)):
            if not _made_by(v, loop, ("tensor.empty",)):
                continue
            k = count[str(v.type)] = count.get(str(v.type), -1) + 1
            if k:
                loop.operands[i] = _distinct_init(aval_of_type(v.type), k)


def _distinct_init(aval, k: int) -> ir.Value:
    """The k-th (k >= 1) of pairwise distinct values of type ``aval``, computed at each call
    (see :func:`_distinct_empties`): filled with k; a bool
    filled with k's parity, then with the elements at the set bits of k // 2 (counted in
    row-major order) flipped. A fill of k's parity alone gave the second and fourth bool ys of
    a loop one buffer: reverse mode stacks a mask per step for each select (lu_core's row
    swap: four), and its gradients read another step's masks (det's gradient was zero)."""
    if aval.dtype != bool or k == 1:
        return distinct_copy(filled(aval, k), aval)
    out = filled(aval, k % 2 == 1)
    flip = scalar_const(k % 2 == 0, aval.dtype)
    size = int(np.prod(aval.shape))
    bits = (k // 2).bit_length()
    if bits > size:     # (a tiny ys: 2 (size + 1) values at most; none of ember's is as small)
        raise PassError(f"ember-split-loop-inits: {k + 1} bool loop outputs of "
                        f"{aval.shape} cannot start apart")
    for j in range(bits):
        if (k // 2) >> j & 1:
            at = [arith.ConstantOp(ir.IndexType.get(), int(i)).result
                  for i in np.unravel_index(j, aval.shape)]
            out = tensor.InsertOp(flip, out, at).result
    # Computed at each call: IREE makes a fill with inserted elements a dense constant,
    # which the loop then wrote into through copies (an RNN's gradient ran 4x slower).
    return distinct_copy(out, aval)


def _computed_each_call(loop) -> None:
    """IREE 3.13 computes a carry's init made from constants only (``zeros_like(w)``) once,
    into a constant, and copies it for the loop to update in place: a scan updating a 1 MiB
    carry in place took 3 MiB of transient memory, 1 MiB when the init is computed at each
    call, as ember's plan has it. A barrier on the constants the init is computed from keeps
    IREE from making a constant of it (the barrier is on what is read, not on the carry,
    which a constant behind a barrier would be: see the module docstring)."""
    for i, v in enumerate(list(loop.operands)):
        if not (pinned_carry(loop, i) and _made_by(v, loop)) or _from_arguments(v) or \
                v.owner.name == "arith.constant":
            continue
        op = v.owner
        for k, x in enumerate(list(op.operands)):
            if _made_by(x, loop, ("arith.constant",)):
                with ir.InsertionPoint(op):
                    op.operands[k] = optimization_barrier(x)


def _split(loop) -> None:
    _computed_each_call(loop)
    operands = list(loop.operands)           # an scf.for's bounds are neither kind below
    empties = [i for i, v in enumerate(operands) if _made_by(v, loop, ("tensor.empty",))]
    carries = [i for i, v in enumerate(operands) if i not in empties and pinned_carry(loop, i)
               and _made_by(v, loop) and _from_arguments(v)]
    if not (empties and carries):
        return
    with ir.InsertionPoint(loop):
        for i in carries:         # each right after the op making it, in a region of its own
            loop.operands[i] = optimization_barrier(operands[i])
            loop.operands[i].owner.move_after(operands[i].owner)
        for i in empties:        # a fresh one: canonicalize and cse may have shared the first
            empty = operands[i].owner
            loop.operands[i] = empty.clone().results[0]
            if not list(empty.results[0].uses):
                empty.erase()


def _made_by(value, loop, names=None) -> bool:
    """Whether ``value`` is the result of an op in ``loop``'s block (named one of ``names``
    when given)."""
    return (isinstance(value, ir.OpResult) and value.owner.operation.block == loop.block
            and (names is None or value.owner.name in names))


def _from_arguments(value) -> bool:
    """Whether ``value`` is computed from an argument of its function (so that IREE cannot
    have made it a constant)."""
    seen, stack = set(), [value]
    while stack:
        v = stack.pop()
        if isinstance(v, ir.BlockArgument):
            if v.owner.owner.operation.name == "func.func":
                return True
            continue
        if v in seen:
            continue
        seen.add(v)
        stack.extend(v.owner.operands)
    return False
