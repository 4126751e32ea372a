"""``ember-auto-checkpoint``: under a memory budget, checkpoint segments of the forward pass
of each differentiated function, as a user would with ``ember.checkpoint`` around layers.

Reverse mode keeps the residuals of the whole forward pass alive until the backward pass
reads them; the planner's rematerialization (``ember-plan-memory``) recomputes values op by
op from what is kept, which cannot drop a layer whose values come from reductions (softmax's
max and sum). Checkpointing a segment of layers drops its residuals: the backward pass
recomputes the segment from its inputs when it reaches it (the same machinery as a
hand-placed ``ember.checkpoint``). With ``dots_saveable`` a segment keeps its products'
results and recomputes only the cheap rest (an attention's softmax, activations, norms);
with ``nothing_saveable`` it keeps nothing and recomputes its products too.

For each ``ember.vjp`` in a function with a budget, the pass:

1. finds the cut points of the callee's forward ops: positions where no more bytes cross
   from the ops before to the ops after than the largest value the callee makes (between
   layers, the activation and little else);
2. cuts the forward pass into ``S`` segments of about equal work at those points (``S`` of
   2, 4, 8, 16, 32, as many as there are cuts) and checkpoints the first ``j`` of them
   (never the last, whose backward pass starts at once);
3. judges each choice by ember's memory model of the whole differentiated program (a copy of
   the module through ember-differentiate, ember-batch, ember-simplify, ember-fuse and
   ember-plan-memory without the budget, about a second each for an 8-block transformer),
   first with ``dots_saveable``, then, if no choice fits, with ``nothing_saveable``: for the
   ``S`` whose peak with every segment but the last checkpointed is lowest among those that
   fit the budget, the least ``j`` whose peak fits it (found by bisection); if no ``S`` fits
   with either policy, every segment but the last of the ``S`` with the lowest peak (saving
   nothing), when that is below the peak without checkpoints.

Ops that are not plain computation (calls, ``custom_vjp``, nested ``jvp``/``vjp``) are never
inside a segment: hand-placed checkpoints stay as they are. The budget is read as
``ember-plan-memory`` reads it (``budget``, else ``ember.memory_budget`` on the function,
else ``default-budget``); without one the pass does nothing.

Example:
    ember-opt f.mlir --ember-auto-checkpoint='budget=16MiB'
"""

from __future__ import annotations

import dataclasses
import itertools

from ember._mlir import ir, walk
from ember.passes.liveness import tensor_bytes, top_level
from ember.passes.plan_memory import BudgetOptions, Plan, op_work
from ember.passes.registry import Pass, PassError, func_ops, make_pass, register, run_pipeline
from ember.rules.autodiff import inputs_of
from ember.rules.base import CHECKPOINT_ATTR, callee_of

# Ops a segment never holds (they split segments). A custom JVP (ember.nn's softmax, gelu)
# is differentiated inside a checkpoint as outside it, so it is plain computation here: kept
# out, it split every layer around its activation and nothing fit a budget.
NOT_IN_SEGMENT = ("ember.call", "ember.custom_vjp_call", "ember.jvp", "ember.vjp",
                  "ember.vmap")
# The passes a trial runs on a copy of the module, to read the model's peak.
TRIAL = ("ember-differentiate", "ember-batch", "ember-simplify", "ember-fuse",
         "ember-plan-memory")
SEGMENT_COUNTS = (2, 4, 8, 16, 32)
# The policies segments are checkpointed with, tried in this order: saving the products'
# results recomputes only what is cheap (elementwise ops, reductions); saving nothing also
# recomputes the products, for budgets the first cannot meet.
POLICIES = ("dots_saveable", "nothing_saveable")


@register
@dataclasses.dataclass
class AutoCheckpoint(BudgetOptions, Pass):
    """Checkpoint segments of differentiated forward passes to meet a memory budget."""

    name = "ember-auto-checkpoint"
    summary = "Under a memory budget, checkpoint segments of each differentiated function"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            # By name: planning a vjp erases its callee when nothing else calls it, and an
            # op held across that is freed memory (reading it crashed the process).
            names = [ir.StringAttr(f.attributes["sym_name"]).value for f in func_ops(module)]
            for name in names:
                table = ir.SymbolTable(module.operation)
                if name not in table:
                    continue
                f = table[name]
                budget = self.budget_of(f)
                if budget is None or not f.regions[0].blocks:
                    continue
                count = sum(o.name == "ember.vjp" for o in walk(f.operation))
                for k in range(count):
                    _plan_vjp(module, name, k, budget)


