"""ember.numpy linear algebra beyond the first cut (tensordot, einsum with ellipsis, diagonals
and broadcasting, kron, trace, diagonal, diag, cross, linalg.norm) and ember.numpy.linalg's
array-API names (matrix_norm, vector_norm, vecdot, matmul, ..., tensorinv, tensorsolve)
against NumPy; the decompositions are in test_decompositions.py."""

import ml_dtypes
import numpy as np
import pytest
from helpers import check_all, f64
from helpers import close_to_scale as close

import ember
import ember.numpy as enp
from ember.errors import TracingError

_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
           np.dtype(np.float64): np.dtype(np.float32)}


def check(got, want, dtype=None, rtol=None, atol=1e-5):
    """``got`` (an ember Array) equals NumPy's ``want`` (dtype: ``want``'s, 64-bit narrowed)."""
    assert isinstance(got, ember.Array), type(got)
    want = np.asarray(want)
    dtype = np.dtype(dtype if dtype is not None else _NARROW.get(want.dtype, want.dtype))
    assert got.dtype == dtype, (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    g = np.asarray(got)
    if dtype.kind in "biu":
        np.testing.assert_array_equal(g, want.astype(dtype))
    else:
        rtol = rtol if rtol is not None else {2: 3e-3}.get(dtype.itemsize, 2e-5)
        np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


def rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-4 if np.dtype(dtype).kind == "i" else 0, 5, shape).astype(dtype)
    return rng.uniform(-3, 3, shape).astype(dtype)


def run_all(cases, *args):
    """``cases`` is a list of (label, ember_fn, numpy_fn, dtype); all ember_fns run in one jitted
    program over ``args`` and are compared with NumPy."""
    f = ember.jit(lambda *a: [c[1](*a) for c in cases])
    for (label, _, np_fn, dt), got in zip(cases, f(*args), strict=True):
        try:
            check(got, np_fn(*args), dt)
        except AssertionError as e:
            raise AssertionError(f"{label}: {e}") from None


# --- batched matmul of computed operands --------------------------------------------------

