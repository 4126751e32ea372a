"""``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacfwd``, ``jacrev``, ``hessian``:
differentiation recorded in the IR and done by the ``ember-differentiate`` pass.

Each traces the function into a private ``func.func`` and emits an ``ember.jvp`` (forward
mode) or ``ember.vjp`` (reverse mode) op calling it; the pass replaces the op with the
derivative's ops (see ``ember/passes/differentiate.py``). Called outside ``jit``, each
compiles one program per signature, as ``vmap`` does. They compose with each other, with
``jit`` and with ``vmap`` in any order, since each is just an op of the traced program.
"""

from __future__ import annotations

import functools

import numpy as np

from ember import dtypes, tree_util
from ember._mlir import ir, tensor_type
from ember.dialects import OPS
from ember.errors import ArgumentError, _Located
from ember.frontend import tracing
from ember.frontend.tracing import Tracer, bind
from ember.rules.base import encode_attrs

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian"]

# JAX's dtype of the cotangents of integer inputs (allow_int=True): zero bytes per element.
float0 = np.dtype([("float0", np.void, 0)])


class GradError(_Located, ArgumentError, TypeError):
    """A function or argument that cannot be differentiated as asked (JAX's TypeError; the
    message ends with the user's line)."""


def _inexact(dtype) -> bool:
    return dtypes.is_float(dtype) or dtypes.is_complex(dtype)


def _name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _traced_call(fun, args: tuple, kwargs: dict, name: str, kind: str, *,
                 diff_leaves=(), diff_results=None, extra=None):
    """Trace ``fun(*args, **kwargs)`` into a private callee and emit ``ember.<kind>`` on it.

    ``diff_leaves``: indices of the flattened (args, kwargs) leaves differentiated;
    ``diff_results(out_leaves)``: indices of the output leaves differentiated;
    ``extra(out_leaves, differentiated argument tracers)``: the tangents (jvp) or cotangents
    (vjp) the op takes. Returns (out_tree, out tracers, derivative tracers).
    """
    from ember.frontend.api import _unique_symbol, trace_flat
    outer = tracing.current_trace()
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    tracers = [outer.lift(x) for x in leaves]
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path((args, kwargs))[0]]
    callee = _unique_symbol(outer.module, f"{name}_{kind}")
    _, inner, out_tree, outs = trace_flat(
        fun, name, tree, [t.aval.strong() for t in tracers],
        [f"argument {p} of {name}" for p in paths], module=outer.module, name=callee,
        public=False, transform=kind)
    operands = tracers + [o for o, _ in inner.captured]
    dres = diff_results(outs) if diff_results else []
    more = extra(outs, [tracers[i] for i in diff_leaves]) if extra else []
    more = [outer.lift(m) for m in more]
    if kind == "jvp":
        avals = [o.aval.strong() for o in outs] + [outs[i].aval.strong() for i in dres]
    else:
        avals = [o.aval.strong() for o in outs] + [tracers[i].aval.strong()
                                                   for i in diff_leaves]
    results = emit_transform(kind, operands + more, avals, {
        "callee": callee, "diff_args": tuple(diff_leaves), "diff_results": tuple(dres)})
    return out_tree, results[:len(outs)], results[len(outs):]


def emit_transform(kind: str, operands, result_avals, attrs) -> list[Tracer]:
    """Emit ``ember.<kind>`` (an op naming callees, so typed by the caller) into the current
    trace; its results as tracers."""
    trace = tracing.current_trace()
    args = [trace.lift(x) for x in operands]
    loc = tracing.user_location(trace.module.context)
    with trace.module.context, loc, ir.InsertionPoint(trace.block):
        op = ir.Operation.create(
            f"ember.{kind}", results=[tensor_type(a.shape, a.dtype) for a in result_avals],
            operands=[a.value for a in args],
            attributes=encode_attrs(OPS[f"ember.{kind}"], attrs))
    origin = frozenset().union(*(a.origin for a in args)) if args else frozenset()
    return [Tracer(trace, r, a, origin) for r, a in zip(op.results, result_avals)]


