"""Lowering rules: ember op name -> function emitting linalg/tensor/arith/math IR.

A rule gets a :class:`LowerCall` (the op's new operands, its ember-level avals and decoded
attributes) and returns the replacement values. Elementwise ops share one rule built from a
scalar emitter each (as JAX's ``defvectorized`` shares batching), so a new elementwise op
needs only its scalar body. Unsigned integers become signless here; ops pick their unsigned
arith variants from the avals.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ember import dtypes
from ember._mlir import (
    arith,
    complex_d,
    element_type,
    func,
    ir,
    linalg,
    math_d,
    scf,
    signless,
    tensor,
    util,
)
from ember.core import ShapedArray
from ember.rules.base import OPS, decode_attr

LOWERINGS: dict[str, Callable] = {}
# Elementwise op name -> scalar emitter of complex operands (``lower_complex``): complex64
# and complex128 are computed on (real, imaginary) pairs of float32/float64.
COMPLEX_SCALAR: dict[str, Callable] = {}


class _Scalars(dict):
    """Elementwise op name -> scalar emitter ``fn(args, in_dtype, out_dtype, attrs)``; a
    name with a complex emitter gives one that picks it for complex operands (or a complex
    result: a conversion to complex), so every caller (fusions, reductions, scans, loops)
    handles complex operands without a check of its own."""

    def __getitem__(self, name):
        fn = dict.__getitem__(self, name)
        cx = COMPLEX_SCALAR.get(name)
        if cx is None:
            return fn

        def emit(args, dt, out_dt, attrs):
            if dtypes.is_complex(dt) or dtypes.is_complex(out_dt):
                return cx(args, dt, out_dt, attrs)
            return fn(args, dt, out_dt, attrs)
        return emit


SCALAR: dict[str, Callable] = _Scalars()   # elementwise op name -> scalar emitter


@dataclass(frozen=True)
class Traits:
    """What the target's arithmetic offers (``ember-to-linalg`` options, set while it runs):
    ``float64``: it computes in float64, which some float32 functions use for precision;
    ``exact_division``: its signed integer division and remainder are exact at the type's
    minimum (the CPU's; IREE's SPIR-V lowering goes through abs: INT32_MIN // 3 was 1 off)
    and its float remainder is exact (SPIR-V's OpFRem is not for large quotients);
    ``outer_reductions``: a reduction along leading axes may be fused with what reads it
    (not on Vulkan: ``to_linalg`` puts a barrier after it);
    ``exact_rounding``: float arithmetic is rounded as written (not on Vulkan: its drivers
    may reassociate float adds, as Mesa's does, unless SPIR-V marks them NoContraction,
    which IREE never does: ``(x + 2**23) - 2**23`` came out as ``x`` on lavapipe): ember's
    float32 log1p is computed without cancellation there."""

    float64: bool = True
    exact_division: bool = True
    outer_reductions: bool = True
    exact_rounding: bool = True


TRAITS = contextvars.ContextVar("ember_lowering_traits", default=Traits())  # noqa: B039 (frozen)


@dataclass
class LowerCall:
    op: ir.Operation
    operands: list[ir.Value]
    in_avals: list[ShapedArray]
    out_avals: list[ShapedArray]
    attrs: dict
    options: dict = field(default_factory=dict)   # the lowering pass's options


def lowering(*names):
    def deco(fn):
        for n in names:
            LOWERINGS[f"ember.{n}"] = fn
        return fn
    return deco


# --- small builders -----------------------------------------------------------------------

def elem(dtype) -> ir.Type:
    return signless(element_type(dtype))


def ttype(aval: ShapedArray) -> ir.Type:
    return ir.RankedTensorType.get(list(aval.shape), elem(aval.dtype))


def to_index(v: ir.Value, dtype) -> ir.Value:
    """The integer scalar ``v`` of ``dtype`` as an ``index`` (zero-extended if unsigned)."""
    unsigned = dtypes.is_unsigned(dtype) or dtypes.is_bool(dtype)
    cast = arith.IndexCastUIOp if unsigned else arith.IndexCastOp
    return cast(ir.IndexType.get(), v).result


def extract_index(t: ir.Value, dtype) -> ir.Value:
    """The rank-0 integer tensor ``t`` of ``dtype`` as an ``index`` on the host (a loop bound, a
    slice start). A narrow integer is widened to 32 bits by a tensor op first: IREE 3.13's host
    code zero-extends an i8/i16 in a signed ``index_cast`` (an int8 start of -3 became 253),
    and widening the extracted scalar instead is folded back into that cast."""
    if np.dtype(dtype).itemsize < 4:
        i32 = ir.IntegerType.get_signless(32)
        ext = arith.ExtUIOp if dtypes.is_unsigned(dtype) or dtypes.is_bool(dtype) \
            else arith.ExtSIOp
        (t,) = generic([t], [identity_map(0)], [tensor.EmptyOp([], i32).result],
                       [identity_map(0)], [], lambda x, _: [ext(i32, x).result])
        dtype = np.dtype(np.uint32 if dtypes.is_unsigned(dtype) else np.int32)
    return to_index(tensor.ExtractOp(t, []).result, dtype)


def scalar_const(value, dtype) -> ir.Value:
    t = elem(dtype)
    if dtypes.is_complex(dtype):
        part = ir.ComplexType(t).element_type
        value = complex(value)
        return complex_d.ConstantOp(t, ir.ArrayAttr.get([
            ir.FloatAttr.get(part, value.real), ir.FloatAttr.get(part, value.imag)])).result
    if dtypes.is_float(dtype):
        return arith.ConstantOp(t, ir.FloatAttr.get(t, float(value))).result
    if dtypes.is_bool(dtype):
        return arith.ConstantOp(t, ir.IntegerAttr.get(t, int(bool(value)))).result
    value = int(value)
    bits = np.dtype(dtype).itemsize * 8
    if value >= 2 ** (bits - 1):          # unsigned values above the signed range
        value -= 2 ** bits
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, value)).result


def empty(aval: ShapedArray) -> ir.Value:
    return tensor.EmptyOp(list(aval.shape), elem(aval.dtype)).result


def filled(aval: ShapedArray, value) -> ir.Value:
    return linalg.fill(scalar_const(value, aval.dtype), outs=[empty(aval)])


def identity_map(rank: int) -> ir.AffineMap:
    return ir.AffineMap.get_identity(rank)


def dims_map(num_dims: int, exprs) -> ir.AffineMap:
    """An affine map from num_dims loop dims; exprs are dim indices or ("const", c)."""
    out = []
    for e in exprs:
        if isinstance(e, tuple):
            out.append(ir.AffineConstantExpr.get(e[1]))
        else:
            out.append(ir.AffineDimExpr.get(e))
    return ir.AffineMap.get(num_dims, 0, out)


_ITER = {}


def _iterator(kind: str) -> ir.Attribute:
    if kind not in _ITER or _ITER[kind].context is not ir.Context.current:
        _ITER[kind] = ir.Attribute.parse(f"#linalg.iterator_type<{kind}>")
    return _ITER[kind]


def generic(inputs, input_maps, inits, output_maps, iterators, body) -> list[ir.Value]:
    """Build a ``linalg.generic``; ``body(*scalars)`` returns the yielded scalar values."""
    maps = [ir.AffineMapAttr.get(m) for m in list(input_maps) + list(output_maps)]
    op = linalg.GenericOp([v.type for v in inits], list(inputs), list(inits),
                          ir.ArrayAttr.get(maps),
                          ir.ArrayAttr.get([_iterator(k) for k in iterators]))
    arg_types = [ir.RankedTensorType(v.type).element_type for v in list(inputs) + list(inits)]
    block = op.regions[0].blocks.append(*arg_types)
    with ir.InsertionPoint(block):
        linalg.YieldOp(list(body(*block.arguments)))
    return list(op.results)


def index_of(dim: int, dtype) -> ir.Value:
    """The current loop index along ``dim`` inside a generic body, as ``dtype``."""
    idx = linalg.IndexOp(dim).result
    if not dtypes.is_float(dtype):
        return arith.IndexCastOp(elem(dtype), idx).result
    i64 = arith.IndexCastOp(ir.IntegerType.get_signless(64), idx).result
    return convert_scalar(i64, np.dtype(np.int64), np.dtype(dtype))   # (bfloat16 by hand)


# --- elementwise --------------------------------------------------------------------------

def scalar(*names):
    def deco(fn):
        for n in names:
            SCALAR[n] = fn
            LOWERINGS[f"ember.{n}"] = lower_elementwise
        return fn
    return deco


def lower_elementwise(c: LowerCall) -> list[ir.Value]:
    name = c.op.name.split(".", 1)[1]
    out = c.out_avals[0]
    in_dtype = c.in_avals[0].dtype if c.in_avals else out.dtype
    rank = len(out.shape)
    return generic(c.operands, [identity_map(rank)] * len(c.operands), [empty(out)],
                   [identity_map(rank)], ["parallel"] * rank,
                   lambda *a: [emit_scalar(name, list(a[:len(c.operands)]), in_dtype,
                                           out.dtype, c.attrs)])


def emit_scalar(name: str, args, in_dt, out_dt, attrs) -> ir.Value:
    """``SCALAR[name]``, with bfloat16 arithmetic done in float32 and rounded to bfloat16 after
    each op (to nearest even, by hand): IREE's CPU code otherwise kept float32 precision
    across a fusion's ops ((1 + 2**-9) - 1 in bfloat16 gave 2**-9; JAX and NumPy give 0)."""
    if out_dt != dtypes.bfloat16 or "exact_bf16" in OPS[f"ember.{name}"].traits:
        return SCALAR[name](args, in_dt, out_dt, attrs)
    f32 = ir.F32Type.get()
    bf16 = ir.BF16Type.get()
    wide = [arith.ExtFOp(f32, a).result if a.type == bf16 else a for a in args]
    in_dt = np.dtype(np.float32) if in_dt == dtypes.bfloat16 else in_dt
    return round_to_bf16(SCALAR[name](wide, in_dt, np.dtype(np.float32), attrs))


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


def _cmpi(pred: str, a, b):
    return arith.CmpIOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                           _CMPI[pred]), a, b).result