@pytest.mark.parametrize("rows", [3, 5, 7, 13, 16])
def test_batched_matmul_of_row_scaled_operand(rows):
    """IREE 3.13's data tiling shifted the second batch's rows by one when the left operand's
    kernel read a value broadcast along rows (ember.rules.lowering._batched_lhs): 3, 5-7 and
    13 rows of 5 at batch 2 came out wrong; 16 keeps the fused packing."""
    x, w, s = rand((2, rows, 5), seed=1), rand((2, 5, 4), seed=2), rand((2, rows), seed=3)

    def softmax(a):
        e = np.exp(a - a.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    run_all([
        ("scaled", lambda x, w, s: (x * s[..., None]) @ w, lambda x, w, s: (x * s[..., None]) @ w,
         None),
        ("centered", lambda x, w, s: (x - x.max(-1, keepdims=True)) @ w,
         lambda x, w, s: (x - x.max(-1, keepdims=True)) @ w, None),
        ("softmax", lambda x, w, s: enp.einsum("bts,bsh->bth", ember.nn.softmax(x), w),
         lambda x, w, s: softmax(x) @ w, None),
    ], x, w, s)
    q, k, v = rand((1, rows, 2, 4), seed=4), rand((1, 5, 2, 4), seed=5), rand((1, 5, 2, 4), seed=6)
    p = softmax(np.einsum("btnh,bsnh->bnts", q, k) / 2.0)
    check(ember.nn.dot_product_attention(q, k, v), np.einsum("bnts,bsnh->btnh", p, v))


# --- einsum ---------------------------------------------------------------------------------

_EINSUM = [
    ("...ij,...jk->...ik", "p", "q"), ("...ii->...i", "s",), ("...ii->...", "s"),
    ("ii", "m"), ("ii->i", "m"), ("iij->j", "t"), ("ij...,jk...->ik...", "u", "w"),
    ("...i,...i", "p2", "v"), ("i...->...", "s"), ("...", "s"), ("ij,ij->ij", "r1", "a"),
    ("b...,...->b...", "s", "m"), ("ijk->kji", "p"), ("", "z"), (",ij->ij", "z", "a"),
    ("ijj,ik->ki", "s", "r2"), ("...ij,j", "p", "v4"), ("ab,cd->abcd", "a", "a"),
    ("ii,i->i", "m", "v"),
]
_EARGS = {
    "p": rand((2, 3, 4), seed=1), "q": rand((2, 4, 5), seed=2), "s": rand((2, 3, 3), seed=3),
    "m": rand((3, 3), seed=4), "t": rand((3, 3, 2), seed=5), "u": rand((2, 3, 4), seed=6),
    "w": rand((3, 5, 1), seed=7), "p2": rand((4, 1, 3), seed=8), "v": rand((3,), seed=9),
    "r1": rand((1, 3), seed=10), "a": rand((2, 3), seed=11), "z": np.float32(2.5),
    "r2": rand((2, 4), seed=12), "v4": rand((4,), seed=13),
}


def test_einsum_extended():
    specs = [(s, [_EARGS[n] for n in ns]) for s, *ns in _EINSUM]
    flat = [x for _, ops in specs for x in ops]

    def f(*ops):
        out, k = [], 0
        for s, o in specs:
            out.append(enp.einsum(s, *ops[k:k + len(o)]))
            k += len(o)
        return out

    for got, (s, ops) in zip(ember.jit(f)(*flat), specs, strict=True):
        try:
            check(got, np.einsum(s, *ops), np.float32)
        except AssertionError as e:
            raise AssertionError(f"einsum {s!r}: {e}") from None
    # eagerly, a representative one on ember Arrays (int dtype)
    x = rand((2, 3, 3), np.int32, 20)
    check(enp.einsum("...jj->...j", enp.asarray(x)), np.einsum("...jj->...j", x))


def test_einsum_sublist_form():
    """NumPy's interleaved form: operands each followed by integer labels (Ellipsis for
    '...'), the output's labels last or implicit."""
    e = Ellipsis
    forms = [lambda p, q, s: (p, [e, 0, 1], q, [e, 1, 2], [e, 0, 2]),
             lambda p, q, s: (p, [0, 1, 2], q, [0, 2, 3]),
             lambda p, q, s: (s, [e, 4, 4], [e]), lambda p, q, s: (s, [5, 0, 7]),
             lambda p, q, s: (p, [0, 1, 2], p, [0, 1, 2], [])]
    p, q, s = _EARGS["p"], _EARGS["q"], _EARGS["s"]
    got = ember.jit(lambda p, q, s: [enp.einsum(*f(p, q, s)) for f in forms])(p, q, s)
    for g, f in zip(got, forms, strict=True):
        check(g, np.einsum(*f(p, q, s)), np.float32)
    with pytest.raises(TracingError, match=r"einsum: a sublist must hold integers"):
        enp.einsum(p, ["i", "j", "k"])


def test_einsum_zero_size_and_dtypes():
    a = np.zeros((0, 3), np.float32)
    b = rand((3, 4), np.int8, 1)
    c = rand((4, 4), np.float16, 2)
    run_all([
        ("zero", lambda a, b, c: enp.einsum("ij,jk->ik", a, b.astype(np.float32)),
         lambda a, b, c: np.einsum("ij,jk->ik", a, b.astype(np.float32)), np.float32),
        ("int8", lambda a, b, c: enp.einsum("ij,ik->jk", b, b),
         lambda a, b, c: np.einsum("ij,ik->jk", b, b), np.int8),
        ("f16 trace", lambda a, b, c: enp.einsum("ii", c), lambda a, b, c: np.einsum("ii", c),
         np.float16),
        ("mixed", lambda a, b, c: enp.einsum("ij,jk->ik", b, c),
         lambda a, b, c: b.astype(np.float32) @ c.astype(np.float32), np.float16),
    ], a, b, c)


@pytest.mark.parametrize("spec, shapes, match", [
    ("ij,jk->ik", [(2, 3), (4, 5)], r"einsum.*'j' has sizes 3 and 4"),
    ("ij,jk", [(2, 3)], r"einsum.*2 operand subscripts but 1 operands"),
    ("i1->i", [(2, 2)], r"einsum.*invalid subscript"),
    ("ij->k", [(2, 2)], r"einsum.*'k' does not appear"),
    ("ij->ii", [(2, 2)], r"einsum.*repeats a label"),
    ("ijk", [(2, 2)], r"einsum.*\(2, 2\)"),
    ("ii", [(2, 3)], r"einsum 'ii'.*\(2, 3\).*'i' has sizes 2 and 3"),
    ("....i", [(2, 2)], r"einsum.*invalid subscript"),
    ("ij->i->j", [(2, 2)], r"einsum.*more than one '->'"),
])
def test_einsum_errors(spec, shapes, match):
    ops = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(TracingError, match=match):
        ember.jit(lambda *o: enp.einsum(spec, *o))(*ops)


# --- tensordot, kron, trace, diagonal, diag, cross -----------------------------------------

def test_products_and_diagonals():
    x = rand((2, 3, 4), seed=1)
    y = rand((4, 3, 2), seed=2)
    m = rand((3, 5), seed=3)
    v = rand((4,), seed=4)
    cases = [
        ("tensordot 2", lambda x, y, m, v: enp.tensordot(x, enp.transpose(x, (1, 2, 0)), 2),
         lambda x, y, m, v: np.tensordot(x, x.transpose(1, 2, 0), 2), None),
        ("tensordot 0", lambda x, y, m, v: enp.tensordot(m, v, 0),
         lambda x, y, m, v: np.tensordot(m, v, 0), None),
        ("tensordot pairs", lambda x, y, m, v: enp.tensordot(x, y, ((1, 2), (1, 0))),
         lambda x, y, m, v: np.tensordot(x, y, ((1, 2), (1, 0))), None),
        ("tensordot int pair", lambda x, y, m, v: enp.tensordot(x, y, (-1, 0)),
         lambda x, y, m, v: np.tensordot(x, y, (-1, 0)), None),
        ("kron", lambda x, y, m, v: enp.kron(m, v), lambda x, y, m, v: np.kron(m, v), None),
        ("kron 3d", lambda x, y, m, v: enp.kron(x, m), lambda x, y, m, v: np.kron(x, m), None),
        ("trace", lambda x, y, m, v: enp.trace(m), lambda x, y, m, v: np.trace(m), None),
        ("trace offs", lambda x, y, m, v: enp.trace(x, -1, 2, 1),
         lambda x, y, m, v: np.trace(x, -1, 2, 1), None),
        ("trace far", lambda x, y, m, v: enp.trace(m, 7), lambda x, y, m, v: np.trace(m, 7),
         None),
        ("diagonal", lambda x, y, m, v: enp.diagonal(x, 1, 0, 2),
         lambda x, y, m, v: np.diagonal(x, 1, 0, 2), None),
        ("diagonal neg", lambda x, y, m, v: enp.diagonal(m, -2),
         lambda x, y, m, v: np.diagonal(m, -2), None),
        ("diag 1d", lambda x, y, m, v: enp.diag(v), lambda x, y, m, v: np.diag(v), None),
        ("diag k", lambda x, y, m, v: enp.diag(v, 2), lambda x, y, m, v: np.diag(v, 2), None),
        ("diag -k", lambda x, y, m, v: enp.diag(v, -1), lambda x, y, m, v: np.diag(v, -1),
         None),
        ("diag 2d", lambda x, y, m, v: enp.diag(m, 1), lambda x, y, m, v: np.diag(m, 1), None),
        ("cross 3", lambda x, y, m, v: enp.cross(m[:, :3], m[:, 2:]),
         lambda x, y, m, v: np.cross(m[:, :3], m[:, 2:]), None),
        ("cross axis", lambda x, y, m, v: enp.cross(x[:, :, :3], y[:3, :, :2].T, axisa=1,
                                                    axisb=1, axisc=0),
         lambda x, y, m, v: np.cross(x[:, :, :3], y[:3, :, :2].T, axisa=1, axisb=1, axisc=0),
         None),
        ("cross 2x2", lambda x, y, m, v: enp.cross(m[:, :2], m[:, 3:]),
         lambda x, y, m, v: _np_cross2(m[:, :2], m[:, 3:]), None),
        ("cross 2x3", lambda x, y, m, v: enp.cross(m[:, :2], m[:, 2:]),
         lambda x, y, m, v: _np_cross2(m[:, :2], m[:, 2:]), None),
        ("cross 3x2 bcast", lambda x, y, m, v: enp.cross(m[:, :3], v[:2]),
         lambda x, y, m, v: _np_cross2(m[:, :3], v[:2]), None),
    ]
    run_all(cases, x, y, m, v)


def _np_cross2(a, b):
    """NumPy's cross with 2-vectors (deprecated there): zero-extend to 3-vectors."""
    def ext(u):
        return np.concatenate([u, np.zeros(u.shape[:-1] + (1,), u.dtype)], -1) \
            if u.shape[-1] == 2 else u
    out = np.cross(ext(a), ext(b))
    return out[..., 2] if a.shape[-1] == 2 and b.shape[-1] == 2 else out


def test_products_dtypes_and_zero_size():
    i8 = rand((3, 3), np.int8, 1)
    z = np.zeros((0, 4), np.float32)
    h = rand((2, 2), np.float16, 2)
    run_all([
        ("trace int8", lambda i8, z, h: enp.trace(i8), lambda i8, z, h: np.trace(i8),
         np.int32),
        ("diag int8", lambda i8, z, h: enp.diag(enp.diagonal(i8)),
         lambda i8, z, h: np.diag(np.diagonal(i8)), None),
        ("kron mixed", lambda i8, z, h: enp.kron(i8, h), lambda i8, z, h: np.kron(i8, h),
         np.float16),
        ("tensordot zero", lambda i8, z, h: enp.tensordot(z, z, ((0,), (0,))),
         lambda i8, z, h: np.tensordot(z, z, ((0,), (0,))), None),
        ("diagonal zero", lambda i8, z, h: enp.diagonal(z), lambda i8, z, h: np.diagonal(z),
         None),
        ("trace zero", lambda i8, z, h: enp.trace(z), lambda i8, z, h: np.trace(z), None),
        ("cross f16", lambda i8, z, h: enp.cross(h, h[::-1]),
         lambda i8, z, h: _np_cross2(h, h[::-1]), np.float16),
    ], i8, z, h)


def test_linalg_eager_and_errors():
    m = rand((3, 4), seed=5)
    check(enp.trace(enp.asarray(m), 1), np.trace(m, 1))
    check(enp.tensordot(m, m, ((0,), (0,))), np.tensordot(m, m, ((0,), (0,))))
    with pytest.raises(TracingError, match=r"tensordot.*\(3, 4\).*\(3, 4\)"):
        enp.tensordot(m, m, 1)
    with pytest.raises(TracingError, match=r"tensordot.*axes=3"):
        enp.tensordot(m, m, 3)
    with pytest.raises(TracingError, match=r"diagonal.*same"):
        enp.diagonal(m, 0, 1, -1)
    with pytest.raises(TracingError, match=r"axis2 5 is out of bounds"):
        enp.diagonal(m, 0, 0, 5)
    with pytest.raises(TracingError, match=r"diag.*1-D or 2-D.*\(2, 3, 4\)"):
        enp.diag(np.ones((2, 3, 4), np.float32))
    with pytest.raises(TracingError, match=r"cross.*dimension must be 2 or 3.*\(3, 4\)"):
        enp.cross(m, m)
    with pytest.raises(TracingError, match=r"cross.*do not broadcast"):
        enp.cross(np.ones((2, 3), np.float32), np.ones((4, 3), np.float32))


# --- linalg.norm ----------------------------------------------------------------------------

_VEC_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1]
_MAT_ORDS = [None, "fro", 1, -1, np.inf, -np.inf, "nuc", 2, -2]


