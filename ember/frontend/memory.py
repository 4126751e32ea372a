"""The frontend side of memory planning: donation, memory budgets and ``memory_analysis()``.

``ember.jit`` records what the planner needs on the traced entry function (``ember.donate``:
the flat indices of donated argument leaves; ``ember.memory_budget``: bytes), the passes do
the planning (``ember-plan-memory``) and the ABI rewrite (``ember-donate-buffers``), and this
module calls a compiled program with donated buffers and reports the figures.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings

import iree.runtime as rt
import numpy as np

from ember import tree_util
from ember._mlir import ir
from ember._traceback import user_stacklevel
from ember.backends.array import Array
from ember.backends.runtime import alias_pairs, call_failure, device_mismatch, host_array, unalias
from ember.config import config
from ember.core import ShapeDtypeStruct
from ember.errors import (
    DonationError,
    DonationWarning,
    MemoryBudgetExceededError,
    MemoryBudgetWarning,
)
from ember.passes.plan_memory import Plan, donation_pairs, parse_size

__all__ = ["MemoryAnalysis", "parse_size", "donated_args", "annotate", "plan_of",
           "donation_of", "analysis", "donating_runner"]


def donated_args(fun_name, sig, argnames, nums, names, static_nums, static_names):
    """Check and complete ``donate_argnums``/``donate_argnames`` (each gets the other's
    parameters); raises DonationError for a static or unknown argument."""
    nums = set(nums)
    names = set(names)
    for n in nums:
        if not isinstance(n, int | np.integer) or isinstance(n, bool):
            raise DonationError(f"donate_argnums of {fun_name} must be ints, got {n!r}")
    for name in names:
        if not isinstance(name, str):
            raise DonationError(f"donate_argnames of {fun_name} must be strings, got {name!r}")
        if sig is not None and name not in sig.parameters and not any(
                p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            raise DonationError(f"donate_argnames {name!r} is not a parameter of {fun_name}")
        if name in argnames:
            nums.add(argnames.index(name))
    names |= {argnames[i] for i in nums if 0 <= i < len(argnames)}
    both = sorted(nums & set(static_nums)) + sorted(names & set(static_names) - {
        argnames[i] for i in nums & set(static_nums) if i < len(argnames)})
    if both:
        what = ", ".join(repr(argnames[b]) if isinstance(b, int) and b < len(argnames)
                         else repr(b) for b in both)
        raise DonationError(f"{fun_name}: argument {what} is both static and donated; a static "
                            "argument is a Python value with no buffer to donate")
    return frozenset(int(n) for n in nums), frozenset(names)


def _donated_leaves(jitfn, tree) -> list[int]:
    if not jitfn.donate_argnums and not jitfn.donate_argnames:
        return []
    paths, _ = tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(tree, list(range(tree.num_leaves))))
    out = []
    for i, (path, _) in enumerate(paths):
        top, key = path[0], path[1]
        top = getattr(top, "idx", top)
        key = getattr(key, "idx", getattr(key, "key", key))
        if top == 0 and key in jitfn.donate_argnums or top == 1 and (
                key in jitfn.donate_argnames):
            out.append(i)
    return out


def annotate(jitfn, lowered, leaves, tree, names) -> None:
    """Record the donated leaves and the memory budget on the traced entry function; raises
    DonationError for a donated leaf that is not an array."""
    donated = _donated_leaves(jitfn, tree)
    for i in donated:
        leaf = leaves[i]
        if not isinstance(leaf, Array | np.ndarray | ShapeDtypeStruct):
            raise DonationError(
                f"{jitfn.fun_name}: donated {names[i]} is a {type(leaf).__name__}, not an "
                "array; only arrays have buffers to donate (remove it from donate_argnums/"
                "donate_argnames)")
    lowered.leaf_names = names
    if not donated and jitfn.memory_budget is None:
        return
    module = lowered._stage("ember")
    main = _main(module)
    with module.context:
        if donated:
            main.attributes["ember.donate"] = ir.DenseI64ArrayAttr.get(donated)
        if jitfn.memory_budget is not None:
            main.attributes["ember.memory_budget"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), jitfn.memory_budget)
    lowered._text["ember"] = str(module)


def report(lowered) -> None:
    """Report donations that cannot be made (a warning, or DonationError when
    ``donation_strict`` is on) and a memory budget given to ``ember.jit`` that the planner
    could not meet (a warning)."""
    module = lowered._stage("optimized")
    main = _main(module)
    names = getattr(lowered, "leaf_names", None)
    with module.context, ir.Location.unknown():
        _, unusable = donation_pairs(main)
    for leaf, why in unusable:
        what = names[leaf] if names and leaf < len(names) else f"argument leaf #{leaf}"
        msg = (f"{lowered.fun_name}: donated {what} cannot be reused by any result: {why}. "
               "It is not donated")
        if config.donation_strict:
            raise DonationError(msg + " (donation_strict is on)")
        warnings.warn(msg + ".", DonationWarning, stacklevel=user_stacklevel())
    check_budget(lowered)


def _main(module: ir.Module):
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    for f in funcs:
        if ir.StringAttr(f.attributes["sym_name"]).value == "main":
            return f
    return funcs[0]


def plan_of(module: ir.Module) -> Plan:
    """The planner's record on the entry function of an "optimized" module."""
    return Plan.of(_main(module))


