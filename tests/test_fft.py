"""ember.numpy.fft and ember.lax.fft against NumPy (values, in float64) and JAX (dtypes,
lax.fft, gradients).

Errors are measured as NumPy's tests do for FFTs: the largest error over the largest
magnitude of the exact result (NumPy's transform of the same rounded input in float64), so a
tolerance is in units of the working precision: 2e-6 for float32 (ember measures <= 5e-7 up
to n = 4099), 1e-14 for float64 (<= 1e-15). Each test compiles one program for all its
cases (a dict of results), so the file compiles about a dozen programs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.numpy as enp
from ember.errors import AxisError, FftArgumentError, TracingError

SIZES = (1, 2, 3, 5, 8, 12, 17, 64, 97, 1000, 4096, 4099)
TOL = {np.float32: 2e-6, np.float64: 1e-14}


def _err(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.abs(want).max(initial=0.0), np.finfo(np.float64).tiny)
    return np.abs(got.astype(want.dtype) - want).max(initial=0.0) / scale


def _check(got: dict, want: dict, tol):
    bad = {k: _err(got[k], want[k]) for k in want}
    assert set(got) == set(want)
    assert max(bad.values()) <= tol, {k: f"{v:.1e}" for k, v in bad.items() if v > tol}


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def real_dtype(request):
    if request.param == np.float64:
        request.getfixturevalue("both_x64")
    return request.param


def _inputs(rng, shape, dt):
    """A real and a complex array of ``dt``'s precision."""
    cdt = np.result_type(dt, np.complex64)
    x = rng.normal(size=shape).astype(dt)
    z = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(cdt)
    return x, z


# --- one-dimensional transforms of every length kind -------------------------------------