@pytest.mark.filterwarnings("ignore:divide by zero")
def test_norm():
    x = rand((3, 4), seed=7)
    x[0, 1] = 0
    t = rand((2, 3, 4), seed=8)
    i = rand((5,), np.int32, 9)
    cases = []
    for o in _VEC_ORDS:
        cases.append((f"vec {o}", lambda x, t, i, o=o: enp.linalg.norm(x[0], o),
                      lambda x, t, i, o=o: np.linalg.norm(x[0], o), np.float32))
        cases.append((f"vec axis {o}", lambda x, t, i, o=o: enp.linalg.norm(t, o, axis=-1),
                      lambda x, t, i, o=o: np.linalg.norm(t, o, axis=-1), np.float32))
    for o in _MAT_ORDS:
        cases.append((f"mat {o}", lambda x, t, i, o=o: enp.linalg.norm(x, o),
                      lambda x, t, i, o=o: np.linalg.norm(x, o), np.float32))
        cases.append((f"mat axes {o}",
                      lambda x, t, i, o=o: enp.linalg.norm(t, o, axis=(2, 0), keepdims=True),
                      lambda x, t, i, o=o: np.linalg.norm(t, o, axis=(2, 0), keepdims=True),
                      np.float32))
    cases += [
        ("all", lambda x, t, i: enp.linalg.norm(t), lambda x, t, i: np.linalg.norm(t),
         np.float32),
        ("all keepdims", lambda x, t, i: enp.linalg.norm(t, keepdims=True),
         lambda x, t, i: np.linalg.norm(t, keepdims=True), np.float32),
        ("int", lambda x, t, i: enp.linalg.norm(i, 1), lambda x, t, i: np.linalg.norm(i, 1),
         np.float32),
        ("keepdims vec", lambda x, t, i: enp.linalg.norm(t, np.inf, axis=1, keepdims=True),
         lambda x, t, i: np.linalg.norm(t, np.inf, axis=1, keepdims=True), np.float32),
    ]
    run_all(cases, x, t, i)
    h = rand((4,), np.float16, 3)
    check(enp.linalg.norm(h), np.linalg.norm(h.astype(np.float32)), np.float16)


