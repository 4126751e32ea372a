"""Structured control flow: cond, switch, while_loop, fori_loop, scan, map.

Each function traces its Python callables once, into the regions of one ember op
(``ember.cond``, ``ember.while``, ``ember.for``, ``ember.scan``), so it works on traced values
inside ``jit`` where Python ``if``/``for`` cannot. Carries, operands and outputs are pytrees.
As in JAX, branches and loop bodies must return the same pytree structure, shapes and dtypes
(a weakly typed initial carry, e.g. a Python scalar, is promoted to the body's dtype).

Example:
    >>> @ember.jit
    ... def collatz_steps(n):
    ...     def body(c):
    ...         n, k = c
    ...         n = ember.lax.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)
    ...         return n, k + 1
    ...     return ember.lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]
"""

from __future__ import annotations

import numpy as np

from ember import dtypes, tree_util
from ember.core import ShapedArray
from ember.errors import TracingError, UnsupportedDtypeError
from ember.frontend.eager import eager
from ember.frontend.tracing import RegionOpBuilder, Tracer, bind, current_trace
from ember.lax import _core as lax
from ember.lax import convenience

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]


# --- helpers ------------------------------------------------------------------------------

def _lift(x) -> Tracer:
    return current_trace().lift(x)


def _leaves(fn: str, what: str, tree_value):
    """Flatten an output pytree into tracers of the current trace."""
    leaves, tree = tree_util.tree_flatten(tree_value)
    out = []
    for i, leaf in enumerate(leaves):
        try:
            out.append(_lift(leaf))
        except (UnsupportedDtypeError, TypeError, ValueError):
            if isinstance(leaf, Tracer):
                raise
            raise TracingError(f"ember.lax.{fn}: {what} leaf {i} is a {type(leaf).__name__}, "
                               "not an array or scalar") from None
    return out, tree


def _paths(tree) -> list[str]:
    example = tree_util.tree_unflatten(tree, list(range(tree.num_leaves)))
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(example)[0]]


def _check_match(fn, what_a, tree_a, avals_a, what_b, tree_b, avals_b):
    """Raise a TracingError naming both sides unless the trees and types agree."""
    if tree_a != tree_b:
        raise TracingError(f"ember.lax.{fn}: {what_a} and {what_b} must have the same pytree "
                           f"structure, got {tree_a} vs {tree_b}")
    for path, a, b in zip(_paths(tree_a), avals_a, avals_b):
        if a.shape != b.shape or a.dtype != b.dtype:
            kind = "shapes" if a.shape != b.shape else "dtypes"
            raise TracingError(f"ember.lax.{fn}: {what_a}{path} has type {a.str_short()} but "
                               f"{what_b}{path} has type {b.str_short()} (the {kind} differ); "
                               "they must have equal shapes and dtypes")


def _convert(t: Tracer, dtype, weak: bool) -> Tracer:
    if t.dtype == dtype:
        return Tracer(t._trace, t.value, t.aval._replace(weak_type=weak), t.origin)
    return bind("ember.convert", t, new_dtype=np.dtype(dtype), _weak=weak)[0]


def _promote_weak(init: list[Tracer], outs) -> list[Tracer] | None:
    """JAX's rule: a weakly typed initial carry leaf takes the dtype the body gives it.

    Returns the promoted init, or None when nothing can be promoted.
    """
    changed = False
    new = []
    for t, o in zip(init, outs):
        if t.weak_type and t.shape == o.shape and t.dtype != o.dtype:
            new.append(_convert(t, o.dtype, o.weak_type))
            changed = True
        else:
            new.append(t)
    return new if changed else None


def _scalar(fn: str, what: str, x) -> Tracer:
    t = _lift(x)
    if t.shape != ():
        raise TracingError(f"ember.lax.{fn}: {what} must be a scalar, got {t.aval.str_short()}")
    return t


def _as_pred(fn: str, pred) -> Tracer:
    """A scalar bool tracer: bools as they are, numbers compared with zero (as JAX does)."""
    p = _scalar(fn, "the predicate", pred)
    if p.dtype == np.dtype(bool):
        return p
    zero = np.zeros((), p.dtype)
    return bind("ember.ne", p, zero)[0]


# --- cond / switch ------------------------------------------------------------------------

def _cond(fn, pred: Tracer, fun_a, name_a, fun_b, name_b):
    """Emit ``ember.cond``; ``fun_a``/``fun_b`` take no arguments and return pytrees."""
    with RegionOpBuilder("ember.cond", [pred], 2) as b:
        return _cond_body(fn, b, fun_a, name_a, fun_b, name_b)