def _cmpf(pred: str, a, b):
    return arith.CmpFOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                           _CMPF[pred]), a, b).result


_CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7,
         "ugt": 8, "uge": 9}
_CMPF = {"false": 0, "oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "ord": 7,
         "ueq": 8, "ugt": 9, "uge": 10, "ult": 11, "ule": 12, "une": 13, "uno": 14}


def _make_compare(name):
    def emit(args, dt, out_dt, attrs):
        a, b = args
        if dtypes.is_float(dt):
            return _cmpf({"eq": "oeq", "ne": "une"}.get(name, "o" + name), a, b)
        if name in ("eq", "ne"):
            return _cmpi(name, a, b)
        # i1 is signed in arith (true == -1): compare bools as unsigned.
        prefix = "u" if dtypes.is_unsigned(dt) or dtypes.is_bool(dt) else "s"
        return _cmpi(prefix + name, a, b)
    return emit


for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    SCALAR[_n] = _make_compare(_n)
    LOWERINGS[f"ember.{_n}"] = lower_elementwise


def _int_div_rem(args, dt, is_div: bool):
    """Integer division and remainder that never trap: XLA's semantics for x/0 and MIN/-1."""
    a, b = args
    zero, one = scalar_const(0, dt), scalar_const(1, dt)
    b_zero = _cmpi("eq", b, zero)
    if dtypes.is_unsigned(dt):
        safe = arith.SelectOp(b_zero, one, b).result
        q = (arith.DivUIOp if is_div else arith.RemUIOp)(a, safe).result
        return arith.SelectOp(b_zero, _all_ones(dt) if is_div else a, q).result
    minus_one = scalar_const(-1, dt)
    b_m1 = _cmpi("eq", b, minus_one)
    safe = arith.SelectOp(arith.OrIOp(b_zero, b_m1).result, one, b).result
    if is_div:
        q = arith.DivSIOp(a, safe).result
        q = arith.SelectOp(b_m1, arith.SubIOp(zero, a).result, q).result
        return arith.SelectOp(b_zero, minus_one, q).result
    r = arith.RemSIOp(a, safe).result
    r = arith.SelectOp(b_m1, zero, r).result
    return arith.SelectOp(b_zero, a, r).result



def scf_while(init, cond, body) -> list[ir.Value]:
    """An ``scf.while`` over the values ``init``: ``cond(block)`` builds (at the end of the
    block, whose arguments are the current values) the i1 that continues it, ``body(block)``
    the next values."""
    types = [v.type for v in init]
    op = ir.Operation.create("scf.while", results=types, operands=list(init), regions=2)
    before = op.regions[0].blocks.append(*types)
    with ir.InsertionPoint(before):
        scf.ConditionOp(cond(before), list(before.arguments))
    after = op.regions[1].blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.YieldOp(body(after))
    return list(op.results)

def _all_ones(dt):
    return scalar_const(-1, np.dtype(f"int{np.dtype(dt).itemsize * 8}"))


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
    a_neg, b_neg = _cmpi("slt", a, zero), _cmpi("slt", b, zero)
    b_zero = _cmpi("eq", b, zero)

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
        r = arith.SelectOp(_cmpf("olt", r, c(0.0)), arith.AddFOp(r, d).result, r).result
        return arith.SelectOp(_cmpf("oge", r, d), arith.SubFOp(r, d).result, r).result

    ax, ay = math_d.AbsFOp(x).result, math_d.AbsFOp(y).result
    finite = arith.AndIOp(_cmpf("olt", ax, c(np.inf)), _cmpf("ogt", ay, c(0.0))).result
    regular = arith.AndIOp(finite, _cmpf("olt", ay, c(np.inf))).result
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

    (r,) = scf_while([r0], lambda block: _cmpi("sgt", k_of(block), int_(0)), body)
    r = math_d.CopySignOp(step(r, d), x).result
    # fmod(x, +-inf) is x for a finite x; an infinite x, a zero y or a NaN give NaN
    keep_x = arith.AndIOp(_cmpf("olt", ax, c(np.inf)), _cmpf("oeq", ay, c(np.inf))).result
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
        return loop([m, e], lambda m, e: arith.AndIOp(_cmpi("slt", m, lead),
                                                      _cmpi("ne", m, c(0))).result,
                    lambda m, e: [arith.ShLIOp(m, one).result, arith.SubIOp(e, one).result])

    def split(a):
        e = arith.ShRUIOp(a, c(23)).result
        normal = _cmpi("ne", e, c(0))
        m = arith.SelectOp(normal, arith.OrIOp(arith.AndIOp(a, c(0x7FFFFF)).result,
                                               lead).result, a).result
        return normalize(m, arith.MaxSIOp(e, one).result)

    def reduce(m, my):      # m mod my for m < 2 my
        return arith.SelectOp(_cmpi("sge", m, my), arith.SubIOp(m, my).result, m).result

    (mx, ex), (my, ey) = split(ax), split(ay)
    mx, ex = loop([mx, ex], lambda m, e: _cmpi("sgt", e, ey),
                  lambda m, e: [arith.ShLIOp(reduce(m, my), one).result,
                                arith.SubIOp(e, one).result])
    mx, ex = normalize(reduce(mx, my), ex)
    normal = arith.OrIOp(arith.ShLIOp(ex, c(23)).result, arith.AndIOp(mx, c(0x7FFFFF)).result)
    subnormal = arith.ShRUIOp(mx, arith.SubIOp(one, ex).result).result   # exact: no bits lost
    bits = arith.SelectOp(_cmpi("sge", ex, one), normal.result, subnormal).result
    bits = arith.SelectOp(_cmpi("eq", mx, c(0)), c(0), bits).result
    sign = arith.AndIOp(ux, c(-0x80000000)).result
    r = arith.BitcastOp(elem(f32), arith.OrIOp(sign, bits).result).result
    # NaN for a zero or NaN y or a non-finite x; x itself when |x| < |y| (y = +-inf too)
    nan = arith.OrIOp(arith.OrIOp(_cmpi("eq", ay, c(0)), _cmpi("sge", ax, c(0x7F800000))).result,
                      _cmpi("sgt", ay, c(0x7F800000))).result
    r = arith.SelectOp(_cmpi("slt", ax, ay), x, r).result
    return arith.SelectOp(nan, scalar_const(np.nan, f32), r).result


