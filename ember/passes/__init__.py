"""ember's passes: each registered by name in ``registry.PASSES``."""

from ember.passes import (  # noqa: F401  (registers the passes)
    auto_checkpoint,
    batch,
    differentiate,
    forward_while_carries,
    fuse,
    limit_bindings,
    loop_kernels,
    pin_carries,
    plan_memory,
    protect_arguments,
    simplify,
    split_loop_inits,
    spmd,
    to_linalg,
    tree_reductions,
    unroll_scans,
    value_ranges,
    verify,
)
from ember.passes.registry import PASSES, Pass, PassError, make_pass, run_pipeline

__all__ = ["PASSES", "Pass", "PassError", "make_pass", "run_pipeline"]
