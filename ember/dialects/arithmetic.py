"""The arithmetic family: elementwise add, sub, mul, div, rem, max, min, comparisons, logical
ops, neg, abs, sign, rounding, select, convert and the complex parts (real, imag, complex,
conj): declarations, scalar emitters (real and complex), batching and derivatives.

Operands of elementwise ops already agree in shape and dtype: broadcasting and type promotion
are the frontend's job (``ember.numpy``), as in ``lax``. Types are ranked tensors; unsigned
integers are ``ui8 ... ui64`` so that ops know their signedness. Integer division and
remainder never trap (XLA's results for x / 0 and MIN / -1).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, complex_d, element_type, ir, math_d
from ember.rules.autodiff import (
    NOT_DIFFERENTIABLE,
    add_tangents,
    aval_of,
    balanced_eq,
    const,
    jvp,
    primal,
    same_op_transpose,
    scale,
    transpose,
)
from ember.rules.base import Attr, OpTypeError, define
from ember.rules.batching import batch_elementwise, batching
from ember.rules.complex import (
    complex_only_rule,
    complex_rule,
    div_parts,
    hypot,
    imag_part,
    make_complex,
    real_part,
)
from ember.rules.lowering import (
    LOWERINGS,
    SCALAR,
    TRAITS,
    all_ones,
    cmpf,
    cmpi,
    convert_scalar,
    elem,
    lower_elementwise,
    math_op,
    scalar,
    scalar_const,
    scf_while,
)
from ember.rules.ranges import known, value_bound
from ember.rules.type_rules import (
    ANY,
    COMPLEX,
    FLOAT,
    INTEGRAL,
    NUMERIC,
    REAL,
    REAL_NUMERIC,
    SIGNED,
    aval,
    binary_rule,
    check_class,
    fmt,
    same_shapes_and_dtypes,
    unary_rule,
)

# Result dtype "real": the operand's, or the dtype of a complex operand's parts (abs).
UNARY = {  # name: (dtype class, result dtype or None for the operand's)
    "neg": (SIGNED, None), "abs": (SIGNED, "real"), "sign": (NUMERIC, None),
    "floor": (FLOAT, None), "ceil": (FLOAT, None), "round": (FLOAT, None),
    "not": (INTEGRAL, None), "is_finite": (FLOAT, dtypes.bool_),
}
BINARY = {
    "add": NUMERIC, "sub": NUMERIC, "mul": NUMERIC, "div": NUMERIC, "rem": REAL_NUMERIC,
    "max": REAL, "min": REAL, "and": INTEGRAL, "or": INTEGRAL, "xor": INTEGRAL,
}
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
# Properties that differ from the family's (cheap; no traits).
_DIVISION = ("div", "rem")
_EXACT_BF16 = ("max", "min", "neg", "abs", "sign", "floor", "ceil", "round")
_F64_MATH = ("rem",)


def _properties(name: str) -> dict:
    traits = [t for t, names in (("exact_bf16", _EXACT_BF16), ("f64_math", _F64_MATH))
              if name in names]
    return {"cost": "division" if name in _DIVISION else "cheap", "traits": traits}


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





batching(*UNARY, *BINARY, *COMPARE, "real", "imag", "complex", "conj", "select",
         "convert")(batch_elementwise)


# --- lowering: scalar emitters --------------------------------------------------------------

def _fi(float_op, int_op, uint_op=None):
    """A scalar emitter choosing the float, signed or unsigned arith op."""
    def emit(args, dt, out_dt, attrs):
        if dtypes.is_float(dt):
            return float_op(*args).result
        if dtypes.is_unsigned(dt) and uint_op is not None:
            return uint_op(*args).result
        return int_op(*args).result
    return emit


SCALAR["add"] = _fi(arith.AddFOp, arith.AddIOp)
SCALAR["sub"] = _fi(arith.SubFOp, arith.SubIOp)
SCALAR["mul"] = _fi(arith.MulFOp, arith.MulIOp)
SCALAR["max"] = _fi(arith.MaximumFOp, arith.MaxSIOp, arith.MaxUIOp)
SCALAR["min"] = _fi(arith.MinimumFOp, arith.MinSIOp, arith.MinUIOp)
SCALAR["and"] = _fi(None, arith.AndIOp)
SCALAR["or"] = _fi(None, arith.OrIOp)
SCALAR["xor"] = _fi(None, arith.XOrIOp)
for _n in ("add", "sub", "mul", "max", "min", "and", "or", "xor"):
    LOWERINGS[f"ember.{_n}"] = lower_elementwise


def _bool_minmax(op_bool):
    inner = SCALAR[op_bool[0]]

    def emit(args, dt, out_dt, attrs):
        if dtypes.is_bool(dt):   # max of bools is or, min is and (i1 is signed: -1 < 0)
            return (arith.OrIOp if op_bool[1] == "or" else arith.AndIOp)(*args).result
        return inner(args, dt, out_dt, attrs)
    return emit


SCALAR["max"] = _bool_minmax(("max", "or"))
SCALAR["min"] = _bool_minmax(("min", "and"))


def _make_compare(name):
    def emit(args, dt, out_dt, attrs):
        a, b = args
        if dtypes.is_float(dt):
            return cmpf({"eq": "oeq", "ne": "une"}.get(name, "o" + name), a, b)
        if name in ("eq", "ne"):
            return cmpi(name, a, b)
        # i1 is signed in arith (true == -1): compare bools as unsigned.
        prefix = "u" if dtypes.is_unsigned(dt) or dtypes.is_bool(dt) else "s"
        return cmpi(prefix + name, a, b)
    return emit


for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    SCALAR[_n] = _make_compare(_n)
    LOWERINGS[f"ember.{_n}"] = lower_elementwise


def _int_div_rem(args, dt, is_div: bool):
    """Integer division and remainder that never trap: XLA's semantics for x/0 and MIN/-1."""
    a, b = args
    zero, one = scalar_const(0, dt), scalar_const(1, dt)
    b_zero = cmpi("eq", b, zero)
    if dtypes.is_unsigned(dt):
        safe = arith.SelectOp(b_zero, one, b).result
        q = (arith.DivUIOp if is_div else arith.RemUIOp)(a, safe).result
        return arith.SelectOp(b_zero, all_ones(dt) if is_div else a, q).result
    minus_one = scalar_const(-1, dt)
    b_m1 = cmpi("eq", b, minus_one)
    safe = arith.SelectOp(arith.OrIOp(b_zero, b_m1).result, one, b).result
    if is_div:
        q = arith.DivSIOp(a, safe).result
        q = arith.SelectOp(b_m1, arith.SubIOp(zero, a).result, q).result
        return arith.SelectOp(b_zero, minus_one, q).result
    r = arith.RemSIOp(a, safe).result
    r = arith.SelectOp(b_m1, zero, r).result
    return arith.SelectOp(b_zero, a, r).result


