"""ember.numpy shape and movement functions (moveaxis ... pad) against NumPy: many functions
share one jitted program per dtype; a few run eagerly; bad input gives ember errors."""

import numpy as np
import pytest
from helpers import close

import ember
import ember.numpy as enp
from ember.errors import ArgumentError, ConcretizationError, TracingError

_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32)}


def check(got, want, rtol=0.0):
    """``got`` (an ember Array) equals NumPy's ``want`` exactly (movement copies values), or
    within ``rtol`` where values are computed (a mean, a ramp)."""
    assert isinstance(got, ember.Array), type(got)
    want = np.asarray(want)
    dtype = _NARROW.get(want.dtype, want.dtype)
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got), want.astype(dtype), rtol=rtol, atol=rtol)


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.uniform(-5, 5, shape).astype(dtype)


def _cases():
    """(label, fn(x, v, z)) with x of shape (2, 3, 4), v of shape (5,), z of shape (0, 3); the
    same function is applied with ember.numpy and NumPy as ``xp``."""
    return [
        ("moveaxis", lambda xp, x, v, z: xp.moveaxis(x, 0, -1)),
        ("moveaxis multi", lambda xp, x, v, z: xp.moveaxis(x, (0, 2), (2, 0))),
        ("moveaxis 3", lambda xp, x, v, z: xp.moveaxis(x, [0, 1], [-1, 0])),
        ("atleast_1d", lambda xp, x, v, z: xp.atleast_1d(x[0, 0, 0])),
        ("atleast_2d", lambda xp, x, v, z: xp.atleast_2d(v)),
        ("atleast_3d 1", lambda xp, x, v, z: xp.atleast_3d(v)),
        ("atleast_3d 2", lambda xp, x, v, z: xp.atleast_3d(x[0])),
        ("atleast_3d 0", lambda xp, x, v, z: xp.atleast_3d(x[0, 0, 0])),
        ("atleast multi", lambda xp, x, v, z: xp.atleast_2d(v, x)[0]),
        ("hstack", lambda xp, x, v, z: xp.hstack([x, x[:, :1]])),
        ("hstack 1d", lambda xp, x, v, z: xp.hstack((v, v[:2]))),
        ("vstack", lambda xp, x, v, z: xp.vstack([v, v])),
        ("vstack zero", lambda xp, x, v, z: xp.vstack([z, x[0, :, :3]])),
        ("dstack", lambda xp, x, v, z: xp.dstack([x[0], x[1]])),
        ("dstack 1d", lambda xp, x, v, z: xp.dstack([v, v])),
        ("column_stack", lambda xp, x, v, z: xp.column_stack([v, v, v])),
        ("column_stack 2d", lambda xp, x, v, z: xp.column_stack([x[0], x[1, :, 0]])),
        *[(f"split {i}", lambda xp, x, v, z, i=i: xp.split(x, 2, axis=0)[i]) for i in range(2)],
        *[(f"split idx {i}", lambda xp, x, v, z, i=i: xp.split(x, [1, 3, -1], axis=2)[i])
          for i in range(4)],
        *[(f"array_split {i}", lambda xp, x, v, z, i=i: xp.array_split(v, 3)[i])
          for i in range(3)],
        *[(f"array_split over {i}", lambda xp, x, v, z, i=i: xp.array_split(v, [4, 2, 9])[i])
          for i in range(4)],
        ("hsplit", lambda xp, x, v, z: xp.hsplit(x, 3)[2]),
        ("hsplit 1d", lambda xp, x, v, z: xp.hsplit(v, [2])[1]),
        ("vsplit", lambda xp, x, v, z: xp.vsplit(x, [1])[1]),
        ("dsplit", lambda xp, x, v, z: xp.dsplit(x, 2)[1]),
        ("split zero", lambda xp, x, v, z: xp.split(z, 3, axis=1)[1]),
        ("tile", lambda xp, x, v, z: xp.tile(x, (2, 1, 3))),
        ("tile int", lambda xp, x, v, z: xp.tile(v, 2)),
        ("tile more", lambda xp, x, v, z: xp.tile(v, (2, 2))),
        ("tile fewer", lambda xp, x, v, z: xp.tile(x, 2)),
        ("tile zero", lambda xp, x, v, z: xp.tile(x, (0, 1, 1))),
        ("tile scalar", lambda xp, x, v, z: xp.tile(x[0, 0, 0], 3)),
        ("repeat", lambda xp, x, v, z: xp.repeat(x, 2)),
        ("repeat axis", lambda xp, x, v, z: xp.repeat(x, 3, axis=1)),
        ("repeat per", lambda xp, x, v, z: xp.repeat(x, [2, 0, 1, 1], axis=-1)),
        ("repeat per 1d", lambda xp, x, v, z: xp.repeat(v, [1, 2, 3, 0, 2])),
        ("repeat zero", lambda xp, x, v, z: xp.repeat(z, 2, axis=0)),
        ("repeat [2]", lambda xp, x, v, z: xp.repeat(v, [2])),
        ("repeat scalar", lambda xp, x, v, z: xp.repeat(x[0, 0, 0], 3)),
        ("flip", lambda xp, x, v, z: xp.flip(x)),
        ("flip int", lambda xp, x, v, z: xp.flip(x, -1)),
        ("flip tuple", lambda xp, x, v, z: xp.flip(x, (0, 2))),
        ("fliplr", lambda xp, x, v, z: xp.fliplr(x)),
        ("flipud", lambda xp, x, v, z: xp.flipud(v)),
        ("roll", lambda xp, x, v, z: xp.roll(x, 5)),
        ("roll neg", lambda xp, x, v, z: xp.roll(v, -7)),
        ("roll axis", lambda xp, x, v, z: xp.roll(x, 1, axis=1)),
        ("roll tuple", lambda xp, x, v, z: xp.roll(x, (1, -3), axis=(0, 2))),
        ("roll same axis", lambda xp, x, v, z: xp.roll(x, (1, 1), axis=(2, 2))),
        ("roll bcast", lambda xp, x, v, z: xp.roll(x, 2, axis=(1, 2))),
        ("roll zero", lambda xp, x, v, z: xp.roll(z, 2, axis=1)),
        ("roll tuple flat", lambda xp, x, v, z: xp.roll(x, (3, -1, 9))),
        ("reshape F", lambda xp, x, v, z: xp.reshape(x, (4, -1), order="F")),
        ("ravel F", lambda xp, x, v, z: xp.ravel(x, order="F")),
        *[(f"rot90 {k}", lambda xp, x, v, z, k=k: xp.rot90(x, k)) for k in (-1, 1, 2, 3, 4)],
        ("rot90 axes", lambda xp, x, v, z: xp.rot90(x, 1, (2, 0))),
        ("rot90 axes 3", lambda xp, x, v, z: xp.rot90(x, 3, (1, 2))),
        ("pad", lambda xp, x, v, z: xp.pad(x, 1)),
        ("pad pairs", lambda xp, x, v, z: xp.pad(x, ((0, 1), (2, 0), (1, 3)),
                                                  constant_values=7)),
        ("pad values", lambda xp, x, v, z: xp.pad(x, 2, constant_values=((1, 2), (3, 4),
                                                                           (5, 6)))),
        ("pad (1, 2)", lambda xp, x, v, z: xp.pad(x, (1, 2), constant_values=(8, 9))),
        ("pad zero", lambda xp, x, v, z: xp.pad(z, ((1, 1), (0, 2)))),
        *[(f"pad {m}", lambda xp, x, v, z, m=m: xp.pad(x, ((1, 2), (0, 2), (3, 1)), mode=m))
          for m in ("edge", "reflect", "symmetric", "wrap")],
        *[(f"pad {m} big", lambda xp, x, v, z, m=m: xp.pad(v, (7, 11), mode=m))
          for m in ("edge", "reflect", "symmetric", "wrap")],
        ("pad zero edge", lambda xp, x, v, z: xp.pad(z, ((0, 0), (1, 1)), mode="edge")),
    ]