def _in_f32(fn):
    """Compute a float function in f32 for f16/bf16 operands (math lowering wants f32)."""
    def emit(args, dt, out_dt, attrs):
        if np.dtype(dt).itemsize < 4:
            f32 = ir.F32Type.get()
            ext = [arith.ExtFOp(f32, a).result for a in args]
            return arith.TruncFOp(elem(out_dt), fn(ext, np.dtype("float32"), attrs)).result
        return fn(args, dt, attrs)
    return emit


def _math(op_cls):
    return _in_f32(lambda args, dt, attrs: op_cls(*args).result)


for _n, _cls in {"exp": math_d.ExpOp, "log": math_d.LogOp,
                 "sqrt": math_d.SqrtOp, "rsqrt": math_d.RsqrtOp,
                 "floor": math_d.FloorOp,
                 "ceil": math_d.CeilOp}.items():
    SCALAR[_n] = _math(_cls)
    LOWERINGS[f"ember.{_n}"] = lower_elementwise


@scalar("expm1")
@_in_f32
def _expm1(args, dt, attrs):
    """float64: Kahan's (u - 1) x / log u with u = exp x (IREE's float64 expm1 kept only
    about 11 digits near zero: expm1(1e-5) was 1e-11 off, relatively)."""
    (x,) = args
    if np.dtype(dt).itemsize < 8:
        return math_d.ExpM1Op(x).result
    one = scalar_const(1.0, dt)
    u = math_d.ExpOp(x).result
    um1 = arith.SubFOp(u, one).result
    r = arith.DivFOp(arith.MulFOp(um1, x).result, math_d.LogOp(u).result).result
    r = arith.SelectOp(_cmpf("oeq", u, one), x, r).result      # |x| below half an ulp of 1
    # Past |x| = 1/2, exp(x) - 1 cancels little (and (u - 1) x would overflow first).
    return arith.SelectOp(_cmpf("olt", math_d.AbsFOp(x).result, scalar_const(0.5, dt)), r,
                          um1).result


@scalar("log1p")
@_in_f32
def _log1p(args, dt, attrs):
    """float64: Kahan's log(u) x / (u - 1) with u = 1 + x (IREE's float64 log1p kept only
    about 11 digits near zero)."""
    (x,) = args
    if np.dtype(dt).itemsize < 8 and not TRAITS.get().exact_rounding:
        return _log1p_series(x, dt)
    if np.dtype(dt).itemsize < 8:
        return math_d.Log1pOp(x).result
    one = scalar_const(1.0, dt)
    u = arith.AddFOp(one, x).result
    r = arith.DivFOp(arith.MulFOp(math_d.LogOp(u).result, x).result,
                     arith.SubFOp(u, one).result).result
    r = arith.SelectOp(_cmpf("oeq", u, one), x, r).result
    # u = 0 (x = -1), u = inf, NaN and x < -1: log(u)'s own answers
    plain = arith.OrIOp(_cmpf("ole", u, scalar_const(0.0, dt)),
                        _cmpf("uge", u, scalar_const(np.inf, dt))).result
    return arith.SelectOp(plain, math_d.LogOp(u).result, r).result


def _log1p_series(x, dt):
    """float32 log1p without cancellation, for targets that reassociate (IREE's log1p is
    log(u) x / (u - 1), u = 1 + x, and Mesa folds u - 1 to x: log1p(1e-4) was 1.6e-8 off,
    asinh(5e-5) 1e-3 relatively): with s = x / (2 + x), log1p x = 2 atanh s, whose odd
    series to s^11 is within an ulp for |s| < 0.2 (x in (-1/3, 1/2)); log(1 + x) beyond
    (and for -1, infinities and NaN)."""
    two = scalar_const(2.0, dt)
    s = arith.DivFOp(x, arith.AddFOp(two, x).result).result
    z = arith.MulFOp(s, s).result
    series = arith.MulFOp(arith.MulFOp(two, s).result,
                          _poly(z, (1.0, 1 / 3, 1 / 5, 1 / 7, 1 / 9, 1 / 11), dt)).result
    plain = math_d.LogOp(arith.AddFOp(scalar_const(1.0, dt), x).result).result
    small = _cmpf("olt", math_d.AbsFOp(s).result, scalar_const(0.2, dt))
    return arith.SelectOp(small, series, plain).result


@scalar("atan2")
@_in_f32
def _atan2(args, dt, attrs):
    # The result has the sign of y, -0.0 included (atan2(-0.0, -1.0) == -pi); IREE's
    # expansion of math.atan2 loses the sign of a zero y.
    # It also gives NaN where y and x are both zeros or both infinities; C's atan2 does not.
    y, x = args
    zero, inf = scalar_const(0.0, dt), scalar_const(np.inf, dt)
    x_neg = _signbit(x, dt)
    r = _atan2_abs_y(y, x, x_neg, dt)
    both_zero = arith.AndIOp(_cmpf("oeq", y, zero), _cmpf("oeq", x, zero)).result
    r = arith.SelectOp(both_zero, arith.SelectOp(x_neg, scalar_const(np.pi, dt),
                                                 zero).result, r).result
    both_inf = arith.AndIOp(_cmpf("oeq", math_d.AbsFOp(y).result, inf),
                            _cmpf("oeq", math_d.AbsFOp(x).result, inf)).result
    r = arith.SelectOp(both_inf, arith.SelectOp(x_neg, scalar_const(3 * np.pi / 4, dt),
                                                scalar_const(np.pi / 4, dt)).result, r).result
    # an infinite y over a finite x is pi/2 rounded once (pi - pi/2 for a negative x was an
    # ulp below it)
    y_inf = arith.AndIOp(_cmpf("oeq", math_d.AbsFOp(y).result, inf),
                         _cmpf("olt", math_d.AbsFOp(x).result, inf)).result
    r = arith.SelectOp(y_inf, scalar_const(np.pi / 2, dt), r).result
    return math_d.CopySignOp(r, y).result


# fdlibm's atan (IREE calls a libm atan2 it cannot link for float64, and its float32
# polynomial was 40 ulps off near 0.58): |x| is reduced to [0, 7/16) around atan(1/2),
# atan(1), atan(3/2) or atan(inf), then a degree-22 odd series (float32 rounds the same
# coefficients; the atan(c) are split into a high part and the rest in either type).
_ATAN_T = (3.33333333333329318027e-01, -1.99999999998764832476e-01,
           1.42857142725034663711e-01, -1.11111104054623557880e-01,
           9.09088713343650656196e-02, -7.69187620504482999495e-02,
           6.66107313738753120669e-02, -5.83357013379057348645e-02,
           4.97687799461593236017e-02, -3.65315727442169155270e-02,
           1.62858201153657823623e-02)
_ATAN_HI = (4.63647609000806093515e-01, 7.85398163397448278999e-01,
            9.82793723247329054082e-01, 1.57079632679489655800e+00)
_ATAN_LO = (2.26987774529616870924e-17, 3.06161699786838301793e-17,
            1.39033110312309984516e-17, 6.12323399573676603587e-17)


def _split(hi: float, lo: float, dt) -> tuple[float, float]:
    """hi + lo (a float64 pair) as dt's nearest value and the rest."""
    head = float(np.asarray(hi, dt))
    return head, float(np.asarray((hi - head) + lo, dt))


