"""``ember.checkpoint`` (alias ``ember.remat``): a region whose results are recomputed rather
than kept alive, as JAX's ``jax.checkpoint``.

Traced, a checkpointed function becomes a private ``func.func`` called by an ``ember.call``
that carries ``ember.checkpoint = "<policy>"``. Its results are what the memory planner may
recompute next to their later uses when a function's peak exceeds its memory budget (at any
cost, unlike ordinary values, which must be cheap): with ``nothing_saveable`` every result,
with ``dots_saveable`` those not computed by a contraction (``dot_general``), with
``everything_saveable`` none. It is also the hook reverse-mode differentiation will use to
decide which residuals to save. Without a budget it changes nothing: results are identical.
"""

from __future__ import annotations

import functools

from ember._mlir import ir
from ember.errors import ArgumentError
from ember.frontend import tracing
from ember.passes.plan_memory import CHECKPOINT_ATTR, POLICIES

__all__ = ["checkpoint", "remat", "POLICIES"]


def checkpoint(fun=None, *, policy: str | None = None, static_argnums=()):
    """Mark ``fun`` so that its results are recomputed where needed instead of kept alive.

    ``policy`` is one of JAX's names: ``"nothing_saveable"`` (the default: recompute
    everything), ``"dots_saveable"`` (keep results of contractions) or
    ``"everything_saveable"`` (keep everything: no recomputation). JAX's policy functions of
    the same names (``jax.checkpoint_policies.dots_saveable``) are accepted too.

    Example:
        >>> block = ember.checkpoint(lambda x: enp.tanh(x @ w) * 2, policy="dots_saveable")
        >>> f = ember.jit(lambda x: block(block(x)), memory_budget="64MiB")
    """
    if fun is None:
        return functools.partial(checkpoint, policy=policy, static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"ember.checkpoint needs a callable, got {type(fun).__name__}")
    name = _policy_name(policy)
    from ember.frontend.api import JitFunction

    jitted = JitFunction(fun, static_argnums=static_argnums)

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        if not tracing._TRACES:
            return jitted(*args, **kwargs)
        outer = tracing.current_trace()
        before = set(_calls(outer.block))
        out = jitted(*args, **kwargs)
        with outer.module.context:
            for op in _calls(outer.block):
                if op not in before:
                    op.attributes[CHECKPOINT_ATTR] = ir.StringAttr.get(name)
        return out

    wrapper.policy = name
    return wrapper


remat = checkpoint


def _policy_name(policy) -> str:
    if policy is None:
        return "nothing_saveable"
    if callable(policy):
        policy = getattr(policy, "__name__", "")
    if policy not in POLICIES:
        raise ArgumentError(f"checkpoint policy {policy!r} is not supported; use one of "
                            f"{', '.join(POLICIES)}")
    return policy


def _calls(block):
    return [op.operation for op in block.operations if op.operation.name == "ember.call"]
