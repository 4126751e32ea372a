"""``custom_jvp`` and ``custom_vjp``: functions with derivatives the user defines, as JAX's.

A call traces the function and its rules into private ``func.func``s and emits an
``ember.custom_jvp_call`` / ``ember.custom_vjp_call`` op naming them; ``ember-differentiate``
uses the rules where it differentiates the op, and calls the function everywhere else.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ember import tree_util
from ember.frontend import tracing
from ember.frontend.autodiff import GradError, _eager, _inexact, _name, emit_transform

__all__ = ["custom_jvp", "custom_vjp"]


def _trace(fun, avals, name: str, what: str):
    """Trace ``fun`` on flat leaves of ``avals`` into a private function of the current
    module: (symbol, captured outer tracers, out tree, out tracers)."""
    from ember.frontend.api import _unique_symbol, trace_flat
    outer = tracing.current_trace()
    tree = tree_util.tree_structure((tuple(range(len(avals))), {}))
    symbol = _unique_symbol(outer.module, f"{name}_{what}")
    _, inner, out_tree, outs = trace_flat(
        fun, name, tree, avals, [f"argument {i} of {name}'s {what}" for i in range(len(avals))],
        module=outer.module, name=symbol, public=False, transform=what)
    return symbol, [o for o, _ in inner.captured], out_tree, outs


class _InRule(threading.local):
    """The custom functions whose rules are being traced on this thread: a rule that calls
    its own function (``return f(x), ...``, as JAX's examples do) gets the plain function."""

    def __init__(self):
        self.active: set[int] = set()


_IN_RULE = _InRule()


def _tracing_rule(obj, fun):
    def call(*a):
        _IN_RULE.active.add(id(obj))
        try:
            return fun(*a)
        finally:
            _IN_RULE.active.discard(id(obj))
    return call


def _split_static(args, nondiff_argnums):
    nondiff = {i % len(args) if args else i for i in nondiff_argnums}
    static = {i: args[i] for i in nondiff}
    dynamic = tuple(a for i, a in enumerate(args) if i not in nondiff)

    def merge(dyn):
        it = iter(dyn)
        return tuple(static[i] if i in static else next(it) for i in range(len(args)))
    return static, dynamic, merge


class custom_jvp:
    """A function whose JVP (forward-mode derivative) is the user's rule, as
    ``jax.custom_jvp``; reverse mode transposes the rule (which must be linear in the
    tangents, as in JAX).

    Example:
        >>> @ember.custom_jvp
        ... def log1pexp(x):
        ...     return enp.log(1.0 + enp.exp(x))
        >>> @log1pexp.defjvp
        ... def _(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + enp.exp(x)))
        >>> ember.grad(log1pexp)(np.float32(100.0))
        Array(1., dtype=float32)
    """

    def __init__(self, fun, nondiff_argnums=()):
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)
        self.jvp = None
        functools.update_wrapper(self, fun)
        self._run = _eager(self._traced)

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp.defjvp(symbolic_zeros=True): ember passes "
                                      "zeros as arrays; use symbolic_zeros=False")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """Set one rule per argument, ``jvp_i(tangent_i, primal_out, *primals)``, summed."""
        def jvp(primals, tangents):
            out = self.fun(*primals)
            terms = [j(t, out, *primals) for j, t in zip(jvps, tangents) if j is not None]
            total = terms[0]
            for term in terms[1:]:
                total = tree_util.tree_map(lambda a, b: a + b, total, term)
            return out, total
        self.defjvp(jvp)

    def __call__(self, *args):
        if id(self) in _IN_RULE.active:
            return self.fun(*args)
        return self._run(*args)

    def _traced(self, *args):
        if self.jvp is None:
            raise GradError(f"No JVP defined for custom_jvp function {_name(self.fun)} using "
                            "defjvp.")
        static, dynamic, merge = _split_static(args, self.nondiff_argnums)
        trace = tracing.current_trace()
        leaves, tree = tree_util.tree_flatten(dynamic)
        tracers = [trace.lift(x) for x in leaves]
        avals = [t.aval.strong() for t in tracers]
        name = _name(self.fun)

        def primal(*flat):
            return self.fun(*merge(tree_util.tree_unflatten(tree, list(flat))))

        f_sym, f_caps, out_tree, outs = _trace(primal, avals, name, "custom_jvp")
        n = len(leaves)

        def rule(*flat):
            p = tree_util.tree_unflatten(tree, list(flat[:n]))
            t = tree_util.tree_unflatten(tree, list(flat[n:]))
            static_t = [static[i] for i in sorted(static)]
            out, t_out = self.jvp(merge(p), t) if not static else \
                self.jvp(*static_t, p, t)
            if tree_util.tree_structure(out) != out_tree or \
                    tree_util.tree_structure(t_out) != out_tree:
                raise GradError(f"Custom JVP rule of {name} must produce primal and tangent "
                                f"outputs with the structure of the function's output, "
                                f"{out_tree}; got {tree_util.tree_structure(out)} and "
                                f"{tree_util.tree_structure(t_out)}")
            return out, t_out

        jvp_sym, jvp_caps, _, rule_outs = _trace(_tracing_rule(self, rule), avals + avals, name,
                                                 "custom_jvp_rule")
        for o, r in zip(outs, rule_outs[len(outs):]):
            if (o.shape, o.dtype) != (r.shape, r.dtype) and _inexact(o.dtype):
                raise GradError(f"Custom JVP rule of {name} must produce a tangent of the "
                                f"primal output's shape and dtype {o.aval.str_short()}; got "
                                f"{r.aval.str_short()}")
        results = emit_transform("custom_jvp_call", tracers + f_caps + jvp_caps,
                        [o.aval.strong() for o in outs],
                        {"callee": f_sym, "jvp": jvp_sym, "num_args": n,
                         "num_callee_operands": n + len(f_caps)})
        return tree_util.tree_unflatten(out_tree, results)