def test_lengths_against_numpy(real_dtype, rng):
    """fft, ifft, rfft and irfft (of a random, not Hermitian, half spectrum: NumPy ignores
    the imaginary parts of bins 0 and n/2) along the last axis: dense lengths,
    Cooley-Tukey (1000 = 40 x 25, 4096 = 64 x 64), Bluestein (97, 4099 prime), the packed
    real transforms (even n > 64)."""
    ins = {n: _inputs(rng, (2, n), real_dtype) for n in SIZES}

    def f(ins):
        out = {}
        for n, (x, z) in ins.items():
            out[f"fft{n}"] = enp.fft.fft(z)
            out[f"ifft{n}"] = enp.fft.ifft(z)
            out[f"rfft{n}"] = enp.fft.rfft(x)
            out[f"irfft{n}"] = enp.fft.irfft(z[:, :n // 2 + 1], n)
        return out

    got = ember.jit(f)(ins)
    want = {}
    for n, (x, z) in ins.items():
        x, z = x.astype(np.float64), z.astype(np.complex128)
        want[f"fft{n}"] = np.fft.fft(z)
        want[f"ifft{n}"] = np.fft.ifft(z)
        want[f"rfft{n}"] = np.fft.rfft(x)
        want[f"irfft{n}"] = np.fft.irfft(z[:, :n // 2 + 1], n)
    cdt = np.result_type(real_dtype, np.complex64)
    for k, v in got.items():
        assert v.dtype == (real_dtype if k.startswith("irfft") else cdt), k
    _check(got, want, TOL[real_dtype])


# --- n, axis and norm ----------------------------------------------------------------------

def test_n_axis_norm_against_numpy(real_dtype, rng):
    """Cropping and zero-padding (n), every axis of a 3-d array, the three norms (and None),
    for every one-dimensional transform."""
    x, z = _inputs(rng, (4, 6, 5), real_dtype)
    cases = []
    for fun in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        for n, axis, norm in [(None, -1, None), (3, 0, "ortho"), (9, 1, "forward"),
                              (8, -1, "backward"), (2, -2, "ortho"), (70, 0, "forward")]:
            cases.append((fun, n, axis, norm))

    def run(m, x, z):
        out = {}
        for fun, n, axis, norm in cases:
            arg = x if fun in ("rfft", "ihfft") else z
            out[f"{fun} n={n} axis={axis} norm={norm}"] = getattr(m.fft, fun)(
                arg, n=n, axis=axis, norm=norm)
        return out

    got = ember.jit(lambda x, z: run(enp, x, z))(x, z)
    _check(got, run(np, x.astype(np.float64), z.astype(np.complex128)), TOL[real_dtype])


def test_nd_transforms_against_numpy(real_dtype, rng):
    """fft2/ifft2/fftn/ifftn/rfft2/irfft2/rfftn/irfftn: default axes, chosen axes (in any
    order, a repeated one as NumPy allows), s cropping and padding, norms."""
    x, z = _inputs(rng, (3, 4, 6), real_dtype)
    variants = [dict(), dict(axes=(2, 0), norm="forward"), dict(s=(5, 3), axes=(1, 2)),
                dict(s=(2, 7, 4), axes=(0, 1, 2), norm="ortho")]
    two = [dict(), dict(s=(3, 8), axes=(0, 2), norm="ortho")]

    def run(m, x, z):
        out = {}
        for fun in ("fftn", "ifftn", "rfftn", "irfftn"):
            for i, kw in enumerate(variants):
                arg = x if fun == "rfftn" else z
                out[f"{fun}{i}"] = getattr(m.fft, fun)(arg, **kw)
        for fun in ("fft2", "ifft2", "rfft2", "irfft2"):
            for i, kw in enumerate(two):
                arg = x if fun == "rfft2" else z
                out[f"{fun}{i}"] = getattr(m.fft, fun)(arg, **kw)
        out["fftn repeated axis"] = m.fft.fftn(z, axes=(1, 1))
        out["irfftn s"] = m.fft.irfftn(z, s=(3, 9), axes=(0, 1))
        return out

    got = ember.jit(lambda x, z: run(enp, x, z))(x, z)
    _check(got, run(np, x.astype(np.float64), z.astype(np.complex128)), TOL[real_dtype])


def test_nd_s_without_axes_is_deprecated_as_in_numpy():
    z = np.arange(12.0).reshape(3, 4) + 1j
    with pytest.warns(DeprecationWarning, match="axes"):
        got = enp.fft.fftn(z.astype(np.complex64), s=(2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.fft.fftn(z, s=(2, 5))
    assert _err(got, want) <= TOL[np.float32]


# --- dtypes: JAX's (NumPy gives complex128 for integers and float16) ------------------------

@pytest.mark.filterwarnings("ignore:.*values are computed as")
@pytest.mark.parametrize("x64", [False, True])
def test_result_dtypes_as_jax(x64, request):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if x64:
        request.getfixturevalue("both_x64")
    for dt in (np.int32, np.float16, np.float32, np.float64, np.complex64, np.complex128,
               np.bool_):
        x = np.ones((2, 4), dt)
        for fun in ("fft", "ifft", "irfft", "hfft", "fftn", "irfft2"):
            got = ember.eval_shape(lambda v, fun=fun: getattr(enp.fft, fun)(v), x)
            want = jax.eval_shape(lambda v, fun=fun: getattr(jnp.fft, fun)(v), x)
            assert (got.shape, got.dtype) == (want.shape, want.dtype), (fun, dt)
        if not np.issubdtype(dt, np.complexfloating):
            for fun in ("rfft", "ihfft", "rfftn"):
                got = ember.eval_shape(lambda v, fun=fun: getattr(enp.fft, fun)(v), x)
                if dt == np.float16:    # JAX refuses it ("RFFT input must be float32 or
                    want = getattr(np.fft, fun)(x)      # float64"); NumPy's complex64
                else:
                    want = jax.eval_shape(lambda v, fun=fun: getattr(jnp.fft, fun)(v), x)
                assert (got.shape, got.dtype) == (want.shape, want.dtype), (fun, dt)


# --- vmap, jit, eager ------------------------------------------------------------------------

def test_vmap_and_jit_batch_the_transforms(rng):
    """vmap at axis 1 (and nested) against NumPy over the whole batch; eager calls agree."""
    x, z = _inputs(rng, (97, 6), np.float32)

    def f(x, z):
        return {"fft": enp.fft.fft(z), "rfft": enp.fft.rfft(x, 130),
                "irfft": enp.fft.irfft(z, 100), "fft2": enp.fft.fft2(z.reshape(97, 1)),
                "freq": enp.fft.fftfreq(4, x[0] + 2.0), "shift": enp.fft.fftshift(x)}

    got = ember.jit(ember.vmap(f, in_axes=(1, 1)))(x, z)
    x64, z128 = x.astype(np.float64).T, z.astype(np.complex128).T
    want = {"fft": np.fft.fft(z128), "rfft": np.fft.rfft(x64, 130),
            "irfft": np.fft.irfft(z128, 100), "fft2": np.fft.fft2(z128[:, :, None]),
            "freq": np.stack([np.fft.fftfreq(4, d) for d in x64[:, 0] + 2.0]),
            "shift": np.fft.fftshift(x64, axes=1)}
    _check(got, want, TOL[np.float32])
    nested = ember.vmap(ember.vmap(lambda v: enp.fft.ifft(v, 12)))(z.reshape(1, 97, 6)[
        :, :6].transpose(0, 2, 1))
    assert _err(nested, np.fft.ifft(z[:6].T.astype(np.complex128), 12)[None]) <= 2e-6
    assert _err(enp.fft.fft(z[:, 0]), want["fft"][0]) <= 2e-6


# --- frequencies and shifts ------------------------------------------------------------------

def test_fftfreq_rfftfreq_as_numpy(real_dtype):
    for n in (1, 2, 5, 8, 101):
        for d in (1.0, 0.3, 2):
            assert _err(enp.fft.fftfreq(n, d), np.fft.fftfreq(n, d)) <= TOL[real_dtype]
            assert _err(enp.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d)) <= TOL[real_dtype]
    assert enp.fft.fftfreq(4).dtype == real_dtype            # the default float
    assert enp.fft.rfftfreq(4, dtype=enp.float32).dtype == np.float32
    dev = ember.devices()[0]
    assert enp.fft.fftfreq(3, device=dev).device == dev
    traced = ember.jit(lambda d: enp.fft.fftfreq(6, d))(np.asarray(0.25, real_dtype))
    assert _err(traced, np.fft.fftfreq(6, 0.25)) <= TOL[real_dtype]
    with pytest.raises(FftArgumentError, match="n should be an integer"):
        enp.fft.fftfreq(4.0)
    with pytest.raises(TracingError, match="real floating"):
        enp.fft.fftfreq(4, dtype=enp.int32)


def test_fftshift_ifftshift_as_numpy():
    x = np.arange(5 * 6 * 3, dtype=np.int32).reshape(5, 6, 3)
    for axes in (None, 0, 1, (0, 2), (-1,), ()):
        for name in ("fftshift", "ifftshift"):
            got = getattr(enp.fft, name)(x, axes=axes)
            want = getattr(np.fft, name)(x, axes=axes)
            np.testing.assert_array_equal(got, want)
            assert got.dtype == np.int32


# --- lax.fft against jax.lax.fft -------------------------------------------------------------

def test_lax_fft_as_jax(rng):
    jlax = pytest.importorskip("jax.lax")
    x, z = _inputs(rng, (2, 6, 10), np.float32)
    args = {"x": x, "z": z, "h": z[..., :6]}
    cases = [("z", "FFT", (10,)), ("z", lax.FftType.IFFT, (6, 10)), ("x", "rfft", (6, 10)),
             ("h", lax.FftType.IRFFT, (6, 10)), ("z", 0, (2, 6, 10))]
    got = ember.jit(lambda args: [lax.fft(args[a], t, n) for a, t, n in cases])(args)
    for g, (a, t, n) in zip(got, cases):
        jt = t if isinstance(t, str) else jlax.FftType(int(t))
        want = jlax.fft(args[a], jt, n)
        assert g.dtype == want.dtype
        assert _err(g, np.asarray(want).astype(np.complex128)) <= TOL[np.float32]
    with pytest.raises(ValueError, match="trailing shape"):
        lax.fft(z, "FFT", (9,))
    with pytest.raises(ValueError, match="unknown fft_type"):
        lax.fft(z, "DCT", (10,))
    with pytest.raises(TracingError, match="real input"):
        lax.fft(z, "RFFT", (10,))


# --- differentiation -------------------------------------------------------------------------

def test_grad_as_jax(rng):
    """Gradients of real functions of transforms (|fft|, a Bluestein fft2, the round trip
    through the packed rfft and irfft) against JAX's, in float32."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = rng.normal(size=(3, 100)).astype(np.float32)
    fns = {
        "abs fft": lambda m, v: m.abs(m.fft.fft(v)).sum(),
        "fft2 bluestein": lambda m, v: (m.abs(m.fft.fft2(v, s=(3, 97))) ** 2).sum(),
        "irfft": lambda m, v: (m.fft.irfft(m.fft.rfft(v) * 2j, 130) ** 3).sum(),
    }
    got = ember.jit(lambda v: {k: ember.grad(lambda u, f=f: f(enp, u))(v)
                               for k, f in fns.items()})(x)
    want = {k: np.asarray(jax.grad(lambda u, f=f: f(jnp, u))(x)) for k, f in fns.items()}
    _check(got, want, 2e-6)


# --- errors --------------------------------------------------------------------------------

def test_bad_arguments_raise_numpys_errors():
    z = np.ones((3, 4), np.complex64)
    with pytest.raises(FftArgumentError, match=r"invalid number of FFT data points \(0\)"):
        enp.fft.fft(z, n=0)
    with pytest.raises(ValueError, match="invalid norm"):
        enp.fft.ifft(z, norm="unitary")
    with pytest.raises(AxisError, match="axis 2 is out of bounds"):
        enp.fft.rfft(np.ones(3, np.float32), axis=2)
    with pytest.raises(IndexError):
        enp.fft.fft(z, axis=-3)
    with pytest.raises(ValueError, match="different lengths"):
        enp.fft.fftn(z, s=(2,), axes=(0, 1))
    with pytest.raises(TypeError, match="expected real input"):
        enp.fft.rfft(z)
    with pytest.raises(ValueError, match=r"data points \(0\)"):
        enp.fft.irfft(np.ones(1, np.complex64))     # n = 2 * (1 - 1)