@scalar("div")
def _div(args, dt, out_dt, attrs):
    if dtypes.is_float(dt):
        return arith.DivFOp(*args).result
    if not TRAITS.get().exact_division and dtypes.is_int(dt) and not dtypes.is_unsigned(dt):
        return _signed_div_rem_by_magnitudes(*args, dt, True)
    return _int_div_rem(args, dt, True)


@scalar("rem")
def _rem(args, dt, out_dt, attrs):
    if dtypes.is_float(dt):
        if not TRAITS.get().exact_division and np.dtype(dt).itemsize <= 4:
            return _fmod_bits(*args, np.dtype(dt))
        return arith.RemFOp(*args).result if np.dtype(dt).itemsize < 8 else \
            _fmod(*args, np.dtype(dt))
    if not TRAITS.get().exact_division and dtypes.is_int(dt) and not dtypes.is_unsigned(dt):
        return _signed_div_rem_by_magnitudes(*args, dt, False)
    return _int_div_rem(args, dt, False)


def _signed_div_rem_by_magnitudes(a, b, dt, is_div: bool) -> ir.Value:
    """Signed division or remainder (XLA's semantics, as ``_int_div_rem``) exact at the
    type's minimum, where a lowering through abs overflows (Vulkan: INT32_MIN // 3 was 1
    off, fmod(-128, 3) 2 as int8): int32/int64 from the unsigned division of the magnitudes,
    narrower types in int32."""
    bits = np.dtype(dt).itemsize * 8
    if bits < 32:
        i32 = np.dtype("int32")
        wide = [arith.ExtSIOp(elem(i32), v).result for v in (a, b)]
        return arith.TruncIOp(elem(dt), _int_div_rem(wide, i32, is_div)).result
    zero, one = scalar_const(0, dt), scalar_const(1, dt)
    a_neg, b_neg = cmpi("slt", a, zero), cmpi("slt", b, zero)
    b_zero = cmpi("eq", b, zero)

    def magnitude(v, neg):      # as an unsigned value: 0 - INT_MIN wraps to 2^(bits-1)
        return arith.SelectOp(neg, arith.SubIOp(zero, v).result, v).result
    ma, mb = magnitude(a, a_neg), magnitude(b, b_neg)
    mb = arith.SelectOp(b_zero, one, mb).result
    if is_div:
        q = arith.DivUIOp(ma, mb).result
        r = arith.SelectOp(arith.XOrIOp(a_neg, b_neg).result, arith.SubIOp(zero, q).result,
                           q).result
        return arith.SelectOp(b_zero, scalar_const(-1, dt), r).result     # x / 0 is -1
    m = arith.RemUIOp(ma, mb).result
    r = arith.SelectOp(a_neg, arith.SubIOp(zero, m).result, m).result
    return arith.SelectOp(b_zero, a, r).result                              # x % 0 is x