def _atan_positive(t, dt) -> ir.Value:
    """atan(t) for t >= 0 (inf included), as fdlibm's atan."""
    c = lambda v: scalar_const(v, dt)  # noqa: E731
    mul, add, sub, div = (lambda a, b: arith.MulFOp(a, b).result), \
        (lambda a, b: arith.AddFOp(a, b).result), (lambda a, b: arith.SubFOp(a, b).result), \
        (lambda a, b: arith.DivFOp(a, b).result)
    sel = lambda p, a, b: arith.SelectOp(p, a, b).result  # noqa: E731
    # each interval's reduced argument is num / den: one division, after the selects
    reduced = [(sub(mul(c(2.0), t), c(1.0)), add(c(2.0), t)), (sub(t, c(1.0)), add(t, c(1.0))),
               (sub(t, c(1.5)), add(c(1.0), mul(c(1.5), t))), (c(-1.0), t)]
    his, los = zip(*(_split(h, lo, dt) for h, lo in zip(_ATAN_HI, _ATAN_LO)))
    (num, den), hi, lo = reduced[3], c(his[3]), c(los[3])
    for i, bound in reversed(list(enumerate((0.6875, 1.1875, 2.4375)))):
        below = _cmpf("olt", t, c(bound))
        num, den = sel(below, reduced[i][0], num), sel(below, reduced[i][1], den)
        hi, lo = sel(below, c(his[i]), hi), sel(below, c(los[i]), lo)
    small = _cmpf("olt", t, c(0.4375))
    tr = div(sel(small, t, num), sel(small, c(1.0), den))
    z = mul(tr, tr)
    w = mul(z, z)
    s1 = mul(z, _poly(w, _ATAN_T[0::2], dt))
    s2 = mul(w, _poly(w, _ATAN_T[1::2], dt))
    s = mul(tr, add(s1, s2))
    return sel(small, sub(tr, s), sub(hi, sub(sub(s, lo), tr)))


def _atan2_abs_y(y, x, x_neg, dt) -> ir.Value:
    """atan2(|y|, x), as fdlibm's (the caller copies y's sign)."""
    z = _atan_positive(arith.DivFOp(math_d.AbsFOp(y).result, math_d.AbsFOp(x).result).result,
                       dt)
    pi, pi_lo = (scalar_const(v, dt)
                 for v in _split(3.1415926535897931160e+00, 1.2246467991473531772e-16, dt))
    left = arith.SubFOp(pi, arith.SubFOp(z, pi_lo).result).result
    return arith.SelectOp(x_neg, left, z).result


def _signbit(x, dt) -> ir.Value:
    bits = ir.IntegerType.get_signless(np.dtype(dt).itemsize * 8)
    ix = arith.BitcastOp(bits, x).result
    return arith.CmpIOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _CMPI["slt"]), ix,
                        arith.ConstantOp(bits, ir.IntegerAttr.get(bits, 0)).result).result


def _pow64_magnitude(ax, y) -> ir.Value:
    """|x| ** y for float64 as exp(y log|x|) with log|x| in two parts and the product y log|x|
    kept exactly (FMA): exp of the rounded product lost |y log x| ulps (1.2e-13 relative at
    10 ** 300.3). log|x| = e ln2 + 2 atanh(s), s = f / (2 + f), f = m - 1 (exact) for
    x = m 2^e, m in [sqrt(1/2), sqrt(2)); 2s is carried in two parts, the rest of the series
    (under 1% of it) in one. Zeros, subnormals, infinities and NaNs: IREE's powf."""
    dt = np.dtype("float64")
    f64, i64 = ir.F64Type.get(), ir.IntegerType.get_signless(64)

    def c(v):
        return scalar_const(v, dt)

    def int_(v):
        return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, v)).result
    add, sub, mul, div = (lambda a, b, op=op: op(a, b).result
                          for op in (arith.AddFOp, arith.SubFOp, arith.MulFOp, arith.DivFOp))

    def fma(a, b, d):
        return math_d.FmaOp(a, b, d).result
    bits = arith.BitcastOp(i64, ax).result
    e = arith.SubIOp(arith.ShRUIOp(bits, int_(52)).result, int_(1023)).result
    m = arith.BitcastOp(f64, arith.OrIOp(arith.AndIOp(bits, int_((1 << 52) - 1)).result,
                                         int_(1023 << 52)).result).result
    big = _cmpf("ogt", m, c(np.sqrt(2.0)))
    m = arith.SelectOp(big, mul(m, c(0.5)), m).result
    e = add(arith.SIToFPOp(f64, e).result, arith.SelectOp(big, c(1.0), c(0.0)).result)
    fr = sub(m, c(1.0))
    u = add(c(2.0), fr)
    u_lo = add(sub(c(2.0), u), fr)                  # 2 + f = u + u_lo exactly
    s_hi = div(fr, u)
    s_lo = div(sub(fma(arith.NegFOp(s_hi).result, u, fr), mul(s_hi, u_lo)), u)
    z = mul(s_hi, s_hi)
    # 2 atanh(s) - 2s = 2s sum_k z^k / (2k + 1); 13 terms reach 2^-66 at s = 0.1716
    tail = mul(mul(c(2.0), s_hi), mul(z, _poly(z, [1.0 / (2 * k + 1) for k in range(1, 14)],
                                                 dt)))
    # e ln2 (ln2_hi has 32 bits: e * ln2_hi is exact) + 2 s_hi, then the small parts
    a = mul(e, c(6.93147180369123816490e-01))
    b = mul(c(2.0), s_hi)
    h = add(a, b)
    bb = sub(h, a)
    err = add(sub(a, sub(h, bb)), sub(b, bb))       # Knuth's two-sum
    # 2 s_lo (1 + z): the series' derivative, 2 / (1 - z), applied to s_lo
    s_part = mul(mul(c(2.0), s_lo), add(c(1.0), z))
    lo = add(err, add(mul(e, c(1.90821492927058770002e-10)), add(s_part, tail)))
    hl = add(h, lo)
    ll = sub(lo, sub(hl, h))
    p = mul(y, hl)
    p_lo = fma(y, hl, arith.NegFOp(p).result)
    p_lo = fma(y, ll, p_lo)
    big_exp = math_d.ExpOp(p).result
    r = fma(big_exp, p_lo, big_exp)                 # exp(p) (1 + p_lo), |p_lo| <= 2^-43
    # exp(p) alone where it overflows or underflows (p_lo may be NaN where y log|x| did)
    inside = arith.AndIOp(_cmpf("olt", p, c(709.78)), _cmpf("ogt", p, c(-708.3))).result
    r = arith.SelectOp(inside, r, big_exp).result
    normal = arith.AndIOp(_cmpf("oge", ax, c(2.0 ** -1022)),
                          _cmpf("olt", ax, c(np.inf))).result
    return arith.SelectOp(normal, r, math_d.PowFOp(ax, y).result).result


@scalar("pow")
@_in_f32
def _pow(args, dt, attrs):
    """C's ``pow``: IREE expands ``math.powf`` as exp(y * log(x)), which is NaN for every
    negative base and for pow(x, 0), pow(1, y) with a NaN; mend the magnitude's sign and the
    exact cases around it. In float32 the product y * log(x) loses |y log x| ulps (2^126
    was 3e-6 off, FLT_MAX ** 1 overflowed): float32 powers are computed in float64 where
    the target has it (``TRAITS``), float64 ones with log|x| in two parts
    (``_pow64_magnitude``)."""
    x, y = args
    zero, one, half = (scalar_const(v, dt) for v in (0.0, 1.0, 0.5))
    inf, nan = scalar_const(np.inf, dt), scalar_const(np.nan, dt)
    ax, ay = math_d.AbsFOp(x).result, math_d.AbsFOp(y).result
    if np.dtype(dt).itemsize == 4 and TRAITS.get().float64:
        f64 = ir.F64Type.get()
        wide = math_d.PowFOp(arith.ExtFOp(f64, ax).result, arith.ExtFOp(f64, y).result).result
        mag = arith.TruncFOp(elem(dt), wide).result
    elif np.dtype(dt).itemsize == 8:
        mag = _pow64_magnitude(ax, y)
    else:
        mag = math_d.PowFOp(ax, y).result
    y_finite = _cmpf("one", ay, inf)
    y_int = arith.AndIOp(_cmpf("oeq", math_d.FloorOp(y).result, y), y_finite).result
    yh = arith.MulFOp(y, half).result
    y_odd = arith.AndIOp(y_int, _cmpf("une", math_d.FloorOp(yh).result, yh)).result
    r = arith.SelectOp(arith.AndIOp(_signbit(x, dt), y_odd).result, arith.NegFOp(mag).result,
                       mag).result
    # a finite negative base to a finite non-integral power
    x_neg_finite = arith.AndIOp(_cmpf("olt", x, zero),
                                _cmpf("ogt", x, scalar_const(-np.inf, dt))).result
    not_int = arith.XOrIOp(y_int, scalar_const(True, dtypes.bool_)).result
    r = arith.SelectOp(arith.AndIOp(x_neg_finite, arith.AndIOp(not_int, y_finite).result).result,
                       nan, r).result
    # pow(+-1, +-inf) == 1, pow(1, y) == 1, pow(x, +-0) == 1, NaNs included
    unit_inf = arith.AndIOp(_cmpf("oeq", ax, one), _cmpf("oeq", ay, inf)).result
    exact_one = arith.OrIOp(arith.OrIOp(unit_inf, _cmpf("oeq", x, one)).result,
                            _cmpf("oeq", y, zero)).result
    return arith.SelectOp(exact_one, one, r).result


