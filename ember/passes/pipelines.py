"""The stages between traced IR and what IREE receives, as visible lists of named passes."""

from __future__ import annotations

import os

from ember._mlir import ir
from ember.passes.registry import make_pass, run_pipeline

OPTIMIZE = ["ember-verify", "ember-batch", "ember-simplify", "ember-fuse", "ember-plan-memory"]
LOWER = ["ember-to-linalg", "canonicalize", "cse", "ember-donate-buffers"]


def steps(names):
    from ember.passes.registry import PASSES
    return [make_pass(n) if n in PASSES else n for n in names]


def fusion_enabled(fusion: bool | None = None) -> bool:
    """Whether ember-fuse runs: ``fusion`` if given, else on unless ``EMBER_NO_FUSION=1``."""
    if fusion is not None:
        return bool(fusion)
    return os.environ.get("EMBER_NO_FUSION", "") in ("", "0")


def optimized(module: ir.Module, fusion: bool | None = None) -> None:
    """"ember" -> "optimized": verify, batch (vmap), simplify, fuse (see fusion_enabled),
    plan memory."""
    names = OPTIMIZE if fusion_enabled(fusion) else [n for n in OPTIMIZE if n != "ember-fuse"]
    run_pipeline(module, steps(names))


def linalg(module: ir.Module) -> None:
    """"optimized" -> "linalg": lower every ember op, then tidy with upstream passes."""
    run_pipeline(module, steps(LOWER))