# IREE quirk: tests/test_iree_quirks.py::test_float64_libm_calls_do_not_link
def _fmod(x, y, dt) -> ir.Value:
    """C's fmod, exactly (for float64, which IREE calls a libm fmod it cannot link for): the
    remainder of |x| by |y| 2^k, k large enough that the quotient stays below
    2^(mantissa bits + 1), where one fused multiply-add is exact, for decreasing k down to 0
    (a scalar loop); the sign is x's."""
    info = np.finfo(dt)
    mant, bias = info.nmant, info.maxexp - 1
    iw, fw = ir.IntegerType.get_signless(info.bits), element_type(dt)
    c = lambda v: scalar_const(v, dt)  # noqa: E731

    def int_(v):
        return arith.ConstantOp(iw, ir.IntegerAttr.get(iw, v)).result

    def exponent(v):
        return arith.ShRUIOp(arith.BitcastOp(iw, v).result, int_(mant)).result

    def pow2(k):        # 2^k for normal exponents
        return arith.BitcastOp(fw, arith.ShLIOp(arith.AddIOp(k, int_(bias)).result,
                                                int_(mant)).result).result

    def step(r, d):     # r mod d for 0 <= r < d 2^(mant + 1): r - trunc(r / d) d, exact
        q = math_d.TruncOp(arith.DivFOp(r, d).result).result
        r = math_d.FmaOp(arith.NegFOp(q).result, d, r).result
        r = arith.SelectOp(cmpf("olt", r, c(0.0)), arith.AddFOp(r, d).result, r).result
        return arith.SelectOp(cmpf("oge", r, d), arith.SubFOp(r, d).result, r).result

    ax, ay = math_d.AbsFOp(x).result, math_d.AbsFOp(y).result
    finite = arith.AndIOp(cmpf("olt", ax, c(np.inf)), cmpf("ogt", ay, c(0.0))).result
    regular = arith.AndIOp(finite, cmpf("olt", ay, c(np.inf))).result
    r0 = arith.SelectOp(regular, ax, c(0.0)).result
    d = arith.SelectOp(regular, ay, c(1.0)).result
    def k_of(block):    # the scale exponent for the remainder so far
        (r,) = block.arguments
        return arith.SubIOp(arith.SubIOp(exponent(r), exponent(d)).result, int_(mant)).result

    def body(block):
        k = k_of(block)
        half = arith.ShRUIOp(k, int_(1)).result         # d 2^k in two steps: no overflow
        dk = arith.MulFOp(arith.MulFOp(d, pow2(half)).result,
                          pow2(arith.SubIOp(k, half).result)).result
        return [step(block.arguments[0], dk)]

    (r,) = scf_while([r0], lambda block: cmpi("sgt", k_of(block), int_(0)), body)
    r = math_d.CopySignOp(step(r, d), x).result
    # fmod(x, +-inf) is x for a finite x; an infinite x, a zero y or a NaN give NaN
    keep_x = arith.AndIOp(cmpf("olt", ax, c(np.inf)), cmpf("oeq", ay, c(np.inf))).result
    return arith.SelectOp(regular, r, arith.SelectOp(keep_x, x, c(np.nan)).result).result