_CASES = _cases()


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_shape_and_movement(dtype):
    x, v = rand((2, 3, 4), dtype, 3), rand((5,), dtype, 4)
    z = np.zeros((0, 3), dtype)
    _check_cases(_CASES, x, v, z, f" ({np.dtype(dtype)})")


def _check_cases(cases, x, v, z, tag="", rtol=0.0):
    """Every (label, fn) of ``cases`` in one jitted program against NumPy."""
    f = ember.jit(lambda x, v, z: [fn(enp, x, v, z) for _, fn in cases])
    for (label, fn), got in zip(cases, f(x, v, z), strict=True):
        try:
            check(got, fn(np, x, v, z), rtol)
        except AssertionError as e:
            raise AssertionError(f"{label}{tag}: {e}") from None


def test_eager_on_arrays():
    x = rand((2, 3, 4), np.int32, 1)
    ex = enp.asarray(x)
    check(enp.flip(ex, 1), np.flip(x, 1))
    check(enp.pad(ex, 1, mode="wrap"), np.pad(x, 1, mode="wrap"))
    for got, want in zip(enp.split(x, 3, axis=1), np.split(x, 3, axis=1), strict=True):
        check(got, want)
    check(enp.repeat(ex, [1, 2], axis=0), np.repeat(x, [1, 2], axis=0))
    check(enp.moveaxis(ex, -1, 0), np.moveaxis(x, -1, 0))
    check(enp.atleast_3d(x[0, 0]), np.atleast_3d(x[0, 0]))