def _eager(transformed):
    """Run ``transformed`` (which needs a trace) under a jit of its own when called outside
    any trace: one compile per signature, as for vmap."""
    jitted = None

    @functools.wraps(transformed)
    def call(*args, **kwargs):
        nonlocal jitted
        if tracing._TRACES:
            return transformed(*args, **kwargs)
        if jitted is None:
            from ember.frontend.api import JitFunction
            jitted = JitFunction(transformed)
        return jitted(*args, **kwargs)
    return call


def _argnums(argnums, nargs: int, who: str) -> tuple[int, ...]:
    single = isinstance(argnums, int | np.integer)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int | np.integer):
            raise GradError(f"{who}: argnums must be ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            raise GradError(f"{who}: argnums {argnums!r} out of range for a function called "
                            f"with {nargs} positional arguments")
    return tuple(int(a) % nargs for a in nums)


def _diff_leaves(args, nums, who: str, allow_int: bool, holomorphic: bool):
    """Indices of the leaves of ``(args, {})`` under ``args[nums]``, checked as JAX does."""
    counts = [tree_util.tree_structure(a).num_leaves for a in args]
    starts = np.cumsum([0] + counts)
    out, ints = [], []
    for n in nums:
        for k, leaf in enumerate(tree_util.tree_leaves(args[n])):
            dt = dtypes.dtype_and_weak(leaf)[0] if not isinstance(leaf, Tracer) else leaf.dtype
            i = int(starts[n]) + k
            if holomorphic and not dtypes.is_complex(dt):
                raise GradError(f"{who} with holomorphic=True requires inputs with complex "
                                f"dtype, but got {np.dtype(dt).name}.")
            if not _inexact(dt):
                if not allow_int:
                    raise GradError(
                        f"{who} requires real- or complex-valued inputs (input dtype that is a "
                        f"sub-dtype of np.inexact), but got {np.dtype(dt).name}. If you want "
                        "to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                        "to True.")
                ints.append(i)
                continue
            out.append(i)
    return out, ints


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """A function returning ``(fun(*args), gradient)``, with JAX's semantics; with
    ``has_aux``, ``((value, aux), gradient)``.

    Example:
        >>> ember.value_and_grad(lambda x: (x ** 2).sum())(np.arange(3.0))
        (Array(5., dtype=float32), Array([0., 2., 4.], dtype=float32))
    """
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "value_and_grad")


def _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, who):
    name = _name(fun)

    def traced(*args, **kwargs):
        nums = _argnums(argnums, len(args), who)
        diff, _ = _diff_leaves(args, nums, who, allow_int, holomorphic)
        main = {}

        def flat(*a, **k):
            out = fun(*a, **k)
            if has_aux:
                if not (isinstance(out, tuple | list) and len(out) == 2):
                    raise GradError(f"{who} of {name} with has_aux=True: the function must "
                                    "return a pair (output, auxiliary data)")
                out, aux = out
            else:
                aux = None
            main["tree"] = tree_util.tree_structure(out)
            return out, aux

        def results(outs):
            if main["tree"].num_leaves != 1:
                raise GradError("Gradient only defined for scalar-output functions. Output "
                                f"was a pytree of {main['tree'].num_leaves} leaves "
                                f"({main['tree']}).")
            value = outs[0]
            if value.shape != ():
                raise GradError("Gradient only defined for scalar-output functions. Output "
                                f"had shape: {value.shape}.")
            if holomorphic:
                if not dtypes.is_complex(value.dtype):
                    raise GradError(f"{who} with holomorphic=True requires outputs with "
                                    f"complex dtype, but got {value.dtype.name}.")
            elif not dtypes.is_float(value.dtype):
                raise GradError(f"{who} requires real-valued outputs (output dtype that is a "
                                f"sub-dtype of np.floating), but got {value.dtype.name}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving "
                                "complex outputs, use jax.vjp directly.")
            return [0]

        def cotangent(outs, _):
            return [np.ones((), outs[0].dtype)]

        out_tree, outs, grads = _traced_call(flat, args, kwargs, name, "vjp",
                                             diff_leaves=diff, diff_results=results,
                                             extra=cotangent)
        value, aux = tree_util.tree_unflatten(out_tree, outs)
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        by_leaf = dict(zip(diff, grads))     # integer leaves: None, float0 zeros later
        g_leaves = [by_leaf.get(i) for i in range(len(leaves))]
        g_args, _ = tree_util.tree_unflatten(tree, g_leaves)
        g = g_args[nums[0]] if isinstance(argnums, int | np.integer) else \
            tuple(g_args[n] for n in nums)
        return ((value, aux) if has_aux else value), g

    run = _eager(traced)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        out, g = run(*args, **kwargs)
        nums = _argnums(argnums, len(args), who)
        return out, _with_float0(g, args[nums[0]] if isinstance(argnums, int | np.integer)
                                 else tuple(args[n] for n in nums))
    return call