def test_norm_errors():
    m = np.ones((2, 2), np.float32)
    with pytest.raises(TracingError, match=r"norm.*\(2, 2, 2\)"):
        enp.linalg.norm(np.ones((2, 2, 2), np.float32), 1)
    with pytest.raises(TracingError, match="invalid norm order 'fro' for vectors"):
        enp.linalg.norm(np.ones(3, np.float32), "fro")
    with pytest.raises(TracingError, match="invalid norm order 3 for matrices"):
        enp.linalg.norm(m, 3)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_max_norms_of_empty_matrices_are_zero(shape):
    x = np.zeros(shape, np.float32)
    for o in (1, np.inf):
        assert float(enp.linalg.norm(x, o)) == np.linalg.norm(x, o) == 0.0


# --- dtypes ---------------------------------------------------------------------------------

_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
           np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dtype_functions_match_jax():
    jnp = pytest.importorskip("jax.numpy")
    for a in _DTYPES:
        for b in _DTYPES:
            assert enp.promote_types(a, b) == jnp.promote_types(a, b), (a, b)
            assert enp.promote_types(a, int) == jnp.promote_types(a, int), a
            assert enp.result_type(a, b) == jnp.result_type(a, b), (a, b)
            for casting in ("safe", "same_kind", "unsafe"):
                assert enp.can_cast(a, b, casting) == jnp.can_cast(a, b, casting), (a, b)
        for s in (1, 1.0, True):
            assert enp.result_type(a, s) == jnp.result_type(a, s), (a, s)
            assert enp.result_type(np.zeros(2, a), s) == jnp.result_type(np.zeros(2, a), s)
        assert enp.result_type(a, int, float) == jnp.result_type(a, int, float), a
    assert enp.result_type(1, 2.0) == jnp.result_type(1, 2.0)
    assert enp.result_type("float16", np.int8) == jnp.result_type("float16", np.int8)
    x = enp.asarray(np.ones(2, np.int16))
    assert enp.can_cast(x, np.int32) and not enp.can_cast(x, np.int8)
    assert enp.result_type(x, np.uint8) == np.int16


