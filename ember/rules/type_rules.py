"""Type rules shared by op declarations: the dtype classes an op accepts, and rules for the
common shapes of ops (unary, binary), with the checks they make (``OpTypeError`` on bad input).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.core import ShapedArray
from ember.rules.base import OpTypeError

FLOAT = "float"        # real floating point
INEXACT = "inexact"    # real floating point or complex
NUMERIC = "numeric"    # int, unsigned, float or complex (not bool)
REAL_NUMERIC = "real_numeric"  # int, unsigned or float (not bool, not complex)
INTEGRAL = "integral"  # bool, int or unsigned
SIGNED = "signed"      # int, float or complex
REAL = "real"          # anything but complex: the ordered dtypes
COMPLEX = "complex"    # complex64 or complex128
ANY = "any"

CLASS_TEST = {
    FLOAT: dtypes.is_float,
    INEXACT: dtypes.is_inexact,
    NUMERIC: lambda d: not dtypes.is_bool(d),
    REAL_NUMERIC: lambda d: not dtypes.is_bool(d) and not dtypes.is_complex(d),
    INTEGRAL: lambda d: dtypes.is_bool(d) or dtypes.is_int(d),
    SIGNED: lambda d: dtypes.is_inexact(d) or (dtypes.is_int(d) and not dtypes.is_unsigned(d)),
    REAL: lambda d: not dtypes.is_complex(d),
    COMPLEX: dtypes.is_complex,
    ANY: lambda d: True,
}


# Complex numbers have no order (the Array API leaves max, min, <, sort of them undefined):
# ember refuses them there rather than pick one (JAX's is lexicographic).
CLASS_WORDS = {FLOAT: "a real floating-point", INEXACT: "a floating-point or complex",
                NUMERIC: "a numeric (non-bool)", REAL_NUMERIC: "a real numeric (non-bool)",
                INTEGRAL: "a bool or integer", SIGNED: "a signed",
                REAL: "a real (ordered, non-complex)", COMPLEX: "a complex", ANY: "any"}


def fmt(avals) -> str:
    return ", ".join(a.str_short() for a in avals)


def check_class(avals, cls):
    for a in avals:
        if not CLASS_TEST[cls](a.dtype):
            raise OpTypeError(f"needs {CLASS_WORDS[cls]} dtype, got {fmt(avals)}")


def same_shapes_and_dtypes(avals):
    first = avals[0]
    for a in avals[1:]:
        if a.shape != first.shape or a.dtype != first.dtype:
            raise OpTypeError(f"operands must have equal shapes and dtypes, got {fmt(avals)}")


def check_axes(axes, ndim, what="axis"):
    for ax in axes:
        if not 0 <= ax < ndim:
            raise OpTypeError(f"{what} {ax} is out of range for rank {ndim}")
    if len(set(axes)) != len(axes):
        raise OpTypeError(f"repeated {what} in {tuple(axes)}")


def aval(shape, dtype):
    return ShapedArray(tuple(int(d) for d in shape), np.dtype(dtype))


def unary_rule(cls, result_dtype):
    def infer(avals, attrs):
        check_class(avals, cls)
        dt = avals[0].dtype
        if result_dtype == "real":
            return [aval(avals[0].shape, dtypes.real_dtype(dt))]
        return [aval(avals[0].shape, result_dtype or dt)]
    return infer


def binary_rule(cls, result_dtype=None):
    def infer(avals, attrs):
        same_shapes_and_dtypes(avals)
        check_class(avals, cls)
        return [aval(avals[0].shape, result_dtype or avals[0].dtype)]
    return infer