def _with_float0(g, like):
    """``g`` with JAX's float0 zeros where it has None for an integer leaf of ``like`` (a
    program cannot return float0: it is filled in here, from the arguments' shapes)."""
    return tree_util.tree_map(
        lambda a, d: np.zeros(np.shape(a), float0) if d is None else d, like, g)


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of a scalar function, with JAX's semantics: ``grad(f)(x)`` has ``x``'s
    pytree structure, shapes and dtypes. ``argnums`` (an int or a tuple), ``has_aux``
    (``fun`` returns ``(value, aux)``; the result is then ``(gradient, aux)``).

    Example:
        >>> ember.grad(lambda x: enp.sin(x).sum())(np.zeros(3, np.float32))
        Array([1., 1., 1.], dtype=float32)
    """
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad")

    @functools.wraps(fun)
    def call(*args, **kwargs):
        out, g = vg(*args, **kwargs)
        return (g, out[1]) if has_aux else g
    return call


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), the directional derivative along tangents)``, forward mode, as
    ``jax.jvp``.

    Example:
        >>> ember.jvp(enp.sin, (np.float32(0),), (np.float32(2),))
        (Array(0., dtype=float32), Array(2., dtype=float32))
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise GradError("primal and tangent arguments to jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise GradError("primal and tangent arguments to jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = _aval_of(p), _aval_of(t)
        if pa[0] != ta[0]:
            raise GradError(f"primal and tangent arguments to jvp do not match; shapes must "
                            f"be equal, but got primal shape {pa[0]} and tangent shape "
                            f"{ta[0]}.")
        if _inexact(pa[1]) and pa[1] != ta[1]:
            raise GradError(f"primal and tangent arguments to jvp do not match; dtypes must "
                            f"be equal, or in case of int/bool primal dtype the tangent dtype "
                            f"must be float0. Got primal dtype {pa[1].name} and so expected "
                            f"tangent dtype {pa[1].name}, but got tangent dtype "
                            f"{ta[1].name} instead.")
    name = _name(fun)

    def traced(primals, tangents):
        leaves = tree_util.tree_leaves(tuple(primals))
        diff = [i for i, x in enumerate(leaves) if _inexact(_aval_of(x)[1])]
        t_all = tree_util.tree_leaves(tuple(tangents))
        main = {}

        def flat(*a):
            out = fun(*a)
            if has_aux:
                out, aux = out
            else:
                aux = None
            main["n"] = tree_util.tree_structure(out).num_leaves
            return out, aux

        out_tree, outs, touts = _traced_call(
            flat, tuple(primals), {}, name, "jvp", diff_leaves=diff,
            diff_results=lambda outs: [i for i in range(main["n"])
                                       if _inexact(outs[i].dtype)],
            extra=lambda outs, _: [t_all[i] for i in diff])
        value, aux = tree_util.tree_unflatten(out_tree, outs)
        it = iter(touts)
        t_out = [next(it) if _inexact(o.dtype) else np.zeros(o.shape, float0)
                 for o in outs[:main["n"]]]
        t_value = tree_util.tree_unflatten(tree_util.tree_structure(value), t_out)
        return (value, t_value, aux) if has_aux else (value, t_value)

    return _eager(traced)(tuple(primals), tuple(tangents))


def _aval_of(x):
    if isinstance(x, Tracer):
        return x.shape, x.dtype
    dt = dtypes.canonicalize(dtypes.dtype_and_weak(x)[0], warn=False)
    return tuple(np.shape(x)), dt


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fun)`` with ``vjp_fun(cotangent)`` the cotangents of the
    primals, reverse mode, as ``jax.vjp``; ``vjp_fun`` can be traced and jitted.

    Example:
        >>> y, f_vjp = ember.vjp(enp.sin, np.float32(0))
        >>> f_vjp(np.float32(1))
        (Array(1., dtype=float32),)
    """
    name = _name(fun)

    def split(out):
        return out if has_aux else (out, None)

    def forward(*primals):
        out_tree, outs, _ = _traced_call(lambda *a: split(fun(*a)), primals, {}, name, "jvp")
        return tree_util.tree_unflatten(out_tree, outs)

    value, aux = _eager(forward)(*primals)
    out_struct = tree_util.tree_structure(value)

    def backward(primals, cotangent):
        c_leaves, c_tree = tree_util.tree_flatten(cotangent)
        if c_tree != out_struct:
            raise GradError(f"unexpected tree structure of argument to vjp function: got "
                            f"{c_tree}, but expected to match {out_struct}")
        leaves = tree_util.tree_leaves(tuple(primals))
        diff = [i for i, x in enumerate(leaves) if _inexact(_aval_of(x)[1])]
        n = {}

        def flat(*a):
            out = split(fun(*a))
            n["out"] = tree_util.tree_structure(out[0]).num_leaves
            return out

        def results(outs):
            for o, c in zip(outs, c_leaves):
                if tuple(np.shape(c)) != tuple(o.shape):
                    raise GradError(f"vjp function: cotangent shape {np.shape(c)} does not "
                                    f"match the primal output shape {o.shape}")
            return [i for i in range(n["out"]) if _inexact(outs[i].dtype)]

        def cts(outs, _):
            return [c for o, c in zip(outs, c_leaves) if _inexact(o.dtype)]

        _, _, grads = _traced_call(flat, tuple(primals), {}, name, "vjp", diff_leaves=diff,
                                   diff_results=results, extra=cts)
        by_leaf = dict(zip(diff, grads))
        g = [by_leaf.get(i, np.zeros(np.shape(x), float0) if not isinstance(x, Tracer)
                         else np.zeros(x.shape, float0)) for i, x in enumerate(leaves)]
        return tree_util.tree_unflatten(tree_util.tree_structure(tuple(primals)), g)

    run = _eager(backward)

    def vjp_fun(cotangent):
        return run(primals, cotangent)

    return (value, vjp_fun, aux) if has_aux else (value, vjp_fun)