_NUMERIC_PADS = [
    *[(f"pad {m}{' ' + str(k) if k else ''}",
       lambda xp, x, v, z, m=m, k=k: xp.pad(x, ((1, 2), (0, 3), (2, 1)), mode=m,
                                            **({"stat_length": k} if k else {})))
      for m in ("maximum", "minimum", "mean", "median")
      for k in (None, 2, ((1, 2), (3, 1), (2, 9)))],
    ("pad mean big", lambda xp, x, v, z: xp.pad(v, (7, 11), mode="mean", stat_length=2)),
    ("pad linear_ramp", lambda xp, x, v, z: xp.pad(x, ((1, 2), (0, 3), (2, 1)),
                                                    mode="linear_ramp")),
    ("pad linear_ramp ends", lambda xp, x, v, z: xp.pad(
        x, ((1, 2), (0, 3), (4, 1)), mode="linear_ramp", end_values=((1, 2), (-3, 4), (5, 0)))),
    ("pad linear_ramp big", lambda xp, x, v, z: xp.pad(v, (7, 11), mode="linear_ramp",
                                                        end_values=(3, -2))),
    *[(f"pad {m} odd", lambda xp, x, v, z, m=m: xp.pad(x, ((1, 2), (0, 3), (3, 1)), mode=m,
                                                       reflect_type="odd"))
      for m in ("reflect", "symmetric")],
    *[(f"pad {m} odd big", lambda xp, x, v, z, m=m: xp.pad(v, (7, 11), mode=m,
                                                           reflect_type="odd"))
      for m in ("reflect", "symmetric")],
    ("pad reflect odd single", lambda xp, x, v, z: xp.pad(v[:1], (2, 3), mode="reflect",
                                                          reflect_type="odd")),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_pad_numeric_modes(dtype):
    """NumPy's statistic, ramp and odd-reflection pads (integers round the mean and median,
    floor the ramp) in one program."""
    x, v = rand((2, 3, 4), dtype, 5), rand((5,), dtype, 6)
    _check_cases(_NUMERIC_PADS, x, v, np.zeros((0, 3), dtype), f" ({np.dtype(dtype)})", 1e-6)


def test_traced_pad_value():
    x = rand((2, 3), np.float32, 2)
    got = ember.jit(lambda x, c: enp.pad(x, ((1, 0), (0, 2)), constant_values=c))(x, 2.5)
    np.testing.assert_array_equal(np.asarray(got), np.pad(x, ((1, 0), (0, 2)),
                                                           constant_values=2.5))


def test_shape_errors():
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(TracingError, match=r"split.*equal division.*axis 1.*\(2, 3, 4\)"):
        enp.split(x, 2, axis=1)
    with pytest.raises(TracingError, match=r"split.*larger than 0"):
        enp.split(x, 0)
    with pytest.raises(TracingError, match=r"axis 3 is out of bounds"):
        enp.split(x, 2, axis=3)
    with pytest.raises(TracingError, match=r"vsplit.*2 or more.*\(4,\)"):
        enp.vsplit(np.ones(4, np.float32), 2)
    with pytest.raises(TracingError, match=r"dsplit.*3 or more"):
        enp.dsplit(np.ones((2, 2), np.float32), 2)
    with pytest.raises(TracingError, match=r"vstack.*\[\(1, 3\), \(1, 4\)\]"):
        enp.vstack([np.ones(3, np.float32), np.ones(4, np.float32)])
    with pytest.raises(TracingError, match=r"hstack.*\(2, 3, 4\)"):
        enp.hstack([x, np.ones((3, 3, 4), np.float32)])
    with pytest.raises(TracingError, match=r"column_stack"):
        enp.column_stack([np.ones(3, np.float32), np.ones(4, np.float32)])
    with pytest.raises(TracingError, match=r"moveaxis.*same number"):
        enp.moveaxis(x, (0, 1), 2)
    with pytest.raises(TracingError, match=r"destination 5 is out of bounds"):
        enp.moveaxis(x, 0, 5)
    with pytest.raises(TracingError, match=r"repeat.*\(3,\).*\(2, 3, 4\)"):
        enp.repeat(x, [1, 2, 3], axis=2)
    with pytest.raises(TracingError, match=r"repeat.*negative"):
        enp.repeat(x, -1)
    with pytest.raises(TracingError, match=r"rot90.*different"):
        enp.rot90(x, 1, (1, -2))
    with pytest.raises(TracingError, match=r"rot90.*length 2"):
        enp.rot90(x, 1, (0, 1, 2))
    with pytest.raises(TracingError, match=r"roll.*different lengths"):
        enp.roll(x, (1, 2, 3), axis=(0, 1))
    with pytest.raises(TracingError, match=r"fliplr.*\(3,\)"):
        enp.fliplr(np.ones(3, np.float32))
    with pytest.raises(TracingError, match=r"axis 3 is out of bounds"):
        enp.flip(x, 3)
    with pytest.raises(TracingError, match=r"pad.*mode 'gauss'"):
        enp.pad(x, 1, mode="gauss")
    with pytest.raises(TracingError, match=r"pad.*keyword arguments for mode 'edge'.*"
                                           r"constant_values"):
        enp.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(TracingError, match=r"stat_length of 0"):
        enp.pad(x, 1, mode="mean", stat_length=0)
    with pytest.raises(TracingError, match=r"reflect_type must be 'even' or 'odd'"):
        enp.pad(x, 1, mode="reflect", reflect_type="new")
    with pytest.raises(TracingError, match=r"pad.*non-negative"):
        enp.pad(x, -1)
    with pytest.raises(TracingError, match=r"pad.*\(2, 3, 4\)"):
        enp.pad(x, ((1, 2), (3, 4)))
    with pytest.raises(TracingError, match=r"pad.*empty axis 0 of shape \(0, 3\).*'reflect'"):
        enp.pad(np.ones((0, 3), np.float32), 1, mode="reflect")
    with pytest.raises(TracingError, match=r"tile.*non-negative"):
        enp.tile(x, -1)
    with pytest.raises(TracingError, match="roll: a traced shift must be an integer scalar"):
        ember.jit(lambda x, r: enp.roll(x, r))(x, 1.5)


# --- append, rollaxis, copy, select, array_equal, index arithmetic -------------------------
# (ember/numpy/_manipulation.py, _creation.py, _selection.py, _comparison.py, _index_tricks.py)

def _more_cases():
    """(label, fn(xp, x, v, z)) as ``_cases``; fn(np, ...) is the oracle."""
    return [
        ("append flat", lambda xp, x, v, z: xp.append(x, v)),
        ("append axis", lambda xp, x, v, z: xp.append(x, x[:, :1], axis=1)),
        ("append neg axis", lambda xp, x, v, z: xp.append(x[0], x[1], axis=-2)),
        ("append empty", lambda xp, x, v, z: xp.append(z, z, axis=0)),
        ("rollaxis", lambda xp, x, v, z: xp.rollaxis(x, 2)),
        ("rollaxis start", lambda xp, x, v, z: xp.rollaxis(x, 0, 3)),
        ("rollaxis neg", lambda xp, x, v, z: xp.rollaxis(x, -1, -2)),
        ("rollaxis same", lambda xp, x, v, z: xp.rollaxis(x, 1, 1)),
        ("copy", lambda xp, x, v, z: xp.copy(x)),
        ("select", lambda xp, x, v, z: xp.select([v > v[2], v < v[0]], [v, v[::-1]], v[1])),
        ("select overlap", lambda xp, x, v, z: xp.select([x != x[0, 0, 0], x == x[1]],
                                                         [x[0], v[:4]])),
        ("array_equal", lambda xp, x, v, z: xp.array_equal(x, x)),
        ("array_equal differ", lambda xp, x, v, z: xp.array_equal(x[0], x[1])),
        ("array_equal shapes", lambda xp, x, v, z: xp.array_equal(x, x[0])),
        ("array_equiv", lambda xp, x, v, z: xp.array_equiv(x[:1], x[:1, :1])),
        ("array_equiv no", lambda xp, x, v, z: xp.array_equiv(x, v)),
    ]


_MORE = _more_cases()


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_more_shape_functions(dtype):
    x, v = rand((2, 3, 4), dtype, 5), rand((5,), dtype, 6)
    x[:, :, 0] = 7
    z = np.zeros((0, 3), dtype)
    _check_cases(_MORE, x, v, z)
    for _label, fn in (_MORE[0], _MORE[5], _MORE[9], _MORE[11]):
        check(fn(enp, x, v, z), fn(np, x, v, z))
        check(fn(enp, enp.asarray(x), enp.asarray(v), z), fn(np, x, v, z))


def test_array_equal_nan_and_select_default():
    a = np.array([1.0, np.nan], np.float32)
    assert not bool(enp.array_equal(a, a)) and bool(enp.array_equal(a, a, equal_nan=True))
    assert bool(ember.jit(lambda a: enp.array_equal(a, a, equal_nan=True))(a))
    assert bool(enp.array_equiv(np.ones((2, 3), np.float32), 1.0))
    c = np.array([True, False, False])
    got = enp.select([c, ~c], [np.int8(1) * np.ones(3, np.int8), np.zeros(3, np.int8)], 5)
    assert got.dtype == np.int8      # the weak default takes the choices' dtype (JAX)
    check(got, np.array([1, 0, 0], np.int8))
    check(enp.append(np.ones(2, np.int8), [3, 4]), np.array([1, 1, 3, 4], np.int32))


def test_unravel_ravel_multi_index():
    idx = np.array([[0, 5, 11], [23, 7, 1]], np.int32)
    shape = (2, 3, 4)
    rows = np.array([0, 1, 1, 0], np.int32)
    cols = np.array([3, 0, 2, 1], np.int32)

    def f(idx, rows, cols):
        return (*enp.unravel_index(idx, shape), enp.unravel_index(idx[0, 1], (6, 4)),
                enp.ravel_multi_index((rows, cols), (2, 4), mode="clip"),
                enp.ravel_multi_index((rows, cols), (2, 4), mode="wrap", order="F"),
                enp.ravel_multi_index((rows + 3, cols - 5), (2, 4), mode="clip"),
                enp.ravel_multi_index((rows + 3, cols - 5), (2, 4), mode="wrap"))

    outs = ember.jit(f)(idx, rows, cols)
    wants = (*np.unravel_index(idx, shape), np.unravel_index(idx[0, 1], (6, 4)),
             np.ravel_multi_index((rows, cols), (2, 4), mode="clip"),
             np.ravel_multi_index((rows, cols), (2, 4), mode="wrap", order="F"),
             np.ravel_multi_index((rows + 3, cols - 5), (2, 4), mode="clip"),
             np.ravel_multi_index((rows + 3, cols - 5), (2, 4), mode="wrap"))
    for k, (got, want) in enumerate(zip(outs, wants, strict=True)):
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want), k
            for g, w in zip(got, want):
                check(g, w)
        else:
            check(got, np.asarray(want).astype(np.int32))
    # Eagerly, mode="raise" checks the (concrete) indices, as NumPy.
    check(enp.ravel_multi_index((rows, cols), (2, 4)), np.ravel_multi_index((rows, cols), (2, 4)))
    for g, w in zip(enp.unravel_index(enp.asarray(idx), shape), np.unravel_index(idx, shape)):
        check(g, w)
    # JAX: -size <= i < 0 counts from the end; other out-of-range indices clip.
    got = enp.unravel_index(np.array([-1, -24, 24, 99, -25, -99], np.int32), shape)
    want = ([1, 0, 1, 1, 0, 0], [2, 0, 2, 2, 0, 0], [3, 0, 3, 3, 0, 0])
    for g, w in zip(got, want):
        check(g, np.array(w, np.int32))
    with pytest.raises(TracingError, match="invalid entry"):
        enp.ravel_multi_index((rows, cols + 2), (2, 4))
    with pytest.raises(TracingError, match="mode='raise'.*wrap"):
        ember.jit(lambda r, c: enp.ravel_multi_index((r, c), (2, 4)))(rows, cols)
    with pytest.raises(TracingError, match="2 index arrays for 3 dimensions"):
        enp.ravel_multi_index((rows, cols), (2, 4, 5), mode="clip")
    with pytest.raises(TracingError, match="unravel_index.*integer"):
        enp.unravel_index(np.ones(2, np.float32), (2, 2))
    with pytest.raises(TracingError, match="ravel_multi_index.*integer"):
        enp.ravel_multi_index((np.ones(2, np.float32), cols[:2]), (2, 4), mode="wrap")