def _cond_body(fn, b, fun_a, name_a, fun_b, name_b):
    trees = []
    for k, (fun, name) in enumerate(((fun_a, name_a), (fun_b, name_b))):
        box = {}

        def body(fun=fun, name=name, box=box):
            leaves, box["tree"] = _leaves(fn, f"{name} output", fun())
            return leaves
        b.trace_region(k, [], [], body)
        trees.append(box["tree"])
    ya, yb = b.yields
    _check_match(fn, f"{name_a} output", trees[0], [t.aval for t in ya],
                 f"{name_b} output", trees[1], [t.aval for t in yb])
    outs = b.finish(weak=[x.weak_type and y.weak_type for x, y in zip(ya, yb)])
    return tree_util.tree_unflatten(trees[0], outs)


@eager
def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, traced as one
    ``ember.cond``: both branches are traced and must return the same pytree structure,
    shapes and dtypes. ``pred`` is a scalar bool (a number counts as ``pred != 0``).

    Example:
        >>> ember.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
    """
    p = _as_pred("cond", pred)
    return _cond("cond", p, lambda: true_fun(*operands), "true_fun",
                 lambda: false_fun(*operands), "false_fun")


@eager
def switch(index, branches, *operands):
    """``branches[index](*operands)`` with ``index`` clamped into ``[0, len(branches) - 1]``
    (as JAX does); every branch is traced and must return the same types.

    Example:
        >>> ember.lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)
    """
    branches = list(branches)
    if not branches:
        raise ValueError("ember.lax.switch: branches must be a non-empty sequence")
    i = _scalar("switch", "the index", index)
    if i.dtype.kind not in "iub":
        raise TracingError(f"ember.lax.switch: the index must be a scalar integer, got "
                           f"{i.aval.str_short()}")
    n = len(branches)
    if n == 1:
        return branches[0](*operands)
    i = _convert(i, np.dtype(np.int32), False)
    i = bind("ember.max", i, np.zeros((), np.int32))[0]
    i = bind("ember.min", i, np.full((), n - 1, np.int32))[0]

    def pick(k):
        if k == n - 1:
            return branches[k](*operands)
        is_k = bind("ember.eq", i, np.full((), k, np.int32))[0]
        return _cond("switch", is_k, lambda: branches[k](*operands), f"branches[{k}]",
                     lambda: pick(k + 1), f"branches[{k + 1}]")
    return pick(0)


# --- loops --------------------------------------------------------------------------------

class _Retry(Exception):
    """A weakly typed initial carry was promoted: trace the loop again with ``init``."""

    def __init__(self, init):
        self.init = init


def _promoted_loop(attempt, init):
    """Run ``attempt(init, may_promote)``; once, retry with the promoted carry."""
    try:
        return attempt(init, True)
    except _Retry as r:
        return attempt(r.init, False)


def _finish_loop(fn, b, tree, init, out_tree, out_avals, may_promote, extra_weak=()):
    if may_promote and out_tree == tree:
        promoted = _promote_weak(init, out_avals)
        if promoted is not None:
            raise _Retry(promoted)
    avals = [t.aval for t in init]
    what = "init" if fn == "scan" else "init_val"
    body = "f carry output" if fn == "scan" else "body_fun output"
    _check_match(fn, what, tree, avals, body, out_tree, out_avals)
    return b.finish(weak=[t.weak_type and o.weak_type for t, o in zip(init, out_avals)]
                    + list(extra_weak))


@eager
def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)``, traced as one ``ember.while``.

    ``cond_fun`` returns a scalar bool; ``body_fun`` returns a carry of the same pytree
    structure, shapes and dtypes as ``init_val``.
    """
    leaves, tree = tree_util.tree_flatten(init_val)

    def attempt(init, may_promote):
        with RegionOpBuilder("ember.while", init, 2) as b:
            avals = [t.aval for t in init]
            origins = [t.origin for t in init]

            def cond_region(*args):
                out = cond_fun(tree_util.tree_unflatten(tree, list(args)))
                outs, otree = _leaves("while_loop", "cond_fun output", out)
                if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != np.dtype(bool):
                    got = ", ".join(o.aval.str_short() for o in outs) or "nothing"
                    raise TracingError("ember.lax.while_loop: cond_fun must return a scalar "
                                       f"bool, got {got} (structure {otree})")
                return outs
            b.trace_region(0, avals, origins, cond_region)
            box = {}

            def body_region(*args):
                out = body_fun(tree_util.tree_unflatten(tree, list(args)))
                outs, box["tree"] = _leaves("while_loop", "body_fun output", out)
                return outs
            outs = b.trace_region(1, avals, origins, body_region)
            results = _finish_loop("while_loop", b, tree, init, box["tree"],
                                   [t.aval for t in outs], may_promote)
            return tree_util.tree_unflatten(tree, results)
    return _promoted_loop(attempt, [_lift(x) for x in leaves])