def _fmod_bits(x, y, dt) -> ir.Value:
    """C's fmod of float32 (float16 and bfloat16 through it: their remainder is exact in it)
    from the bits, with integer operations only: the 24-bit mantissas, normalized, long-
    divided one exponent step at a time (a scalar loop of up to 277 steps, as musl's fmodf).
    For targets whose float remainder is inexact: SPIR-V's OpFRem is x - y*trunc(x/y), wrong
    for large quotients, and a fused multiply-add form needs an fma lavapipe does not fuse."""
    f32 = np.dtype("float32")
    if dt.itemsize < 4:
        wide = [arith.ExtFOp(elem(f32), v).result for v in (x, y)]
        return arith.TruncFOp(elem(dt), _fmod_bits(*wide, f32)).result
    i32 = np.dtype("int32")
    c = lambda v: scalar_const(v, i32)  # noqa: E731
    one, lead = c(1), c(0x800000)
    ux, uy = (arith.BitcastOp(elem(i32), v).result for v in (x, y))
    ax, ay = (arith.AndIOp(u, c(0x7FFFFFFF)).result for u in (ux, uy))

    def loop(init, cond, body):     # cond(m, e), body(m, e) on the loop's values
        return scf_while(init, lambda b: cond(*b.arguments), lambda b: body(*b.arguments))

    def normalize(m, e):    # leading bit to bit 23 (a subnormal's exponent goes below 1)
        return loop([m, e], lambda m, e: arith.AndIOp(cmpi("slt", m, lead),
                                                      cmpi("ne", m, c(0))).result,
                    lambda m, e: [arith.ShLIOp(m, one).result, arith.SubIOp(e, one).result])

    def split(a):
        e = arith.ShRUIOp(a, c(23)).result
        normal = cmpi("ne", e, c(0))
        m = arith.SelectOp(normal, arith.OrIOp(arith.AndIOp(a, c(0x7FFFFF)).result,
                                               lead).result, a).result
        return normalize(m, arith.MaxSIOp(e, one).result)

    def reduce(m, my):      # m mod my for m < 2 my
        return arith.SelectOp(cmpi("sge", m, my), arith.SubIOp(m, my).result, m).result

    (mx, ex), (my, ey) = split(ax), split(ay)
    mx, ex = loop([mx, ex], lambda m, e: cmpi("sgt", e, ey),
                  lambda m, e: [arith.ShLIOp(reduce(m, my), one).result,
                                arith.SubIOp(e, one).result])
    mx, ex = normalize(reduce(mx, my), ex)
    normal = arith.OrIOp(arith.ShLIOp(ex, c(23)).result, arith.AndIOp(mx, c(0x7FFFFF)).result)
    subnormal = arith.ShRUIOp(mx, arith.SubIOp(one, ex).result).result   # exact: no bits lost
    bits = arith.SelectOp(cmpi("sge", ex, one), normal.result, subnormal).result
    bits = arith.SelectOp(cmpi("eq", mx, c(0)), c(0), bits).result
    sign = arith.AndIOp(ux, c(-0x80000000)).result
    r = arith.BitcastOp(elem(f32), arith.OrIOp(sign, bits).result).result
    # NaN for a zero or NaN y or a non-finite x; x itself when |x| < |y| (y = +-inf too)
    nan = arith.OrIOp(arith.OrIOp(cmpi("eq", ay, c(0)), cmpi("sge", ax, c(0x7F800000))).result,
                      cmpi("sgt", ay, c(0x7F800000))).result
    r = arith.SelectOp(cmpi("slt", ax, ay), x, r).result
    return arith.SelectOp(nan, scalar_const(np.nan, f32), r).result