def _plan_vjp(module, fname: str, k: int, budget: int) -> None:
    """Choose and apply the segments of the ``k``-th ember.vjp of function ``fname``."""
    vjp = _find_vjp(module, fname, k)
    ops, cuts, work = _cut_points(callee_of(vjp))
    if not cuts:
        return
    text = module.operation.get_asm(enable_debug_info=True)
    trials: dict = {}

    def peak(segments, policy=POLICIES[-1]) -> float:
        key = (tuple(segments), policy)
        if key not in trials:
            trials[key] = _trial_peak(module.context, text, fname, k, segments, policy)
        return trials[key]

    base = peak([])
    if base <= budget:
        return
    plans = {s: _segments(ops, cuts, work, s, s - 1) for s in SEGMENT_COUNTS
             if s <= len(cuts) + 1}
    for policy in POLICIES:
        fits = sorted((peak(p, policy), s) for s, p in plans.items()
                      if peak(p, policy) <= budget)
        if fits:
            break
    else:
        best = min(plans.values(), key=peak)
        if peak(best) < base:
            _outline(module, _find_vjp(module, fname, k), best, POLICIES[-1])
        return
    # The count with the most room needs the fewest segments checkpointed: the least j whose
    # peak fits (peaks fall as j grows).
    s = fits[0][1]
    lo, hi = 1, s - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if peak(_segments(ops, cuts, work, s, mid), policy) <= budget:
            hi = mid
        else:
            lo = mid + 1
    _outline(module, _find_vjp(module, fname, k), _segments(ops, cuts, work, s, lo), policy)


def _find_vjp(module, fname: str, k: int):
    f = ir.SymbolTable(module.operation)[fname]
    return [o for o in walk(f.operation) if o.name == "ember.vjp"][k]


def _cut_points(callee):
    """The callee's top-level ops (terminator excluded), the positions after which a segment
    may end (few bytes cross there), and each op's estimated work."""
    block = callee.regions[0].blocks[0]
    ops = [o.operation for o in block.operations][:-1]
    at = {}
    for i, op in enumerate(ops):
        for r in op.results:
            at[r] = i
    last: dict = {}
    for i, op in enumerate(ops + [list(block.operations)[-1].operation]):
        for v in inputs_of(op):
            if v in at:
                last[v] = i
    crossing = [0] * len(ops)
    for v, i in at.items():
        for p in range(i, last.get(v, i)):
            crossing[p] += tensor_bytes(v.type)
    largest = max((tensor_bytes(v.type) for v in at), default=0)
    work = [op_work(op) for op in ops]
    cuts = [i for i in range(len(ops) - 1) if 0 < crossing[i] <= largest
            and ops[i].name not in NOT_IN_SEGMENT]
    return ops, cuts, work


def _segments(ops, cuts, work, count: int, checkpointed: int) -> list[tuple[int, int]]:
    """The first ``checkpointed`` of ``count`` segments of about equal work, ending at cut
    points, as (first, last) op positions; ops that no segment may hold split them."""
    total = sum(work) or 1.0
    cumulative, ends = list(itertools.accumulate(work)), []
    for n in range(1, count):
        end = min(cuts, key=lambda i: abs(cumulative[i] - n * total / count))
        if end not in ends and (not ends or end > ends[-1]):
            ends.append(end)
    out, start = [], 0
    for end in ends[:checkpointed]:
        piece = start
        for i in range(start, end + 1):
            if ops[i].name in NOT_IN_SEGMENT:
                if i > piece:
                    out.append((piece, i - 1))
                piece = i + 1
        if end >= piece:
            out.append((piece, end))
        start = end + 1
    return [(a, b) for a, b in out if sum(work[a:b + 1]) > 0]