def _index_dtype(lower: Tracer, upper: Tracer):
    for t in (lower, upper):
        if t.dtype.kind not in "iu":
            raise TracingError(f"ember.lax.fori_loop: lower and upper must be integers, got "
                               f"{lower.aval.str_short()} and {upper.aval.str_short()}")
    if lower.weak_type and not upper.weak_type:
        return upper.dtype, False
    if upper.weak_type and not lower.weak_type:
        return lower.dtype, False
    if lower.dtype != upper.dtype:
        return dtypes.canonicalize(np.promote_types(lower.dtype, upper.dtype)), False
    return lower.dtype, lower.weak_type and upper.weak_type


@eager
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``, traced as one ``ember.for``
    (a counted loop, ``scf.for``); the bounds may be Python ints or traced scalars.
    ``unroll``: as in ``scan``, for bounds that are Python ints (as in JAX).

    Example:
        >>> ember.lax.fori_loop(0, 512, lambda i, buf: buf.at[i].set(2 * x[i]), buf,
        ...                     unroll=8)
    """
    lo = _scalar("fori_loop", "lower", lower)
    hi = _scalar("fori_loop", "upper", upper)
    dtype, weak = _index_dtype(lo, hi)
    lo, hi = _convert(lo, dtype, weak), _convert(hi, dtype, weak)
    if unroll not in (None, 1, False):
        if not all(isinstance(b, int | np.integer) for b in (lower, upper)):
            raise TracingError("ember.lax.fori_loop: unroll needs a trip count known when "
                               "tracing (lower and upper Python ints), as in JAX")

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None
        return scan(step, (lo, init_val), None, length=max(int(upper) - int(lower), 0),
                    unroll=unroll)[0][1]
    leaves, tree = tree_util.tree_flatten(init_val)
    i_aval = ShapedArray((), np.dtype(dtype), weak)

    def attempt(init, may_promote):
        with RegionOpBuilder("ember.for", [lo, hi, *init], 1) as b:
            box = {}

            def body_region(i, *args):
                out = body_fun(i, tree_util.tree_unflatten(tree, list(args)))
                outs, box["tree"] = _leaves("fori_loop", "body_fun output", out)
                return outs
            outs = b.trace_region(0, [i_aval, *[t.aval for t in init]],
                                  [lo.origin | hi.origin] + [t.origin for t in init],
                                  body_region)
            results = _finish_loop("fori_loop", b, tree, init, box["tree"],
                                   [t.aval for t in outs], may_promote)
            return tree_util.tree_unflatten(tree, results)
    return _promoted_loop(attempt, [_lift(x) for x in leaves])


@eager
def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """JAX's ``lax.scan``: ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    the final carry and the ys stacked along a new leading axis. ``xs`` may be a pytree (or
    None with ``length``); ``reverse=True`` scans from the end (ys keep their positions).
    ``unroll=k``: each step of the loop runs ``f`` k times (True: the whole scan in one
    step), as in JAX; IREE runs a loop from the host, a command buffer a step, so a short
    ``f`` runs faster unrolled.

    Example:
        >>> total, partial_sums = ember.lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)
    """
    init_leaves, init_tree = tree_util.tree_flatten(init)
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    xs_t = [_lift(x) for x in xs_leaves]
    for t in xs_t:
        if t.ndim == 0:
            raise TracingError(f"ember.lax.scan: xs leaves must have a leading axis to scan "
                               f"over, got {t.aval.str_short()}")
    lengths = {t.shape[0] for t in xs_t}
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        if not lengths:
            raise TracingError("ember.lax.scan: got no xs and no length; pass length=")
        raise TracingError(f"ember.lax.scan: xs leaves (and length=) disagree on the length: "
                           f"{sorted(lengths)} (shapes "
                           f"{', '.join(t.aval.str_short() for t in xs_t)})")
    (n,) = lengths
    k = _unroll_factor(unroll, n)
    if k > 1:
        return _unrolled_scan(f, init, xs, n, bool(reverse), k)
    x_avals = [ShapedArray(t.shape[1:], t.dtype, t.weak_type) for t in xs_t]

    def attempt(init_t, may_promote):
        nc = len(init_t)
        with RegionOpBuilder("ember.scan", [*init_t, *xs_t], 1, num_carry=nc,
                             num_xs=len(xs_t), length=n, reverse=bool(reverse)) as b:
            box = {}

            def body_region(*args):
                carry = tree_util.tree_unflatten(init_tree, list(args[:nc]))
                x = tree_util.tree_unflatten(xs_tree, list(args[nc:]))
                out = f(carry, x)
                if not isinstance(out, tuple | list) or len(out) != 2:
                    raise TracingError("ember.lax.scan: f must return a pair (carry, y), got "
                                       f"{type(out).__name__}")
                c_out, box["ctree"] = _leaves("scan", "f carry output", out[0])
                y_out, box["ytree"] = _leaves("scan", "f y output", out[1])
                box["nc"] = len(c_out)
                return c_out + y_out
            outs = b.trace_region(0, [t.aval for t in init_t] + x_avals,
                                  [t.origin for t in init_t + xs_t], body_region)
            c_out, y_out = outs[:box["nc"]], outs[box["nc"]:]
            results = _finish_loop("scan", b, init_tree, init_t, box["ctree"],
                                   [t.aval for t in c_out], may_promote,
                                   [t.weak_type for t in y_out])
            return (tree_util.tree_unflatten(init_tree, results[:nc]),
                    tree_util.tree_unflatten(box["ytree"], results[nc:]))
    return _promoted_loop(attempt, [_lift(x) for x in init_leaves])


def _unroll_factor(unroll, n: int) -> int:
    if unroll is True:
        return n
    if unroll is False:
        return 1
    if not isinstance(unroll, int | np.integer) or unroll < 1:
        raise TracingError(f"ember.lax.scan: unroll must be a positive int or a bool, got "
                           f"{unroll!r}")
    return min(int(unroll), n)


def _unrolled_scan(f, init, xs, n: int, reverse: bool, k: int):
    """``scan`` with ``k`` steps of ``f`` in each step of its loop: a loop over the first
    ``n - n % k`` slices in groups of k, and one over the ``n % k`` left (the ones at the
    end, which a reversed scan takes first)."""
    def steps(carry, group, count):
        # Each y goes into the group's ys as soon as its step made it: stacked after the last
        # step, a y's fusion (ember-fuse places one at its last member) would read the carry
        # after the next step had updated it, which IREE then does on a copy.
        ys = None
        for u in (range(count - 1, -1, -1) if reverse else range(count)):
            x = tree_util.tree_map(lambda a, u=u: convenience.index_in_dim(a, u, 0, False),
                                   group)
            carry, y = f(carry, x)
            if ys is None:
                ys = tree_util.tree_map(
                    lambda v: convenience.full((count, *np.shape(v)), 0, _lift(v).dtype), y)
            ys = tree_util.tree_map(
                lambda b, v, u=u: convenience.dynamic_update_index_in_dim(b, v, u, 0), ys, y)
        return carry, ys

    full = n - n % k
    head = tree_util.tree_map(lambda a: lax.reshape(convenience.slice_in_dim(a, 0, full), (
        full // k, k) + tuple(a.shape[1:])), xs)
    tail = tree_util.tree_map(lambda a: convenience.slice_in_dim(a, full, n), xs)

    def run_head(carry):
        carry, ys = scan(lambda c, g: steps(c, g, k), carry, head, length=full // k,
                         reverse=reverse)
        return carry, tree_util.tree_map(
            lambda y: lax.reshape(y, (full,) + tuple(y.shape[2:])), ys)

    def run_tail(carry):
        return scan(f, carry, tail, length=n - full, reverse=reverse)

    if full == n:
        return run_head(init)
    if reverse:
        carry, ys_tail = run_tail(init)
        carry, ys_head = run_head(carry)
    else:
        carry, ys_head = run_head(init)
        carry, ys_tail = run_tail(carry)
    return carry, tree_util.tree_map(lambda a, b: lax.concatenate([a, b], 0), ys_head,
                                     ys_tail)


@eager
def map(f, xs, *, batch_size: int | None = None):  # noqa: A001
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked (a scan).

    ``batch_size``: as in JAX, ``f`` is vmapped over that many slices per step (the slices
    left over, when it does not divide the length, in one vmapped call after the loop).

    Example:
        >>> ember.lax.map(lambda r: r.sum(), xs, batch_size=8)      # xs: f32[100, 3]
    """
    if batch_size is None:
        return scan(lambda c, x: ((), f(x)), (), xs)[1]
    from ember.frontend.vmap import vmap
    if not isinstance(batch_size, int) or batch_size < 1:
        raise TracingError(f"ember.lax.map: batch_size must be a positive int, got "
                           f"{batch_size!r}")
    leaves = tree_util.tree_leaves(xs)
    if not leaves:
        raise TracingError("ember.lax.map: xs has no arrays to map over")
    n = leaves[0].shape[0]
    full = n - n % batch_size
    head = tree_util.tree_map(lambda x: lax.reshape(
        convenience.slice_in_dim(x, 0, full),
        (full // batch_size, batch_size) + tuple(x.shape[1:])), xs)
    ys = scan(lambda c, x: ((), vmap(f)(x)), (), head)[1]
    ys = tree_util.tree_map(lambda y: lax.reshape(y, (full,) + tuple(y.shape[2:])), ys)
    if full == n:
        return ys
    rest = vmap(f)(tree_util.tree_map(lambda x: convenience.slice_in_dim(x, full, n), xs))
    return tree_util.tree_map(lambda a, b: lax.concatenate([a, b], 0), ys, rest)