def _poly(z, coeffs, dt):
    acc = scalar_const(coeffs[-1], dt)
    for c in reversed(coeffs[:-1]):
        acc = arith.AddFOp(scalar_const(c, dt), arith.MulFOp(z, acc).result).result
    return acc




@scalar("tanh")
@_in_f32
def _tanh(args, dt, attrs):
    """float64 tanh from expm1 (IREE links no libm tanh for float64): with t = expm1(-2|x|),
    tanh|x| = -t / (2 + t), accurate near zero too; the sign is copied back (-0.0 too)."""
    (x,) = args
    if np.dtype(dt).itemsize < 8:
        return math_d.TanhOp(x).result
    ax = math_d.AbsFOp(x).result
    t = math_d.ExpM1Op(arith.MulFOp(scalar_const(-2.0, dt), ax).result).result
    mag = arith.DivFOp(arith.NegFOp(t).result,
                       arith.AddFOp(scalar_const(2.0, dt), t).result).result
    # Near zero IREE's float64 expm1 loses digits: tanh's series is exact to 1 ulp there.
    z = arith.MulFOp(ax, ax).result
    series = arith.MulFOp(ax, _poly(z, (1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835,
                                        -1382 / 155925), dt)).result
    small = _cmpf("olt", ax, scalar_const(0.02, dt))
    mag = arith.SelectOp(small, series, mag).result
    return math_d.CopySignOp(mag, x).result


@scalar("logistic")
@_in_f32
def _logistic(args, dt, attrs):
    (x,) = args
    one = scalar_const(1.0, dt)
    e = math_d.ExpOp(arith.NegFOp(x).result).result
    return arith.DivFOp(one, arith.AddFOp(one, e).result).result


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
        pos, neg = _cmpf("ogt", x, zero), _cmpf("olt", x, zero)
        # x itself where it is 0, -0 or NaN
        return arith.SelectOp(pos, one, arith.SelectOp(neg, scalar_const(-1, dt),
                                                       x).result).result
    if dtypes.is_unsigned(dt):
        return arith.SelectOp(_cmpi("ne", x, zero), one, zero).result
    pos, neg = _cmpi("sgt", x, zero), _cmpi("slt", x, zero)
    return arith.SelectOp(pos, one, arith.SelectOp(neg, scalar_const(-1, dt),
                                                   zero).result).result


@scalar("not")
def _not(args, dt, out_dt, attrs):
    return arith.XOrIOp(args[0], _all_ones(dt) if not dtypes.is_bool(dt)
                        else scalar_const(True, dt)).result


@scalar("is_finite")
def _is_finite(args, dt, out_dt, attrs):
    x = args[0]
    return _cmpf("one", math_d.AbsFOp(x).result, scalar_const(np.inf, dt))


@scalar("select")
def _select(args, dt, out_dt, attrs):
    return arith.SelectOp(*args).result


@scalar("convert")
def _convert(args, dt, out_dt, attrs):
    return convert_scalar(args[0], dt, out_dt)


