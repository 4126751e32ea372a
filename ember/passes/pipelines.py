"""The stages between traced IR and what IREE receives, as visible lists of named passes."""

from __future__ import annotations

import os

from ember._mlir import ir
from ember.passes.registry import make_pass, run_pipeline

OPTIMIZE = ["ember-verify", "ember-batch", "ember-simplify", "ember-fuse", "ember-plan-memory"]
LOWER = ["ember-to-linalg", "canonicalize", "cse", "ember-protect-arguments",
         "ember-donate-buffers"]


def steps(names):
    from ember.passes.registry import PASSES
    out = []
    for n in names:
        name, _, options = n.partition("{")
        out.append(make_pass(name, options and "{" + options) if name in PASSES else n)
    return out


def fusion_enabled(fusion: bool | None = None) -> bool:
    """Whether ember-fuse runs: ``fusion`` if given, else on unless ``EMBER_NO_FUSION=1``."""
    if fusion is not None:
        return bool(fusion)
    return os.environ.get("EMBER_NO_FUSION", "") in ("", "0")


def optimized(module: ir.Module, fusion: bool | None = None,
              dispatch_regions: bool = True) -> None:
    """"ember" -> "optimized": verify, batch (vmap), simplify, fuse (see fusion_enabled),
    plan memory; ``dispatch_regions``: as for :func:`linalg`, which the fusions are for."""
    names = [n if n != "ember-fuse" or dispatch_regions
             else "ember-fuse{dispatch-regions=false}" for n in OPTIMIZE
             if n != "ember-fuse" or fusion_enabled(fusion)]
    run_pipeline(module, steps(names))


def linalg(module: ir.Module, dispatch_regions: bool = True, run_ahead: int | None = None,
           **traits: bool) -> None:
    """"optimized" -> "linalg": lower every ember op, then tidy with upstream passes;
    ``dispatch_regions``: fusions become IREE dispatch regions where IREE's codegen takes them
    (the CPU's; ``ember.backends.dispatch_regions``); ``run_ahead``: the steps of a host loop
    IREE may record ahead (default ``ember.config.loop_run_ahead``); ``traits``: the target's
    arithmetic (``float64``, ``exact_division``, ``outer_reductions``, ``exact_rounding``:
    ``ember.backends.traits``)."""
    from ember.config import config
    off = [name.replace("_", "-") + "=false" for name, on in
           {"dispatch_regions": dispatch_regions, **traits}.items() if not on]
    run_ahead = config.loop_run_ahead if run_ahead is None else run_ahead
    opts = "{" + " ".join([*off, f"run-ahead={run_ahead}"]) + "}"
    names = [n + opts if n == "ember-to-linalg" else n for n in LOWER]
    run_pipeline(module, steps(names))
