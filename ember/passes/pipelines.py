"""The stages between traced IR and what IREE receives, as visible lists of named passes."""

from __future__ import annotations

from ember._mlir import ir
from ember.passes.registry import make_pass, run_pipeline

OPTIMIZE = ["ember-verify", "ember-batch", "ember-simplify", "ember-plan-memory"]
LOWER = ["ember-to-linalg", "canonicalize", "cse", "ember-donate-buffers"]


def steps(names):
    from ember.passes.registry import PASSES
    return [make_pass(n) if n in PASSES else n for n in names]


def optimized(module: ir.Module) -> None:
    """"ember" -> "optimized": verify, batch (vmap), simplify, plan memory."""
    run_pipeline(module, steps(OPTIMIZE))


def linalg(module: ir.Module) -> None:
    """"optimized" -> "linalg": lower every ember op, then tidy with upstream passes."""
    run_pipeline(module, steps(LOWER))
