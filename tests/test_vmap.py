"""ember.vmap: batching as a compiler pass (ember-batch).

Oracle: the per-example function, jitted once and applied in a Python loop (its results are
checked against NumPy by the op and ember.numpy tests), stacked along the batch axis. Many
ops are grouped in one program returning a dict so that each configuration compiles once.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.nn as nn
import ember.numpy as enp
from ember.rules.batching import BATCHING

B = 3
_rng = np.random.default_rng(0)


def _f32(*shape, lo=0.1, hi=0.9):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


def _i32(*shape, lo=-20, hi=20):
    return _rng.integers(lo, hi, shape).astype(np.int32)


def _close(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _loop(fun, args, in_axes, out_axes=0, size=B):
    """Stack ``fun`` (jitted) over the batch: the reference for vmap. ``args`` flat arrays."""
    jf = ember.jit(fun)
    outs = []
    for b in range(size):
        per = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(jf(*per))
    tree = outs[0]
    if isinstance(tree, dict):
        axes = out_axes if isinstance(out_axes, dict) else {k: out_axes for k in tree}
        return {k: np.stack([np.asarray(o[k]) for o in outs], axis=axes[k]) for k in tree}
    return np.stack([np.asarray(o) for o in outs], axis=out_axes)


def test_argmax_then_transpose():
    """argmax/argmin lower to two single-result reductions: IREE's transpose propagation
    mis-compiled the former two-result linalg.generic when the result was transposed, which
    vmap does often."""
    x = (np.arange(36).reshape(3, 4, 3) % 5).astype(np.int32)
    got = ember.jit(lambda i: (lax.argmax(i, 2, np.int32).T, lax.argmin(i, 0, np.int32).T))(x)
    np.testing.assert_array_equal(np.asarray(got[0]), np.argmax(x, 2).T)
    np.testing.assert_array_equal(np.asarray(got[1]), np.argmin(x, 0).T)


def _check_dict(got, want):
    assert set(got) == set(want)
    for k in want:
        _close(got[k], want[k], k)


# --- every op family, through ember.lax ---------------------------------------------------

_inner_call = ember.jit(lambda a, b: a * b + 1.0)
_inner_shared = ember.jit(lambda w: w.sum(axis=0))


def ops(x, y, i, j, w, v):
    """Per example: x, y (3, 4) float32 in (0.1, 0.9); i, j (3, 4) int32; w (4, 5) float32
    (often shared); v (4,) float32. One entry per op (family)."""
    f32, i32 = np.dtype("float32"), np.dtype("int32")
    out = {}
    for name in ["neg", "abs", "sign", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin",
                 "cos", "tan", "tanh", "logistic", "erf", "floor", "ceil", "is_finite", "asin",
                 "acos", "atan", "sinh", "cosh", "asinh", "atanh", "cbrt", "exp2", "log2",
                 "erfc", "erf_inv", "lgamma", "digamma", "signbit"]:
        out[name] = getattr(lax, name)(x - 0.5 if name in ("sign", "abs", "neg") else x)
    out["acosh"] = lax.acosh(x + 1.0)
    out["round_away"] = lax.round(x * 4.0 - 2.0, "away_from_zero")
    out["round_even"] = lax.round(x * 4.0 - 2.0, "to_nearest_even")
    for name in ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter",
                 "copysign"]:
        out[name] = getattr(lax, name)(x, y - 0.5 if name == "copysign" else y)
    for name in ["add", "sub", "mul", "div", "rem", "max", "min", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "shift_left", "shift_right_logical",
                 "shift_right_arithmetic"]:
        out[f"int_{name}"] = getattr(lax, name)(i, j)
    out["not"] = lax.not_(i)
    out["population_count"] = lax.population_count(i)
    out["clz"] = lax.clz(i)
    for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
        out[name] = getattr(lax, name)(x, y)
        out[f"int_{name}"] = getattr(lax, name)(i, j)
    out["logic"] = lax.bitwise_xor(lax.lt(x, y), lax.ge(i, j))
    out["select"] = lax.select(lax.lt(x, y), x, y)
    out["convert"] = lax.convert_element_type(x * 10.0, i32)
    out["convert_int"] = lax.convert_element_type(i, f32)
    out["bitcast"] = lax.bitcast_convert_type(x, i32)
    # An unbatched operand of an elementwise op, an op on shared values only, constants.
    w34 = lax.slice(w, (0, 0), (3, 4))
    out["mixed"] = lax.mul(x, w34)
    out["mixed_select"] = lax.select(w34 < 0.5, x, w34)
    out["shared_only"] = lax.reduce_sum(w, (0, 1))
    out["iota"] = lax.add(x, lax.broadcasted_iota(f32, (3, 4), 1))
    # Shape ops.
    out["broadcast_in_dim"] = lax.broadcast_in_dim(v, (3, 2, 4), (2,))
    out["broadcast_scalar"] = lax.broadcast_in_dim(lax.reduce_max(v, (0,)), (2, 3), ())
    out["reshape"] = lax.reshape(x, (2, 6))
    out["reshape_scalar"] = lax.reshape(lax.reshape(x, (12,))[:1], ())
    out["transpose"] = lax.transpose(x, (1, 0))
    out["transpose3"] = lax.transpose(lax.reshape(x, (3, 2, 2)), (2, 0, 1))
    out["rev"] = lax.rev(x, (1,))
    out["rev_both"] = lax.rev(i, (0, 1))
    out["slice"] = lax.slice(x, (1, 0), (3, 4), (1, 2))
    out["concatenate"] = lax.concatenate([x, y, w34], 1)
    out["concatenate0"] = lax.concatenate([x, w34], 0)
    out["pad"] = lax.pad(x, np.float32(-1), [(1, 2, 1), (-1, 0, 0)])
    out["pad_shared_value"] = lax.pad(i, lax.reduce_max(lax.convert_element_type(w, i32),
                                                        (0, 1)), [(0, 1, 0), (2, 0, 0)])
    # Reductions.
    for name in ["sum", "prod", "max", "min"]:
        red = getattr(lax, f"reduce_{name}")
        out[f"reduce_{name}_0"] = red(x, (0,))
        out[f"reduce_{name}_1"] = red(i, (1,))
        out[f"reduce_{name}_all"] = red(x, (0, 1))
    out["reduce_and"] = lax.reduce_and(lax.lt(x, y), (1,))
    out["reduce_or"] = lax.reduce_or(lax.lt(x, y), (0,))
    out["argmax0"] = lax.argmax(x, 0, i32)
    out["argmax1"] = lax.argmax(i, 1, i32)
    out["argmin0"] = lax.argmin(y, 0, i32)
    out["argmin1"] = lax.argmin(x, 1, i32)
    # dot_general: batched x shared, shared x batched, both batched, with batch dimensions.
    dn = lambda lc, rc, lb=(), rb=(): ((lc, rc), (lb, rb))  # noqa: E731
    out["dot_xw"] = lax.dot_general(x, w, dn((1,), (0,)))
    out["dot_wx"] = lax.dot_general(w, x, dn((0,), (1,)))
    out["dot_wv"] = lax.dot_general(w, v, dn((0,), (0,)))
    out["dot_vv"] = lax.dot_general(v, v, dn((0,), (0,)))
    out["dot_xv"] = lax.dot_general(x, v, dn((1,), (0,)))
    out["dot_xy_batch"] = lax.dot_general(x, y, dn((1,), (1,), (0,), (0,)))
    out["dot_xy_outer"] = lax.dot_general(x, y, dn((0,), (0,)))
    out["dot_xw_batch"] = lax.dot_general(lax.reshape(x, (3, 4, 1)), lax.reshape(w, (4, 1, 5)),
                                          dn((2,), (1,), (1,), (0,)))
    # Sorting and cumulative ops.
    out["sort0"] = lax.sort(x, dimension=0)
    out["sort1"] = lax.sort(i, dimension=1)
    k, val = lax.sort_key_val(i, x, dimension=1)
    out["sort_key"], out["sort_val"] = k, val
    out["sort_shared_vals"] = lax.sort_key_val(x, w34, dimension=1)[1]
    for name in ["cumsum", "cumprod", "cummax", "cummin"]:
        out[f"{name}0"] = getattr(lax, name)(x, axis=0)
        out[f"{name}1r"] = getattr(lax, name)(i, axis=1, reverse=True)
    # Calls (nested jit): with batched and with only shared operands.
    out["call"] = _inner_call(x, y)
    out["call_shared"] = _inner_shared(w)
    return out


def _ops_args():
    x, y = _f32(B, 3, 4), _f32(B, 3, 4)
    i, j = _i32(B, 3, 4), _i32(B, 3, 4, lo=-3, hi=40)
    j[:, 0, 0] = 0                       # integer division and remainder by zero
    return x, y, i, j, _f32(4, 5), _f32(B, 4)


def _moved(args, in_axes):
    """Batched arguments with their batch axis (now 0) moved to ``in_axes``."""
    return [a if ax is None else np.moveaxis(a, 0, ax) for a, ax in zip(args, in_axes)]


_OPS_ARGS = _ops_args()
_OPS_REF = {}


def _ops_ref(shared_w):
    if shared_w not in _OPS_REF:
        in_axes = (0, 0, 0, 0, None if shared_w else 0, 0)
        args = list(_OPS_ARGS)
        if not shared_w:
            args[4] = np.stack([args[4] + k for k in range(B)])
        _OPS_REF[shared_w] = (args, _loop(ops, args, in_axes))
    return _OPS_REF[shared_w]


def test_every_op_batch_axis_0_shared_weight():
    args, want = _ops_ref(True)
    got = ember.jit(ember.vmap(ops, in_axes=(0, 0, 0, 0, None, 0)))(*args)
    _check_dict(got, want)


def test_every_op_batch_axes_mixed_out_axis_last():
    # x batched at the end, y in the middle, i at 0, j at -1, v at 1 (its end); out at the end.
    args, want = _ops_ref(True)
    in_axes = (2, 1, 0, -1, None, 1)
    got = ember.jit(ember.vmap(ops, in_axes=in_axes, out_axes=-1))(*_moved(args, in_axes))
    _check_dict(got, {k: np.moveaxis(a, 0, -1) for k, a in want.items()})


def test_every_op_all_batched_out_axes_middle_dict():
    # Everything batched (w too: dot_general with both sides batched); out_axes a dict,
    # putting the batch axis in the middle of every output of rank >= 2.
    args, want = _ops_ref(False)
    in_axes = (1, 2, 1, 0, 2, 0)
    out_axes = {k: min(1, a.ndim - 1) for k, a in want.items()}
    got = ember.jit(ember.vmap(ops, in_axes=in_axes, out_axes=out_axes))(
        *_moved(args, in_axes))
    _check_dict(got, {k: np.moveaxis(a, 0, out_axes[k]) for k, a in want.items()})


def test_argmax_into_transpose():
    i = _i32(B, 4, 3)
    f = ember.jit(ember.vmap(lambda i: lax.argmax(i, 1, np.int32), out_axes=-1))
    _close(f(i), np.argmax(i, axis=2).T.astype(np.int32))


# --- ember.numpy / ember.nn functions --------------------------------------------------------

# name -> per-example function of (a (4, 5) float32, b (5,) float32, m (5, 5) float32,
# n (4, 5) int32). Only functions whose ops are batched by the core rules (no control flow,
# no gather/scatter/dynamic_slice): those are in _INDEXING_FUNCS below.
FUNCS = {
    "abs": lambda a, b, m, n: enp.abs(a - 0.5),
    "add_bcast": lambda a, b, m, n: a + b,
    "arccos": lambda a, b, m, n: enp.arccos(a),
    "arctan2": lambda a, b, m, n: enp.arctan2(a, b),
    "cbrt": lambda a, b, m, n: enp.cbrt(a - 0.5),
    "clip": lambda a, b, m, n: enp.clip(a, 0.3, 0.6),
    "deg2rad": lambda a, b, m, n: enp.deg2rad(a),
    "divide": lambda a, b, m, n: a / b,
    "floor_divide": lambda a, b, m, n: enp.floor_divide(n, 3),
    "fmod": lambda a, b, m, n: enp.fmod(n, 7),
    "heaviside": lambda a, b, m, n: enp.heaviside(a - 0.5, b),
    "hypot": lambda a, b, m, n: enp.hypot(a, b),
    "logaddexp": lambda a, b, m, n: enp.logaddexp(a, b),
    "mod": lambda a, b, m, n: enp.mod(n, 7),
    "power": lambda a, b, m, n: enp.power(a, b),
    "square": lambda a, b, m, n: enp.square(a),
    "sinc": lambda a, b, m, n: enp.sinc(a),
    "where": lambda a, b, m, n: enp.where(a > b, a, -b),
    "isnan": lambda a, b, m, n: enp.isnan(enp.log(a - 0.5)),
    "nan_to_num": lambda a, b, m, n: enp.nan_to_num(enp.log(a - 0.5)),
    "bitwise": lambda a, b, m, n: (n & 5) | (n >> 1) ^ ~n,
    "bitwise_count": lambda a, b, m, n: enp.bitwise_count(n),
    "astype": lambda a, b, m, n: (a * 10).astype(np.int32),
    "sum": lambda a, b, m, n: enp.sum(a),
    "sum_axis": lambda a, b, m, n: a.sum(axis=1),
    "sum_keepdims": lambda a, b, m, n: enp.sum(n, axis=0, keepdims=True),
    "mean": lambda a, b, m, n: enp.mean(a, axis=0),
    "var": lambda a, b, m, n: enp.var(a, axis=1),
    "std": lambda a, b, m, n: enp.std(a),
    "prod": lambda a, b, m, n: enp.prod(a, axis=-1),
    "max": lambda a, b, m, n: enp.max(a, axis=0),
    "min": lambda a, b, m, n: a.min(),
    "ptp": lambda a, b, m, n: enp.ptp(a, axis=1),
    "all_any": lambda a, b, m, n: enp.all(a > 0.2, axis=1) | enp.any(a > 0.8),
    "count_nonzero": lambda a, b, m, n: enp.count_nonzero(n > 0, axis=0),
    "argmax": lambda a, b, m, n: enp.argmax(a, axis=1),
    "argmin": lambda a, b, m, n: enp.argmin(a),
    "average": lambda a, b, m, n: enp.average(a, axis=1, weights=b),
    "nansum": lambda a, b, m, n: enp.nansum(enp.log(a - 0.3), axis=0),
    "cumsum": lambda a, b, m, n: enp.cumsum(a, axis=1),
    "cumprod": lambda a, b, m, n: enp.cumprod(b),
    "sort": lambda a, b, m, n: enp.sort(a, axis=0),
    "argsort": lambda a, b, m, n: enp.argsort(b),
    "matmul": lambda a, b, m, n: a @ m,
    "matvec": lambda a, b, m, n: a @ b,
    "dot": lambda a, b, m, n: enp.dot(b, b),
    "vdot": lambda a, b, m, n: enp.vdot(a, a),
    "inner": lambda a, b, m, n: enp.inner(a, b),
    "outer": lambda a, b, m, n: enp.outer(b, b),
    "tensordot": lambda a, b, m, n: enp.tensordot(a, m, axes=1),
    "einsum": lambda a, b, m, n: enp.einsum("ij,jk,k->i", a, m, b),
    "kron": lambda a, b, m, n: enp.kron(b, b[:2]),
    "cross": lambda a, b, m, n: enp.cross(a[:, :3], b[:3]),
    "trace": lambda a, b, m, n: enp.trace(m),
    "diagonal": lambda a, b, m, n: enp.diagonal(m, 1),
    "tril_triu": lambda a, b, m, n: enp.tril(m) - enp.triu(m, 1),
    "reshape": lambda a, b, m, n: a.reshape(2, 10),
    "ravel": lambda a, b, m, n: enp.ravel(a),
    "transpose": lambda a, b, m, n: a.T,
    "swapaxes": lambda a, b, m, n: enp.swapaxes(a[None], 0, 2),
    "moveaxis": lambda a, b, m, n: enp.moveaxis(a[None], 0, -1),
    "expand_squeeze": lambda a, b, m, n: enp.squeeze(enp.expand_dims(a, 1)),
    "broadcast_to": lambda a, b, m, n: enp.broadcast_to(b, (3, 5)),
    "flip": lambda a, b, m, n: enp.flip(a, axis=1),
    "fliplr": lambda a, b, m, n: enp.fliplr(a),
    "rot90": lambda a, b, m, n: enp.rot90(a),
    "roll": lambda a, b, m, n: enp.roll(a, 2, axis=1),
    "tile": lambda a, b, m, n: enp.tile(b, (2, 1)),
    "repeat": lambda a, b, m, n: enp.repeat(b, 2),
    "concatenate": lambda a, b, m, n: enp.concatenate([a, m], axis=0),
    "stack": lambda a, b, m, n: enp.stack([b, b * 2], axis=1),
    "hstack": lambda a, b, m, n: enp.hstack([b, b]),
    "vstack": lambda a, b, m, n: enp.vstack([a, b]),
    "split": lambda a, b, m, n: enp.split(a, [1, 3], axis=1)[1],
    "pad": lambda a, b, m, n: enp.pad(a, ((1, 0), (0, 2))),
    "pad_edge": lambda a, b, m, n: enp.pad(b, 2, mode="edge"),
    "index_basic": lambda a, b, m, n: a[1:3, ::2],
    "index_int": lambda a, b, m, n: a[2] + a[:, -1].sum(),
    "index_newaxis": lambda a, b, m, n: b[None, :, None],
    "zeros_like": lambda a, b, m, n: enp.zeros_like(a) + enp.ones_like(b),
    "full_like": lambda a, b, m, n: enp.full_like(n, 7),
    "arange_plus": lambda a, b, m, n: enp.arange(5) * b,
    "eye_mul": lambda a, b, m, n: enp.eye(5) * m,
    "linspace_plus": lambda a, b, m, n: enp.linspace(0, 1, 5) + b,
    "meshgrid": lambda a, b, m, n: enp.meshgrid(b, b[:2])[0],
    "relu": lambda a, b, m, n: nn.relu(a - 0.5),
    "sigmoid": lambda a, b, m, n: nn.sigmoid(a),
    "softmax": lambda a, b, m, n: nn.softmax(a, axis=-1),
    "softmax0": lambda a, b, m, n: nn.softmax(a, axis=0),
    "log_softmax": lambda a, b, m, n: nn.log_softmax(b),
    "logsumexp": lambda a, b, m, n: nn.logsumexp(a, axis=1),
    "gelu": lambda a, b, m, n: nn.gelu(a),
    "silu": lambda a, b, m, n: nn.silu(a),
    "elu_selu": lambda a, b, m, n: nn.elu(a - 0.5) + nn.selu(a - 0.5),
    "softplus": lambda a, b, m, n: nn.softplus(a),
    "log_sigmoid": lambda a, b, m, n: nn.log_sigmoid(a),
    "relu6": lambda a, b, m, n: nn.relu6(a * 10),
    "standardize": lambda a, b, m, n: nn.standardize(a, axis=-1),
    "mlp": lambda a, b, m, n: enp.tanh(a @ m + b).sum(axis=-1),
}


def funcs(a, b, m, n):
    return {k: f(a, b, m, n) for k, f in FUNCS.items()}


def _funcs_args():
    return [_f32(B, 4, 5), _f32(B, 5, lo=0.5, hi=2.0), _f32(5, 5, lo=-1, hi=1),
            _i32(B, 4, 5)]


_FUNCS_ARGS = _funcs_args()
_FUNCS_IN_AXES = (0, 0, None, 0)
_FUNCS_REF = None


def _funcs_ref():
    global _FUNCS_REF
    if _FUNCS_REF is None:
        _FUNCS_REF = _loop(funcs, _FUNCS_ARGS, _FUNCS_IN_AXES)
    return _FUNCS_REF


def test_numpy_nn_functions_vmap_eager():
    # Outside jit: ember.vmap compiles the batched program itself.
    got = ember.vmap(funcs, in_axes=_FUNCS_IN_AXES)(*_FUNCS_ARGS)
    _check_dict(got, _funcs_ref())


# Functions that need batching rules for control flow or indexing ops (other modules).
_INDEXING_FUNCS = {
    "take": lambda a, b, m, n: enp.take(b, enp.array([4, 0, 2])),
    "gather_index": lambda a, b, m, n: a[enp.argmax(b) % 4],
    "take_along_axis": lambda a, b, m, n: enp.take_along_axis(a, enp.argsort(a, axis=1), 1),
    "at_set": lambda a, b, m, n: b.at[enp.argmin(b)].set(0.0),
    "at_add": lambda a, b, m, n: a.at[1].add(b),
    "median": lambda a, b, m, n: enp.median(a, axis=0),
    "searchsorted": lambda a, b, m, n: enp.searchsorted(enp.sort(b), a[0]),
    "dynamic_slice": lambda a, b, m, n: lax.dynamic_slice(
        a, (enp.argmax(b) % 3, 1), (2, 3)),
    "one_hot": lambda a, b, m, n: nn.one_hot(enp.argmax(a, axis=1), 5),
    "cond": lambda a, b, m, n: lax.cond(b.sum() > 5, lambda t: t * 2, lambda t: -t, a),
    "while": lambda a, b, m, n: lax.while_loop(lambda c: c[0].sum() < 20,
                                               lambda c: (c[0] * 1.5, c[1] + 1),
                                               (b, np.int32(0)))[1],
    "fori": lambda a, b, m, n: lax.fori_loop(0, 3, lambda k, c: c * b + k, b),
    "scan": lambda a, b, m, n: lax.scan(lambda c, r: (c + r, c * r), b, a)[1],
}


@pytest.mark.parametrize("name", sorted(_INDEXING_FUNCS))
def test_control_flow_and_indexing_functions(name):
    fun = _INDEXING_FUNCS[name]
    args = _FUNCS_ARGS
    want = _loop(fun, args, _FUNCS_IN_AXES)
    try:
        got = ember.jit(ember.vmap(fun, in_axes=_FUNCS_IN_AXES))(*args)
    except NotImplementedError as e:
        missing = re.search(r"'(ember\.\w+)'", str(e)).group(1)
        assert missing not in BATCHING
        pytest.xfail(f"no batching rule for {missing} yet")
    _close(got, want, name)


# --- in_axes / out_axes / kwargs / pytrees -----------------------------------------------------

def _tree_fun(p, x, *, scale):
    return {"y": enp.tanh(x @ p["w"] + p["b"]) * scale, "w_sum": p["w"].sum(),
            "pair": (x.sum(), x * 2)}


def test_pytree_in_axes_out_axes_kwargs_and_none_output():
    p = {"w": _f32(4, 3), "b": _f32(3)}
    x, scale = _f32(B, 4), _f32(B)
    jf = ember.jit(_tree_fun)
    per = [jf(p, x[k], scale=scale[k]) for k in range(B)]
    out_axes = {"y": 1, "w_sum": None, "pair": (0, -1)}
    f = ember.jit(ember.vmap(_tree_fun, in_axes=({"w": None, "b": None}, 0), out_axes=out_axes))
    got = f(p, x, scale=scale)
    _close(got["y"], np.stack([np.asarray(o["y"]) for o in per], axis=1))
    _close(got["w_sum"], per[0]["w_sum"])                  # unbatched output: not stacked
    _close(got["pair"][0], np.stack([np.asarray(o["pair"][0]) for o in per]))
    _close(got["pair"][1], np.stack([np.asarray(o["pair"][1]) for o in per], axis=-1))
    # A prefix: None for the whole dict, a tuple entry per positional argument.
    g = ember.vmap(_tree_fun, in_axes=(None, 0), out_axes={"y": 0, "w_sum": None, "pair": 0})
    got2 = ember.jit(g)(p, x, scale=scale)
    _close(got2["y"], np.stack([np.asarray(o["y"]) for o in per]))


def test_vmap_of_jit_and_jit_of_vmap_compose():
    f = ember.jit(lambda w, x: enp.tanh(w @ x))
    w, xs = _f32(4, 3), _f32(B, 3)
    want = np.stack([np.asarray(f(w, x)) for x in xs])
    _close(ember.vmap(f, in_axes=(None, 0))(w, xs), want)
    _close(ember.jit(ember.vmap(f, in_axes=(None, 0)))(w, xs), want)


def test_vmap_of_a_jitted_vmap():
    """vmap(jit(vmap(f))): the jitted function's own vmap is batched before the call into it
    is (was "no batching rule for 'ember.vmap'"); also inside a scan body."""
    h = lambda r, w: enp.sin(r) * w                        # noqa: E731
    xs, w = _f32(2, 3, 4), _f32(4)
    inner = ember.jit(ember.vmap(h, in_axes=(0, None)))
    want = np.sin(xs) * w
    _close(ember.vmap(inner, in_axes=(0, None))(xs, w), want)
    _close(ember.jit(ember.vmap(inner, in_axes=(0, None)))(xs, w), want)
    scanned = ember.vmap(lambda x: lax.scan(lambda c, r: (c + inner(r[None], w)[0], c), 0.0 * w,
                                            x)[0])
    _close(scanned(xs), want.sum(axis=1))


def test_unmapped_python_values_reach_the_function_as_they_are():
    # As jax.vmap: an in_axes=None value that is not an array is not traced, so an int can
    # size a slice or be a jit's static argument and a string can choose a branch.
    xs = _f32(B, 5)
    take = lambda a, n: a[:n]                                  # noqa: E731
    _close(ember.vmap(ember.jit(take, static_argnums=1), in_axes=(0, None))(xs, 2), xs[:, :2])
    _close(ember.jit(lambda v: ember.vmap(take, in_axes=(0, None))(v, 3))(xs), xs[:, :3])
    _close(ember.vmap(lambda a, s: a * len(s), in_axes=(0, None))(xs, "abc"), xs * 3)
    cfg = ember.vmap(lambda d, a: a * d["k"] if d["op"] == "mul" else a + d["k"],
                     in_axes=(None, 0))
    _close(cfg({"k": 2.0, "op": "mul"}, xs), xs * 2)
    _close(cfg({"k": 2.0, "op": "add"}, xs), xs + 2)           # compiled apart
    nested = ember.vmap(lambda r: ember.vmap(lambda e, n: e * n, in_axes=(0, None))(r, 4))
    _close(nested(xs), xs * 4)
    unhashable = type("Config", (), {"__hash__": None})()
    with pytest.raises(ember.errors.ArgumentError, match=r"args\[1\] \(Config\).*hashable"):
        ember.vmap(lambda a, c: a, in_axes=(0, None))(xs, unhashable)


def test_pairwise_nested():
    a, b = _f32(B, 4), _f32(5, 4)
    dist = lambda u, v: enp.sqrt(((u - v) ** 2).sum())   # noqa: E731
    f = ember.jit(ember.vmap(ember.vmap(dist, in_axes=(0, None)), in_axes=(None, 0)))
    want = np.sqrt(((a[None, :, :] - b[:, None, :]) ** 2).sum(-1))
    _close(f(a, b), want.astype(np.float32))


def test_axis_size_with_all_unbatched():
    w = _f32(2, 3)
    got = ember.vmap(lambda w: w * 2.0, in_axes=None, axis_size=4)(w)
    _close(got, np.broadcast_to(w * 2.0, (4, 2, 3)))
    got = ember.vmap(lambda w: (w.sum(), w), in_axes=None, out_axes=(None, 1), axis_size=4)(w)
    _close(got[0], w.sum(dtype=np.float32))
    _close(got[1], np.broadcast_to(w[:, None], (2, 4, 3)))


# --- shared operands stay unbatched ----------------------------------------------------------

def _optimized(fun, *args):
    return ember.jit(fun).lower(*args).as_text("optimized")


def test_shared_weight_not_broadcast_dot_general():
    w, xs = _f32(4, 3), _f32(8, 3)
    text = _optimized(ember.vmap(lambda w, x: enp.tanh(w @ x), in_axes=(None, 0)), w, xs)
    assert "ember.vmap" not in text
    assert "ember.broadcast_in_dim" not in text
    dots = re.findall(r'"ember.dot_general"\(.*\n?.*?: \((tensor<[^>]*>), ', text)
    assert dots == ["tensor<4x3xf32>"], text                 # the weight as it is


def test_shared_weight_not_broadcast_reduction_and_matmul():
    w, xs = _f32(4, 5), _f32(8, 4)

    def f(w, x):
        return (x @ w) * w.sum(axis=0) + w.max()

    text = _optimized(ember.vmap(f, in_axes=(None, 0)), w, xs)
    assert "8x4x5" not in text, text                           # w never broadcast
    for op in ("reduce_sum", "reduce_max"):
        types = re.findall(rf'"ember.{op}".*: \((tensor<[^>]*>)\)', text)
        assert types == ["tensor<4x5xf32>"], (op, text)
    want = np.stack([x @ w * w.sum(axis=0) + w.max() for x in xs])
    _close(ember.jit(ember.vmap(f, in_axes=(None, 0)))(w, xs), want.astype(np.float32))


def test_vmapped_mlp_lowers_like_hand_batched():
    # x @ w on one vector is one contraction; batched, it is the hand-written matmul (no
    # reshapes or transposes around it, no 3-D dot_general).
    params = [(_f32(6, 6), _f32(6)) for _ in range(2)]
    xs = _f32(8, 6)

    def mlp(params, x):
        for w, b in params:
            x = enp.maximum(x @ w + b, 0.0)
        return x

    def ops(text):
        return [op for op in re.findall(r'"ember\.(\w+)"', text)
                if op not in ("constant", "broadcast_in_dim", "fusion", "yield")]

    vmapped = _optimized(ember.vmap(mlp, in_axes=(None, 0)), params, xs)
    hand = _optimized(mlp, params, xs)
    assert ops(vmapped) == ops(hand) == ["dot_general", "add", "max"] * 2, vmapped
    want = np.asarray(ember.jit(mlp)(params, xs))
    _close(ember.jit(ember.vmap(mlp, in_axes=(None, 0)))(params, xs), want)


def test_elementwise_keeps_batch_axis_without_transposes():
    xs, ys = _f32(4, B, 2), _f32(4, B, 2)
    text = _optimized(ember.vmap(lambda x, y: enp.exp(x) * y + 1.0, in_axes=1, out_axes=1),
                      xs, ys)
    assert "ember.transpose" not in text, text


# --- bad input: JAX's errors, before anything compiles ----------------------------------------

_add = lambda x, y: x + y   # noqa: E731


def test_inconsistent_sizes_names_each_argument():
    with pytest.raises(ValueError, match="inconsistent sizes") as e:
        ember.vmap(_add)(np.ones((2, 3), np.float32), np.ones((4, 3), np.float32))
    msg = str(e.value)
    assert "size 2: axis 0 of argument args[0]" in msg
    assert "size 4: axis 0 of argument args[1]" in msg
    with pytest.raises(ValueError, match="inconsistent sizes"):
        ember.jit(ember.vmap(_add, in_axes=(0, 1)))(np.ones((3, 2), np.float32),
                                                    np.ones((2, 2), np.float32))


def test_in_axes_structure_mismatch():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"len\(in_axes\)=3, len\(args\)=2"):
        ember.vmap(_add, in_axes=(0, 0, 0))(x, x)
    with pytest.raises(ValueError, match="tree prefix"):
        ember.vmap(lambda p: p["a"], in_axes=({"a": 0, "b": 0},))({"a": x})
    with pytest.raises(ValueError, match="tree prefix"):
        ember.vmap(lambda p: p[0], in_axes=([0, 0, 0],))((x, x))


def test_axis_out_of_range():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="along axis 2.*rank should be at least 3.*only 2"):
        ember.vmap(_add, in_axes=(2, 0))(x, x)
    with pytest.raises(ValueError, match="along axis -3"):
        ember.vmap(_add, in_axes=(0, -3))(x, x)
    with pytest.raises(ValueError, match="out_axes"):
        ember.vmap(lambda x: x.sum(), out_axes=1)(x)


def test_out_axes_none_for_batched_output():
    x = np.ones((2, 3), np.float32)
    f = ember.jit(ember.vmap(lambda x: x * 2, out_axes=None))
    with pytest.raises(ValueError, match="vmap has mapped output but out_axes is None"):
        f.lower(x)                        # at trace time: before any pass or compile
    g = ember.vmap(lambda x, w: {"a": x * 2, "b": (w.sum(), x.sum())}, in_axes=(0, None),
                   out_axes={"a": 0, "b": None})
    with pytest.raises(ValueError, match=r"out_axes is None: output\['b'\]\[1\]"):
        g(x, x)


def test_out_axes_none_for_unmapped_loop_carry():
    # As JAX: a carry that never meets a mapped value stays unmapped, so None is allowed.
    xs = _f32(B, 3)

    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: (c[0] + x, c[1] + 2.0), (x, np.float32(1)))

    got = ember.vmap(f, out_axes=(0, None))(xs)
    _close(got[0], xs * 4)
    _close(got[1], np.float32(7))
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        ember.vmap(f, out_axes=None)(xs)


def _ones(shape):
    return np.ones(shape, np.float32)


_BAD_INPUTS = {
    "inconsistent sizes": (lambda: ember.vmap(_add), (_ones((2, 3)), _ones((4, 3)))),
    "len\\(in_axes\\)=3": (lambda: ember.vmap(_add, in_axes=(0, 0, 0)),
                            (_ones(2), _ones(2))),
    "tree prefix": (lambda: ember.vmap(lambda p: p["a"], in_axes=({"a": 0, "b": 0},)),
                    ({"a": _ones(2)},)),
    "rank should be at least 3": (lambda: ember.vmap(_add, in_axes=(2, 0)),
                                  (_ones((2, 3)), _ones((2, 3)))),
    "out_axes 1 is out of range": (lambda: ember.vmap(lambda x: x.sum(), out_axes=1),
                                   (_ones((2, 3)),)),
    "out_axes is None": (lambda: ember.vmap(_add, in_axes=(0, None), out_axes=None),
                         (_ones((2, 3)), _ones(3))),
    "at least one non-None": (lambda: ember.vmap(lambda w: w * 2, in_axes=None),
                              (_ones(3),)),
}


@pytest.mark.parametrize("match", sorted(_BAD_INPUTS))
def test_bad_input_raises_before_any_pass_or_compile(match, monkeypatch):
    import ember.frontend.api as api
    from ember.passes import pipelines

    def forbidden(*a, **k):
        raise AssertionError("a pass or a compile ran before the error was raised")

    monkeypatch.setattr(pipelines, "run_pipeline", forbidden)
    monkeypatch.setattr(api, "compile_mlir", forbidden)
    make, args = _BAD_INPUTS[match]
    with pytest.raises(ValueError, match=match):
        ember.jit(make()).lower(*args)
    with pytest.raises(ValueError, match=match):
        make()(*args)                     # eager vmap: the same errors


def test_no_batched_argument_and_no_axis_size():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        ember.vmap(lambda w: w * 2, in_axes=None)(np.ones(3, np.float32))


def test_python_branch_on_a_batched_value_names_the_parameter():
    def f(a, b):
        return a if b.sum() > 0 else -a

    for g in (ember.vmap(f), ember.jit(ember.vmap(f, in_axes=(None, 0)))):
        with pytest.raises(ember.errors.ConcretizationError) as info:
            g(_ones((2, 3)), _ones((2, 3)))
        msg = str(info.value)
        assert "argument 'b' of f, which vmap traces" in msg and "args[" not in msg
        assert "in_axes None" in msg and "static_argnames=()" not in msg
