"""The stages between traced IR and what IREE receives, as visible lists of named passes.

The passes take only their options. This module is the one place that reads
``ember.config`` (and through it the environment) to choose them: :func:`optimize_steps` and
:func:`lower_steps` return the steps as text, :func:`pipeline_text` joins them into the
``--pass-pipeline`` string with which ``ember-opt`` replays exactly what ``jit`` ran.

Example:
    >>> pipeline_text(optimize_steps(fusion=False))
    'builtin.module(ember-verify,ember-auto-checkpoint,ember-differentiate,...)'
"""

from __future__ import annotations

from ember._mlir import ir
from ember.config import DEFAULT_SCAN_UNROLL, config
from ember.passes.plan_memory import parse_size
from ember.passes.registry import PASSES, make_pass, run_pipeline

OPTIMIZE = ["ember-verify", "ember-auto-checkpoint", "ember-differentiate", "ember-batch",
            "ember-spmd", "ember-simplify", "ember-loop-kernels", "ember-unroll-scans",
            "ember-value-ranges", "ember-tree-reductions", "ember-fuse", "ember-plan-memory"]
LOWER = ["ember-to-linalg", "canonicalize", "cse", "ember-limit-bindings",
         "ember-forward-while-carries",
         "ember-pin-loop-carries", "ember-protect-arguments", "ember-split-loop-inits",
         "ember-donate-buffers"]

_FROM_CONFIG = object()


def steps(names):
    """Pass objects for ember's steps (``name{options}``), upstream steps kept as text."""
    out = []
    for n in names:
        name, _, options = n.partition("{")
        out.append(make_pass(name, options and "{" + options) if name in PASSES else n)
    return out


def _with_options(name: str, options: list[str]) -> str:
    return name + ("{" + " ".join(options) + "}" if options else "")


def optimize_steps(*, fusion: bool | None = None, dispatch_regions: bool = True,
                   max_bindings: int | None = None, memory_planner=_FROM_CONFIG,
                   memory_budget=_FROM_CONFIG, plan_budget: int | None = None,
                   keep_data_tiling: bool = False) -> list[str]:
    """The steps "ember" -> "optimized": verify, checkpoint under a budget, differentiate,
    batch (vmap), simplify, mark loops with tiny steps as kernels, unroll loops with small
    steps, split long sums, fuse, plan memory.

    ``fusion``: whether ember-fuse runs (None: ``ember.config.fusion``, ``EMBER_NO_FUSION``);
    ``dispatch_regions``: as for :func:`lower_steps`, which the fusions and loop kernels are
    for;
    ``max_bindings``: the most buffers one fusion may bind on the target (None: ember-fuse's
    default, the least of any target's); ``memory_planner`` and ``memory_budget`` (the budget
    of functions that set none): ``ember.config``'s unless given; ``plan_budget``: a budget
    in bytes for every function, over their own (the tighter one ``jit`` plans under when
    IREE's figure missed the budget); ``keep_data_tiling``: ember-plan-memory keeps data
    tiling's packed copies over a budget (``give-up-data-tiling=false``).
    """
    if fusion is None:
        fusion = config.fusion
    if memory_planner is _FROM_CONFIG:
        memory_planner = config.memory_planner
    if memory_budget is _FROM_CONFIG:
        memory_budget = config.memory_budget
        what = "memory budget EMBER_MEMORY_BUDGET (config memory_budget)"
    else:
        what = "memory budget"
    fuse = [*([] if dispatch_regions else ["dispatch-regions=false"]),
            *([] if max_bindings is None else [f"max-bindings={max_bindings}"])]
    budgets = [*([] if plan_budget is None else [f"budget={plan_budget}"]),
               *([] if memory_budget in (None, "") else
                 [f"default-budget={parse_size(memory_budget, what)}"])]
    plan = [*([] if memory_planner else ["enabled=false"]),
            *(["give-up-data-tiling=false"] if keep_data_tiling else []), *budgets]
    out = []
    for name in OPTIMIZE:
        if name == "ember-fuse":
            if fusion:
                out.append(_with_options(name, fuse))
        elif name == "ember-plan-memory":
            out.append(_with_options(name, plan))
        elif name == "ember-unroll-scans":
            out.append(_with_options(name, [] if config.scan_unroll == DEFAULT_SCAN_UNROLL
                                     else [f"factor={config.scan_unroll}"]))
        elif name == "ember-loop-kernels":     # (a kernel is a dispatch region)
            on = config.loop_kernels and dispatch_regions
            out.append(_with_options(name, [] if on else ["max-step-work=0"]))
        elif name == "ember-auto-checkpoint":
            if memory_planner:
                out.append(_with_options(name, budgets))
        else:
            out.append(name)
    return out


def lower_steps(*, dispatch_regions: bool = True, run_ahead: int | None = None,
                **traits: bool | int) -> list[str]:
    """The steps "optimized" -> "linalg": lower every ember op, then tidy with upstream passes.

    ``dispatch_regions``: fusions become IREE dispatch regions where IREE's codegen takes them
    (the CPU's; ``ember.backends.dispatch_regions``); ``run_ahead``: a host loop runs in
    chunks of that many steps (None: ``ember.config.loop_run_ahead``; 0 where the target
    lacks ``loop_chunks``); ``traits``: the target's arithmetic (``float64``,
    ``exact_division``, ``outer_reductions``, ``exact_rounding``: ``ember.backends.traits``)
    and the most buffers one of its dispatches may bind (``max_bindings``).
    """
    if run_ahead is None:
        run_ahead = config.loop_run_ahead
    if not traits.pop("loop_chunks", True):
        run_ahead = 0
    max_bindings = traits.pop("max_bindings", None)
    off = [name.replace("_", "-") + "=false" for name, on in
           {"dispatch_regions": dispatch_regions, **traits}.items() if not on]
    out = []
    for name in LOWER:
        if name == "ember-to-linalg":
            out.append(_with_options(name, [*off, f"run-ahead={run_ahead}"]))
        elif name == "ember-limit-bindings":
            out.append(_with_options(name, [
                *([] if max_bindings is None else [f"max-bindings={max_bindings}"]),
                *([] if dispatch_regions else ["dispatch-regions=false"])]))
        else:
            out.append(name)
    return out


def pipeline_text(names: list[str]) -> str:
    """The ``--pass-pipeline`` string of a list of steps, for ``ember-opt``."""
    return "builtin.module(" + ",".join(names) + ")"


def run(module: ir.Module, names: list[str]) -> None:
    """Run the steps ``names`` (as :func:`optimize_steps` gives them) over ``module``."""
    run_pipeline(module, steps(names))