@scalar("round")
def _round(args, dt, out_dt, attrs):
    op = math_d.RoundEvenOp if attrs["rounding_method"] == "to_nearest_even" else \
        math_d.RoundOp
    return op(args[0]).result


@scalar("neg")
def _neg(args, dt, out_dt, attrs):
    if dtypes.is_float(dt):
        return arith.NegFOp(args[0]).result
    return arith.SubIOp(scalar_const(0, dt), args[0]).result


@scalar("abs")
def _abs(args, dt, out_dt, attrs):
    if dtypes.is_float(dt):
        return math_d.AbsFOp(args[0]).result
    return math_d.AbsIOp(args[0]).result


@scalar("sign")
def _sign(args, dt, out_dt, attrs):
    (x,) = args
    zero, one = scalar_const(0, dt), scalar_const(1, dt)
    if dtypes.is_float(dt):
        pos, neg = cmpf("ogt", x, zero), cmpf("olt", x, zero)
        # x itself where it is 0, -0 or NaN
        return arith.SelectOp(pos, one, arith.SelectOp(neg, scalar_const(-1, dt),
                                                       x).result).result
    if dtypes.is_unsigned(dt):
        return arith.SelectOp(cmpi("ne", x, zero), one, zero).result
    pos, neg = cmpi("sgt", x, zero), cmpi("slt", x, zero)
    return arith.SelectOp(pos, one, arith.SelectOp(neg, scalar_const(-1, dt),
                                                   zero).result).result


@scalar("not")
def _not(args, dt, out_dt, attrs):
    return arith.XOrIOp(args[0], all_ones(dt) if not dtypes.is_bool(dt)
                        else scalar_const(True, dt)).result


@scalar("is_finite")
def _is_finite(args, dt, out_dt, attrs):
    x = args[0]
    return cmpf("one", math_d.AbsFOp(x).result, scalar_const(np.inf, dt))


@scalar("select")
def _scalar_select(args, dt, out_dt, attrs):
    return arith.SelectOp(*args).result


@scalar("convert")
def _scalar_convert(args, dt, out_dt, attrs):
    return convert_scalar(args[0], dt, out_dt)


scalar("floor")(math_op(math_d.FloorOp))
scalar("ceil")(math_op(math_d.CeilOp))


# --- lowering: complex emitters -------------------------------------------------------------

# The ops the complex dialect has, one each.
for _name, _op in {"add": complex_d.AddOp, "sub": complex_d.SubOp, "mul": complex_d.MulOp,
                   "neg": complex_d.NegOp, "eq": complex_d.EqualOp,
                   "ne": complex_d.NotEqualOp}.items():
    complex_rule(_name)(lambda p, args, dt, out_dt, _op=_op: _op(*args).result)


@complex_only_rule("conj")
def _complex_conj(p, args, dt, out_dt):
    return complex_d.ConjOp(args[0]).result


@complex_only_rule("real")
def _complex_real(p, args, dt, out_dt):
    return real_part(args[0])


@complex_only_rule("imag")
def _complex_imag(p, args, dt, out_dt):
    return imag_part(args[0])


@complex_only_rule("complex")
def _complex_create(p, args, dt, out_dt):
    return make_complex(args[0], args[1], out_dt)


@complex_rule("div")
def _complex_div(p, args, dt, out_dt):
    (x, y) = args
    return make_complex(*div_parts(p, real_part(x), imag_part(x), real_part(y), imag_part(y)), dt)


@complex_rule("abs")
def _complex_abs(p, args, dt, out_dt):
    (z,) = args
    return hypot(p, real_part(z), imag_part(z))