def linearize(fun, *primals):
    """``(fun(*primals), f_jvp)`` with ``f_jvp(*tangents)`` the JVP at ``primals``, as
    ``jax.linearize`` (ember evaluates the JVP again per call; the compiled program keeps
    what it needs).

    Example:
        >>> y, f_jvp = ember.linearize(enp.sin, np.float32(0))
        >>> f_jvp(np.float32(3))
        Array(3., dtype=float32)
    """
    value = _eager(lambda *p: fun(*p))(*primals)
    return value, lambda *tangents: jvp(fun, primals, tangents)[1]


def _std_basis(leaves):
    """The identity, as one (N, *shape) array per leaf, N the leaves' total size."""
    sizes = [int(np.prod(_aval_of(x)[0], dtype=np.int64)) for x in leaves]
    total = sum(sizes)
    eye = np.eye(total, dtype=np.float64)
    out, at = [], 0
    for x, n in zip(leaves, sizes):
        out.append(eye[:, at:at + n].reshape((total,) + _aval_of(x)[0])
                   .astype(_aval_of(x)[1]))
        at += n
    return out, sizes


def _split_leading(y, sizes, shapes, trailing_shape):
    """``y`` of shape (N, *trailing) split along N by ``sizes`` into (*trailing, *shape)."""
    out, at = [], 0
    nd = len(trailing_shape)
    for n, shape in zip(sizes, shapes):
        part = bind("ember.slice", y, start_indices=(at,) + (0,) * nd,
                    limit_indices=(at + n,) + tuple(trailing_shape),
                    strides=(1,) * (nd + 1))[0] if not isinstance(y, np.ndarray) else y[at:at + n]
        part = _reshape(part, (n,) + tuple(trailing_shape))
        part = _transpose(part, tuple(range(1, nd + 1)) + (0,))
        out.append(_reshape(part, tuple(trailing_shape) + tuple(shape)))
        at += n
    return out


def _reshape(x, shape):
    if tuple(x.shape) == tuple(shape):
        return x
    return bind("ember.reshape", x, new_sizes=tuple(shape))[0]