def convert_scalar(x: ir.Value, src, dst) -> ir.Value:
    """Convert a scalar between ember dtypes with NumPy's semantics."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    if dtypes.is_complex(src) or dtypes.is_complex(dst):
        return _convert_complex(x, src, dst)
    t = elem(dst)
    if dtypes.is_bool(dst):
        zero = scalar_const(0, src)
        return _cmpf("une", x, zero) if dtypes.is_float(src) else _cmpi("ne", x, zero)
    if dtypes.is_float(src) and dtypes.is_float(dst):
        if src.itemsize == dst.itemsize:  # f16 <-> bf16 through f32
            return arith.TruncFOp(t, arith.ExtFOp(ir.F32Type.get(), x).result).result
        return (arith.ExtFOp if dst.itemsize > src.itemsize else arith.TruncFOp)(t, x).result
    if dtypes.is_float(src):
        return _float_to_int(x, src, dst)
    unsigned_src = dtypes.is_unsigned(src) or dtypes.is_bool(src)
    if dtypes.is_float(dst):
        if dst == dtypes.bfloat16:
            # Through float32 (as ml_dtypes does), rounding by hand: LLVM turns sitofp/uitofp to
            # bf16 (and MLIR folds truncf(sitofp)) into calls of __truncsfbf2, which IREE's
            # linker does not have.
            f32 = ir.F32Type.get()
            wide = (arith.UIToFPOp if unsigned_src else arith.SIToFPOp)(f32, x).result
            return _f32_to_bf16_rne(wide)
        return (arith.UIToFPOp if unsigned_src else arith.SIToFPOp)(t, x).result
    if dst.itemsize > src.itemsize or dtypes.is_bool(src):
        return (arith.ExtUIOp if unsigned_src else arith.ExtSIOp)(t, x).result
    if dst.itemsize < src.itemsize:
        return arith.TruncIOp(t, x).result
    return x  # same width, signedness only


def _convert_complex(x: ir.Value, src, dst) -> ir.Value:
    """Conversions to and from complex, as NumPy's: a real value becomes (x, 0), a complex one
    keeps its real part (bool: either part non-zero)."""
    if dtypes.is_complex(src):
        part = dtypes.real_dtype(src)
        re_ = complex_d.ReOp(x).result
        if dtypes.is_bool(dst):
            zero = scalar_const(0.0, part)
            return arith.OrIOp(_cmpf("une", re_, zero),
                               _cmpf("une", complex_d.ImOp(x).result, zero)).result
        if dtypes.is_complex(dst):
            im_ = complex_d.ImOp(x).result
            dpart = dtypes.real_dtype(dst)
            return complex_d.CreateOp(elem(dst), convert_scalar(re_, part, dpart),
                                      convert_scalar(im_, part, dpart)).result
        return convert_scalar(re_, part, dst)
    part = dtypes.real_dtype(dst)
    re_ = convert_scalar(x, src, part)
    return complex_d.CreateOp(elem(dst), re_, scalar_const(0.0, part)).result


def _float_to_int(x: ir.Value, src, dst) -> ir.Value:
    """Truncate toward zero, saturating at the integer type's bounds, NaN to 0, as JAX on
    the CPU (LLVM's fptosi is poison out of range: 3e9 gave -128 as int8, 300.5 gave 127)."""
    if src.itemsize < 4:        # the bounds below are not halves
        x, src = arith.ExtFOp(ir.F32Type.get(), x).result, np.dtype("float32")
    info = np.iinfo(dst)
    unsigned = dtypes.is_unsigned(dst)
    top = src.type(2.0 ** (info.bits if unsigned else info.bits - 1))   # exact, out of range
    below = np.nextafter(top, src.type(0))                              # the largest in range
    low = arith.MaximumFOp(x, scalar_const(float(info.min), src)).result
    r = (arith.FPToUIOp if unsigned else arith.FPToSIOp)(
        elem(dst), arith.MinimumFOp(low, scalar_const(float(below), src)).result).result
    r = arith.SelectOp(_cmpf("oge", x, scalar_const(float(top), src)),
                       scalar_const(info.max, dst), r).result
    return arith.SelectOp(_cmpf("uno", x, x), scalar_const(0, dst), r).result


def round_to_bf16(x: ir.Value) -> ir.Value:
    """float32 -> bfloat16, to nearest even, NaN kept NaN (see :func:`_f32_to_bf16_rne`)."""
    nan = arith.ConstantOp(ir.BF16Type.get(), ir.FloatAttr.get(ir.BF16Type.get(),
                                                               float("nan"))).result
    return arith.SelectOp(_cmpf("uno", x, x), nan, _f32_to_bf16_rne(x)).result


def _f32_to_bf16_rne(x: ir.Value) -> ir.Value:
    """float32 -> bfloat16, round to nearest even, with integer ops (x is not NaN here)."""
    i32, i16 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(16)

    def c(v):
        return arith.ConstantOp(i32, ir.IntegerAttr.get(i32, v)).result
    bits = arith.BitcastOp(i32, x).result
    lsb = arith.AndIOp(arith.ShRUIOp(bits, c(16)).result, c(1)).result
    rounded = arith.AddIOp(bits, arith.AddIOp(c(0x7FFF), lsb).result).result
    high = arith.TruncIOp(i16, arith.ShRUIOp(rounded, c(16)).result).result
    return arith.BitcastOp(ir.BF16Type.get(), high).result


# --- creation -----------------------------------------------------------------------------

@lowering("constant")
def _lower_constant(c: LowerCall):
    value = c.attrs["value"]
    out = c.out_avals[0]
    if value.dtype == dtypes.bfloat16:   # the buffer protocol has no bf16: pass the bits
        value = value.view(np.uint16)
    value = value if value.flags.c_contiguous else value.copy(order="C")
    attr = ir.DenseElementsAttr.get(value, type=ttype(out))
    return [arith.ConstantOp(ttype(out), attr).result]


@lowering("iota")
def _lower_iota(c: LowerCall):
    out = c.out_avals[0]
    rank, dim = len(out.shape), c.attrs["dimension"]
    return generic([], [], [empty(out)], [identity_map(rank)], ["parallel"] * rank,
                   lambda _o: [index_of(dim, out.dtype)])


# --- shape ops ----------------------------------------------------------------------------

@lowering("broadcast_in_dim")
def _lower_broadcast(c: LowerCall):
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    dims = c.attrs["broadcast_dimensions"]
    rank = len(out.shape)
    exprs = [("const", 0) if xa.shape[i] == 1 and out.shape[d] != 1 else d
             for i, d in enumerate(dims)]
    return generic([x], [dims_map(rank, exprs)], [empty(out)], [identity_map(rank)],
                   ["parallel"] * rank, lambda a, _o: [a])


@lowering("reshape")
def _lower_reshape(c: LowerCall):
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    if xa.ndim == 0:     # a rank-0 tensor expands to all-ones shapes, with no groups
        return [tensor.ExpandShapeOp(ttype(out), x, reassociation([]), [], list(out.shape)).result]
    if out.ndim == 0:
        return [tensor.CollapseShapeOp(ttype(out), x, reassociation([])).result]
    flat = ShapedArray((xa.size,), xa.dtype)
    if xa.ndim != 1:
        x = tensor.CollapseShapeOp(ttype(flat), x, reassociation([list(range(xa.ndim))])).result
    if out.ndim != 1:
        x = tensor.ExpandShapeOp(ttype(out), x, reassociation([list(range(out.ndim))]), [],
                                 list(out.shape)).result
    return [x]


def reassociation(groups) -> ir.ArrayAttr:
    """The reassociation of a tensor.expand_shape/collapse_shape: lists of dims."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g])
                             for g in groups])


@lowering("transpose")
def _lower_transpose(c: LowerCall):
    out = c.out_avals[0]
    res = linalg.transpose(c.operands[0], outs=[empty(out)],
                           permutation=list(c.attrs["permutation"]))
    return [_value(res)]


def _value(res) -> ir.Value:
    """The result of a linalg builder, which returns the op or its value depending on arity."""
    if isinstance(res, ir.Value):
        return res
    if isinstance(res, ir.OpResultList):
        return res[0]
    return res.results[0]


@lowering("slice")
def _lower_slice(c: LowerCall):
    out = c.out_avals[0]
    strides = c.attrs["strides"] or (1,) * len(out.shape)
    if out.size == 0:   # extract_slice rejects offset 0 into an empty dimension
        return [empty(out)]
    starts = list(c.attrs["start_indices"])
    if all(s == 1 for s in strides):
        return [tensor.ExtractSliceOp(ttype(out), c.operands[0], [], [], [], starts,
                                      list(out.shape), list(strides)).result]
    # The box it spans, then a generic reading every stride-th element of it: IREE 3.13
    # failed to compile a strided extract_slice whose transpose another dispatch gathers
    # from ("LLVM Translation failed for operation: builtin.unrealized_conversion_cast").
    rank = len(out.shape)
    span = ShapedArray(tuple((n - 1) * st + 1 for n, st in zip(out.shape, strides)), out.dtype)
    box = tensor.ExtractSliceOp(ttype(span), c.operands[0], [], [], [], starts,
                                list(span.shape), [1] * rank).result
    read = ir.AffineMap.get(rank, 0, [ir.AffineExpr.get_mul(ir.AffineDimExpr.get(d),
                                                           ir.AffineConstantExpr.get(st))
                                      for d, st in enumerate(strides)])
    return generic([box], [read], [empty(out)], [identity_map(rank)], ["parallel"] * rank,
                   lambda v, _o: [v])


@lowering("concatenate")
def _lower_concatenate(c: LowerCall):
    out, dim = c.out_avals[0], c.attrs["dimension"]
    acc, offset = empty(out), 0
    for x, xa in zip(c.operands, c.in_avals):
        offsets = [offset if i == dim else 0 for i in range(len(out.shape))]
        acc = tensor.InsertSliceOp(x, acc, [], [], [], offsets, list(xa.shape),
                                   [1] * len(out.shape)).result
        offset += xa.shape[dim]
    return [acc]


@lowering("pad")
def _lower_pad(c: LowerCall):
    (x, value), (xa, _), out = c.operands, c.in_avals, c.out_avals[0]
    low, interior = c.attrs["low"], c.attrs["interior"]
    # Negative low/high crop the (interior-dilated) operand: crop whole elements first.
    start, size, offset = [], [], []
    for d, lo, n, it in zip(xa.shape, low, out.shape, interior):
        step = it + 1
        first = min(-(-max(-lo, 0) // step), d)       # first element that lands in the result
        end = min(d, max(-(-(n - lo) // step), 0))    # one past the last one
        start.append(first)
        size.append(max(end - first, 0))
        offset.append(min(lo + first * step, n))
    if dtypes.is_complex(out.dtype):
        # broadcast on the device: IREE 3.13 crashed (SIGSEGV) reading a complex128 value on
        # the host for the fill
        rank = len(out.shape)
        (init,) = generic([value], [ir.AffineMap.get(rank, 0, [])], [empty(out)],
                          [identity_map(rank)], ["parallel"] * rank, lambda v, _o: [v])
    elif isinstance(value.owner, ir.OpView | ir.Operation) and \
            value.owner.name == "arith.constant" and 0 not in size:
        # The operand is written into the padding value in place: a fill of a constant (two
        # pads' fills merged by CSE) became one constant global in IREE 3.13, which the
        # insert may not write ("write affecting operations on global resources are
        # restricted to workgroup distributed contexts": the transpose of a slice in svd's
        # gradient). A fill no CSE merges and no folding makes a constant:
        init = distinct_copy(linalg.fill(tensor.ExtractOp(value, []).result,
                                         outs=[empty(out)]), out)
    else:
        init = linalg.fill(tensor.ExtractOp(value, []).result, outs=[empty(out)])
    if 0 in size:       # nothing of the operand is left: all padding
        return [init]
    if tuple(start) != (0,) * len(start) or tuple(size) != xa.shape:
        cropped = ShapedArray(tuple(size), xa.dtype)
        x = tensor.ExtractSliceOp(ttype(cropped), x, [], [], [], start, size,
                                  [1] * len(size)).result
    return [tensor.InsertSliceOp(x, init, [], [], [], offset, size,
                                 [it + 1 for it in interior]).result]


# --- reductions ---------------------------------------------------------------------------

def _reduce_init(kind: str, dt):
    if kind == "sum" or kind == "or":
        return 0
    if kind == "prod":
        return 1
    if kind == "and":
        return True if dtypes.is_bool(dt) else -1   # all bits set
    if dtypes.is_bool(dt):
        return kind == "min"
    if dtypes.is_float(dt):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dt)
    return info.min if kind == "max" else info.max


_COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "and": "and", "or": "or"}


@lowering("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")
def _lower_reduce(c: LowerCall):
    kind = c.op.name.split("_", 1)[1]
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    axes = c.attrs["axes"]
    rank = xa.ndim
    out_map = dims_map(rank, [d for d in range(rank) if d not in axes])
    combine = SCALAR[_COMBINE[kind]]
    iters = ["reduction" if d in axes else "parallel" for d in range(rank)]
    init = filled(out, _reduce_init(kind, xa.dtype))
    return generic([x], [identity_map(rank)], [init], [out_map], iters,
                   lambda a, acc: [combine([acc, a], xa.dtype, xa.dtype, {})])


@lowering("argmax", "argmin")
def _lower_argreduce(c: LowerCall):
    """Two single-result reductions: the extreme value (NaN-propagating), then the first
    index holding it. (One two-result linalg.generic was shorter, but IREE's transpose
    propagation mis-compiles it when the result is transposed, as vmap often does.)"""
    is_max = c.op.name.endswith("argmax")
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    axis, rank = c.attrs["axis"], xa.ndim
    out_map = dims_map(rank, [d for d in range(rank) if d != axis])
    iters = ["reduction" if d == axis else "parallel" for d in range(rank)]
    kind = "max" if is_max else "min"
    combine = SCALAR[kind]
    (best,) = generic([x], [identity_map(rank)],
                      [filled(ShapedArray(out.shape, xa.dtype), _reduce_init(kind, xa.dtype))],
                      [out_map], iters, lambda a, acc: [combine([acc, a], xa.dtype, xa.dtype, {})])
    first = np.iinfo(out.dtype).max

    def body(a, m, acc):
        hit = SCALAR["eq"]([a, m], xa.dtype, dtypes.bool_, {})
        if dtypes.is_float(xa.dtype):   # the max/min is NaN when any element is: find it
            hit = arith.OrIOp(hit, arith.AndIOp(_cmpf("uno", a, a),
                                                _cmpf("uno", m, m)).result).result
        i = index_of(axis, out.dtype)
        cand = arith.SelectOp(hit, i, scalar_const(first, out.dtype)).result
        low = arith.MinUIOp if dtypes.is_unsigned(out.dtype) else arith.MinSIOp
        return [low(acc, cand).result]

    return generic([x, best], [identity_map(rank), out_map], [filled(out, first)], [out_map],
                   iters, body)


# --- contraction --------------------------------------------------------------------------

def _uniform_along(v: ir.Value, dims) -> bool:
    """Whether ``v`` is the result of a ``linalg.generic`` that reads no input along one of
    ``dims`` but reads some along another (a broadcast row or column, not a splat)."""
    op = v.owner
    if isinstance(op, ir.Block) or op.name != "linalg.generic" or len(op.results) != 1:
        return False
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims):
        return False
    used = {ir.AffineDimExpr(e).position for m in maps[:-1] for e in m.results
            if isinstance(e, ir.AffineDimExpr)}
    return bool(used) and any(d not in used for d in dims)


def int_constant(v: ir.Value) -> np.ndarray | None:
    """The values of ``v`` when it is a constant integer tensor (``arith.constant``), else
    None."""
    owner = v.owner
    if not isinstance(owner, ir.Block) and owner.name == "arith.constant" \
            and isinstance(owner.attributes["value"], ir.DenseIntElementsAttr):
        return decode_attr("dense", owner.attributes["value"])
    return None


def optimization_barrier(v: ir.Value) -> ir.Value:
    """``v`` through ``util.optimization_barrier``: IREE neither folds nor fuses across it."""
    return util.OptimizationBarrierOp([v.type], [v]).results[0]


# The attribute of a function's flag (see distinct_copy): the next number to hand out.
DISTINCT_FLAG = "ember.distinct_flag"


def distinct_copy(v: ir.Value, aval: ShapedArray) -> ir.Value:
    """``v`` through an elementwise kernel no CSE merges with any other and no folding
    removes: ``select(flag, <a number no other copy of the function has>, v)``, where
    ``flag`` is the function's 0-d tensor of false behind one barrier at its entry.

    A sort's operand copy (it permutes the copy in place), a recomputed op's operands (or
    IREE's CSE merges the recomputation back into the op it copies). It fuses into its
    producer or consumer like any elementwise kernel. (A barrier per value instead, or a
    scalar flag, made IREE wait on the host at each one, splitting the program into
    submissions; ``flow.tensor.clone`` marked by an attribute was merged anyway: IREE's
    stream conversion drops the mark.)

    Example:
        >>> distinct_copy(x, ShapedArray((4,), np.float32))   # in a lowering rule
    """
    flag, mark = distinct_flag()
    rank = aval.ndim

    def copy(x, f, _o):
        if dtypes.is_bool(aval.dtype):     # (two constants only: compare a position)
            other = _cmpi("eq", linalg.IndexOp(0).result if rank else
                          arith.ConstantOp(ir.IndexType.get(), 0).result,
                          arith.ConstantOp(ir.IndexType.get(), mark).result)
        else:
            other = scalar_const(mark, aval.dtype)
        return [arith.SelectOp(f, other, x).result]
    return generic([v, flag], [identity_map(rank), ir.AffineMap.get(rank, 0, [])],
                   [empty(aval)], [identity_map(rank)], ["parallel"] * rank, copy)[0]


def distinct_flag() -> tuple[ir.Value, int]:
    """The function's flag (made once, at its entry) and a number it has not handed out: for
    kernels that make distinct values of their own (see :func:`distinct_copy`)."""
    op = ir.InsertionPoint.current.block.owner.operation
    while op is not None and op.name != "func.func":
        op = op.parent and op.parent.operation
    entry = op.regions[0].blocks[0] if op is not None else ir.InsertionPoint.current.block
    flag = next((o.operation for o in entry.operations
                 if DISTINCT_FLAG in o.operation.attributes), None)
    if flag is None:
        false = ir.DenseElementsAttr.get_splat(
            ir.RankedTensorType.get([], ir.IntegerType.get_signless(1)),
            ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 0))
        where = ir.InsertionPoint.at_block_begin(entry) if op is not None else \
            ir.InsertionPoint.current
        with where:
            flag = optimization_barrier(arith.ConstantOp(false.type, false).result).owner
        flag.attributes[DISTINCT_FLAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)
    mark = ir.IntegerAttr(flag.attributes[DISTINCT_FLAG]).value
    flag.attributes[DISTINCT_FLAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                        mark + 1)
    return flag.results[0], mark


def _contraction_operand(v: ir.Value, free) -> ir.Value:
    """IREE 3.13 crashes (a segfault in MaterializeDeviceEncoding, at O3 with data tiling)
    on a contraction whose operand is a broadcast along one of its free dims (a row as the
    left operand, a column as the right): a barrier keeps the broadcast out of the packing."""
    if free and _uniform_along(v, free):
        return optimization_barrier(v)
    return v


# Ops IREE fuses with the packing of a contraction operand they compute, walked through.
_ELEMENTWISE = ("linalg.generic", "linalg.transpose", "linalg.broadcast", "tensor.expand_shape",
                "tensor.collapse_shape")


def _batched_lhs(v: ir.Value, rows: int) -> ir.Value:
    """IREE 3.13's data tiling packs a batched contraction's left operand in the kernel that
    computes it, with batch and rows collapsed into one dim, and miscompiles that kernel
    when it reads a value broadcast along the rows' elements and the rows need padding to
    the tile: (x * s[..., None]) @ w and softmax(x) @ w had their second batch's rows shifted
    by one (batch 2, rows mod 8 in 5..7 and 3; tests/test_linalg.py). A barrier keeps the
    packing out of such a kernel; row counts a multiple of 16 (every CPU tile divides it)
    need none (attention over 128 positions keeps its fused packing; with a barrier it ran
    17% slower)."""
    if rows % 16 == 0 or not isinstance(v, ir.OpResult) or _in_dispatch_region(v.owner):
        return v                            # (IREE rejects a barrier in a dispatch region)
    for use in v.uses:                      # one barrier for all the products reading v
        if use.owner.name == "util.optimization_barrier":
            return use.owner.results[0]
    seen, stack = set(), [v]
    while stack:
        x = stack.pop()
        if not isinstance(x, ir.OpResult) or x in seen:
            continue
        seen.add(x)
        op = x.owner
        if op.name == "linalg.generic":
            maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
            if "reduction" in str(op.attributes["iterator_types"]) or any(
                    not m.is_permutation for m in maps[:len(op.operands) - len(op.results)]):
                with ir.InsertionPoint(v.owner):
                    barrier = optimization_barrier(v)
                barrier.owner.move_after(v.owner)
                return barrier
        if op.name in _ELEMENTWISE:
            stack.extend(op.operands)
    return v


def _in_dispatch_region(op) -> bool:
    while op is not None and op.name != "func.func":
        if op.name == "flow.dispatch.region":
            return True
        op = op.parent
    return False


@lowering("dot_general")
def _lower_dot_general(c: LowerCall):
    if dtypes.is_complex(c.in_avals[0].dtype):
        return [_complex_dot(c)]
    return _real_dot(c)


def _complex_dot(c: LowerCall) -> ir.Value:
    """A complex product as four real ones, (ar br - ai bi) + (ar bi + ai br) i: IREE's
    matmul of complex elements is scalar code (256 x 256 complex64: 110 ms, the four
    float32 products 16-21 ms on the loaded 2-core machine)."""
    (lhs, rhs), (la, ra), out = c.operands, c.in_avals, c.out_avals[0]
    part = dtypes.real_dtype(la.dtype)

    def parts(x, aval):
        rank = aval.ndim
        real = ShapedArray(aval.shape, part)
        return [generic([x], [identity_map(rank)], [empty(real)], [identity_map(rank)],
                        ["parallel"] * rank, lambda v, _o, f=f: [f(v).result])[0]
                for f in (complex_d.ReOp, complex_d.ImOp)]

    (ar, ai), (br, bi) = parts(lhs, la), parts(rhs, ra)
    pa, pb, po = (ShapedArray(a.shape, part) for a in (la, ra, out))

    def dot(x, y):
        return _real_dot(LowerCall(c.op, [x, y], [pa, pb], [po], c.attrs, c.options))[0]

    products = [dot(ar, br), dot(ai, bi), dot(ar, bi), dot(ai, br)]
    rank = out.ndim

    def combine(rr, ii, ri, ir_, _o):
        return [complex_d.CreateOp(elem(out.dtype), arith.SubFOp(rr, ii).result,
                                   arith.AddFOp(ri, ir_).result).result]
    return generic(products, [identity_map(rank)] * 4, [empty(out)], [identity_map(rank)],
                   ["parallel"] * rank, combine)[0]


def _real_dot(c: LowerCall) -> list[ir.Value]:
    (lhs, rhs), (la, ra), out = c.operands, c.in_avals, c.out_avals[0]
    lc, rc = c.attrs["lhs_contracting"], c.attrs["rhs_contracting"]
    lb, rb = c.attrs["lhs_batch"], c.attrs["rhs_batch"]
    if lb:
        lhs = _batched_lhs(lhs, int(np.prod([la.shape[d] for d in range(la.ndim)
                                            if d not in lc + lb])))
    lhs = _contraction_operand(lhs, [d for d in range(la.ndim) if d not in lc + lb])
    rhs = _contraction_operand(rhs, [d for d in range(ra.ndim) if d not in rc + rb])
    dt = la.dtype
    acc_dt = np.dtype("float32") if dtypes.is_float(dt) and dt.itemsize < 4 else dt
    if any(la.shape[d] == 0 for d in lc):   # an empty sum: zeros (IREE's matmul traps on K=0)
        return [filled(out, 0)]
    acc_aval = ShapedArray(out.shape, acc_dt)
    init = filled(acc_aval, 0)
    if acc_dt == dt and not lb and la.ndim == ra.ndim == 2 and lc == (1,) and rc == (0,):
        return [linalg.matmul(lhs, rhs, outs=[init])]
    if acc_dt == dt and la.ndim == ra.ndim == 3 and lb == rb == (0,) and lc == (2,) \
            and rc == (1,):
        return [linalg.batch_matmul(lhs, rhs, outs=[init])]
    lfree = [d for d in range(la.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(ra.ndim) if d not in rc and d not in rb]
    nb, nl, nr = len(lb), len(lfree), len(rfree)
    n = nb + nl + nr + len(lc)
    lmap, rmap = [0] * la.ndim, [0] * ra.ndim
    for i, (a, b) in enumerate(zip(lb, rb)):
        lmap[a], rmap[b] = i, i
    for i, a in enumerate(lfree):
        lmap[a] = nb + i
    for i, b in enumerate(rfree):
        rmap[b] = nb + nl + i
    for i, (a, b) in enumerate(zip(lc, rc)):
        lmap[a], rmap[b] = nb + nl + nr + i, nb + nl + nr + i
    iters = ["parallel"] * (nb + nl + nr) + ["reduction"] * len(lc)

    def body(a, b, acc):
        if acc_dt != dt:
            a, b = (arith.ExtFOp(elem(acc_dt), v).result for v in (a, b))
        return [SCALAR["add"]([acc, SCALAR["mul"]([a, b], acc_dt, acc_dt, {})], acc_dt,
                              acc_dt, {})]

    (res,) = generic([lhs, rhs], [dims_map(n, lmap), dims_map(n, rmap)], [init],
                     [dims_map(n, range(nb + nl + nr))], iters, body)
    if acc_dt != dt:
        rank = len(out.shape)
        (res,) = generic([res], [identity_map(rank)], [empty(out)], [identity_map(rank)],
                         ["parallel"] * rank, lambda a, _o: [convert_scalar(a, acc_dt, dt)])
    return [res]


# --- calls --------------------------------------------------------------------------------

@lowering("call")
def _lower_call(c: LowerCall):
    callee = c.attrs["callee"]
    return list(func.CallOp([ttype(a) for a in c.out_avals], ir.FlatSymbolRefAttr.get(callee),
                            c.operands).results)


@lowering("rev")
def _lower_rev(c: LowerCall):
    (x,), (xa,), out = c.operands, c.in_avals, c.out_avals[0]
    rank, dims = xa.ndim, c.attrs["dimensions"]
    if out.size == 0:
        return [empty(out)]
    # A gather from reversed indices: an indexing map like (d0) -> (3 - d0) is rejected by
    # IREE's dispatch verifier.
    index = ir.IndexType.get()

    def body(_o):
        idx = []
        for d in range(rank):
            i = linalg.IndexOp(d).result
            if d in dims:
                last = arith.ConstantOp(index, ir.IntegerAttr.get(index, xa.shape[d] - 1))
                i = arith.SubIOp(last.result, i).result
            idx.append(i)
        return [tensor.ExtractOp(x, idx).result]

    return generic([], [], [empty(out)], [identity_map(rank)], ["parallel"] * rank, body)