@complex_rule("sign")
def _complex_sign(p, args, dt, out_dt):
    """z / |z| and 0 at 0 (NumPy 2's and JAX's), with NumPy's infinities: +-1 along an
    infinite part when the other is finite or NaN, NaN when both are infinite."""
    (z,) = args
    x, y = real_part(z), imag_part(z)
    r = hypot(p, x, y)
    zero = p.eq0(r)
    safe = p.sel(zero, p.c(1.0), r)
    re_, im_ = p.div(x, safe), p.div(y, safe)
    re_, im_ = p.sel(zero, p.c(0.0), re_), p.sel(zero, p.c(0.0), im_)
    one, nothing, nan = p.c(1.0), p.c(0.0), p.c(np.nan)
    unit_x = p.sel(p.cmp("ogt", x, nothing), one, p.c(-1.0))
    unit_y = p.sel(p.cmp("ogt", y, nothing), one, p.c(-1.0))
    x_inf, y_inf = p.isinf(x), p.isinf(y)
    inf_re = p.sel(x_inf, p.sel(y_inf, nan, unit_x), nothing)
    inf_im = p.sel(x_inf, p.sel(y_inf, nan, nothing), unit_y)
    infinite = p.isinf(r)
    return make_complex(p.sel(infinite, inf_re, re_), p.sel(infinite, inf_im, im_), dt)


# --- value bounds (ember-value-ranges, ember/rules/ranges.py) ------------------------------

@value_bound("add", "sub")
@known
def _sum_bound(bounds, attrs):
    return bounds[0] + bounds[1]


@value_bound("mul")
@known
def _product_bound(bounds, attrs):
    return bounds[0] * bounds[1]


@value_bound("neg", "abs", "max", "min")
@known
def _operand_bound(bounds, attrs):
    return max(bounds)


@value_bound("floor", "ceil", "round")
@known
def _rounded_bound(bounds, attrs):
    return bounds[0] + 1.0


@value_bound("select")
def _select_bound(bounds, attrs):    # (whatever the predicate's)
    return None if None in bounds[1:] else max(bounds[1:])


@value_bound("convert")
@known
def _convert_bound(bounds, attrs):     # (rounded to a float of 10 bits or more)
    return bounds[0] * (1 + 2 ** -10) if np.dtype(attrs["new_dtype"]).kind == "f" else None


# --- differentiation -----------------------------------------------------------------------

@jvp("abs")
def _jvp_abs(ad, op, x, out, t, attrs):
    x, y = x[0], out[0]
    if not dtypes.is_complex(aval_of(x).dtype):
        # JAX's select(x >= 0, t, -t), slope 1 at 0.
        return [scale(ad, t[0], primal(ad, "select", primal(ad, "ge", x, const(ad, 0, x)),
                                    const(ad, 1, x), const(ad, -1, x)))]
    # Complex x (JAX's rule): Re(t conj(x) / |x|), with |x| = 0 read as 1 (slope 0 there).
    safe = primal(ad, "select", primal(ad, "eq", y, const(ad, 0, y)), const(ad, 1, y), y)
    d = primal(ad, "div", primal(ad, "conj", x),
               primal(ad, "convert", safe, new_dtype=aval_of(x).dtype))
    return [ad.linear("real", [ad.linear("mul", [t[0], d])])]


@jvp("neg")
def _jvp_neg(ad, op, x, out, t, attrs):
    return [ad.linear("neg", [t[0]])]


@jvp("convert")
def _jvp_convert(ad, op, x, out, t, attrs):
    if not (dtypes.is_float(attrs["new_dtype"]) or dtypes.is_complex(attrs["new_dtype"])):
        return [None]
    return [ad.linear("convert", [t[0]], new_dtype=attrs["new_dtype"])]


@jvp("real", "imag", "conj")
def _jvp_parts(ad, op, x, out, t, attrs):
    return [ad.linear(op.name.split(".")[1], [t[0]])]


@jvp("add")
def _jvp_add(ad, op, x, out, t, attrs):
    return [add_tangents(ad, t[0], t[1])]


@jvp("sub")
def _jvp_sub(ad, op, x, out, t, attrs):
    neg = None if t[1] is None else ad.linear("neg", [t[1]])
    return [add_tangents(ad, t[0], neg)]