def planned_flags(module: ir.Module, flags) -> tuple[str, ...]:
    """IREE ``flags`` as the memory plan of an "optimized" ``module`` asks: without data
    tiling when the planner gave its packed operand copies up to meet a memory budget; with
    data tiling from IREE's global optimization when it kept them over the budget (whose
    packing IREE's figures showed leaner under recomputation: docs/benchmarks.md).

    Example:
        >>> planned_flags(lowered._stage("optimized"), cpu.compiler_flags())[-1]
        '--iree-opt-data-tiling=false'
    """
    flags = tuple(flags)
    plan = plan_of(module)
    if plan.packing == "kept":
        return tuple("--iree-global-opt-data-tiling=true" if f == "--iree-opt-data-tiling=true"
                     else f for f in flags)
    if plan.data_tiling:
        return flags
    return tuple(f for f in flags if not f.startswith(("--iree-opt-data-tiling",
                                                       "--iree-global-opt-data-tiling"))) + (
        "--iree-opt-data-tiling=false",)


def donation_of(module: ir.Module) -> list[tuple[int, int]]:
    """(argument leaf, result) pairs of a lowered module's donations, in ABI order."""
    main = _main(module)
    if "arg_attrs" not in main.attributes:
        return []
    pairs = []
    for attrs in ir.ArrayAttr(main.attributes["arg_attrs"]):
        attrs = ir.DictAttr(attrs)
        if "donation.argument" in attrs:
            pairs.append((ir.IntegerAttr(attrs["donation.argument"]).value,
                          ir.IntegerAttr(attrs["iree.abi.output"]).value))
    return pairs


def donated_leaves_of(module: ir.Module) -> tuple[int, ...]:
    """The argument leaves ``ember.jit`` was asked to donate (``ember.donate``)."""
    main = _main(module)
    if "ember.donate" not in main.attributes:
        return ()
    return tuple(ir.DenseI64ArrayAttr(main.attributes["ember.donate"]))


def budget_of(lowered) -> int | None:
    """The memory budget given to ``ember.jit`` for this program (bytes), or None."""
    main = _main(lowered._stage("ember"))
    if "ember.memory_budget" not in main.attributes:
        return None
    return ir.IntegerAttr(main.attributes["ember.memory_budget"]).value


def check_budget(lowered) -> None:
    """Warn (or, with ``memory_budget_strict``, raise MemoryBudgetExceededError) when a
    budget given to ``ember.jit`` is missed: judged by IREE's figure when the compile read
    it, else by the plan."""
    budget = budget_of(lowered)
    if budget is None:
        return
    plan = plan_of(lowered._stage("optimized"))
    iree = lowered.iree_transient
    if iree is None and not plan.budget_missed or iree is not None and iree <= budget:
        return
    if iree is None:
        msg = (f"{lowered.fun_name}: the memory budget of {budget} bytes is missed by "
               f"{plan.budget_missed} bytes (planned peak {plan.peak_bytes} bytes at "
               f"{plan.peak_op})")
    else:
        msg = (f"{lowered.fun_name}: the memory budget of {budget} bytes is missed: IREE's "
               f"transient memory is {iree} bytes, ember's plan predicted "
               f"{plan.transient_bytes} (peak at {plan.peak_op})")
        if lowered.plan_budget:
            msg += f"; planned again under {lowered.plan_budget} bytes"
    if plan.budget_missed:
        msg += ("; nothing cheap is left to recompute"
                f"{'' if plan.data_tiling else ', and data tiling is off already'}")
    if config.memory_budget_strict:
        raise MemoryBudgetExceededError(msg + " (memory_budget_strict is on)")
    warnings.warn(msg, MemoryBudgetWarning, stacklevel=user_stacklevel())