def test_finfo_iinfo():
    for dt in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64):
        f = enp.finfo(dt)
        g = ml_dtypes.finfo(dt)
        assert (f.eps, f.max, f.tiny, f.bits) == (g.eps, g.max, g.tiny, g.bits)
    assert enp.finfo(enp.ones(2, np.float16)).bits == 16
    for dt in (np.int8, np.uint16, np.int32, np.uint64):
        assert (enp.iinfo(dt).min, enp.iinfo(dt).max) == (np.iinfo(dt).min, np.iinfo(dt).max)
    assert enp.iinfo(enp.asarray(np.ones(2, np.uint8))).max == 255
    assert enp.finfo("bfloat16").bits == 16


_BROADCAST_OPERANDS = {
    "row_lhs": lambda m, x, b: m.broadcast_to(b[0], x.shape) @ x,
    "column_rhs": lambda m, x, b: x @ m.broadcast_to(b[:, :1], x.shape),
    "row_lhs_batched": lambda m, x, b: m.broadcast_to(b[0], (3,) + x.shape) @ x,
    "row_lhs_in_cond": lambda m, x, b: (m.broadcast_to(b[0], x.shape) @ x) + b,
    "splat_lhs": lambda m, x, b: m.broadcast_to(b[0, 0], x.shape) @ x,
}


