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
from ember.passes.plan_memory import POLICIES
from ember.rules.base import CHECKPOINT_ATTR

__all__ = ["checkpoint", "remat", "POLICIES", "checkpoint_policies", "checkpoint_name"]


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
        policy = getattr(policy, "_ember_policy", None) or getattr(policy, "__name__", "")
    if policy.partition(":")[0] not in POLICIES:
        raise ArgumentError(f"checkpoint policy {policy!r} is not supported; use one of "
                            f"ember.checkpoint_policies: {', '.join(POLICIES)}")
    return policy


def _named_policy(name: str):
    def policy(*args, **kwargs):
        raise TypeError(f"ember.checkpoint_policies.{name.partition(':')[0]} is applied by "
                        "ember's compiler: pass it as checkpoint(..., policy=...)")
    policy.__name__ = name.partition(":")[0]
    policy._ember_policy = name
    return policy


class _Policies:
    """JAX's checkpoint policies (``jax.checkpoint_policies``), for ``checkpoint(policy=)``.

    Example:
        >>> block = ember.checkpoint(layer, policy=ember.checkpoint_policies.dots_saveable)
        >>> keep = ember.checkpoint_policies.save_only_these_names("attention")
    """

    everything_saveable = staticmethod(_named_policy("everything_saveable"))
    nothing_saveable = staticmethod(_named_policy("nothing_saveable"))
    dots_saveable = staticmethod(_named_policy("dots_saveable"))
    checkpoint_dots = dots_saveable
    dots_with_no_batch_dims_saveable = staticmethod(
        _named_policy("dots_with_no_batch_dims_saveable"))
    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def save_only_these_names(*names):
        """Save only the values named by ``checkpoint_name`` with one of ``names``."""
        return _named_policy("save_only_these_names:" + ",".join(names))

    @staticmethod
    def save_any_names_but_these(*names):
        """Save the named values except those named ``names``."""
        return _named_policy("save_any_names_but_these:" + ",".join(names))

    @staticmethod
    def save_from_both_policies(first, second):
        """Save what either policy saves."""
        return _named_policy(f"save_from_both_policies:{_policy_name(first)}|"
                             f"{_policy_name(second)}")


checkpoint_policies = _Policies()


def checkpoint_name(x, name: str):
    """``x``, named ``name`` for the checkpoint policies that save by name, as
    ``jax.ad_checkpoint.checkpoint_name``.

    Example:
        >>> h = ember.ad_checkpoint.checkpoint_name(x @ w, "proj")
    """
    if not tracing._TRACES:
        return x
    from ember import tree_util
    return tree_util.tree_map(
        lambda v: tracing.bind("ember.checkpoint_name", v, tag=str(name))[0], x)


def _calls(block):
    return [op.operation for op in block.operations if op.operation.name == "ember.call"]