@dataclasses.dataclass(frozen=True)
class MemoryAnalysis:
    """Memory of one compiled program, in bytes: ember's plan and IREE's own figure.

    ``temp_size_in_bytes`` is ember's predicted peak of temporaries (live values that are
    neither arguments nor results). ``iree_transient_size_in_bytes`` is IREE's own figure
    (``transient-memory-size``): its temporaries and the results it writes into buffers of
    its own (not into donated storage); ``transient_size_in_bytes`` is ember's prediction of
    it, temporaries plus outputs less aliased storage. ``peak_size_in_bytes`` is arguments
    plus ember's peak of live results and temporaries, less the donated (aliased) storage.
    """

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    peak_size_in_bytes: int
    transient_size_in_bytes: int
    iree_transient_size_in_bytes: int
    peak_op: str
    unplanned_temp_peak_in_bytes: int
    budget_in_bytes: int
    budget_missed_in_bytes: int
    # What the budget was judged by: "IREE" (its figure, read when the program compiled) or
    # "ember plan" (the prediction: the program was compiled without a budget of ``jit``)
    budget_judged_by: str = "ember plan"
    # IREE's data tiling (packed matmul operands) for this program on the CPU: "on"; "on,
    # kept over the model's budget" (from IREE's global optimization: IREE's figure met the
    # budget); "off, given up to meet the budget" (its products run 1.1-2x slower); "off,
    # matrix-vector products only"
    data_tiling: str = "on"

    def __str__(self):
        rows = [("arguments", self.argument_size_in_bytes),
                ("outputs", self.output_size_in_bytes),
                ("aliased (donated)", self.alias_size_in_bytes),
                ("temporaries (ember plan)", self.temp_size_in_bytes),
                ("transient (ember plan)", self.transient_size_in_bytes),
                ("transient (IREE)", self.iree_transient_size_in_bytes),
                ("peak (ember plan)", self.peak_size_in_bytes)]
        if self.budget_in_bytes:
            rows.append((f"budget ({self.budget_judged_by})", self.budget_in_bytes))
            rows.append(("budget missed by", self.budget_missed_in_bytes))
        lines = [f"{name:<26}{value:>14,d}" for name, value in rows]
        return "\n".join(lines + [f"{'peak at':<26}{self.peak_op}",
                                  f"{'data tiling':<26}{self.data_tiling}"])


def analysis(lowered) -> MemoryAnalysis:
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics

    module = lowered._stage("optimized")
    plan = plan_of(module)
    budget = budget_of(lowered)
    if lowered.iree_transient is not None and lowered.backend == "cpu":
        iree = lowered.iree_transient    # read when it compiled, to judge its budget
    else:
        flags, fallbacks = lowered.iree_flags(cpu, {})
        iree = program_statistics(lowered.as_text("linalg"), flags,
                                  fallbacks=fallbacks).transient_memory_size
    judged = lowered.iree_transient is not None
    if budget is None:
        budget, missed = plan.budget, plan.budget_missed
    else:
        missed = max(0, (lowered.iree_transient if judged else plan.peak_bytes) - budget)
    return MemoryAnalysis(
        argument_size_in_bytes=plan.argument_bytes, output_size_in_bytes=plan.output_bytes,
        alias_size_in_bytes=plan.alias_bytes, temp_size_in_bytes=plan.temp_bytes,
        peak_size_in_bytes=plan.argument_bytes + plan.peak_bytes - plan.alias_bytes,
        transient_size_in_bytes=plan.transient_bytes, iree_transient_size_in_bytes=iree,
        peak_op=plan.peak_op, unplanned_temp_peak_in_bytes=plan.unplanned_peak_bytes,
        budget_in_bytes=budget, budget_missed_in_bytes=missed,
        budget_judged_by="IREE" if judged else "ember plan",
        data_tiling={"kept": "on, kept over the model's budget",
                     "given-up": "off, given up to meet the budget"}.get(
            plan.packing, "on" if plan.data_tiling else "off, matrix-vector products only"))