@pytest.mark.parametrize("name", list(_BROADCAST_OPERANDS))
def test_matmul_of_a_broadcast_operand(name):
    """A row or column broadcast as a matmul operand (IREE 3.13 crashed compiling these at
    O3 with data tiling until ember put a barrier before them)."""
    rng = np.random.default_rng(0)
    x, b = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    f = _BROADCAST_OPERANDS[name]
    if name == "row_lhs_in_cond":
        got = ember.jit(lambda x, b: ember.lax.cond(x[0, 0] > -10, lambda: f(enp, x, b),
                                                     lambda: x))(x, b)
    else:
        got = ember.jit(lambda x, b: f(enp, x, b))(x, b)
    check(got, f(np, x, b), rtol=1e-4, atol=1e-4)


def test_products_with_a_broadcast_operand():
    """A product with a broadcast that is constant along the contracted dims (ones @ y, a
    broadcast scalar, einsum with a repeated vector) compiles to a sum and a product, no
    contraction (ember-simplify), with NumPy's results."""
    rng = np.random.default_rng(3)
    y = rng.standard_normal((6, 5)).astype(np.float32)
    x3 = rng.standard_normal((2, 4, 6)).astype(np.float32)
    v = rng.standard_normal(5).astype(np.float32)
    n = rng.integers(-9, 9, (6, 5)).astype(np.int32)
    cases = {
        "ones @ y": (lambda y: enp.ones((4, 6), np.float32) @ y, (y,),
                     np.ones((4, 6), np.float32) @ y),
        "scalar @ y": (lambda y: enp.broadcast_to(y[0, 0], (4, 6)) @ y, (y,),
                       np.full((4, 6), y[0, 0]) @ y),
        "y.T @ full": (lambda y: y.T @ enp.full((6, 3), 2.5, np.float32), (y,),
                       y.T @ np.full((6, 3), 2.5, np.float32)),
        "batched einsum": (lambda x, v: enp.einsum("bij,bjk->bik", x,
                                                   enp.broadcast_to(v, (2, 6, 5))), (x3, v),
                           np.einsum("bij,bjk->bik", x3, np.broadcast_to(v, (2, 6, 5)))),
        "int32": (lambda n: enp.full((3, 6), 3, np.int32) @ n, (n,),
                  np.full((3, 6), 3, np.int32) @ n),
    }
    for name, (f, args, want) in cases.items():
        jf = ember.jit(f)
        assert "ember.dot_general" not in jf.lower(*args).as_text("optimized"), name
        check(jf(*args), want, atol=1e-4)
    # A row repeated down the rows varies along the contracted dim: still a product.
    jf = ember.jit(lambda y: enp.broadcast_to(y[:, 0], (4, 6)) @ y)
    assert "ember.dot_general" in jf.lower(y).as_text("optimized")
    check(jf(y), np.broadcast_to(y[:, 0], (4, 6)) @ y)


