"""The stages between traced IR and what IREE receives, as visible lists of named passes."""

from __future__ import annotations

import os

from ember._mlir import ir
from ember.config import config
from ember.passes.registry import make_pass, run_pipeline

OPTIMIZE = ["ember-verify", "ember-batch", "ember-simplify", "ember-tree-reductions", "ember-fuse",
            "ember-plan-memory"]
LOWER = ["ember-to-linalg", "canonicalize", "cse", "ember-limit-bindings",
         "ember-forward-while-carries",
         "ember-pin-loop-carries", "ember-protect-arguments", "ember-split-loop-inits",
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
              dispatch_regions: bool = True, max_bindings: int | None = None) -> None:
    """"ember" -> "optimized": verify, batch (vmap), simplify, fuse (see fusion_enabled),
    plan memory; ``dispatch_regions``: as for :func:`linalg`, which the fusions are for;
    ``max_bindings``: the most buffers one fusion may bind on the target (its ``max_bindings``
    trait; None: ember-fuse's default, the least of any target's)."""
    opts = [*([] if dispatch_regions else ["dispatch-regions=false"]),
            *([] if max_bindings is None else [f"max-bindings={max_bindings}"])]
    fuse = "ember-fuse" + ("{" + " ".join(opts) + "}" if opts else "")
    names = [n if n != "ember-fuse" else fuse for n in OPTIMIZE
             if n != "ember-fuse" or fusion_enabled(fusion)]
    run_pipeline(module, steps(names))


def linalg(module: ir.Module, dispatch_regions: bool = True, **traits: bool | int) -> None:
    """"optimized" -> "linalg": lower every ember op, then tidy with upstream passes;
    ``dispatch_regions``: fusions become IREE dispatch regions where IREE's codegen takes them
    (the CPU's; ``ember.backends.dispatch_regions``); a host loop runs in chunks of
    ``ember.config.loop_run_ahead`` steps (ember-to-linalg's run-ahead) where the target has
    ``loop_chunks``; ``traits``: the target's arithmetic (``float64``, ``exact_division``,
    ``outer_reductions``, ``exact_rounding``: ``ember.backends.traits``) and the most buffers
    one of its dispatches may bind (``max_bindings``: ember-limit-bindings')."""
    run_ahead = config.loop_run_ahead if traits.pop("loop_chunks", True) else 0
    max_bindings = traits.pop("max_bindings", None)
    off = [name.replace("_", "-") + "=false" for name, on in
           {"dispatch_regions": dispatch_regions, **traits}.items() if not on]
    opts = "{" + " ".join([*off, f"run-ahead={run_ahead}"]) + "}"
    names = [n + opts if n == "ember-to-linalg" else
             n + f"{{max-bindings={max_bindings}}}"
             if n == "ember-limit-bindings" and max_bindings is not None else n for n in LOWER]
    run_pipeline(module, steps(names))