def test_more_shape_errors():
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(TracingError, match=r"rollaxis.*start=5"):
        enp.rollaxis(x, 0, 5)
    with pytest.raises(TracingError, match=r"axis 3 is out of bounds"):
        enp.rollaxis(x, 3)
    with pytest.raises(TracingError, match=r"select.*length"):
        enp.select([x > 0], [x, x])
    with pytest.raises(TracingError, match=r"select.*non-empty"):
        enp.select([], [])
    with pytest.raises(TracingError, match=r"concatenate"):
        enp.append(x, np.ones((2, 2), np.float32), axis=0)


def test_concatenate_nothing():
    with pytest.raises(TracingError, match="need at least one array to concatenate"):
        enp.concatenate([])


@pytest.mark.parametrize("shift", [-7, -1, 0, 2, 13])
def test_roll_by_a_traced_shift(shift):
    # As jnp.roll: the shift may be a traced scalar (under jit, and per lane under vmap).
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    by_axis = ember.jit(lambda x, k: enp.roll(x, k, axis=1))(a, shift)
    np.testing.assert_array_equal(np.asarray(by_axis), np.roll(a, shift, axis=1))
    flat = ember.jit(lambda x, k: enp.roll(x, k))(a, shift)
    np.testing.assert_array_equal(np.asarray(flat), np.roll(a, shift))
    lanes = np.array([shift, 1, -2], np.int32)
    got = ember.vmap(lambda x, k: enp.roll(x, k))(a, lanes)
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.roll(r, k) for r, k in
                                                             zip(a, lanes)]))


