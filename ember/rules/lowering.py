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
    ir,
    linalg,
    math_d,
    scf,
    signless,
    tensor,
    util,
)
from ember.core import ShapedArray
from ember.rules.base import OPS, decode_attr, rule_registrar

LOWERINGS: dict[str, Callable] = {}
# Elementwise op name -> scalar emitter of complex operands (``rules/complex.complex_rule``):
# complex64 and complex128 are computed on (real, imaginary) pairs of float32/float64.
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


lowering = rule_registrar(LOWERINGS)


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


# IREE quirk: tests/test_iree_quirks.py::test_narrow_index_cast_zero_extends
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


def cmpi(pred: str, a, b):
    return arith.CmpIOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                           _CMPI[pred]), a, b).result


def cmpf(pred: str, a, b):
    return arith.CmpFOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                           _CMPF[pred]), a, b).result


_CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7,
         "ugt": 8, "uge": 9}
_CMPF = {"false": 0, "oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "ord": 7,
         "ueq": 8, "ugt": 9, "uge": 10, "ult": 11, "ule": 12, "une": 13, "uno": 14}


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

def all_ones(dt):
    return scalar_const(-1, np.dtype(f"int{np.dtype(dt).itemsize * 8}"))


def in_f32(fn):
    """Compute a float function in f32 for f16/bf16 operands (math lowering wants f32)."""
    def emit(args, dt, out_dt, attrs):
        if np.dtype(dt).itemsize < 4:
            f32 = ir.F32Type.get()
            ext = [arith.ExtFOp(f32, a).result for a in args]
            return arith.TruncFOp(elem(out_dt), fn(ext, np.dtype("float32"), attrs)).result
        return fn(args, dt, attrs)
    return emit


def math_op(op_cls):
    """A scalar emitter of the ``math`` dialect's op ``op_cls`` (f16/bf16 computed in f32)."""
    return in_f32(lambda args, dt, attrs: op_cls(*args).result)


def sign_bit(x, dt) -> ir.Value:
    bits = ir.IntegerType.get_signless(np.dtype(dt).itemsize * 8)
    ix = arith.BitcastOp(bits, x).result
    return arith.CmpIOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _CMPI["slt"]), ix,
                        arith.ConstantOp(bits, ir.IntegerAttr.get(bits, 0)).result).result


def poly(z, coeffs, dt):
    acc = scalar_const(coeffs[-1], dt)
    for c in reversed(coeffs[:-1]):
        acc = arith.AddFOp(scalar_const(c, dt), arith.MulFOp(z, acc).result).result
    return acc


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
        return cmpf("une", x, zero) if dtypes.is_float(src) else cmpi("ne", x, zero)
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
            return arith.OrIOp(cmpf("une", re_, zero),
                               cmpf("une", complex_d.ImOp(x).result, zero)).result
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
    r = arith.SelectOp(cmpf("oge", x, scalar_const(float(top), src)),
                       scalar_const(info.max, dst), r).result
    return arith.SelectOp(cmpf("uno", x, x), scalar_const(0, dst), r).result


def round_to_bf16(x: ir.Value) -> ir.Value:
    """float32 -> bfloat16, to nearest even, NaN kept NaN (see :func:`_f32_to_bf16_rne`)."""
    nan = arith.ConstantOp(ir.BF16Type.get(), ir.FloatAttr.get(ir.BF16Type.get(),
                                                               float("nan"))).result
    return arith.SelectOp(cmpf("uno", x, x), nan, _f32_to_bf16_rne(x)).result


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


# --- shapes and results --------------------------------------------------------------------

