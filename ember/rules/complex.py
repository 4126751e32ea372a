"""The machinery of complex lowering: complex64 and complex128 as (real, imaginary) pairs.

The ``complex`` dialect's add, sub, mul, neg, conj, re, im, create, eq and neq become plain
float arithmetic in IREE and give NumPy's values. Its other ops do not serve: IREE 3.13
cannot compile them for complex128 (they call float64 libm functions it cannot link), and
for complex64 they were far off (``complex.exp`` of 1e30j gave -inf - inf i, of 700j was
2e-5 off; ``complex.pow`` 1e-5) or wrong at special values (``complex.log`` of 0 gave
-inf + nan i, ``complex.sqrt`` of -1 - 0i gave +i, ``complex.div`` of 0 by inf + inf i gave
0). Each family's complex emitters (``complex_rule``) are formulas on the parts, built on
ember's accurate real emitters, as NumPy computes them: Smith's division, C99's special
values (Annex G) for exp, log, sqrt, the hyperbolic functions and tanh (Kahan's algorithm),
Kahan's branch cuts for the inverse functions. complex64 computes ``abs``, ``log`` and
``sqrt`` in float64 where the target has it (no overflow, no scaling, about half an ulp).

``elementwise`` lowering dispatches on the operand dtype: ``SCALAR[name]`` picks the emitter
registered in ``COMPLEX_SCALAR`` for complex operands.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, complex_d, ir, linalg, tensor, walk
from ember.rules.lowering import (
    COMPLEX_SCALAR,
    LOWERINGS,
    SCALAR,
    TRAITS,
    FloatOps,
    elem,
    generic,
    identity_map,
    in_dispatch_region,
    lower_elementwise,
    optimization_barrier,
    scalar_const,
    sign_bit,
)


def real_part(z) -> ir.Value:
    return complex_d.ReOp(z).result


def imag_part(z) -> ir.Value:
    return complex_d.ImOp(z).result


def make_complex(re_, im_, dt) -> ir.Value:
    return complex_d.CreateOp(elem(dt), re_, im_).result


class Parts(FloatOps):
    """Float arithmetic on the parts' dtype, with the real functions ember lowers itself."""

    def fn(self, name, *args):
        return SCALAR[name](list(args), self.dt, self.dt, {})

    def isinf(self, a):
        return self.cmp("oeq", self.abs(a), self.c(np.inf))

    def isnan(self, a):
        return self.cmp("uno", a, a)

    def finite(self, a):
        return self.cmp("olt", self.abs(a), self.c(np.inf))

    def eq0(self, a):
        return self.cmp("oeq", a, self.c(0.0))

    def not_(self, a):
        return arith.XOrIOp(a, scalar_const(True, dtypes.bool_)).result

    @staticmethod
    def max(a, b):
        return arith.MaximumFOp(a, b).result

    @staticmethod
    def min(a, b):
        return arith.MinimumFOp(a, b).result

    def signbit(self, a):
        return sign_bit(a, self.dt)


def complex_rule(name):
    """Register ``fn(P, args, dt, out_dt)`` as the complex emitter of ``name``: operands
    are complex values, ``P`` the arithmetic of their parts."""
    def deco(fn):
        def emit(args, dt, out_dt, attrs):
            part = dtypes.real_dtype(dt if dtypes.is_complex(dt) else out_dt)
            return fn(Parts(part), args, np.dtype(dt), np.dtype(out_dt))
        COMPLEX_SCALAR[name] = emit
        return fn
    return deco


def complex_only_rule(name):
    """Register an op that exists for complex operands only (real, imag, complex, conj)."""
    def deco(fn):
        def emit(args, dt, out_dt, attrs):
            part = dtypes.real_dtype(dt if dtypes.is_complex(dt) else out_dt)
            return fn(Parts(part), args, np.dtype(dt), np.dtype(out_dt))
        SCALAR[name] = emit
        LOWERINGS[f"ember.{name}"] = lower_elementwise
        return fn
    return deco


def computes_wide(p: Parts) -> bool:
    """Whether float32 parts are computed in float64 (the target has it)."""
    return p.dt.itemsize == 4 and TRAITS.get().float64


def ext(p: Parts, *xs):
    f64 = ir.F64Type.get()
    return [arith.ExtFOp(f64, x).result for x in xs]


def trunc(p: Parts, *xs):
    return [arith.TruncFOp(elem(p.dt), x).result for x in xs]