def test_non_integer_axes_and_shapes_are_ember_errors():
    v = np.ones((2, 3), np.float32)
    with pytest.raises(TracingError, match=r"(?s)an int or a sequence of ints.*1\.0.*test_shape"):
        enp.max(v, axis=1.0)
    with pytest.raises(TracingError, match=r"a shape must be a sequence of ints, got \(2\.5, 3\)"):
        enp.zeros((2.5, 3))
    with pytest.raises(ember.errors.RandomArgumentError, match="negative dimension"):
        ember.random.normal(ember.random.key(0), (-2,))


@pytest.mark.parametrize("call, numpy_error", [
    (lambda m, x: m.expand_dims(x, 5), IndexError),
    (lambda m, x: m.expand_dims(x, (0, 0)), ValueError),
    (lambda m, x: m.squeeze(x, 0), ValueError),
    (lambda m, x: m.squeeze(x, 3), IndexError),
    (lambda m, x: m.sum(x, axis=-4), IndexError),
], ids=["expand-out-of-range", "expand-repeated", "squeeze-non-unit", "squeeze-out-of-range",
        "sum-out-of-range"])
def test_axis_and_shape_errors_are_numpys_classes(call, numpy_error):
    """NumPy raises AxisError (a ValueError and an IndexError) or ValueError here: ember's
    error is of NumPy's class too, and still names the user's line."""
    import ember.numpy as enp
    from ember.errors import TracingError
    x = np.ones((2, 1, 3), np.float32)
    with pytest.raises(numpy_error):
        call(np, x)
    with pytest.raises(numpy_error) as info:
        call(enp, x)
    assert isinstance(info.value, TracingError) and "test_shape.py" in str(info.value)