class custom_vjp:
    """A function whose reverse-mode derivative is the user's, as ``jax.custom_vjp``:
    ``defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, cotangent) -> tuple of cotangents, one per argument``.

    Example:
        >>> @ember.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None),
        ...                      lambda _, g: (enp.clip(g, -1.0, 1.0),))
        >>> ember.grad(lambda x: 3.0 * clip_gradient(x))(np.float32(2.0))
        Array(1., dtype=float32)
    """

    def __init__(self, fun, nondiff_argnums=()):
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        functools.update_wrapper(self, fun)
        self._run = _eager(self._traced)

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Set the forward and backward functions."""
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp.defvjp(symbolic_zeros=True): ember passes "
                                      "zeros as arrays; use symbolic_zeros=False")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if id(self) in _IN_RULE.active:
            return self.fun(*args)
        return self._run(*args)

    def _traced(self, *args):
        name = _name(self.fun)
        if self.fwd is None:
            raise GradError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        static, dynamic, merge = _split_static(args, self.nondiff_argnums)
        static_args = [static[i] for i in sorted(static)]
        trace = tracing.current_trace()
        leaves, tree = tree_util.tree_flatten(dynamic)
        tracers = [trace.lift(x) for x in leaves]
        avals = [t.aval.strong() for t in tracers]

        def primal(*flat):
            return self.fun(*merge(tree_util.tree_unflatten(tree, list(flat))))

        def fwd(*flat):
            out = self.fwd(*merge(tree_util.tree_unflatten(tree, list(flat))))
            if not (isinstance(out, tuple | list) and len(out) == 2):
                raise GradError(f"Custom VJP fwd rule of {name} must produce a pair (list or "
                                "tuple of length two) representing primal outputs and "
                                f"residuals (values stored from the forward pass for use on "
                                f"the backward pass), got {type(out).__name__}")
            return out[0], out[1]

        f_sym, f_caps, out_tree, outs = _trace(primal, avals, name, "custom_vjp")
        fwd_sym, fwd_caps, fwd_tree, fwd_outs = _trace(_tracing_rule(self, fwd), avals, name,
                                                       "custom_vjp_fwd")
        if f_caps or fwd_caps:
            raise GradError(f"custom_vjp function {name} (or its fwd) closes over a traced "
                            "value; pass it as an argument (as jax.closure_convert does)")
        k = len(outs)
        res_avals = [r.aval.strong() for r in fwd_outs[k:]]
        res_tree = fwd_tree.children()[1]

        def bwd(*flat):
            res = tree_util.tree_unflatten(res_tree, list(flat[:len(res_avals)]))
            ct = tree_util.tree_unflatten(out_tree, list(flat[len(res_avals):]))
            cts = self.bwd(*static_args, res, ct)
            if not isinstance(cts, tuple | list):
                raise GradError(f"Custom VJP bwd rule of {name} must produce a tuple of "
                                f"cotangents, one per primal argument; got "
                                f"{type(cts).__name__}")
            if len(cts) != len(dynamic):
                raise GradError(f"Custom VJP bwd rule of {name} must produce a tuple of length "
                                f"equal to the number of primal (non-static) arguments, "
                                f"{len(dynamic)}; got {len(cts)}")
            out = []
            for arg, c in zip(dynamic, cts):
                n = tree_util.tree_structure(arg).num_leaves
                c_leaves = tree_util.tree_leaves(c) if c is not None else [None] * n
                for cl in c_leaves:     # None: a zero cotangent, as in JAX
                    a = avals[len(out)]
                    out.append(np.zeros(a.shape, a.dtype) if cl is None else cl)
            return out

        bwd_sym, bwd_caps, _, bwd_outs = _trace(
            bwd, res_avals + [o.aval.strong() for o in outs], name, "custom_vjp_bwd")
        if bwd_caps:
            raise GradError(f"the bwd rule of custom_vjp function {name} closes over a traced "
                            "value; pass it through the residuals")
        for a, b in zip(avals, bwd_outs):
            if (a.shape, a.dtype) != (b.shape, b.dtype) and _inexact(a.dtype):
                raise GradError(f"Custom VJP bwd rule of {name} must produce an output with "
                                f"the shape and dtype of its primal input {a.str_short()}; "
                                f"got {b.aval.str_short()}")
        results = emit_transform("custom_vjp_call", tracers, [o.aval.strong() for o in outs],
                        {"callee": f_sym, "fwd": fwd_sym, "bwd": bwd_sym,
                         "num_residuals": len(res_avals)})
        return tree_util.tree_unflatten(out_tree, results)