@jvp("mul")
def _jvp_mul(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("mul", [t[0], x[1]])
    b = None if t[1] is None else ad.linear("mul", [x[0], t[1]])
    return [add_tangents(ad, a, b)]


@jvp("div")
def _jvp_div(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("div", [t[0], x[1]])
    b = None
    if t[1] is not None:     # -t_y * out / y
        b = ad.linear("mul", [t[1], primal(ad, "neg", primal(ad, "div", out[0], x[1]))])
    return [add_tangents(ad, a, b)]


@jvp("max", "min")
def _jvp_max_min(ad, op, x, out, t, attrs):
    a = None if t[0] is None else scale(ad, t[0], balanced_eq(ad, x[0], out[0], x[1]))
    b = None if t[1] is None else scale(ad, t[1], balanced_eq(ad, x[1], out[0], x[0]))
    return [add_tangents(ad, a, b)]


@jvp("rem")
def _jvp_rem(ad, op, x, out, t, attrs):
    a = t[0]
    b = None
    if t[1] is not None:     # -trunc(x / y)
        q = primal(ad, "div", x[0], x[1])
        trunc = primal(ad, "mul", primal(ad, "sign", q), primal(ad, "floor", primal(ad, "abs", q)))
        b = scale(ad, t[1], primal(ad, "neg", trunc))
    return [add_tangents(ad, a, b)]


@jvp("complex")
def _jvp_complex(ad, op, x, out, t, attrs):
    re = t[0] if t[0] is not None else ad.zeros(x[0])
    im = t[1] if t[1] is not None else ad.zeros(x[1])
    return [ad.linear("complex", [re, im])]


@jvp("select")
def _jvp_select(ad, op, x, out, t, attrs):
    if t[1] is None and t[2] is None:
        return [None]
    a = t[1] if t[1] is not None else ad.zeros(x[1])
    b = t[2] if t[2] is not None else ad.zeros(x[2])
    return [ad.linear("select", [x[0], a, b])]


@transpose("add")
def _transpose_add(tc, op, cts, lin, attrs):
    return [cts[0], cts[0]]


@transpose("sub")
def _transpose_sub(tc, op, cts, lin, attrs):
    return [cts[0], tc.emit("neg", [cts[0]]) if lin[1] else None]


@transpose("mul")
def _transpose_mul(tc, op, cts, lin, attrs):
    if lin[0] and lin[1]:
        raise AssertionError("a product of two tangents is not linear")
    if lin[0]:
        return [tc.emit("mul", [cts[0], op.operands[1]]), None]
    return [None, tc.emit("mul", [op.operands[0], cts[0]])]


@transpose("div")
def _transpose_div(tc, op, cts, lin, attrs):
    assert not lin[1], "a tangent in a denominator is not linear"
    return [tc.emit("div", [cts[0], op.operands[1]]), None]


@transpose("convert")
def _transpose_convert(tc, op, cts, lin, attrs):
    return [tc.emit("convert", [cts[0]], new_dtype=aval_of(op.operands[0]).dtype)]


@transpose("real")
def _transpose_real(tc, op, cts, lin, attrs):
    return [tc.emit("complex", [cts[0], tc.zeros(aval_of(cts[0]))])]


@transpose("imag")
def _transpose_imag(tc, op, cts, lin, attrs):
    return [tc.emit("complex", [tc.zeros(aval_of(cts[0])), tc.emit("neg", [cts[0]])])]


@transpose("complex")
def _transpose_complex(tc, op, cts, lin, attrs):
    return [tc.emit("real", [cts[0]]), tc.emit("imag", [tc.emit("neg", [cts[0]])])]


@transpose("conj")
def _transpose_conj(tc, op, cts, lin, attrs):
    return [tc.emit("conj", [cts[0]])]


@transpose("select")
def _transpose_select(tc, op, cts, lin, attrs):
    pred = op.operands[0]
    zeros = tc.zeros(aval_of(cts[0]))
    return [None, tc.emit("select", [pred, cts[0], zeros]) if lin[1] else None,
            tc.emit("select", [pred, zeros, cts[0]]) if lin[2] else None]


transpose("neg")(same_op_transpose)
NOT_DIFFERENTIABLE.update(f"ember.{n}" for n in (
    "sign", "floor", "ceil", "round", "not", "is_finite", "and", "or", "xor", *COMPARE))
