"""The ember dialect: every op, declared once, at JAX ``lax`` granularity.

Operands of elementwise ops already agree in shape and dtype: broadcasting and type promotion
are the frontend's job (``ember.numpy``), as in ``lax``. Types are ranked tensors; unsigned
integers are ``ui8 ... ui64`` so that ops know their signedness.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.rules.base import Attr, OpTypeError, callee_type, define
from ember.rules.type_rules import (
    ANY,
    COMPLEX,
    FLOAT,
    INEXACT,
    INTEGRAL,
    NUMERIC,
    REAL,
    REAL_NUMERIC,
    SIGNED,
    aval,
    binary_rule,
    check_axes,
    check_class,
    fmt,
    same_shapes_and_dtypes,
    unary_rule,
)

# --- dtype classes ------------------------------------------------------------------------

# --- elementwise families -----------------------------------------------------------------

# Result dtype "real": the operand's, or the dtype of a complex operand's parts (abs).
UNARY = {  # name: (dtype class, result dtype or None for the operand's)
    "neg": (SIGNED, None), "abs": (SIGNED, "real"), "sign": (NUMERIC, None),
    "exp": (INEXACT, None), "expm1": (INEXACT, None), "log": (INEXACT, None),
    "log1p": (INEXACT, None), "sqrt": (INEXACT, None), "rsqrt": (INEXACT, None),
    "sin": (INEXACT, None), "cos": (INEXACT, None), "tan": (INEXACT, None),
    "tanh": (INEXACT, None), "logistic": (FLOAT, None), "erf": (FLOAT, None),
    "floor": (FLOAT, None), "ceil": (FLOAT, None), "round": (FLOAT, None),
    "not": (INTEGRAL, None), "is_finite": (FLOAT, dtypes.bool_),
}
BINARY = {
    "add": NUMERIC, "sub": NUMERIC, "mul": NUMERIC, "div": NUMERIC, "rem": REAL_NUMERIC,
    "pow": INEXACT, "max": REAL, "min": REAL, "atan2": FLOAT,
    "and": INTEGRAL, "or": INTEGRAL, "xor": INTEGRAL,
}
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
# Properties of the elementwise ops above that differ from the family's (cheap; no traits).
_TRANSCENDENTAL = ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic",
                   "erf", "pow", "atan2")
_DIVISION = ("div", "rem", "sqrt", "rsqrt")
_EXACT_BF16 = ("select", "max", "min", "neg", "abs", "sign", "floor", "ceil", "round")
_F64_MATH = ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic", "pow",
             "atan2", "erf", "rem")


def _properties(name: str) -> dict:
    cost = "transcendental" if name in _TRANSCENDENTAL else \
        "division" if name in _DIVISION else "cheap"
    traits = [t for t, names in (("exact_bf16", _EXACT_BF16), ("f64_math", _F64_MATH))
              if name in names]
    return {"cost": cost, "traits": traits}
REDUCE = {"reduce_sum": NUMERIC, "reduce_prod": NUMERIC, "reduce_max": REAL,
          "reduce_min": REAL, "reduce_and": INTEGRAL, "reduce_or": INTEGRAL}


for _name, (_cls, _res) in UNARY.items():
    _attrs = ()
    if _name == "round":
        _attrs = (Attr("rounding_method", "str", "away_from_zero",
                       ("away_from_zero", "to_nearest_even")),)
    define(_name, 1, unary_rule(_cls, _res), attrs=_attrs, family="elementwise",
           doc=f"Elementwise {_name}.", **_properties(_name))

for _name, _cls in BINARY.items():
    define(_name, 2, binary_rule(_cls), family="elementwise",
           doc=f"Elementwise {_name} of two operands of equal shape and dtype (lax semantics).",
           **_properties(_name))

for _name in COMPARE:
    define(_name, 2, binary_rule(ANY if _name in ("eq", "ne") else REAL, dtypes.bool_),
           family="elementwise",
           doc=f"Elementwise comparison {_name}; NaN compares unequal to everything.")


# --- complex numbers ----------------------------------------------------------------------


def _part(avals, attrs):
    check_class(avals, COMPLEX)
    return [aval(avals[0].shape, dtypes.real_dtype(avals[0].dtype))]


def _complex(avals, attrs):
    same_shapes_and_dtypes(avals)
    if avals[0].dtype not in (dtypes.float32, dtypes.float64):
        raise OpTypeError(f"needs float32 or float64 parts, got {fmt(avals)}")
    return [aval(avals[0].shape, dtypes.complex_dtype(avals[0].dtype))]


def _conj(avals, attrs):
    check_class(avals, COMPLEX)
    return [avals[0]]


define("real", 1, _part, family="elementwise",
       doc="Elementwise real part of a complex operand (complex64 -> float32).")
define("imag", 1, _part, family="elementwise",
       doc="Elementwise imaginary part of a complex operand (complex64 -> float32).")
define("complex", 2, _complex, family="elementwise",
       doc="Elementwise re + im i of two float32 (float64) operands of equal shape: complex64 "
           "(complex128).")
define("conj", 1, _conj, family="elementwise",
       doc="Elementwise complex conjugate of a complex operand.")


def _select(avals, attrs):
    pred, a, b = avals
    same_shapes_and_dtypes([a, b])
    if pred.dtype != dtypes.bool_ or pred.shape != a.shape:
        raise OpTypeError(f"needs a bool predicate of the operands' shape, got {fmt(avals)}")
    return [a]


define("select", 3, _select, family="elementwise", traits=("exact_bf16",),
       doc="select(pred, on_true, on_false), elementwise.")


def _convert(avals, attrs):
    return [aval(avals[0].shape, attrs["new_dtype"])]


define("convert", 1, _convert, attrs=(Attr("new_dtype", "dtype"),), family="elementwise",
       cost="free",
       doc="Elementwise dtype conversion (float to int truncates toward zero; x != 0 to bool).")

# --- creation -----------------------------------------------------------------------------


def _constant(avals, attrs):
    value = attrs["value"]
    return [aval(value.shape, value.dtype)]


define("constant", 0, _constant, attrs=(Attr("value", "dense"),), family="creation",
       cost="free", doc="A constant array.")


def _iota(avals, attrs):
    shape, dim = attrs["shape"], attrs["dimension"]
    check_axes([dim], len(shape), "dimension")
    if dtypes.is_bool(attrs["dtype"]) or dtypes.is_complex(attrs["dtype"]):
        raise OpTypeError(f"iota needs a real numeric dtype, got {np.dtype(attrs['dtype'])}")
    return [aval(shape, attrs["dtype"])]


define("iota", 0, _iota, attrs=(Attr("shape", "i64s"), Attr("dimension", "i64"),
                                Attr("dtype", "dtype")),
       family="creation", cost="free", recomputable=True,
       doc="Indices 0, 1, ... along `dimension`, broadcast over `shape`.")

# --- shape ops ----------------------------------------------------------------------------


def _broadcast_in_dim(avals, attrs):
    (x,), shape, dims = avals, attrs["shape"], attrs["broadcast_dimensions"]
    if len(dims) != x.ndim:
        raise OpTypeError(f"broadcast_dimensions {dims} must have one entry per operand "
                          f"dimension of {x.str_short()}")
    check_axes(dims, len(shape), "broadcast dimension")
    if list(dims) != sorted(dims):
        raise OpTypeError(f"broadcast_dimensions {dims} must be increasing")
    for d, od in zip(x.shape, dims):
        if d != 1 and d != shape[od]:
            raise OpTypeError(f"cannot broadcast {x.str_short()} to shape {tuple(shape)} "
                              f"with broadcast_dimensions {dims}")
    return [aval(shape, x.dtype)]


define("broadcast_in_dim", 1, _broadcast_in_dim,
       attrs=(Attr("shape", "i64s"), Attr("broadcast_dimensions", "i64s")), family="shape",
       cost="free", recomputable=True,
       doc="Broadcast: operand dimension i becomes result dimension broadcast_dimensions[i].")


def _reshape(avals, attrs):
    (x,), shape = avals, attrs["new_sizes"]
    if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != x.size:
        raise OpTypeError(f"cannot reshape {x.str_short()} ({x.size} elements) to "
                          f"{tuple(shape)}")
    return [aval(shape, x.dtype)]


define("reshape", 1, _reshape, attrs=(Attr("new_sizes", "i64s"),), family="shape",
       cost="free", recomputable=True, doc="Reshape in row-major order.")


def _transpose(avals, attrs):
    (x,), perm = avals, attrs["permutation"]
    if sorted(perm) != list(range(x.ndim)):
        raise OpTypeError(f"permutation {perm} is not a permutation of the axes of "
                          f"{x.str_short()}")
    return [aval([x.shape[p] for p in perm], x.dtype)]


define("transpose", 1, _transpose, attrs=(Attr("permutation", "i64s"),), family="shape",
       cost="free", doc="Result dimension i is operand dimension permutation[i].")


def _slice(avals, attrs):
    (x,) = avals
    start, limit, strides = attrs["start_indices"], attrs["limit_indices"], attrs["strides"]
    if not strides:
        strides = (1,) * x.ndim
    if not len(start) == len(limit) == len(strides) == x.ndim:
        raise OpTypeError(f"start/limit/strides {start}/{limit}/{strides} must have one entry "
                          f"per dimension of {x.str_short()}")
    shape = []
    for s, lim, st, d in zip(start, limit, strides, x.shape):
        if not (0 <= s <= lim <= d) or st < 1:
            raise OpTypeError(f"slice {start}:{limit}:{strides} is out of bounds for "
                              f"{x.str_short()}")
        shape.append(-(-(lim - s) // st))
    return [aval(shape, x.dtype)]


define("slice", 1, _slice, attrs=(Attr("start_indices", "i64s"), Attr("limit_indices", "i64s"),
                                  Attr("strides", "i64s", ())),
       family="shape", doc="A static strided slice, start inclusive, limit exclusive.")


def _concatenate(avals, attrs):
    dim = attrs["dimension"]
    if not avals:
        raise OpTypeError("needs at least one operand")
    first = avals[0]
    check_axes([dim], first.ndim, "dimension")
    for a in avals:
        if (a.dtype != first.dtype or a.ndim != first.ndim
                or any(a.shape[i] != first.shape[i] for i in range(a.ndim) if i != dim)):
            raise OpTypeError(f"operands must agree in dtype and in every dimension but {dim}, "
                              f"got {fmt(avals)}")
    shape = list(first.shape)
    shape[dim] = sum(a.shape[dim] for a in avals)
    return [aval(shape, first.dtype)]


define("concatenate", None, _concatenate, attrs=(Attr("dimension", "i64"),), family="shape",
       cost="free", doc="Concatenate along `dimension`.")


def _pad(avals, attrs):
    x, value = avals
    low, high, interior = attrs["low"], attrs["high"], attrs["interior"]
    if value.shape != () or value.dtype != x.dtype:
        raise OpTypeError(f"padding value must be a scalar of the operand's dtype, got "
                          f"{fmt(avals)}")
    if not len(low) == len(high) == len(interior) == x.ndim or any(i < 0 for i in interior):
        raise OpTypeError(f"low/high/interior {low}/{high}/{interior} must have one entry per "
                          f"dimension of {x.str_short()} (interior >= 0)")
    shape = []
    for d, lo, hi, it in zip(x.shape, low, high, interior):
        n = lo + hi + d + max(d - 1, 0) * it
        if n < 0:
            raise OpTypeError(f"padding {lo}/{hi}/{it} gives a negative size for {x.str_short()}")
        shape.append(n)
    return [aval(shape, x.dtype)]


define("pad", 2, _pad, attrs=(Attr("low", "i64s"), Attr("high", "i64s"), Attr("interior", "i64s")),
       family="shape", doc="Pad with a scalar value; low/high may be negative (cropping).")

# --- reductions ---------------------------------------------------------------------------


def _reduce_rule(cls):
    def infer(avals, attrs):
        (x,), axes = avals, attrs["axes"]
        check_class(avals, cls)
        check_axes(axes, x.ndim)
        return [aval([d for i, d in enumerate(x.shape) if i not in axes], x.dtype)]
    return infer


for _name, _cls in REDUCE.items():
    define(_name, 1, _reduce_rule(_cls), attrs=(Attr("axes", "i64s"),), family="reduce",
           doc=f"{_name} over a set of axes (removed from the result).")


def _arg_reduce(avals, attrs):
    (x,), axis = avals, attrs["axis"]
    check_class(avals, REAL)
    check_axes([axis], x.ndim)
    if x.shape[axis] == 0:
        raise OpTypeError(f"cannot take an argmax/argmin over an empty axis {axis} of "
                          f"{x.str_short()}")
    if not dtypes.is_int(attrs["index_dtype"]):
        raise OpTypeError(f"index_dtype must be an integer dtype, got {attrs['index_dtype']}")
    return [aval([d for i, d in enumerate(x.shape) if i != axis], attrs["index_dtype"])]


for _name in ("argmax", "argmin"):
    define(_name, 1, _arg_reduce, attrs=(Attr("axis", "i64"), Attr("index_dtype", "dtype")),
           family="reduce",
           doc=f"Index of the first {_name[3:]}imum along `axis` (NaN counts as the extreme).")

# --- contraction --------------------------------------------------------------------------


def _dot_general(avals, attrs):
    lhs, rhs = avals
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    if lhs.dtype != rhs.dtype or dtypes.is_bool(lhs.dtype):
        raise OpTypeError(f"operands must share a numeric dtype, got {fmt(avals)}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise OpTypeError("contracting and batch dimension lists must pair up")
    check_axes(tuple(lc) + tuple(lb), lhs.ndim, "lhs dimension")
    check_axes(tuple(rc) + tuple(rb), rhs.ndim, "rhs dimension")
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise OpTypeError(f"dimension {a} of lhs ({lhs.shape[a]}) does not match dimension "
                              f"{b} of rhs ({rhs.shape[b]}) in {fmt(avals)}")
    lfree = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
    return [aval([lhs.shape[i] for i in lb] + lfree + rfree, lhs.dtype)]


define("dot_general", 2, _dot_general,
       attrs=(Attr("lhs_contracting", "i64s"), Attr("rhs_contracting", "i64s"),
              Attr("lhs_batch", "i64s", ()), Attr("rhs_batch", "i64s", ())),
       family="contraction",
       doc="General dot: result dims are batch, lhs free, rhs free (lax.dot_general).")

# --- calls --------------------------------------------------------------------------------


def _verify_call(op, attrs):
    """Check operand and result types against the callee's signature."""
    name = attrs["callee"]
    ftype = callee_type(op, name, "calls")
    if list(ftype.inputs) != [v.type for v in op.operands] or \
            list(ftype.results) != [r.type for r in op.results]:
        raise OpTypeError(f"types do not match the signature of @{name}: {ftype}")


define("call", None, None, attrs=(Attr("callee", "symbol"),), family="call",
       verify_op=_verify_call, doc="Call a func.func in the same module (nested jit).")


def _rev(avals, attrs):
    (x,), dims = avals, attrs["dimensions"]
    check_axes(dims, x.ndim, "dimension")
    return [aval(x.shape, x.dtype)]


define("rev", 1, _rev, attrs=(Attr("dimensions", "i64s"),), family="shape",
       doc="Reverse the order of elements along `dimensions`.")
