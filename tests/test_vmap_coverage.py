"""Every public function of ember.numpy, ember.nn, ember.lax, ember.random,
ember.scipy.special and ember.scipy.linalg under ``ember.vmap``.

One table entry per public function (some functions have several): a per-example function of
the sample arguments ``a`` (4, 5) float32 in (0.1, 0.9), ``b`` (5,) float32 in (0.5, 2),
``m`` (5, 5) float32 in (-1, 1) (always shared: ``in_axes=None``), ``n`` (4, 5) int32 in
[-20, 20) and ``k`` a PRNG key (uint32[2]). ``test_every_public_function_has_an_entry``
walks each module's public names and fails for a function without an entry (the few
exclusions are listed, each with its reason).

Oracle: the per-example function, jitted, applied to each example in a Python loop and
stacked (its own results are checked against NumPy/JAX by the per-module tests). The table is
split into a few groups; each group is one program returning a dict, compiled once as
``jit(vmap(vmap(jit(g))))``: every function is batched twice (the inner vmap is batched
first, as a single vmap, then the outer one batches its result), its arguments mapped at
axis 0, at the end or in the middle (see the test for which is where), ``m`` unbatched, and
each output's batch axes put at 0, at the end or in the middle. Two compiles per group (the
per-example reference and the batched program) keep a cold run to about 3 CPU-minutes on the
2-core machine (seconds with the disk cache).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import public_functions

import ember
import ember.lax as lax
import ember.lax.linalg as lla
import ember.nn as nn
import ember.numpy as enp
import ember.random as random
import ember.scipy.linalg as sla
import ember.scipy.special as special
from ember import tree_util

B1, B2 = 3, 2
_rng = np.random.default_rng(11)
f32, i32, u32 = np.dtype("float32"), np.dtype("int32"), np.dtype("uint32")


def _dn(lc, rc, lb=(), rb=()):
    return ((lc, rc), (lb, rb))


# --- the table: "module.function" (optionally "#variant") -> per-example function ----------

CASES: dict[str, object] = {}


def case(name, fn):
    assert name not in CASES, name
    CASES[name] = fn


# ember.numpy: elementwise (one and two arguments).
_UNARY_DOMAIN = {  # argument in the function's domain, from a in (0.1, 0.9)
    "arccosh": lambda a: a + 1.0, "acosh": lambda a: a + 1.0,
    "abs": lambda a: a - 0.5, "absolute": lambda a: a - 0.5, "fabs": lambda a: a - 0.5,
    "sign": lambda a: a - 0.5, "signbit": lambda a: a - 0.5, "negative": lambda a: a - 0.5,
    "ceil": lambda a: a * 8 - 4, "floor": lambda a: a * 8 - 4, "rint": lambda a: a * 8 - 4,
    "trunc": lambda a: a * 8 - 4, "fix": lambda a: a * 8 - 4, "cbrt": lambda a: a - 0.5,
    "sinc": lambda a: a * 4 - 2, "i0": lambda a: a * 3,
}
for _n in ["abs", "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh",
           "arctan", "arctanh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "conj",
           "conjugate", "cos", "cosh", "deg2rad", "degrees", "exp", "exp2", "expm1", "fabs",
           "fix", "floor", "i0", "log", "log10", "log1p", "log2", "negative", "positive",
           "rad2deg", "radians", "reciprocal", "rint", "sign", "signbit", "sin", "sinc", "sinh",
           "sqrt", "square", "tan", "tanh", "trunc"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(
        _UNARY_DOMAIN.get(_n, lambda a: a)(a)))
for _n in ["add", "arctan2", "atan2", "copysign", "divide", "float_power", "fmax", "fmin",
           "heaviside", "hypot", "logaddexp", "logaddexp2", "maximum", "minimum", "multiply",
           "nextafter", "pow", "power", "subtract", "true_divide", "equal", "not_equal",
           "greater", "greater_equal", "less", "less_equal"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a - 0.5, b))
for _n in ["floor_divide", "fmod", "mod", "remainder"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(n, 7))
    case(f"numpy.{_n}#float", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a * 9 - 4, b))
for _n in ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "left_shift", "right_shift"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(n, enp.abs(n) % 5))
for _n in ["bitwise_not", "invert", "bitwise_count"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(n))
for _n in ["logical_and", "logical_or", "logical_xor"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a > 0.5, n > 0))
case("numpy.logical_not", lambda a, b, m, n, k: enp.logical_not(a > 0.5))
for _n in ["isfinite", "isinf", "isnan", "isneginf", "isposinf"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(
        enp.log(a - 0.5) * (n - 0.5)))
case("numpy.divmod", lambda a, b, m, n, k: enp.divmod(n, 6))
case("numpy.around", lambda a, b, m, n, k: enp.around(a * 10, 1))
case("numpy.round", lambda a, b, m, n, k: enp.round(a * 10 - 5))
case("numpy.clip", lambda a, b, m, n, k: enp.clip(a, 0.3, b))
case("numpy.nan_to_num", lambda a, b, m, n, k: enp.nan_to_num(enp.log(a - 0.5), neginf=-9.0))
case("numpy.where", lambda a, b, m, n, k: enp.where(a > m[:4], a, -b))
case("numpy.where#size", lambda a, b, m, n, k: enp.where(b > 1.0, size=5, fill_value=-1)[0])
for _n in ["bfloat16", "bool_", "float16", "float32", "float64", "int8", "int16", "int32",
           "int64", "uint8", "uint16", "uint32", "uint64", "complex64", "complex128"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(
        enp.abs(n) if _n.startswith("u") else n))
case("numpy.astype", lambda a, b, m, n, k: enp.astype(a * 10, np.int32))

# ember.numpy: reductions and statistics.
for _n in ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "ptp",
           "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(
        enp.where(a > 0.85, np.nan, a) if _n.startswith("nan") else a, axis=1))
case("numpy.sum#all", lambda a, b, m, n, k: enp.sum(n, keepdims=True))
case("numpy.max#where", lambda a, b, m, n, k: enp.max(a, axis=0, where=a < 0.7, initial=0.0))
for _n in ["all", "any"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a > 0.3, axis=0))
case("numpy.count_nonzero", lambda a, b, m, n, k: enp.count_nonzero(n > 0, axis=1))
case("numpy.argmax", lambda a, b, m, n, k: enp.argmax(a, axis=1))
case("numpy.argmin", lambda a, b, m, n, k: enp.argmin(n))
case("numpy.average", lambda a, b, m, n, k: enp.average(a, axis=1, weights=b))
case("numpy.angle", lambda a, b, m, n, k: enp.angle(a - 0.5, deg=True))
for _n in ["cumsum", "cumprod", "nancumsum", "nancumprod"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a + 0.5, axis=1))
case("numpy.cumulative_sum", lambda a, b, m, n, k: enp.cumulative_sum(
    n, axis=0, include_initial=True))
case("numpy.cumulative_prod", lambda a, b, m, n, k: enp.cumulative_prod(b))
for _n in ["median", "nanmedian"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a, axis=0))
for _n in ["percentile", "nanpercentile"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(a, 30.0, axis=1))
for _n in ["quantile", "nanquantile"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(b, 0.25))
case("numpy.sort", lambda a, b, m, n, k: enp.sort(a, axis=0))
case("numpy.sort_complex", lambda a, b, m, n, k: enp.sort_complex(
    lax.complex(enp.round(a * 3), m[:4])))
case("numpy.argsort", lambda a, b, m, n, k: enp.argsort(b))
case("numpy.searchsorted", lambda a, b, m, n, k: enp.searchsorted(enp.sort(b), a[0] * 2))
case("numpy.unique", lambda a, b, m, n, k: enp.unique(n % 4, size=5, fill_value=-9))
case("numpy.nonzero", lambda a, b, m, n, k: enp.nonzero(b > 1.0, size=5)[0])
case("numpy.flatnonzero", lambda a, b, m, n, k: enp.flatnonzero(n > 0, size=20))
case("numpy.argwhere", lambda a, b, m, n, k: enp.argwhere(n > 0, size=20, fill_value=-1))

# ember.numpy: linear algebra.
case("numpy.matmul", lambda a, b, m, n, k: enp.matmul(a, m))
case("numpy.dot", lambda a, b, m, n, k: enp.dot(a, b))
case("numpy.vdot", lambda a, b, m, n, k: enp.vdot(a, a))
case("numpy.inner", lambda a, b, m, n, k: enp.inner(a, m))
case("numpy.outer", lambda a, b, m, n, k: enp.outer(b, a[0]))
case("numpy.tensordot", lambda a, b, m, n, k: enp.tensordot(m, a, axes=([1], [1])))
case("numpy.einsum", lambda a, b, m, n, k: enp.einsum("ij,jk,k->i", a, m, b))
case("numpy.kron", lambda a, b, m, n, k: enp.kron(b, b[:2]))
case("numpy.cross", lambda a, b, m, n, k: enp.cross(a[:, :3], b[:3]))
case("numpy.trace", lambda a, b, m, n, k: enp.trace(a, 1))
case("numpy.diagonal", lambda a, b, m, n, k: enp.diagonal(a, -1))
case("numpy.diag", lambda a, b, m, n, k: enp.diag(b, 1))
case("numpy.tril", lambda a, b, m, n, k: enp.tril(a))
case("numpy.triu", lambda a, b, m, n, k: enp.triu(n, 1))
case("numpy.linalg.norm", lambda a, b, m, n, k: enp.linalg.norm(a, axis=1))
case("numpy.linalg.norm#ord_2", lambda a, b, m, n, k: enp.linalg.norm(a, 2))
# ember.numpy.linalg: decompositions (loops whose trip counts differ per example for Jacobi).
_SQ = lambda a: a[:, :4] + 2 * enp.eye(4)                      # noqa: E731 (well conditioned)
_SPD = lambda a: a[:, :4] @ a[:, :4].T + enp.eye(4)            # noqa: E731
case("numpy.linalg.solve", lambda a, b, m, n, k: enp.linalg.solve(_SQ(a), b[:4]))
case("numpy.linalg.inv", lambda a, b, m, n, k: enp.linalg.inv(_SQ(a)))
case("numpy.linalg.det", lambda a, b, m, n, k: enp.linalg.det(_SQ(a)))
case("numpy.linalg.slogdet", lambda a, b, m, n, k: enp.linalg.slogdet(_SQ(a) - 2.5))
case("numpy.linalg.cholesky", lambda a, b, m, n, k: enp.linalg.cholesky(_SPD(a)))
case("numpy.linalg.qr", lambda a, b, m, n, k: enp.linalg.qr(a.T))
case("numpy.linalg.eigh", lambda a, b, m, n, k: enp.linalg.eigh(   # eigenvalues well apart
    _SPD(a) + 4 * enp.diag(enp.arange(4.0))))
case("numpy.linalg.eigvalsh", lambda a, b, m, n, k: enp.linalg.eigvalsh(_SPD(a) + m[:4, :4]))
case("numpy.linalg.svd", lambda a, b, m, n, k: enp.linalg.svd(a * b, full_matrices=False))
case("numpy.linalg.svdvals", lambda a, b, m, n, k: enp.linalg.svdvals(a.T))
case("numpy.linalg.cond", lambda a, b, m, n, k: enp.linalg.cond(_SQ(a)))
case("numpy.linalg.pinv", lambda a, b, m, n, k: enp.linalg.pinv(a))
case("numpy.linalg.matrix_rank", lambda a, b, m, n, k: enp.linalg.matrix_rank(
    a[:, :1] * b[:4]))
case("numpy.linalg.lstsq", lambda a, b, m, n, k: enp.linalg.lstsq(a.T, b)[:2])
case("numpy.linalg.matrix_power", lambda a, b, m, n, k: enp.linalg.matrix_power(a[:, :4], 3))
case("numpy.linalg.multi_dot", lambda a, b, m, n, k: enp.linalg.multi_dot([b[:4], a, m, b]))
case("scipy.linalg.solve_triangular", lambda a, b, m, n, k: sla.solve_triangular(
    _SQ(a), b[:4], lower=True))
case("scipy.linalg.cholesky", lambda a, b, m, n, k: sla.cholesky(_SPD(a)))
case("scipy.linalg.cho_factor", lambda a, b, m, n, k: sla.cho_factor(_SPD(a))[0])
case("scipy.linalg.cho_solve", lambda a, b, m, n, k: sla.cho_solve(
    sla.cho_factor(_SPD(a), lower=True), b[:4]))

# ember.numpy: creation (an unbatched value combined with a batched one).
case("numpy.arange", lambda a, b, m, n, k: enp.arange(5) * b)
case("numpy.linspace", lambda a, b, m, n, k: enp.linspace(0, 1, 5) + b)
case("numpy.logspace", lambda a, b, m, n, k: enp.logspace(0, 1, 5) * b)
case("numpy.eye", lambda a, b, m, n, k: enp.eye(4, 5, 1) * a)
case("numpy.identity", lambda a, b, m, n, k: enp.identity(5) @ b)
case("numpy.tri", lambda a, b, m, n, k: enp.tri(4, 5) * n)
case("numpy.zeros", lambda a, b, m, n, k: enp.zeros((4, 5)) + a)
case("numpy.ones", lambda a, b, m, n, k: enp.ones(5, np.int32) + n)
case("numpy.full", lambda a, b, m, n, k: enp.full((4, 5), 2.5) * a)
case("numpy.empty", lambda a, b, m, n, k: enp.broadcast_to(b, enp.empty((4, 5)).shape))
case("numpy.zeros_like", lambda a, b, m, n, k: enp.zeros_like(a) + b)
case("numpy.ones_like", lambda a, b, m, n, k: enp.ones_like(n) - n)
case("numpy.full_like", lambda a, b, m, n, k: enp.full_like(a, 3) * b)
case("numpy.array", lambda a, b, m, n, k: enp.array([b, a[0], m[0]]) * 2)
case("numpy.asarray", lambda a, b, m, n, k: enp.asarray(n, dtype=np.float32) + a)
case("numpy.indices", lambda a, b, m, n, k: enp.indices((4, 5))[1] * n)
case("numpy.meshgrid", lambda a, b, m, n, k: enp.meshgrid(b, a[:, 0])[1])

# ember.numpy: shape and movement.
case("numpy.reshape", lambda a, b, m, n, k: enp.reshape(a, (2, 10)))
case("numpy.ravel", lambda a, b, m, n, k: enp.ravel(n))
case("numpy.transpose", lambda a, b, m, n, k: enp.transpose(a[None], (2, 0, 1)))
case("numpy.swapaxes", lambda a, b, m, n, k: enp.swapaxes(a, 0, 1))
case("numpy.moveaxis", lambda a, b, m, n, k: enp.moveaxis(a[None], 0, -1))
case("numpy.expand_dims", lambda a, b, m, n, k: enp.expand_dims(a, (0, 2)))
case("numpy.squeeze", lambda a, b, m, n, k: enp.squeeze(a[:, None, :1]))
case("numpy.broadcast_to", lambda a, b, m, n, k: enp.broadcast_to(b, (3, 5)))
case("numpy.broadcast_arrays", lambda a, b, m, n, k: enp.broadcast_arrays(a, b)[1])
case("numpy.atleast_1d", lambda a, b, m, n, k: enp.atleast_1d(b.sum()))
case("numpy.atleast_2d", lambda a, b, m, n, k: enp.atleast_2d(b))
case("numpy.atleast_3d", lambda a, b, m, n, k: enp.atleast_3d(a))
case("numpy.flip", lambda a, b, m, n, k: enp.flip(a, axis=1))
case("numpy.fliplr", lambda a, b, m, n, k: enp.fliplr(a))
case("numpy.flipud", lambda a, b, m, n, k: enp.flipud(n))
case("numpy.rot90", lambda a, b, m, n, k: enp.rot90(a, 3))
case("numpy.roll", lambda a, b, m, n, k: enp.roll(a, 2, axis=1))
case("numpy.roll#traced", lambda a, b, m, n, k: enp.roll(a, n[0, :2], axis=(0, 1)))
case("numpy.roll#flat", lambda a, b, m, n, k: enp.roll(n, -3))
case("numpy.tile", lambda a, b, m, n, k: enp.tile(b, (2, 1)))
case("numpy.repeat", lambda a, b, m, n, k: enp.repeat(a, 2, axis=0))
case("numpy.repeat#traced", lambda a, b, m, n, k: enp.repeat(b, enp.abs(n[0]) % 3,
                                                             total_repeat_length=7))
case("numpy.concatenate", lambda a, b, m, n, k: enp.concatenate([a, m], axis=0))
case("numpy.stack", lambda a, b, m, n, k: enp.stack([b, m[1]], axis=1))
case("numpy.hstack", lambda a, b, m, n, k: enp.hstack([b, b]))
case("numpy.vstack", lambda a, b, m, n, k: enp.vstack([a, b]))
case("numpy.dstack", lambda a, b, m, n, k: enp.dstack([a, a * 2]))
case("numpy.column_stack", lambda a, b, m, n, k: enp.column_stack([b, m[0]]))
case("numpy.split", lambda a, b, m, n, k: enp.split(a, [1, 3], axis=1))
case("numpy.array_split", lambda a, b, m, n, k: enp.array_split(b, 3))
case("numpy.hsplit", lambda a, b, m, n, k: enp.hsplit(n, [2]))
case("numpy.vsplit", lambda a, b, m, n, k: enp.vsplit(a, 2))
case("numpy.dsplit", lambda a, b, m, n, k: enp.dsplit(a[..., None] * b[:2], 2))
case("numpy.pad", lambda a, b, m, n, k: enp.pad(a, ((1, 0), (0, 2))))
case("numpy.pad#reflect", lambda a, b, m, n, k: enp.pad(b, 2, mode="reflect"))
case("numpy.take", lambda a, b, m, n, k: enp.take(b, enp.array([4, 0, 2])))
case("numpy.take#batched_index", lambda a, b, m, n, k: enp.take(m, enp.abs(n) % 5, axis=0))
case("numpy.take_along_axis", lambda a, b, m, n, k: enp.take_along_axis(
    a, enp.argsort(a, axis=1), 1))
case("numpy.put_along_axis", lambda a, b, m, n, k: enp.put_along_axis(
    a, enp.argmax(a, axis=1, keepdims=True), -1.0, 1, inplace=False))
case("numpy.ndim", lambda a, b, m, n, k: a * enp.ndim(a))
case("numpy.shape", lambda a, b, m, n, k: a * enp.shape(a)[1])
case("numpy.size", lambda a, b, m, n, k: b * enp.size(a))
case("numpy.isscalar", lambda a, b, m, n, k: b * (1 + enp.isscalar(b)))

# ember.numpy: differences, comparisons, selection, statistics, index arithmetic, polynomials,
# convolutions, floating-point decomposition (ember/numpy/_calculus.py, _comparison.py,
# _selection.py, _statistics.py, _index_tricks.py, _polynomial.py, _ufuncs.py).
case("numpy.diff", lambda a, b, m, n, k: enp.diff(a, axis=0, prepend=0.5))
case("numpy.diff#n2", lambda a, b, m, n, k: enp.diff(n, 2))
case("numpy.ediff1d", lambda a, b, m, n, k: enp.ediff1d(b, to_begin=m[0, :2], to_end=1.0))
case("numpy.isclose", lambda a, b, m, n, k: enp.isclose(a, m[:4], atol=0.3))
case("numpy.allclose", lambda a, b, m, n, k: enp.allclose(a, a + 1e-7 * b))
case("numpy.array_equal", lambda a, b, m, n, k: enp.array_equal(n, n % 19))
case("numpy.array_equiv", lambda a, b, m, n, k: enp.array_equiv(n > -20, True))
case("numpy.append", lambda a, b, m, n, k: enp.append(a, m[:1], axis=0))
case("numpy.copy", lambda a, b, m, n, k: enp.copy(b))
case("numpy.empty_like", lambda a, b, m, n, k: enp.empty_like(a) + b)
case("numpy.select", lambda a, b, m, n, k: enp.select([a > 0.7, a < 0.3], [a, -b], m[0]))
case("numpy.interp", lambda a, b, m, n, k: enp.interp(a, enp.sort(b), m[0]))
case("numpy.nanargmax", lambda a, b, m, n, k: enp.nanargmax(
    enp.where(a > 0.8, np.nan, a), axis=1))
case("numpy.nanargmin", lambda a, b, m, n, k: enp.nanargmin(enp.where(a > 0.8, np.nan, a)))
case("numpy.real", lambda a, b, m, n, k: enp.real(b))
case("numpy.imag", lambda a, b, m, n, k: enp.imag(b) + b)
case("numpy.rollaxis", lambda a, b, m, n, k: enp.rollaxis(a[None], 2))
case("numpy.bincount", lambda a, b, m, n, k: enp.bincount(n[0], weights=a[0], length=8))
case("numpy.digitize", lambda a, b, m, n, k: enp.digitize(a, enp.sort(b)))
case("numpy.isin", lambda a, b, m, n, k: enp.isin(n, n[0]))
case("numpy.cov", lambda a, b, m, n, k: enp.cov(a, aweights=b))
case("numpy.corrcoef", lambda a, b, m, n, k: enp.corrcoef(a, b, rowvar=True))
case("numpy.polyval", lambda a, b, m, n, k: enp.polyval(b, a))
case("numpy.geomspace", lambda a, b, m, n, k: enp.geomspace(b, 3.0, 4, axis=-1))
case("numpy.trapezoid", lambda a, b, m, n, k: enp.trapezoid(a, b))
case("numpy.tril_indices", lambda a, b, m, n, k: a[enp.tril_indices(4, 1, 5)])
case("numpy.triu_indices", lambda a, b, m, n, k: a[enp.triu_indices(4, 0, 5)])
case("numpy.unravel_index", lambda a, b, m, n, k: enp.unravel_index(n, (3, 7)))
case("numpy.ravel_multi_index", lambda a, b, m, n, k: enp.ravel_multi_index(
    (n[0], n[1]), (5, 6), mode="clip"))
case("numpy.vander", lambda a, b, m, n, k: enp.vander(b, 3))
case("numpy.convolve", lambda a, b, m, n, k: enp.convolve(b, a[0, :3], mode="same"))
case("numpy.correlate", lambda a, b, m, n, k: enp.correlate(b, m[1], mode="full"))
case("numpy.ldexp", lambda a, b, m, n, k: enp.ldexp(a, n))
case("numpy.frexp", lambda a, b, m, n, k: enp.frexp(a * 100 - 50))
case("numpy.modf", lambda a, b, m, n, k: enp.modf(a * 9 - 4))
case("numpy.gcd", lambda a, b, m, n, k: enp.gcd(n, n[0]))
case("numpy.lcm", lambda a, b, m, n, k: enp.lcm(n, 6))

# ember.nn.
for _n in ["elu", "gelu", "log_sigmoid", "relu", "relu6", "selu", "sigmoid", "silu",
           "softplus", "swish"]:
    case(f"nn.{_n}", lambda a, b, m, n, k, _n=_n: getattr(nn, _n)(a * 8 - 4))
case("nn.softmax", lambda a, b, m, n, k: nn.softmax(a, axis=0))
case("nn.log_softmax", lambda a, b, m, n, k: nn.log_softmax(a))
case("nn.logsumexp", lambda a, b, m, n, k: nn.logsumexp(a, axis=1))
case("nn.one_hot", lambda a, b, m, n, k: nn.one_hot(enp.argmax(a, axis=1), 5))
case("nn.standardize", lambda a, b, m, n, k: nn.standardize(a, axis=0))

# ember.scipy.special.
for _n in ["digamma", "erf", "erfc", "erfinv", "expit", "gammaln", "logit", "psi"]:
    case(f"special.{_n}", lambda a, b, m, n, k, _n=_n: getattr(special, _n)(a))
case("special.xlogy", lambda a, b, m, n, k: special.xlogy(a, b))
case("special.logsumexp", lambda a, b, m, n, k: special.logsumexp(a, axis=0, b=b))

# ember.random: the key is batched (per-example keys), the other arguments too where given.
case("random.key", lambda a, b, m, n, k: random.key(n[0, 0]))
case("random.PRNGKey", lambda a, b, m, n, k: random.PRNGKey(n[1, 2]))
case("random.key_data", lambda a, b, m, n, k: random.key_data(k))
case("random.split", lambda a, b, m, n, k: random.split(k, 3))
case("random.fold_in", lambda a, b, m, n, k: random.fold_in(k, n[0, 1]))
case("random.threefry_2x32", lambda a, b, m, n, k: random.threefry_2x32(
    k, enp.abs(n[0]).astype(np.uint32)))
case("random.bits", lambda a, b, m, n, k: random.bits(k, (3,)))
case("random.uniform", lambda a, b, m, n, k: random.uniform(k, (4,), minval=-1.0,
                                                           maxval=b[:4]))
case("random.normal", lambda a, b, m, n, k: random.normal(k, (2, 3)))
case("random.gumbel", lambda a, b, m, n, k: random.gumbel(k, (3,)))
case("random.truncated_normal", lambda a, b, m, n, k: random.truncated_normal(
    k, -1.0, b[:3], (3,)))
case("random.bernoulli", lambda a, b, m, n, k: random.bernoulli(k, a[0]))
case("random.randint", lambda a, b, m, n, k: random.randint(k, (5,), -3, n[0] % 9 + 10))
case("random.categorical", lambda a, b, m, n, k: random.categorical(k, enp.log(a), axis=1))
case("random.choice", lambda a, b, m, n, k: random.choice(k, b, (3,), replace=False))
case("random.permutation", lambda a, b, m, n, k: random.permutation(k, a, axis=1))

# ember.lax: elementwise.
_LAX_UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos",
              "cosh", "digamma", "erf", "erf_inv", "erfc", "exp", "exp2", "expm1", "floor",
              "is_finite", "lgamma", "log", "log1p", "log2", "logistic", "neg", "round",
              "rsqrt", "sign", "signbit", "sin", "sinh", "sqrt", "tan", "tanh"]
for _n in _LAX_UNARY:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(
        _UNARY_DOMAIN.get(_n, lambda a: a)(a)))
for _n in ["add", "atan2", "copysign", "div", "max", "min", "mul", "nextafter", "pow", "rem",
           "sub", "eq", "ne", "lt", "le", "gt", "ge"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(a - 0.5, m[:4]))
for _n in ["bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
           "shift_right_arithmetic", "shift_right_logical"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(n, enp.abs(n) % 5))
for _n in ["bitwise_not", "not_", "clz", "population_count"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(n))
case("lax.select", lambda a, b, m, n, k: lax.select(a > m[:4], a, m[:4]))
# complex numbers: complex64 built from the float32 samples
case("lax.complex", lambda a, b, m, n, k: lax.complex(a, m[:4]) * (1 - 2j))
case("lax.real", lambda a, b, m, n, k: lax.real(lax.exp(lax.complex(a, m[:4]))))
case("lax.imag", lambda a, b, m, n, k: lax.imag(lax.complex(b, b * 3) ** 2))
case("lax.conj", lambda a, b, m, n, k: lax.conj(lax.complex(a - m[:4], a)))
case("lax.convert_element_type", lambda a, b, m, n, k: lax.convert_element_type(a * 9, i32))
case("lax.bitcast_convert_type", lambda a, b, m, n, k: lax.bitcast_convert_type(a, i32))
case("lax.iota", lambda a, b, m, n, k: lax.iota(f32, 5) * b)
case("lax.broadcasted_iota", lambda a, b, m, n, k: lax.broadcasted_iota(i32, (4, 5), 0) + n)

# ember.lax: structure, reductions, contractions, indexing.
case("lax.broadcast_in_dim", lambda a, b, m, n, k: lax.broadcast_in_dim(b, (3, 5, 2), (1,)))
case("lax.reshape", lambda a, b, m, n, k: lax.reshape(a, (5, 4)))
case("lax.transpose", lambda a, b, m, n, k: lax.transpose(a, (1, 0)))
case("lax.rev", lambda a, b, m, n, k: lax.rev(n, (0, 1)))
case("lax.slice", lambda a, b, m, n, k: lax.slice(a, (1, 0), (4, 5), (2, 2)))
case("lax.concatenate", lambda a, b, m, n, k: lax.concatenate([a, m[:4]], 1))
case("lax.pad", lambda a, b, m, n, k: lax.pad(a, b[0], [(1, -1, 1), (0, 2, 0)]))
for _n in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(a, (0,)))
for _n in ["reduce_and", "reduce_or"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(n > 0, (1,)))
case("lax.argmax", lambda a, b, m, n, k: lax.argmax(a, 0, i32))
case("lax.argmin", lambda a, b, m, n, k: lax.argmin(n, 1, i32))
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(a, 1, reverse=True))
case("lax.dot_general", lambda a, b, m, n, k: lax.dot_general(a, m, _dn((1,), (0,))))
case("lax.dot_general#batch", lambda a, b, m, n, k: lax.dot_general(
    a, n.astype(f32), _dn((1,), (1,), (0,), (0,))))
case("lax.sort", lambda a, b, m, n, k: lax.sort(a, dimension=0))
case("lax.sort_key_val", lambda a, b, m, n, k: lax.sort_key_val(n, a, dimension=1))
case("lax.gather", lambda a, b, m, n, k: lax.gather(a, enp.abs(n[:2, :1]) % 4, (0,)))
case("lax.scatter", lambda a, b, m, n, k: lax.scatter(a, enp.array([[1], [3]]), m[:2], (0,)))
for _n in ["scatter_add", "scatter_mul", "scatter_max", "scatter_min"]:
    case(f"lax.{_n}", lambda a, b, m, n, k, _n=_n: getattr(lax, _n)(
        a, enp.abs(n[:3, :1]) % 5, m[:3], (0,)))
case("lax.dynamic_slice", lambda a, b, m, n, k: lax.dynamic_slice(
    a, (enp.abs(n[0, 0]) % 3, 1), (2, 3)))
case("lax.dynamic_update_slice", lambda a, b, m, n, k: lax.dynamic_update_slice(
    a, m[:2, :2], (n[0, 0] % 4, 2)))
case("lax.dynamic_index_in_dim", lambda a, b, m, n, k: lax.dynamic_index_in_dim(
    a, n[1, 1], 1, keepdims=False))

# ember.lax: control flow (batched predicates, bounds and carries).
case("lax.cond", lambda a, b, m, n, k: lax.cond(b.sum() > 6, lambda t: t * 2, lambda t: -t,
                                                 a))
case("lax.cond#shared_pred", lambda a, b, m, n, k: lax.cond(m[0, 0] > 0, lambda t: t + m[0],
                                                            lambda t: t * m[1], b))
case("lax.switch", lambda a, b, m, n, k: lax.switch(
    n[0, 0] % 3, [lambda t: t, lambda t: t * t, lambda t: -t], b))
case("lax.while_loop", lambda a, b, m, n, k: lax.while_loop(
    lambda c: c[0].sum() < 20, lambda c: (c[0] * 1.5, c[1] + 1), (b, np.int32(0))))
case("lax.fori_loop", lambda a, b, m, n, k: lax.fori_loop(0, 3, lambda j, c: c * b + j, b))
case("lax.fori_loop#batched_bound", lambda a, b, m, n, k: lax.fori_loop(
    0, enp.abs(n[0, 0]) % 4, lambda j, c: c * 0.5 + a[0], b))
case("lax.scan", lambda a, b, m, n, k: lax.scan(lambda c, r: (c + r, c * r), b, a))
case("lax.map", lambda a, b, m, n, k: lax.map(lambda r: r @ m + b, a))

# ember.nn and ember.scipy.special additions (session 17).
for _n in ["celu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
           "leaky_relu", "mish", "soft_sign", "sparse_plus", "sparse_sigmoid", "squareplus",
           "tanh"]:
    case(f"nn.{_n}", lambda a, b, m, n, k, _n=_n: getattr(nn, _n)(a * 8 - 4))
case("nn.relu6#int", lambda a, b, m, n, k: nn.relu6(n))
case("nn.glu", lambda a, b, m, n, k: nn.glu(a, axis=0))
case("nn.log1mexp", lambda a, b, m, n, k: nn.log1mexp(a * 3))
case("nn.logmeanexp", lambda a, b, m, n, k: nn.logmeanexp(a, axis=1, where=n > -5))
case("nn.logsumexp#b_where_sign", lambda a, b, m, n, k: nn.logsumexp(
    a, axis=1, b=b - 1, where=n > -5, return_sign=True))
case("nn.softmax#where", lambda a, b, m, n, k: nn.softmax(a * 4, where=n > -5))
case("nn.log_softmax#where", lambda a, b, m, n, k: nn.log_softmax(a, axis=0, where=n > -5))
case("nn.standardize#where", lambda a, b, m, n, k: nn.standardize(
    a, where=n > -5, algorithm="stable"))
case("nn.dot_product_attention", lambda a, b, m, n, k: nn.dot_product_attention(
    a[:, None, :], m[:, None, :], m[:, None, :] * b, is_causal=True))
case("nn.dot_product_attention#mask_bias", lambda a, b, m, n, k: nn.dot_product_attention(
    a[None, :, None, :], a[None, :, None, :], m[None, :4, None, :],
    bias=m[None, None, :4, :4], mask=(n > -10)[None, None, :, :4]))
for _n, _f in [("ndtr", lambda a: a * 8 - 4), ("ndtri", lambda a: a),
               ("log_ndtr", lambda a: a * 30 - 20), ("i0", lambda a: a * 20 - 10),
               ("i0e", lambda a: a * 20 - 10), ("i1", lambda a: a * 20 - 10),
               ("i1e", lambda a: a * 20 - 10), ("entr", lambda a: a),
               ("gamma", lambda a: a * 6 - 3), ("gammasgn", lambda a: a * 6 - 3),
               ("factorial", lambda a: a * 10), ("erfcx", lambda a: a * 20 - 5),
               ("exp1", lambda a: a * 3), ("expi", lambda a: a * 6 - 3)]:
    case(f"special.{_n}", lambda a, b, m, n, k, _n=_n, _f=_f: getattr(special, _n)(_f(a)))
for _n in ["xlog1py", "kl_div", "rel_entr", "betaln", "beta", "poch", "comb"]:
    case(f"special.{_n}", lambda a, b, m, n, k, _n=_n: getattr(special, _n)(b * 3, a * 2))
case("special.gammainc", lambda a, b, m, n, k: special.gammainc(b * 3, a * 6))
case("special.gammaincc", lambda a, b, m, n, k: special.gammaincc(b * 3, a * 6))
case("special.expn", lambda a, b, m, n, k: special.expn(enp.abs(n) % 4, a * 3))
case("special.multigammaln", lambda a, b, m, n, k: special.multigammaln(b + 2, 3))
case("special.softmax", lambda a, b, m, n, k: special.softmax(a, axis=1))
case("special.log_softmax", lambda a, b, m, n, k: special.log_softmax(a))
case("special.bernoulli", lambda a, b, m, n, k: special.bernoulli(6)[:5] * b)
case("special.zeta", lambda a, b, m, n, k: special.zeta(b + 1.5, a * 3))
case("special.polygamma", lambda a, b, m, n, k: special.polygamma(enp.abs(n) % 3, a * 3))

# ember.random distributions (session 17).
case("random.exponential", lambda a, b, m, n, k: random.exponential(k, (3,)))
case("random.laplace", lambda a, b, m, n, k: random.laplace(k, (3,)))
case("random.logistic", lambda a, b, m, n, k: random.logistic(k, (3,)))
case("random.cauchy", lambda a, b, m, n, k: random.cauchy(k, (3,)))
case("random.lognormal", lambda a, b, m, n, k: random.lognormal(k, b[:3], (2, 3)))
case("random.pareto", lambda a, b, m, n, k: random.pareto(k, b))
case("random.rayleigh", lambda a, b, m, n, k: random.rayleigh(k, b))
case("random.maxwell", lambda a, b, m, n, k: random.maxwell(k, (3,)))
case("random.double_sided_maxwell", lambda a, b, m, n, k: random.double_sided_maxwell(
    k, a[0, :2], b[:2], (3,)))
case("random.weibull_min", lambda a, b, m, n, k: random.weibull_min(k, b, a[0] + 1, (5,)))
case("random.wald", lambda a, b, m, n, k: random.wald(k, b))
case("random.triangular", lambda a, b, m, n, k: random.triangular(k, -1.0, a[0] - 0.5, b))
case("random.rademacher", lambda a, b, m, n, k: random.rademacher(k, (4,)))
case("random.geometric", lambda a, b, m, n, k: random.geometric(k, a[0]))
case("random.generalized_normal", lambda a, b, m, n, k: random.generalized_normal(
    k, 1.5, (3,)))
case("random.gamma", lambda a, b, m, n, k: random.gamma(k, b[:3]))
case("random.loggamma", lambda a, b, m, n, k: random.loggamma(k, a[0, :3]))
case("random.chisquare", lambda a, b, m, n, k: random.chisquare(k, b[:3]))
case("random.t", lambda a, b, m, n, k: random.t(k, b[:3]))
case("random.f", lambda a, b, m, n, k: random.f(k, b[:2], b[2:4]))
case("random.beta", lambda a, b, m, n, k: random.beta(k, b[:2], a[0, :2]))
case("random.dirichlet", lambda a, b, m, n, k: random.dirichlet(k, b[:3]))
case("random.ball", lambda a, b, m, n, k: random.ball(k, 3))
case("random.poisson", lambda a, b, m, n, k: random.poisson(k, b * 8))
case("random.binomial", lambda a, b, m, n, k: random.binomial(
    k, enp.abs(n[0]).astype(f32), a[0]))
case("random.multinomial", lambda a, b, m, n, k: random.multinomial(
    k, 10.0, a[0, :3] / a[0, :3].sum()))
case("random.multivariate_normal", lambda a, b, m, n, k: random.multivariate_normal(
    k, b[:3], m[:3, :3] @ m[:3, :3].T + enp.eye(3, dtype=f32)))
case("random.orthogonal", lambda a, b, m, n, k: random.orthogonal(k, 3))
case("random.clone", lambda a, b, m, n, k: random.clone(k))
case("random.wrap_key_data", lambda a, b, m, n, k: random.wrap_key_data(k))

# ember.numpy additions (session 17).
case("numpy.vecdot", lambda a, b, m, n, k: enp.vecdot(a, b))
case("numpy.vecmat", lambda a, b, m, n, k: enp.vecmat(b, m))
case("numpy.matvec", lambda a, b, m, n, k: enp.matvec(a, b))
case("numpy.matrix_transpose", lambda a, b, m, n, k: enp.matrix_transpose(a))
case("numpy.permute_dims", lambda a, b, m, n, k: enp.permute_dims(a, (1, 0)))
case("numpy.concat", lambda a, b, m, n, k: enp.concat([a, m[:1]]))
case("numpy.unstack", lambda a, b, m, n, k: enp.unstack(a, axis=1))
case("numpy.bitwise_invert", lambda a, b, m, n, k: enp.bitwise_invert(n))
case("numpy.compress", lambda a, b, m, n, k: enp.compress(b > 1.0, a, axis=1, size=3,
                                                          fill_value=-1.0))
case("numpy.extract", lambda a, b, m, n, k: enp.extract(a > 0.5, a, size=6))
case("numpy.delete", lambda a, b, m, n, k: enp.delete(a, 2, axis=1))
case("numpy.delete#traced", lambda a, b, m, n, k: enp.delete(
    b, enp.stack([n[0, 0] % 5, (n[0, 0] + 2) % 5]), assume_unique_indices=True))
case("numpy.insert", lambda a, b, m, n, k: enp.insert(a, 1, b, axis=0))
case("numpy.insert#traced", lambda a, b, m, n, k: enp.insert(b, n[0, 0] % 5, a[0, :2]))
case("numpy.choose", lambda a, b, m, n, k: enp.choose(n % 3, [a, m[:4], a * 2], mode="wrap"))
case("numpy.block", lambda a, b, m, n, k: enp.block([[a, a], [m[:1], b[None]]]))
case("numpy.diagflat", lambda a, b, m, n, k: enp.diagflat(b, 1))
case("numpy.resize", lambda a, b, m, n, k: enp.resize(b, (3, 4)))
case("numpy.fill_diagonal", lambda a, b, m, n, k: enp.fill_diagonal(a, b[0], inplace=False))
case("numpy.put", lambda a, b, m, n, k: enp.put(a, n[0, :3], b[:3], mode="wrap",
                                                inplace=False))
case("numpy.place", lambda a, b, m, n, k: enp.place(a, a > 0.5, b, inplace=False))
case("numpy.piecewise", lambda a, b, m, n, k: enp.piecewise(
    a, [a < 0.3, a > 0.6], [lambda v: v * 2, lambda v: -v, 0.5]))
case("numpy.diag_indices", lambda a, b, m, n, k: a[enp.diag_indices(4)])
case("numpy.diag_indices_from", lambda a, b, m, n, k: m[enp.diag_indices_from(m)] + b)
case("numpy.tril_indices_from", lambda a, b, m, n, k: a[enp.tril_indices_from(a)])
case("numpy.triu_indices_from", lambda a, b, m, n, k: a[enp.triu_indices_from(a, 1)])
case("numpy.ix_", lambda a, b, m, n, k: a[enp.ix_(n[0, :2] % 4, n[1, :3] % 5)])
case("numpy.histogram", lambda a, b, m, n, k: enp.histogram(a, 4, range=(0.0, 1.0),
                                                            weights=a))
case("numpy.histogram_bin_edges", lambda a, b, m, n, k: enp.histogram_bin_edges(a, 5))
case("numpy.histogram2d", lambda a, b, m, n, k: enp.histogram2d(a[0], a[1], bins=3))
case("numpy.histogramdd", lambda a, b, m, n, k: enp.histogramdd(a.T, bins=2,
                                                                range=[(0.0, 1.0)] * 4))
case("numpy.partition", lambda a, b, m, n, k: enp.partition(a, 2, axis=1))
case("numpy.argpartition", lambda a, b, m, n, k: enp.argpartition(a, 1, axis=0))
case("numpy.lexsort", lambda a, b, m, n, k: enp.lexsort([a, n % 3], axis=1))
case("numpy.gradient", lambda a, b, m, n, k: enp.gradient(a, enp.cumsum(b), axis=1))
case("numpy.unwrap", lambda a, b, m, n, k: enp.unwrap(a * 8, axis=0))
case("numpy.spacing", lambda a, b, m, n, k: enp.spacing(a - 0.5))
for _n in ["setdiff1d", "union1d", "intersect1d", "setxor1d"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(
        n[0] % 7, n[1] % 7, size=6))
case("numpy.intersect1d#indices", lambda a, b, m, n, k: enp.intersect1d(
    n[0] % 5, n[1] % 5, return_indices=True, size=4))
for _n in ["unique_all", "unique_counts", "unique_inverse", "unique_values"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(n[0] % 4, size=4))
case("numpy.packbits", lambda a, b, m, n, k: enp.packbits(n > 0, axis=1))
case("numpy.unpackbits", lambda a, b, m, n, k: enp.unpackbits(
    (enp.abs(n) * 12).astype(np.uint8), axis=0, count=7))
case("numpy.apply_along_axis", lambda a, b, m, n, k: enp.apply_along_axis(enp.cumsum, 1, a))
case("numpy.apply_over_axes", lambda a, b, m, n, k: enp.apply_over_axes(enp.sum, a, [0]))
case("numpy.vectorize", lambda a, b, m, n, k: enp.vectorize(
    lambda x, y: enp.dot(x, y), signature="(n),(n)->()")(a, b))
case("numpy.fromfunction", lambda a, b, m, n, k: enp.fromfunction(
    lambda i, j: i * 3 + j, (2, 3)) * b[0])
case("numpy.poly", lambda a, b, m, n, k: enp.poly(b[:3]))
case("numpy.poly#matrix", lambda a, b, m, n, k: enp.poly(a[:3, :3]))
case("numpy.polyadd", lambda a, b, m, n, k: enp.polyadd(b, a[0, :3]))
case("numpy.polysub", lambda a, b, m, n, k: enp.polysub(a[0, :2], b))
case("numpy.polymul", lambda a, b, m, n, k: enp.polymul(b[:3], a[0, :2]))
case("numpy.polydiv", lambda a, b, m, n, k: enp.polydiv(a[0], b[:2]))
case("numpy.polyder", lambda a, b, m, n, k: enp.polyder(b, 2))
case("numpy.polyint", lambda a, b, m, n, k: enp.polyint(b, 2, k=a[0, :2]))
case("numpy.polyfit", lambda a, b, m, n, k: enp.polyfit(enp.arange(5.0), a[0] + b, 2))
for _n in ["bartlett", "blackman", "hamming", "hanning"]:
    case(f"numpy.{_n}", lambda a, b, m, n, k, _n=_n: getattr(enp, _n)(5) * b)
case("numpy.kaiser", lambda a, b, m, n, k: enp.kaiser(5, b[0] * 3))
case("numpy.isreal", lambda a, b, m, n, k: enp.isreal(a))
case("numpy.iscomplex", lambda a, b, m, n, k: enp.iscomplex(a))

# ember.numpy.linalg and ember.scipy.linalg additions (session 17).
case("numpy.linalg.matrix_norm", lambda a, b, m, n, k: enp.linalg.matrix_norm(a, ord=1))
case("numpy.linalg.vector_norm", lambda a, b, m, n, k: enp.linalg.vector_norm(a, axis=0, ord=3))
case("numpy.linalg.vecdot", lambda a, b, m, n, k: enp.linalg.vecdot(a, b))
case("numpy.linalg.matmul", lambda a, b, m, n, k: enp.linalg.matmul(a, m))
case("numpy.linalg.tensordot", lambda a, b, m, n, k: enp.linalg.tensordot(a, m, axes=1))
case("numpy.linalg.matrix_transpose", lambda a, b, m, n, k: enp.linalg.matrix_transpose(a))
case("numpy.linalg.cross", lambda a, b, m, n, k: enp.linalg.cross(a[:, :3], b[:3]))
case("numpy.linalg.outer", lambda a, b, m, n, k: enp.linalg.outer(b, a[0]))
case("numpy.linalg.diagonal", lambda a, b, m, n, k: enp.linalg.diagonal(a, offset=1))
case("numpy.linalg.trace", lambda a, b, m, n, k: enp.linalg.trace(n, offset=-1))
case("numpy.linalg.tensorinv", lambda a, b, m, n, k: enp.linalg.tensorinv(
    enp.reshape(_SQ(a), (2, 2, 4))))
case("numpy.linalg.tensorsolve", lambda a, b, m, n, k: enp.linalg.tensorsolve(
    enp.reshape(_SQ(a), (2, 2, 4)), enp.reshape(b[:4], (2, 2))))
case("scipy.linalg.lu", lambda a, b, m, n, k: sla.lu(a))
case("scipy.linalg.lu#permute_l", lambda a, b, m, n, k: sla.lu(a.T, permute_l=True))
case("scipy.linalg.lu_factor", lambda a, b, m, n, k: sla.lu_factor(a.T))
case("scipy.linalg.lu_solve", lambda a, b, m, n, k: sla.lu_solve(
    sla.lu_factor(_SQ(a)), b[:4], trans=1))
case("scipy.linalg.det", lambda a, b, m, n, k: sla.det(_SQ(a)))
case("scipy.linalg.inv", lambda a, b, m, n, k: sla.inv(_SQ(a)))
case("scipy.linalg.solve", lambda a, b, m, n, k: sla.solve(_SPD(a), b[:4], assume_a="pos"))
case("scipy.linalg.qr", lambda a, b, m, n, k: sla.qr(a, mode="economic"))
case("scipy.linalg.svd", lambda a, b, m, n, k: sla.svd(a * b, compute_uv=False))
case("scipy.linalg.eigh", lambda a, b, m, n, k: sla.eigh(   # eigenvalues well apart
    _SPD(a) + 4 * enp.diag(enp.arange(4.0)), subset_by_index=(1, 2)))
case("scipy.linalg.expm", lambda a, b, m, n, k: sla.expm(a[:, :4] * b[0]))  # squarings vary
case("scipy.linalg.polar", lambda a, b, m, n, k: sla.polar(a.T))
case("scipy.linalg.solve_sylvester", lambda a, b, m, n, k: sla.solve_sylvester(
    _SQ(a), m[:2, :2] + 3 * enp.eye(2), a[:, :2]))
# ember.lax.linalg (session 29).
case("lax.linalg.cholesky", lambda a, b, m, n, k: lla.cholesky(_SPD(a)))
case("lax.linalg.eigh", lambda a, b, m, n, k: lla.eigh(       # eigenvalues well apart
    _SPD(a) + 4 * enp.diag(enp.arange(4.0)))[1])
case("lax.linalg.lu", lambda a, b, m, n, k: lla.lu(a))
case("lax.linalg.lu_pivots_to_permutation", lambda a, b, m, n, k:
     lla.lu_pivots_to_permutation(enp.abs(n[0, :3]) % 3, 4))
case("lax.linalg.qr", lambda a, b, m, n, k: lla.qr(a.T, full_matrices=False))
case("lax.linalg.svd", lambda a, b, m, n, k: lla.svd(a * b, compute_uv=False))
case("lax.linalg.symmetric_product", lambda a, b, m, n, k: lla.symmetric_product(
    a, m[:4, :4], beta=0.5))
case("lax.linalg.triangular_solve", lambda a, b, m, n, k: lla.triangular_solve(
    _SQ(a), a[:2, :4], lower=True))
case("lax.linalg.tridiagonal_solve", lambda a, b, m, n, k: lla.tridiagonal_solve(
    a[0] - 0.5, b + m[0], a[1], m[:, :2] * b[0]))
case("scipy.linalg.block_diag", lambda a, b, m, n, k: sla.block_diag(a[:2], b, 1.0))
case("scipy.linalg.toeplitz", lambda a, b, m, n, k: sla.toeplitz(b, a[0]))
case("scipy.linalg.hankel", lambda a, b, m, n, k: sla.hankel(b[:3], n[0]))
case("scipy.linalg.circulant", lambda a, b, m, n, k: sla.circulant(n[1]))
case("scipy.linalg.companion", lambda a, b, m, n, k: sla.companion(b))
case("scipy.linalg.leslie", lambda a, b, m, n, k: sla.leslie(b, a[0, :4]))
case("scipy.linalg.hilbert", lambda a, b, m, n, k: sla.hilbert(5) * b)
case("scipy.linalg.pascal", lambda a, b, m, n, k: sla.pascal(5, "lower") @ b)
case("scipy.linalg.helmert", lambda a, b, m, n, k: sla.helmert(5, full=True) @ b)

# ember.lax additions (session 17).
case("lax.conv_general_dilated", lambda a, b, m, n, k: lax.conv_general_dilated(
    a.reshape(1, 4, 5, 1), m[:2, :3].reshape(2, 3, 1, 1), (1, 2), "SAME",
    dimension_numbers=("NHWC", "HWIO", "NHWC")))
case("lax.conv_general_dilated#groups", lambda a, b, m, n, k: lax.conv_general_dilated(
    a.reshape(1, 2, 2, 5), m[:4, :2].reshape(4, 1, 1, 2), (1, 1), [(0, 0), (1, 0)],
    rhs_dilation=(1, 2), feature_group_count=2))
case("lax.conv", lambda a, b, m, n, k: lax.conv(a[None, None], m[None, None, :2, :3], (1, 1),
                                               "VALID"))
case("lax.conv_with_general_padding", lambda a, b, m, n, k: lax.conv_with_general_padding(
    a[None, None], b[None, None, None, :2], (1, 1), [(1, 1), (0, 0)], (2, 1), None))
case("lax.conv_transpose", lambda a, b, m, n, k: lax.conv_transpose(
    a[None, :, :, None], m[:2, :2, None, None], (2, 1), "SAME"))
case("lax.conv_general_dilated_patches", lambda a, b, m, n, k: (
    lax.conv_general_dilated_patches(a[None, None], (2, 2), (1, 2), "SAME")))
case("lax.reduce_window", lambda a, b, m, n, k: lax.reduce_window(
    a, -np.inf, lax.max, (2, 2), (1, 2), "SAME"))
case("lax.reduce_window#dilated", lambda a, b, m, n, k: lax.reduce_window(
    n, 0, lax.add, (2, 2), (1, 1), "VALID", (2, 1), (1, 2)))
case("lax.expand_dims", lambda a, b, m, n, k: lax.expand_dims(a, (1,)))
case("lax.squeeze", lambda a, b, m, n, k: lax.squeeze(a[:1], (0,)))
case("lax.collapse", lambda a, b, m, n, k: lax.collapse(a[None], 0, 2))
case("lax.broadcast", lambda a, b, m, n, k: lax.broadcast(b, (2,)))
case("lax.broadcast_to_rank", lambda a, b, m, n, k: lax.broadcast_to_rank(b, 3))
case("lax.broadcast_like", lambda a, b, m, n, k: lax.broadcast_like(b, a))
case("lax.full", lambda a, b, m, n, k: lax.full((2,), 3.0) * b[:2])
case("lax.full_like", lambda a, b, m, n, k: lax.full_like(a, 2.0) + a)
case("lax.empty", lambda a, b, m, n, k: lax.empty((3,), np.float32) + b[0])
case("lax.tile", lambda a, b, m, n, k: lax.tile(a, (1, 2)))
case("lax.split", lambda a, b, m, n, k: lax.split(a, (2, 3), axis=1))
case("lax.stack", lambda a, b, m, n, k: lax.stack([b, m[0]], 1))
case("lax.unstack", lambda a, b, m, n, k: lax.unstack(a, 1))
case("lax.slice_in_dim", lambda a, b, m, n, k: lax.slice_in_dim(a, 1, None, 2, 1))
case("lax.index_in_dim", lambda a, b, m, n, k: lax.index_in_dim(a, -1, 0, keepdims=False))
case("lax.dynamic_slice_in_dim", lambda a, b, m, n, k: lax.dynamic_slice_in_dim(
    a, n[0, 0] % 4, 2, axis=1))
case("lax.dynamic_update_slice_in_dim", lambda a, b, m, n, k: (
    lax.dynamic_update_slice_in_dim(a, m[:4, :2], n[0, 1] % 4, 1)))
case("lax.dynamic_update_index_in_dim", lambda a, b, m, n, k: (
    lax.dynamic_update_index_in_dim(a, b, n[1, 0] % 4, 0)))
case("lax.dot", lambda a, b, m, n, k: lax.dot(a, b))
case("lax.batch_matmul", lambda a, b, m, n, k: lax.batch_matmul(a[None], m[None]))
case("lax.clamp", lambda a, b, m, n, k: lax.clamp(0.3, a, m[:4]))
case("lax.select_n", lambda a, b, m, n, k: lax.select_n(enp.abs(n) % 3, a, -a, m[:4]))
case("lax.square", lambda a, b, m, n, k: lax.square(n))
case("lax.reciprocal", lambda a, b, m, n, k: lax.reciprocal(b))
case("lax.integer_pow", lambda a, b, m, n, k: lax.integer_pow(a, -3))
case("lax.top_k", lambda a, b, m, n, k: lax.top_k(n.astype(f32), 3))
case("lax.reduce", lambda a, b, m, n, k: lax.reduce(a, -np.inf, enp.logaddexp, (1,)))
case("lax.reduce#monoid", lambda a, b, m, n, k: lax.reduce(a, 1.0, lax.add, (0,)))
case("lax.reduce_xor", lambda a, b, m, n, k: lax.reduce_xor(n, (1,)))
case("lax.associative_scan", lambda a, b, m, n, k: lax.associative_scan(
    lambda x, y: (x[0] * y[0], x[1] * y[0] + y[1]), (a, m[:4]), axis=1))
case("lax.cumlogsumexp", lambda a, b, m, n, k: lax.cumlogsumexp(a, 1, reverse=True))
case("lax.stop_gradient", lambda a, b, m, n, k: lax.stop_gradient(a) * 2)
case("lax.optimization_barrier", lambda a, b, m, n, k: lax.optimization_barrier(a) + 1)

# ember.numpy.fft and lax.fft: small lengths (one contraction), padded to 130 (packed real
# transform over Cooley-Tukey 13 x 5) and to 97 (a prime: Bluestein).
_Z = lambda a, m: lax.complex(a, m[:4])    # noqa: E731  (a complex (4, 5) example)
case("numpy.fft.fft", lambda a, b, m, n, k: enp.fft.fft(a))
case("numpy.fft.fft#bluestein", lambda a, b, m, n, k: enp.fft.fft(_Z(a, m), n=97, axis=0))
case("numpy.fft.ifft", lambda a, b, m, n, k: enp.fft.ifft(_Z(a, m), n=7, axis=0,
                                                        norm="ortho"))
case("numpy.fft.fft2", lambda a, b, m, n, k: enp.fft.fft2(a, s=(3, 6)))
case("numpy.fft.ifft2", lambda a, b, m, n, k: enp.fft.ifft2(_Z(a, m)))
case("numpy.fft.fftn", lambda a, b, m, n, k: enp.fft.fftn(a, axes=(0,), norm="forward"))
case("numpy.fft.ifftn", lambda a, b, m, n, k: enp.fft.ifftn(_Z(a, m)))
case("numpy.fft.rfft", lambda a, b, m, n, k: enp.fft.rfft(b, 8))
case("numpy.fft.rfft#packed", lambda a, b, m, n, k: enp.fft.rfft(a, 130))
case("numpy.fft.irfft", lambda a, b, m, n, k: enp.fft.irfft(_Z(a, m), axis=0))
case("numpy.fft.irfft#packed", lambda a, b, m, n, k: enp.fft.irfft(_Z(a, m), 130))
case("numpy.fft.rfft2", lambda a, b, m, n, k: enp.fft.rfft2(a))
case("numpy.fft.irfft2", lambda a, b, m, n, k: enp.fft.irfft2(_Z(a, m), s=(4, 5)))
case("numpy.fft.rfftn", lambda a, b, m, n, k: enp.fft.rfftn(a, s=(3, 4), axes=(1, 0)))
case("numpy.fft.irfftn", lambda a, b, m, n, k: enp.fft.irfftn(_Z(a, m), axes=(0,)))
case("numpy.fft.hfft", lambda a, b, m, n, k: enp.fft.hfft(_Z(a, m), 7))
case("numpy.fft.ihfft", lambda a, b, m, n, k: enp.fft.ihfft(a, axis=0))
case("numpy.fft.fftfreq", lambda a, b, m, n, k: enp.fft.fftfreq(5, b[0]))
case("numpy.fft.rfftfreq", lambda a, b, m, n, k: enp.fft.rfftfreq(6, b[1]))
case("numpy.fft.fftshift", lambda a, b, m, n, k: enp.fft.fftshift(n))
case("numpy.fft.ifftshift", lambda a, b, m, n, k: enp.fft.ifftshift(a, axes=1))
case("lax.fft", lambda a, b, m, n, k: lax.fft(a, "RFFT", (4, 5)))
case("lax.fft#ifft", lambda a, b, m, n, k: lax.fft(_Z(a, m), lax.FftType.IFFT, (5,)))

# Rule paths where only some operands are batched.
case("lax.scatter_add#shared_operand", lambda a, b, m, n, k: lax.scatter_add(
    m, enp.array([[1], [1], [4]]), a[:3], (0,)))
case("lax.gather#shared_indices", lambda a, b, m, n, k: lax.gather(
    a, enp.array([[3], [0]]), (1,)))
case("lax.sort_key_val#shared_keys", lambda a, b, m, n, k: lax.sort_key_val(m[0], b))
case("lax.dynamic_update_slice#shared_operand", lambda a, b, m, n, k: (
    lax.dynamic_update_slice(m, a[:2, :3], (n[0, 0], n[0, 1]))))
case("lax.while_loop#shared_condition", lambda a, b, m, n, k: lax.while_loop(
    lambda c: c[1] < 3, lambda c: (c[0] * b + m[c[1]], c[1] + 1), (a, 0)))
case("lax.scan#shared_xs", lambda a, b, m, n, k: lax.scan(
    lambda c, r: (c * r + 1.0, c.sum()), b, m))
# A shared key that is not a constant (IREE evaluates a constant one at compile time, slowly).
case("random.uniform#shared_key", lambda a, b, m, n, k: random.uniform(
    lax.bitcast_convert_type(m[0, :2], u32), (4,), maxval=b[:4]))
case("lax.select#shared_predicate", lambda a, b, m, n, k: lax.select(m[:4] > 0, a, -a))
case("numpy.matmul#shared_lhs", lambda a, b, m, n, k: m @ a.T)


# --- exclusions: public names that are not array functions -------------------------------

EXCLUDED = {
    # Classes re-exported for users to catch or check against, not functions of arrays.
    "numpy.IndexingError", "numpy.NonConcreteBooleanIndexError", "numpy.TracingError",
    "numpy.AxisError", "numpy.ShapeValueError",
    "numpy.Tracer", "numpy.ndarray", "lax.Tracer", "lax.TracingError",
    # lax.Precision, lax.RoundingMethod and lax.FftType: enums of names, not functions of
    # arrays.
    "lax.Precision", "lax.RoundingMethod", "lax.FftType",
    # dtype queries: they take dtypes, not arrays, and return host values.
    "numpy.finfo", "numpy.iinfo", "numpy.promote_types", "numpy.result_type",
    "numpy.can_cast",
    # ember.numpy's dtype queries and NumPy's abstract dtype classes: host values, no arrays.
    "numpy.isdtype", "numpy.issubdtype", "numpy.iscomplexobj", "numpy.isrealobj",
    "numpy.dtype", "numpy.generic", "numpy.number", "numpy.integer", "numpy.signedinteger",
    "numpy.unsignedinteger", "numpy.inexact", "numpy.floating", "numpy.complexfloating",
    "numpy.character", "numpy.flexible", "numpy.bool",
    # Tracing machinery (re-exported by the modules' own imports): no array semantics.
    "numpy.current_trace", "numpy.eager", "numpy.user_where", "lax.current_trace",
    "lax.user_where",
    "lax.eager", "lax.bind", "nn.eager",
    # Host-side helpers of the convolutions: layouts and paddings, not array functions.
    "lax.ConvDimensionNumbers", "lax.conv_dimension_numbers", "lax.conv_general_permutations",
    "lax.padtype_to_pads",
    # Collectives need a named axis (vmap(..., axis_name=...)), which the table's programs do
    # not bind: batched once and twice, nested and under jit in tests/test_vmap_collectives.py.
    "lax.psum", "lax.pmean", "lax.pmax", "lax.pmin", "lax.all_gather", "lax.axis_index",
    "lax.axis_size", "lax.ppermute", "lax.pshuffle", "lax.psum_scatter", "lax.all_to_all",
    "lax.pswapaxes",
    # Its result's shape depends on the values (JAX's also needs a concrete argument).
    "numpy.trim_zeros",
    # Exchanges memory with other libraries (DLPack): takes concrete arrays, never traced
    # ones (a Tracer raises ConcretizationError; JAX's raises TypeError), in tests/test_dlpack.py.
    "numpy.from_dlpack",
}

MODULES = {"numpy": enp, "numpy.linalg": enp.linalg, "numpy.fft": enp.fft, "nn": nn, "lax": lax,
           "random": random, "special": special, "scipy.linalg": sla, "lax.linalg": lla}


def test_every_public_function_has_an_entry():
    covered = {name.split("#")[0] for name in CASES}
    missing, stale = [], []
    for prefix, module in MODULES.items():
        for name in sorted(public_functions(prefix, module)):
            if name not in covered and name not in EXCLUDED:
                missing.append(name)
    public = set().union(*(public_functions(p, m) for p, m in MODULES.items()))
    stale = sorted((covered | EXCLUDED) - public)
    assert not missing, f"public functions without a vmap test entry: {missing}"
    assert not stale, f"entries for names that are not public functions: {stale}"


# --- running the table ---------------------------------------------------------------------

def _groups(size=45):
    names = sorted(CASES)
    return [names[i:i + size] for i in range(0, len(names), size)]


GROUPS = _groups()


def _program(names):
    fns = [CASES[n] for n in names]

    def per_example(a, b, m, n, k):
        return {name: fn(a, b, m, n, k) for name, fn in zip(names, fns)}
    return per_example


def _examples(size):
    """Per-example sample arguments, ``size`` of them stacked at axis 0 (m: one, shared)."""
    a = _rng.uniform(0.1, 0.9, (size, 4, 5)).astype(f32)
    b = _rng.uniform(0.5, 2.0, (size, 5)).astype(f32)
    m = _rng.uniform(-1, 1, (5, 5)).astype(f32)
    n = _rng.integers(-20, 20, (size, 4, 5)).astype(i32)
    n[:, 0, 0] = np.arange(size) - 1          # include 0 (division by zero, empty loops)
    k = _rng.integers(0, 2**32, (size, 2), dtype=np.uint64).astype(u32)
    return a, b, m, n, k


def _close(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if np.issubdtype(want.dtype, np.complexfloating):
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                                   rtol=2e-5, atol=2e-6, err_msg=what)
    elif np.issubdtype(want.dtype, np.floating) or want.dtype.name == "bfloat16":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-5,
                                   atol=2e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _check(got, want_per_example, stack):
    """``got`` (dict) against the per-example results stacked by ``stack(list, key)``."""
    assert set(got) == set(want_per_example[0])
    for key in got:
        g_leaves, g_tree = tree_util.tree_flatten(got[key])
        per = [tree_util.tree_flatten(w[key]) for w in want_per_example]
        assert all(t == g_tree for _, t in per), (key, g_tree, per[0][1])
        for i, g in enumerate(g_leaves):
            _close(g, stack([np.asarray(p[0][i]) for p in per], key), key)


def _out_axis(key, rank):
    """A batch axis for each output: 0, the end, or the middle, by turns."""
    choice = sum(map(ord, key)) % 3
    return 0 if choice == 0 or rank == 0 else (-1 if choice == 1 or rank == 1 else 1)


def _reference(names):
    """Per-example inputs and results of the group's program, jitted, in a Python loop."""
    a, b, m, n, k = _examples(B1 * B2)
    jf = ember.jit(_program(names))
    return (a, b, m, n, k), [jf(a[e], b[e], m, n[e], k[e]) for e in range(B1 * B2)]