def _transpose(x, perm):
    if tuple(perm) == tuple(range(len(perm))):
        return x
    return bind("ember.transpose", x, permutation=tuple(perm))[0]


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by forward mode, as ``jax.jacfwd``: for each output leaf of shape ``o``
    and input leaf of shape ``i``, an array of shape ``o + i``.

    Example:
        >>> ember.jacfwd(lambda x: x ** 2)(np.arange(3.0)).shape
        (3, 3)
    """
    return _jacobian(fun, argnums, has_aux, holomorphic, forward=True, who="jacfwd")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian by reverse mode, as ``jax.jacrev`` (shapes as :func:`jacfwd`).

    Example:
        >>> ember.jacrev(lambda x: x ** 2)(np.arange(3.0)).shape
        (3, 3)
    """
    return _jacobian(fun, argnums, has_aux, holomorphic, forward=False, who="jacrev",
                     allow_int=allow_int)


def _jacobian(fun, argnums, has_aux, holomorphic, *, forward: bool, who: str,
              allow_int=False):
    from ember.frontend.vmap import vmap

    def traced(*args):
        nums = _argnums(argnums, len(args), who)
        _diff_leaves(args, nums, who, allow_int, holomorphic)
        dyn = tuple(args[n] for n in nums)
        d_leaves, d_tree = tree_util.tree_flatten(dyn)

        def partial(*d):
            full = list(args)
            for n, v in zip(nums, d):
                full[n] = v
            out = fun(*full)
            return out if has_aux else (out, None)

        (value, aux) = partial(*dyn)
        v_leaves, v_tree = tree_util.tree_flatten(value)
        if forward:
            basis, sizes = _std_basis(d_leaves)

            def push(*t_leaves):
                tangents = tree_util.tree_unflatten(d_tree, list(t_leaves))
                _, t_out = jvp(lambda *d: partial(*d)[0], dyn, tangents)
                return tree_util.tree_leaves(t_out)

            cols = vmap(push)(*basis)        # per output leaf: (N, *out_shape)
            jac = [_split_leading(c, sizes, [_aval_of(x)[0] for x in d_leaves],
                                  _aval_of(v)[0]) for c, v in zip(cols, v_leaves)]
        else:
            basis, sizes = _std_basis(v_leaves)
            _, f_vjp = vjp(lambda *d: partial(*d)[0], *dyn)

            def pull(*c_leaves):
                return tree_util.tree_leaves(f_vjp(tree_util.tree_unflatten(v_tree,
                                                                            list(c_leaves))))

            rows = vmap(pull)(*basis)        # per input leaf: (M, *in_shape)
            per_in = [_split_leading(r, sizes, [_aval_of(v)[0] for v in v_leaves],
                                     _aval_of(x)[0]) for r, x in zip(rows, d_leaves)]
            # per_in[i][o] has shape in_i + out_o: move the output's axes first.
            jac = []
            for o, v in enumerate(v_leaves):
                row = []
                for i, x in enumerate(d_leaves):
                    ni, no = len(_aval_of(x)[0]), len(_aval_of(v)[0])
                    row.append(_transpose(per_in[i][o], tuple(range(ni, ni + no)) +
                                          tuple(range(ni))))
                jac.append(row)
        # jac[o][i]: output leaf o, input leaf i -> out tree of (arg tree) structures.
        per_out = [tree_util.tree_unflatten(d_tree, row) for row in jac]
        if isinstance(argnums, int | np.integer):
            per_out = [p[0] for p in per_out]
        result = tree_util.tree_unflatten(v_tree, per_out)
        return (result, aux) if has_aux else result

    return functools.wraps(fun)(_eager(traced))


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian, ``jacfwd(jacrev(fun))``, as ``jax.hessian``.

    Example:
        >>> ember.hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


def stop_gradient(x):
    """``x``, with a zero derivative: a pytree of arrays passes unchanged in value.

    Example:
        >>> ember.grad(lambda x: x * ember.lax.stop_gradient(x))(np.float32(3))
        Array(3., dtype=float32)
    """
    def leaf(v):
        if not tracing._TRACES:
            return v
        t = tracing.current_trace().lift(v)
        if not _inexact(t.dtype):
            return t
        return bind("ember.stop_gradient", t, _weak=t.weak_type)[0]
    return tree_util.tree_map(leaf, x)