# --- delete, insert, block, diagflat, resize, fill_diagonal against JAX -------------------

# ember warns when it narrows 64-bit NumPy input (x64 off), as JAX does: not what these
# tests check.
_ignore_narrowing = pytest.mark.filterwarnings("ignore:.*64-bit types are off")

_RNG = np.random.default_rng(17)
X = _RNG.normal(size=(4, 6)).astype(np.float32)
V = _RNG.normal(size=(6,)).astype(np.float32)
N = _RNG.integers(-5, 6, size=(4, 6)).astype(np.int32)


@_ignore_narrowing
def test_delete(jnp):
    for obj, axis in [(1, 1), (-1, 0), (slice(None, None, 2), 1), (slice(3, 1, -1), None),
                      (np.array([0, 2, 2, -1]), 1), (np.array([True, False, True, False]), 0),
                      (np.array([], np.int32), 0), (np.arange(4), 0)]:
        close(enp.delete(X, obj, axis), jnp.delete(X, obj, axis))
    idx = np.array([4, 0, -1])
    close(ember.jit(lambda x, i: enp.delete(x, i, axis=1, assume_unique_indices=True))(X, idx),
          jnp.delete(X, idx, axis=1, assume_unique_indices=True))


@_ignore_narrowing
def test_insert(jnp):
    for obj, vals, axis in [(1, 9.0, None), (2, V[:4], 1), (np.array([0, 6, 3]), V[:3], 1),
                            (-1, 5, 0), (slice(0, 4, 2), X[:2], 0), (0, V, 0),
                            (np.array([1]), np.array([[1.0], [2.0], [3.0], [4.0]]), 1)]:
        close(enp.insert(X, obj, vals, axis), jnp.insert(X, obj, vals, axis))
    close(enp.insert(N, 3, 2.7, axis=1), jnp.insert(N, 3, 2.7, axis=1))   # cast to a's dtype
    close(ember.jit(lambda x, i, v: enp.insert(x, i, v, axis=0))(X, np.int32(2), V),
          jnp.insert(X, 2, V, axis=0))


@_ignore_narrowing
def test_block(jnp):
    a, b, c = X[:2, :2], X[:2, 2:], X[2:]
    cases = [[a, b], [[a, b], [c]], [1.0, V], [[[a]], [[a]]], X]
    for arrays in cases:
        close(enp.block(arrays), jnp.block(arrays))
    close(ember.jit(lambda x: enp.block([[x, x], [x, x]]))(a), jnp.block([[a, a], [a, a]]))