# --- ember.numpy.linalg: the array API's names, tensorinv, tensorsolve ----------------------

LA = enp.linalg
INF = np.inf
_RNG = np.random.default_rng(7)
M3 = _RNG.standard_normal((2, 3, 4)).astype(np.float32)           # a stack of matrices
SQ = _RNG.standard_normal((3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
V3 = _RNG.standard_normal((2, 3)).astype(np.float32)              # a stack of 3-vectors
IM = _RNG.integers(-5, 5, (3, 4)).astype(np.int32)
T6 = _RNG.standard_normal((6, 6)).astype(np.float32) + 4 * np.eye(6, dtype=np.float32)
MAT_ORDS = ("fro", "nuc", 1, -1, 2, -2, INF, -INF)
VEC_CASES = ((2, None, False), (1, 1, False), (INF, (0, 2), True), (-INF, -1, False),
             (0, None, True), (3, 0, False), (-1.5, (1, 2), False))










def _array_api(m3, sq, v3, im, t6):
    outs = [LA.matrix_norm(m3, ord=o) for o in MAT_ORDS]
    outs += [LA.matrix_norm(m3, keepdims=True), LA.matrix_norm(im, ord=INF)]
    outs += [LA.vector_norm(m3, ord=o, axis=ax, keepdims=kd) for o, ax, kd in VEC_CASES]
    outs += [LA.vector_norm(im, ord=1, axis=1),
             LA.vecdot(m3, m3[0], axis=-2), LA.vecdot(im, im),
             LA.matmul(m3, m3[0].T), LA.matmul(im, im.T, preferred_element_type=np.float32),
             LA.tensordot(m3, m3[0], axes=((1, 2), (0, 1))), LA.tensordot(sq, sq, axes=1),
             LA.matrix_transpose(m3), LA.cross(v3, v3[::-1]), LA.cross(v3.T, sq[:, :2], axis=0),
             LA.outer(v3[0], im[0]), LA.diagonal(m3, offset=1), LA.diagonal(im, offset=-1),
             LA.trace(m3), LA.trace(im, offset=1), LA.trace(m3, dtype=np.float16),
             LA.tensorinv(t6.reshape(6, 2, 3), ind=1), LA.tensorinv(t6.reshape(2, 3, 3, 2)),
             LA.tensorsolve(t6.reshape(2, 3, 6), v3),
             LA.tensorsolve(t6.reshape(6, 2, 3).transpose(1, 0, 2), v3, axes=(1,))]
    return outs


def _array_api_wants(m3, sq, v3, im, t6):
    npl = np.linalg
    wants = [npl.matrix_norm(m3, ord=o) for o in MAT_ORDS]
    wants += [npl.matrix_norm(m3, keepdims=True), npl.matrix_norm(im, ord=INF)]
    wants += [npl.vector_norm(m3, ord=o, axis=ax, keepdims=kd) for o, ax, kd in VEC_CASES]
    wants += [npl.vector_norm(im, ord=1, axis=1),
              np.vecdot(m3, m3[0], axis=-2), (np.vecdot(im, im), np.int32),
              m3 @ m3[0].T, (im @ im.T).astype(np.float32),
              np.tensordot(m3, m3[0], axes=((1, 2), (0, 1))), np.tensordot(sq, sq, axes=1),
              (np.swapaxes(m3, -1, -2), np.float32), npl.cross(v3, v3[::-1]),
              np.cross(v3.T, sq[:, :2], axis=0), np.outer(v3[0], im[0]),
              npl.diagonal(m3, offset=1), (npl.diagonal(im, offset=-1), np.int32),
              npl.trace(m3), (npl.trace(im, offset=1), np.int32), npl.trace(m3),
              npl.tensorinv(t6.reshape(6, 2, 3), ind=1), npl.tensorinv(t6.reshape(2, 3, 3, 2)),
              npl.tensorsolve(t6.reshape(2, 3, 6), v3),
              npl.tensorsolve(t6.reshape(6, 2, 3).transpose(1, 0, 2), v3, axes=(1,))]
    return wants


def test_array_api_functions_match_numpy():
    args = (M3, SQ, V3, IM, T6)
    gots = ember.jit(_array_api)(*args)
    wants = _array_api_wants(*(f64(a) if a.dtype == np.float32 else a for a in args))
    labels = [f"matrix_norm {o}" for o in MAT_ORDS] + ["matrix_norm keepdims", "int inf"]
    labels += [f"vector_norm {c}" for c in VEC_CASES]
    labels += ["vector_norm int", "vecdot", "vecdot int", "matmul", "matmul preferred",
               "tensordot pairs", "tensordot 1", "matrix_transpose", "cross", "cross axis 0",
               "outer", "diagonal", "diagonal int", "trace", "trace int", "trace float16",
               "tensorinv 1", "tensorinv 2", "tensorsolve", "tensorsolve axes"]
    trace16 = gots.pop(labels.index("trace float16"))
    wants.pop(labels.index("trace float16"))
    labels.remove("trace float16")
    check_all(labels, gots, wants, 1e-4)
    close(trace16, np.trace(f64(M3), axis1=-2, axis2=-1), 3e-3, np.float16)
    # Eagerly, and integers in floating point as NumPy (JAX's vector_norm keeps ints).
    close(LA.vector_norm(IM, ord=INF), np.linalg.vector_norm(IM, ord=INF))
    close(LA.matrix_norm(M3, ord="nuc"), np.linalg.matrix_norm(f64(M3), ord="nuc"), 1e-5)
    close(LA.vector_norm(np.zeros((0,), np.float32), ord=INF), 0.0)      # JAX's initial=0


def test_tensorsolve_with_several_axes_as_numpy():
    a = np.transpose((3 * np.eye(6) + np.tri(6, k=-1)).astype(np.float32).reshape(2, 3, 2, 3),
                     (2, 0, 3, 1)).copy()
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(enp.linalg.tensorsolve(a, b, axes=(0, 2))),
                               np.linalg.tensorsolve(a, b, axes=(0, 2)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, match", [
    (lambda: LA.matrix_norm(V3[0]), r"matrix_norm: .*at least 2.*\(3,\)"),
    (lambda: LA.vector_norm(V3, ord="fro"), r"vector_norm: invalid norm order"),
    (lambda: LA.cross(M3, M3), r"cross: x1 of shape \(2, 3, 4\).*size 3"),
    (lambda: LA.outer(M3, V3[0]), r"outer: x1 and x2 must be 1-D"),
    (lambda: LA.diagonal(V3[0]), r"diagonal: x must have at least 2"),
    (lambda: LA.trace(V3[0]), r"trace: x must have at least 2"),
    (lambda: LA.tensorinv(M3, ind=1), r"tensorinv: the product of the first"),
    (lambda: LA.tensorinv(M3, ind=0), r"tensorinv: ind must be a positive"),
    (lambda: LA.tensorsolve(T6, V3), r"tensorsolve: the leading dimensions"),
])
def test_array_api_errors(call, match):
    with pytest.raises(TracingError, match=match):
        call()


def test_preferred_element_type_is_where_products_accumulate():
    # int8 products of 100 * 100 wrapped when the result was cast after the product.
    a = np.full(10, 100, np.int8)
    b = np.array([100, -100, 100], np.int8)
    wide = a.astype(np.int64)
    got = ember.jit(lambda a, b: (
        enp.einsum("i,i->", a, a, preferred_element_type=np.int32),
        enp.vecdot(a[:8], a[:8], preferred_element_type=np.int32),
        enp.convolve(b, a[:2], preferred_element_type=np.int32),
        enp.correlate(b, a[:2], mode="full", preferred_element_type=np.int32)))(a, b)
    wants = [wide @ wide, wide[:8] @ wide[:8], np.convolve(b.astype(np.int64), wide[:2]),
             np.correlate(b.astype(np.int64), wide[:2], mode="full")]
    for g, w in zip(got, wants, strict=True):
        assert g.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(g), w)