def donating_runner(compiled):
    """``run(leaves)``: call ``compiled`` passing each donated argument's buffer as the
    storage of its result; donated Arrays are deleted afterwards. What does not change from
    call to call is bound once (as ``Executable.runner`` does for programs without
    donation): a donated 256x256 update ran 0.09 ms slower than one without donation
    when all of it was worked out at every call."""
    donation = compiled.donation
    name = compiled.lowered.fun_name
    donated = sorted(set(compiled.donated_leaves))
    ex = compiled.executable
    invoke, function, device = ex.invoke, ex.function, ex.device
    space, upload = device.space, device.upload
    in_avals, out_avals = compiled.in_avals, compiled.out_avals
    n_in, n_out = len(in_avals), len(out_avals)
    buffer_view, variant_list = rt.HalBufferView, rt.VmVariantList
    # A result may still be a kept argument's buffer (see Executable.runner); those of the
    # donated ones are theirs to keep.
    pairs = [(i, j) for i, j in alias_pairs(in_avals, out_avals) if j not in donated]
    used = [a for a, _ in donation]     # the donations a result takes (others warned about)

    def check(leaves):
        seen: dict[int, int] = {}
        for a in donated:
            leaf = leaves[a]
            if isinstance(leaf, Array | np.ndarray):
                if id(leaf) in seen:
                    raise DonationError(f"{name}: the same array is donated twice in one call "
                                        f"(argument leaves #{seen[id(leaf)]} and #{a})")
                seen[id(leaf)] = a
        for i, leaf in enumerate(leaves):
            if id(leaf) in seen and i != seen[id(leaf)]:
                raise DonationError(f"{name}: the array donated as argument leaf "
                                    f"#{seen[id(leaf)]} is also passed as leaf #{i}; its "
                                    "buffer would be overwritten while read")

    def run(leaves):
        if n_in > 1:                    # (one argument cannot be passed twice)
            check(leaves)
        for leaf in leaves:
            if type(leaf) is Array and leaf.device.space is not space:
                raise device_mismatch(leaves, Array, device)
        taken = _take_buffers(leaves, used, name)
        try:
            args = variant_list(n_in + len(donation))
            views = []
            for i, (leaf, aval) in enumerate(zip(leaves, in_avals)):
                bv = taken.get(i)
                if bv is None:
                    bv = leaf._bv if type(leaf) is Array else upload(host_array(leaf, aval))
                views.append(bv)
                args.push_ref(bv)
            for a, _ in donation:
                args.push_ref(views[a].get_buffer())
            results = variant_list(n_out)
            try:
                invoke(function, args, results)
            except Exception as e:
                raise call_failure(e, device, out_avals) from None
        except BaseException:
            _give_back(leaves, taken)
            raise
        outs = [Array(results.get_as_object(i, buffer_view), device, aval)
                for i, aval in enumerate(out_avals)]
        if pairs:
            unalias(outs, pairs, views)
        return outs
    return run


# Held while a call takes the buffers of its donated Arrays (a few attribute writes).
_DONATION_LOCK = threading.Lock()


def _take_buffers(leaves, donated, name) -> dict:
    """{leaf: buffer view} of the donated Arrays among ``leaves``, each deleted (marked donated
    to ``name``) in one step under a lock: of two threads donating one Array at once, one gets
    its buffer and the other DonatedArrayError. (Both took it before, and both calls wrote
    into the one buffer: both results were wrong in 41 of 100 trials.)"""
    taken, shared = {}, []
    with _DONATION_LOCK:
        for a in donated:
            leaf = leaves[a]
            if not isinstance(leaf, Array):
                continue
            if leaf._bv is None:      # donated meanwhile, by another thread
                _give_back(leaves, taken)
                leaf._live_bv()       # raises DonatedArrayError
            if getattr(leaf, "_external", False):
                shared.append(a)
                continue
            taken[a] = leaf._bv
            leaf._mark_donated(name)
    # Memory shared with another library through DLPack (ember.backends.dlpack) is not
    # written into: the call gets a copy and the Array stays alive, as JAX keeps an array
    # that has external references.
    for a in shared:
        taken[a] = leaves[a].device.copy(leaves[a]._bv)
    return taken


def _give_back(leaves, taken) -> None:
    """Undo :func:`_take_buffers` for a call that did not run: the Arrays are theirs again."""
    for a, bv in taken.items():
        leaf = leaves[a]
        if leaf._bv is not None:        # a copy of shared memory: the Array was kept
            continue
        leaf.__class__ = Array
        leaf._bv = bv
        leaf._donated_to = None