@_ignore_narrowing
def test_diagflat_resize_fill_diagonal(jnp):
    rng = np.random.default_rng(19)
    for v, k in [(V, 0), (X[:2, :2], 2), (N[0], -1), (np.float32(3.0), 0)]:
        close(enp.diagflat(v, k), jnp.diagflat(v, k))
    for a, shape in [(V, (3, 5)), (N, 4), (X, (2, 2)), (np.zeros(0, np.float32), (2, 3)),
                     (V, (0,))]:
        close(enp.resize(a, shape), jnp.resize(a, shape))
    cube = rng.normal(size=(3, 3, 3)).astype(np.float32)
    for a, val in [(X, 7.0), (X.T, V[:3]), (cube, -1.0), (N, 2.6), (X, V[:1])]:
        close(enp.fill_diagonal(a, val, inplace=False), jnp.fill_diagonal(a, val, inplace=False))
    close(ember.jit(lambda a, v: enp.fill_diagonal(a, v, inplace=False))(X, V),
          jnp.fill_diagonal(X, V, inplace=False))


MANIPULATION_ERRORS = [
    (lambda: enp.delete(X, 9, axis=0), TracingError, "out of bounds"),
    (lambda: enp.delete(X, np.array([1.5])), TracingError, "integer or bool"),
    (lambda: ember.jit(lambda x, i: enp.delete(x, i))(X, np.array([1])), ConcretizationError,
     "assume_unique_indices"),
    (lambda: enp.insert(X, np.ones((2, 2), np.int32), 1.0), TracingError, "1-D"),
    (lambda: enp.insert(X, np.array([0.5]), 1.0), TracingError, "integer"),
    (lambda: enp.block([[X], X]), TracingError, "depths"),
    (lambda: enp.block([]), TracingError, "empty"),
    (lambda: enp.block((X, X)), ArgumentError, "tuple"),
    (lambda: enp.resize(V, (-1, 2)), TracingError, "non-negative"),
    (lambda: enp.fill_diagonal(X, 1.0), ArgumentError, "inplace=False"),
    (lambda: enp.fill_diagonal(X, 1.0, wrap=True, inplace=False), ArgumentError, "wrap"),
    (lambda: enp.fill_diagonal(V, 1.0, inplace=False), TracingError, "2-D"),
    (lambda: enp.fill_diagonal(np.ones((2, 3, 3)), 1.0, inplace=False), TracingError, "equal"),
]


@pytest.mark.parametrize("call, error, match", MANIPULATION_ERRORS)
def test_manipulation_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- concrete arrays as shapes, sizes and axes (against JAX) ---------------------------------

X6 = np.arange(6.0, dtype=np.float32)
X23 = np.random.default_rng(23).normal(size=(2, 3)).astype(np.float32)


SHAPE_CASES = {
    "repeat": lambda m, a: m.repeat(X6[:3], a(np.array([1, 2, 3]))),
    "repeat_axis": lambda m, a: m.repeat(X23, a(np.array([2, 1])), axis=a(np.int64(0))),
    "reshape": lambda m, a: m.reshape(X6, a(np.array([2, 3]))),
    "tile": lambda m, a: m.tile(X6, a(np.array([2]))),
    "split": lambda m, a: m.split(X6, a(np.array([1, 2]))),
    "hsplit": lambda m, a: m.hsplit(X23, a(np.array([1]))),
    "pad": lambda m, a: m.pad(X6, a(np.array([[1, 2]]))),
    "transpose": lambda m, a: m.transpose(X23, a(np.array([1, 0]))),
    "zeros": lambda m, a: m.zeros(a(np.array([2, 3]))),
    "full": lambda m, a: m.full(a(np.array([2, 3])), 2.0),
    "broadcast_to": lambda m, a: m.broadcast_to(X6, a(np.array([2, 6]))),
    "sum_0d_axis": lambda m, a: m.sum(X23, axis=a(np.array(1))),
    "mean_axes": lambda m, a: m.mean(X23, axis=a(np.array([0, 1]))),
    "moveaxis": lambda m, a: m.moveaxis(X23, a(np.array([0])), a(np.array([1]))),
    "unravel_index": lambda m, a: m.unravel_index(np.array([3, 4]), a(np.array([2, 3]))),
    "zeros_like": lambda m, a: m.zeros_like(X6, shape=a(np.array([3, 1]))),
    "roll_vector": lambda m, a: m.roll(X23, a(np.array([1, 2])), axis=a(np.array([0, 1]))),
}