@pytest.mark.filterwarnings("ignore:.*64 values are computed as")
@pytest.mark.parametrize("g", range(len(GROUPS)))
def test_table_jit_of_nested_vmap_of_jit(g):
    """``jit(vmap(vmap(jit(f))))``: each function batched twice, its arguments at axis 0, at
    the end, in the middle or unbatched, its outputs' batch axes at 0, the end or the middle.
    Example e = j * B1 + i has i along the inner vmap and j along the outer one."""
    (a, b, m, n, k), outs = _reference(GROUPS[g])
    grid = lambda x: x.reshape((B2, B1) + x.shape[1:])   # noqa: E731
    a2 = np.moveaxis(np.moveaxis(grid(a), 1, 2), 0, -1)            # (4, B1, 5, B2)
    b2 = np.moveaxis(grid(b), 0, 1)                                # (B1, B2, 5)
    n2 = np.moveaxis(np.moveaxis(grid(n), 1, 2), 0, 1)             # (4, B2, B1, 5)
    k2 = np.moveaxis(grid(k), 0, -1)                               # (B1, 2, B2)
    ranks = {key: min(np.ndim(x) for x in tree_util.tree_leaves(v))
             for key, v in outs[0].items()}
    inner_out = {key: _out_axis(key, r) for key, r in ranks.items()}
    outer_out = {key: _out_axis(key + "'", r + 1) for key, r in ranks.items()}
    inner = ember.vmap(ember.jit(_program(GROUPS[g])), in_axes=(1, 0, None, 1, 0),
                       out_axes=inner_out)
    f = ember.jit(ember.vmap(inner, in_axes=(-1, 1, None, 1, -1), out_axes=outer_out))

    def stack(xs, key):
        rows = [np.stack(xs[j * B1:(j + 1) * B1], axis=inner_out[key]) for j in range(B2)]
        return np.stack(rows, axis=outer_out[key])
    _check(f(a2, b2, m, n2, k2), outs, stack)