def _trial_peak(context, text: str, fname: str, k: int, segments, policy: str) -> float:
    """The model's peak of function ``fname`` with those segments checkpointed with
    ``policy``, on a copy of the module (``text``) planned without its budget; inf if a pass
    refuses it."""
    with context:
        module = ir.Module.parse(text)
        if segments:
            _outline(module, _find_vjp(module, fname, k), segments, policy)
        f = ir.SymbolTable(module.operation)[fname]
        if "ember.memory_budget" in f.attributes:
            del f.attributes["ember.memory_budget"]
        try:
            run_pipeline(module, [make_pass(n) for n in TRIAL])
        except (PassError, ir.MLIRError):
            return float("inf")
        return Plan.from_attribute(f.attributes["ember.memory"]).peak_bytes


def _outline(module, vjp, segments, policy: str) -> None:
    """Give ``vjp`` a copy of its callee in which each segment (op positions) is a private
    function called by an ``ember.call`` checkpointed with ``policy``."""
    table = ir.SymbolTable(module.operation)
    callee = callee_of(vjp)
    base = ir.StringAttr(callee.attributes["sym_name"]).value
    copy = callee.operation.clone(ip=ir.InsertionPoint(module.body))
    name = _unique(table, base + "_checkpointed")
    copy.attributes["sym_name"] = ir.StringAttr.get(name)
    copy.attributes["sym_visibility"] = ir.StringAttr.get("private")
    table.insert(copy)
    vjp.attributes["callee"] = ir.FlatSymbolRefAttr.get(name)
    if "sym_visibility" in callee.attributes and not _named(module, base):
        callee.operation.erase()        # nothing else names the original
    block = copy.regions[0].blocks[0]
    ops = [o.operation for o in block.operations][:-1]
    for n, (a, b) in enumerate(segments):
        _outline_segment(module, table, block, ops[a:b + 1], _unique(table, f"{name}_{n}"),
                         policy)


def _outline_segment(module, table, block, seg, name: str, policy: str) -> None:
    inside = set()
    for op in seg:
        inside.update(op.results)
    inputs = list(dict.fromkeys(v for op in seg for v in inputs_of(op) if v not in inside))
    outputs = [r for op in seg for r in op.results
               if any(_top(u.owner, block) not in seg for u in r.uses)]
    with seg[0].location:
        fn_type = ir.FunctionType.get([v.type for v in inputs], [r.type for r in outputs])
        fn = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get(name), "function_type": ir.TypeAttr.get(fn_type),
            "sym_visibility": ir.StringAttr.get("private")})
        module.body.append(fn)
        table.insert(fn)
        body = fn.regions[0].blocks.append(*[v.type for v in inputs])
        with ir.InsertionPoint(seg[0]):
            call = ir.Operation.create(
                "ember.call", results=[r.type for r in outputs], operands=inputs,
                attributes={"callee": ir.FlatSymbolRefAttr.get(name),
                            CHECKPOINT_ATTR: ir.StringAttr.get(policy)})
        for r, new in zip(outputs, call.results):
            for use in list(r.uses):
                owner = _top(use.owner, block)
                if owner is not None and owner not in seg:
                    use.owner.operands[use.operand_number] = new
        with ir.InsertionPoint(body):
            ret = ir.Operation.create("func.return", operands=outputs)
        for op in seg:
            op.move_before(ret)
        args = dict(zip(inputs, body.arguments))
        for op in seg:
            for inner in walk(op):
                for i, v in enumerate(inner.operands):
                    if v in args:
                        inner.operands[i] = args[v]


def _named(module, name: str) -> bool:
    """Whether an op of ``module`` names the symbol ``name`` (a call's callee, a custom
    derivative's fwd or bwd, ...)."""
    for op in walk(module.operation):
        for key in op.attributes:
            a = op.attributes[key]
            if isinstance(a, ir.FlatSymbolRefAttr) and a.value == name:
                return True
    return False


def _top(owner, block):
    owner = owner.operation if hasattr(owner, "operation") else owner
    return top_level(owner, block)


def _unique(table, base: str) -> str:
    name, i = base, 0
    while name in table:
        i += 1
        name = f"{base}_{i}"
    return name