def _ember_array(v):
    return ember.device_put(v) if isinstance(v, np.ndarray) else v


@_ignore_narrowing
@pytest.mark.parametrize("host", ["numpy", "ember"])
@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_concrete_arrays_as_shape_arguments(name, host, jnp):
    # An eager call traced every array argument, so one that gives a shape, a size or an
    # axis raised ConcretizationError; JAX takes concrete arrays there.
    case = SHAPE_CASES[name]
    close(case(enp, (lambda v: v) if host == "numpy" else _ember_array),
          case(jnp, lambda v: v), 1e-6)


@_ignore_narrowing
def test_static_arrays_are_cached_by_value_and_data_stays_an_argument(jnp):
    for shape in ([2, 3], [3, 2], [6, 1]):
        close(enp.reshape(X6, np.array(shape)), jnp.reshape(X6, np.array(shape)), 1e-6)
    # The same signature once with a NumPy scalar axis, then a 0-d array: this recursed.
    close(enp.sum(X23, axis=np.int64(0)), jnp.sum(X23, axis=0), 1e-6)
    close(enp.sum(X23, axis=np.array(1)), jnp.sum(X23, axis=1), 1e-6)
    # The data of a call that also takes a static array keeps its own value per call.
    reps = np.array([1, 0, 2])
    for k in range(3):
        data = (X6[:3] + k).astype(np.float32)
        close(enp.repeat(data, reps), jnp.repeat(data, reps), 1e-6)


@_ignore_narrowing
def test_roll_by_traced_shifts_along_several_axes(jnp):
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for shift, axis in [(np.array([1, -5], np.int32), (0, 2)), (np.int32(2), (1, 2)),
                        (np.array([3], np.int32), None), (np.array([1, 2], np.int32), 1)]:
        got = ember.jit(lambda x, s, ax=axis: enp.roll(x, s, axis=ax))(a, shift)
        close(got, jnp.roll(a, shift, axis=axis), 1e-6)


# --- repeat with traced counts, trim_zeros (against JAX) ------------------------------------

@_ignore_narrowing
@pytest.mark.parametrize("total", [0, 3, 6, 7, 9])
def test_repeat_traced_counts_with_a_static_total(total, jax, jnp):
    v = np.array([1, 2, 0, 3], np.int32)
    m = np.arange(8.0, dtype=np.float32).reshape(4, 2)

    def rep(mod, axis=None, t=total):
        return lambda a, r: mod.repeat(a, r, axis=axis, total_repeat_length=t)

    close(ember.jit(rep(enp))(v, v), jax.jit(rep(jnp))(v, v), 1e-6)
    close(ember.jit(rep(enp, 0))(m, v), rep(jnp, 0)(m, v), 1e-6)
    two = np.array([2], np.int32)
    close(ember.jit(rep(enp, 1))(m, two), rep(jnp, 1)(m, two), 1e-6)
    close(ember.jit(rep(enp))(np.float32(3), np.int32(2)), rep(jnp)(np.float32(3), 2), 1e-6)
    # Concrete counts whose sum is not the total: cut, or the last element repeated (JAX's).
    close(rep(enp, 0)(m, [1, 0, 2, 1]), rep(jnp, 0)(m, np.array([1, 0, 2, 1])), 1e-6)
    close(rep(enp, 1)(m, 2), rep(jnp, 1)(m, 2), 1e-6)


@_ignore_narrowing
def test_repeat_traced_counts_need_a_total():
    with pytest.raises(ConcretizationError, match="repeat"):
        ember.jit(lambda a, r: enp.repeat(a, r))(X6, np.ones(6, np.int32))


@_ignore_narrowing
def test_trim_zeros(jax, jnp):
    a1 = np.array([0, 0, 2, 0, 1, 4, 3, 0, 0, 0], np.int32)
    a2 = np.zeros((4, 5), np.float32)
    a2[1:3, 1:4] = 1
    for a in (a1, a2, np.zeros(3, np.float32), np.zeros((2, 0), np.float32)):
        axes = [None, 0, -1] if a.ndim == 1 else [None, 0, 1, (0, 1)]
        for trim in ("fb", "f", "b", "B", "x"):
            for axis in axes:
                close(enp.trim_zeros(a, trim, axis), jnp.trim_zeros(a, trim, axis), 1e-6)
    close(enp.trim_zeros(ember.device_put(a1)), jnp.trim_zeros(a1), 1e-6)
    # The result's shape depends on the values: JAX also needs a concrete argument.
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.trim_zeros)(a1)
    with pytest.raises(ConcretizationError, match="trim_zeros"):
        ember.jit(enp.trim_zeros)(a1)