def div_parts(p: Parts, a, b, c, d):
    """(a + bi) / (c + di) by Smith's algorithm, as NumPy's (the same operations, so the
    same values and the same infinities and NaNs)."""
    ac, ad = p.abs(c), p.abs(d)
    one = p.c(1.0)
    # |c| >= |d|: ratio d / c
    rat1 = p.div(d, c)
    scl1 = p.div(one, p.add(c, p.mul(d, rat1)))
    re1 = p.mul(p.add(a, p.mul(b, rat1)), scl1)
    im1 = p.mul(p.sub(b, p.mul(a, rat1)), scl1)
    # division by zero: a / |c|, b / |c| (a complex infinity or NaN)
    zero = p.and_(p.eq0(ac), p.eq0(ad))
    re1 = p.sel(zero, p.div(a, ac), re1)
    im1 = p.sel(zero, p.div(b, ac), im1)
    # |c| < |d| (or a NaN): ratio c / d
    rat2 = p.div(c, d)
    scl2 = p.div(one, p.add(d, p.mul(c, rat2)))
    re2 = p.mul(p.add(p.mul(a, rat2), b), scl2)
    im2 = p.mul(p.sub(p.mul(b, rat2), a), scl2)
    first = p.cmp("oge", ac, ad)
    return p.sel(first, re1, re2), p.sel(first, im1, im2)


def hypot(p: Parts, x, y):
    """|x + yi| without overflow or underflow: inf where a part is infinite (NaN or not)."""
    ax, ay = p.abs(x), p.abs(y)
    if computes_wide(p):
        wx, wy = ext(p, x, y)
        f = FloatOps(np.dtype(np.float64))
        (r,) = trunc(p, f.sqrt(f.add(f.mul(wx, wx), f.mul(wy, wy))))
    else:
        a, b = p.max(ax, ay), p.min(ax, ay)
        q = p.div(b, a)
        r = p.mul(a, p.sqrt(p.add(p.c(1.0), p.mul(q, q))))
        r = p.sel(p.eq0(a), p.c(0.0), r)
    return p.sel(p.or_(p.isinf(ax), p.isinf(ay)), p.c(np.inf), r)


def materialize_complex_splats(module: ir.Module) -> None:
    """Rewrite each complex splat tensor (a splat ``arith.constant`` or a ``linalg.fill``)
    that IREE would keep as a buffer of its own (one read by anything but a linalg op: a
    return, ``tensor.insert_slice``, a scatter, a loop) as ``complex.create`` of two float
    fills, one behind ``util.optimization_barrier`` (else IREE folds them into one splat). IREE
    3.13 splats buffers with integers of at most 64 bits (complex128 failed: "stream.async.
    splat ... but got 'i128'") and made an invalid ``arith.constant`` of a complex64 splat
    that a slice is inserted into ("failed to satisfy constraint: TypedAttr")."""
    for op in list(walk(module.operation)):
        if op.name not in ("arith.constant", "linalg.fill") or len(op.results) != 1:
            continue
        t = op.results[0].type
        if not isinstance(t, ir.RankedTensorType) or \
                not isinstance(ir.RankedTensorType(t).element_type, ir.ComplexType):
            continue
        if op.name == "arith.constant":
            attr = op.attributes["value"]
            if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
                continue
        if in_dispatch_region(op) or all(u.owner.name.startswith("linalg.")
                                          for u in op.results[0].uses):
            continue
        t = ir.RankedTensorType(t)
        with ir.InsertionPoint(op), op.location:
            if op.name == "arith.constant":
                value = complex_d.ConstantOp(t.element_type,
                                             ir.ArrayAttr(attr.get_splat_value())).result
            else:
                value = op.operands[0]
            part_t = ir.RankedTensorType.get(t.shape, ir.ComplexType(t.element_type).element_type)
            re_, im_ = (linalg.fill(f, outs=[tensor.EmptyOp(t.shape, part_t.element_type)
                                             .result])
                        for f in (real_part(value), imag_part(value)))
            re_ = optimization_barrier(re_)
            rank = len(t.shape)
            (new,) = generic([re_, im_], [identity_map(rank)] * 2,
                             [tensor.EmptyOp(t.shape, t.element_type).result],
                             [identity_map(rank)], ["parallel"] * rank,
                             lambda a, b, _o, et=t.element_type: [
                                 complex_d.CreateOp(et, a, b).result])
        op.results[0].replace_all_uses_with(new)
        op.erase()