def reassociation(groups) -> ir.ArrayAttr:
    """The reassociation of a tensor.expand_shape/collapse_shape: lists of dims."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g])
                             for g in groups])


def result_value(res) -> ir.Value:
    """The result of a linalg builder, which returns the op or its value depending on arity."""
    if isinstance(res, ir.Value):
        return res
    if isinstance(res, ir.OpResultList):
        return res[0]
    return res.results[0]


# --- reduction bodies (reductions, fusions, scans) -------------------------------------------

def reduce_init(kind: str, dt):
    """The identity of the reduction ``kind`` (a key of ``COMBINE``) in ``dt``."""
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


COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "and": "and", "or": "or"}


# --- constants, barriers and distinct copies ------------------------------------------------

def int_constant(v: ir.Value) -> np.ndarray | None:
    """The values of ``v`` when it is a constant integer tensor (``arith.constant``, or
    ``ember.constant`` before lowering), else None."""
    owner = v.owner
    if not isinstance(owner, ir.Block) and owner.name in ("arith.constant", "ember.constant") \
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
            other = cmpi("eq", linalg.IndexOp(0).result if rank else
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


def in_dispatch_region(op) -> bool:
    """Whether ``op`` is inside a ``flow.dispatch.region`` (ember-limit-bindings's cuts)."""
    while op is not None and op.name != "func.func":
        if op.name == "flow.dispatch.region":
            return True
        op = op.parent
    return False


# --- float formulas --------------------------------------------------------------------------

class FloatOps:
    """Float scalar arithmetic of one dtype, to write formulas compactly."""

    def __init__(self, dt):
        self.dt = dt

    def c(self, v):
        return scalar_const(v, self.dt)

    @staticmethod
    def add(a, b):
        return arith.AddFOp(a, b).result

    @staticmethod
    def sub(a, b):
        return arith.SubFOp(a, b).result

    @staticmethod
    def mul(a, b):
        return arith.MulFOp(a, b).result

    @staticmethod
    def div(a, b):
        return arith.DivFOp(a, b).result

    @staticmethod
    def neg(a):
        return arith.NegFOp(a).result

    @staticmethod
    def sel(p, a, b):
        return arith.SelectOp(p, a, b).result

    @staticmethod
    def abs(a):
        return math_d.AbsFOp(a).result

    @staticmethod
    def exp(a):
        return math_d.ExpOp(a).result

    def expm1(self, a):     # ember's (lowering._expm1): IREE's float64 one loses digits
        return SCALAR["expm1"]([a], self.dt, self.dt, {})

    @staticmethod
    def log(a):
        return math_d.LogOp(a).result

    def log1p(self, a):
        return SCALAR["log1p"]([a], self.dt, self.dt, {})

    @staticmethod
    def sqrt(a):
        return math_d.SqrtOp(a).result

    def sin(self, a):   # range-reduced (dialects/trig.py); IREE links no float64 libm sin
        return SCALAR["sin"]([a], self.dt, self.dt, {})

    def cos(self, a):
        return SCALAR["cos"]([a], self.dt, self.dt, {})

    @staticmethod
    def floor(a):
        return math_d.FloorOp(a).result

    @staticmethod
    def copysign(a, b):
        return math_d.CopySignOp(a, b).result

    @staticmethod
    def cmp(pred, a, b):
        return cmpf(pred, a, b)

    @staticmethod
    def and_(a, b):
        return arith.AndIOp(a, b).result

    @staticmethod
    def or_(a, b):
        return arith.OrIOp(a, b).result

    def poly(self, x, coeffs):
        """Horner's rule, coefficients from the highest power down."""
        p = self.c(coeffs[0])
        for k in coeffs[1:]:
            p = self.add(self.mul(p, x), self.c(k))
        return p

    def atan2(self, y, x):
        from ember.rules.lowering import SCALAR
        return SCALAR["atan2"]([y, x], self.dt, self.dt, {})


def float_unary(name):
    """Register ``fn(F, x)`` as the scalar emitter of ``name``, computed in f32 for halves."""
    def deco(fn):
        scalar(name)(in_f32(lambda args, dt, attrs: fn(FloatOps(dt), args[0])))
        return fn
    return deco
