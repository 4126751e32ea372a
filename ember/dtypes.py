"""dtypes, canonicalization and JAX's type-promotion lattice with weak types.

Python scalars are *weakly typed*: ``x + 1.0`` keeps ``x``'s float16 and ``i8 + 1`` stays int8,
as in JAX. 64-bit types are canonicalized to 32 bits unless ``enable_x64`` is on.

Example:
    >>> from ember import dtypes
    >>> dtypes.promote_types("int8", "uint8")
    dtype('int16')
"""

from __future__ import annotations

import functools
import warnings

import ml_dtypes
import numpy as np

from ember._traceback import user_stacklevel
from ember.config import config
from ember.errors import UnsupportedDtypeError

bfloat16 = np.dtype(ml_dtypes.bfloat16)
bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (np.dtype(t) for t in ("float16", "float32", "float64"))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
             float16, bfloat16, float32, float64, complex64, complex128)
_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# JAX's promotion lattice; "i*", "f*" and "c*" are the weak (Python scalar) int, float and
# complex types.
_LATTICE = {
    bool_: ["i*"], "i*": [uint8, int8, "f*"], uint8: [uint16, int16], uint16: [uint32, int32],
    uint32: [uint64, int64], uint64: ["f*"], int8: [int16], int16: [int32], int32: [int64],
    int64: ["f*"], "f*": [bfloat16, float16, "c*"], bfloat16: [float32], float16: [float32],
    float32: [float64, complex64], float64: [complex128], "c*": [complex64],
    complex64: [complex128], complex128: [],
}
_WEAK = {"i*", "f*", "c*"}


@functools.cache
def _upper_set(t) -> frozenset:
    out = {t}
    for parent in _LATTICE[t]:
        out |= _upper_set(parent)
    return frozenset(out)


def _least_upper_bound(types) -> object:
    common = frozenset.intersection(*(_upper_set(t) for t in types))
    # The lattice is a partial order with a unique least element in every upper set.
    return next(t for t in common if all(u in _upper_set(t) for u in common))


_warned_x64 = set()


def canonicalize(dtype, *, warn: bool = True) -> np.dtype:
    """The dtype ember computes in: 64-bit types narrowed unless x64 is enabled.

    Raises UnsupportedDtypeError for dtypes ember has no ops for (strings, objects, ...).
    """
    if getattr(dtype, "ndim", None) is not None and \
            not isinstance(dtype, type | np.dtype | np.generic):
        # NumPy would take an array's dtype; JAX and NumPy 2 refuse arrays as dtypes.
        raise UnsupportedDtypeError(
            f"an array ({type(dtype).__name__} of shape {tuple(dtype.shape)}) was passed as a "
            "dtype; pass a dtype such as np.int32 or the array's .dtype")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise UnsupportedDtypeError(f"{dtype!r} is not a dtype") from None
    if dt not in SUPPORTED:
        raise UnsupportedDtypeError(
            f"dtype {dt} is not supported by ember; supported dtypes are "
            + ", ".join(d.name for d in SUPPORTED))
    if not config.enable_x64 and dt in _NARROW:
        narrow = _NARROW[dt]
        if warn and dt not in _warned_x64:
            _warned_x64.add(dt)
            warnings.warn(
                f"{dt} values are computed as {narrow} because 64-bit types are off; set "
                "ember.config.update('enable_x64', True) or EMBER_ENABLE_X64=1 to keep them",
                UserWarning, stacklevel=user_stacklevel())
        return narrow
    return dt


def default_int() -> np.dtype:
    return int64 if config.enable_x64 else int32


def default_float() -> np.dtype:
    return float64 if config.enable_x64 else float32


def default_complex() -> np.dtype:
    return complex128 if config.enable_x64 else complex64


def to_inexact(dt) -> np.dtype:
    """JAX's ``to_inexact_dtype``: floats and complex types stay as they are; bools and
    integers of up to 32 bits become float32, 64-bit integers float64 (so int32 data stays
    float32 under x64)."""
    dt = np.dtype(dt)
    if is_float(dt) or is_complex(dt):
        return dt
    return float64 if dt.itemsize == 8 else float32


def dtype_and_weak(x) -> tuple[np.dtype, bool]:
    """The (canonical dtype, weak_type) of an array, tracer, NumPy value or Python scalar."""
    if isinstance(x, bool | np.bool_):
        return bool_, False
    if isinstance(x, int) and not isinstance(x, np.integer):
        return default_int(), True
    if isinstance(x, float) and not isinstance(x, np.floating):
        return default_float(), True
    if isinstance(x, complex) and not isinstance(x, np.complexfloating):
        return default_complex(), True
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return canonicalize(dt), bool(getattr(x, "weak_type", False))


def _lattice_type(dt: np.dtype, weak: bool):
    if not weak:
        return dt
    if is_complex(dt):
        return "c*"
    return "f*" if np.issubdtype(dt, np.floating) or dt == bfloat16 else "i*"


def result_type(*args) -> tuple[np.dtype, bool]:
    """JAX's ``_lattice_result_type``: the promoted (dtype, weak_type) of ``args``."""
    pairs = [dtype_and_weak(a) for a in args]
    return promote_pairs(pairs)


def promote_pairs(pairs) -> tuple[np.dtype, bool]:
    dts = [d for d, _ in pairs]
    weaks = [w for _, w in pairs]
    if len(pairs) == 1:
        return pairs[0]
    if len(set(dts)) == 1 and not all(weaks):
        return dts[0], False
    lub = _least_upper_bound({_lattice_type(d, w) for d, w in pairs})
    weak = all(weaks) or lub in _WEAK
    if lub == "i*":
        lub = default_int()
    elif lub == "f*":
        lub = default_float()
    elif lub == "c*":
        lub = default_complex()
    lub = canonicalize(lub, warn=False)
    return lub, weak and lub != bool_


def promote_types(a, b) -> np.dtype:
    """The dtype two (strongly typed) dtypes promote to, by JAX's lattice.

    Example:
        >>> promote_types("uint32", "int32")
        dtype('int64')
    """
    return _least_upper_bound({np.dtype(a), np.dtype(b)})


def is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt == bfloat16 or np.issubdtype(dt, np.floating)


def is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def is_inexact(dt) -> bool:
    """Floating point or complex."""
    return is_float(dt) or is_complex(dt)


def real_dtype(dt) -> np.dtype:
    """The dtype of a complex dtype's parts (float32 for complex64); other dtypes unchanged.

    Example:
        >>> real_dtype("complex128")
        dtype('float64')
    """
    dt = np.dtype(dt)
    return np.dtype(f"float{dt.itemsize * 4}") if is_complex(dt) else dt


def complex_dtype(dt) -> np.dtype:
    """The complex dtype whose parts are the float ``dt`` (float16/bfloat16/float32:
    complex64, float64: complex128); complex dtypes unchanged."""
    dt = np.dtype(dt)
    if is_complex(dt):
        return dt
    return complex128 if dt == float64 else complex64


def is_int(dt) -> bool:
    return np.issubdtype(np.dtype(dt), np.integer)


def is_unsigned(dt) -> bool:
    return np.issubdtype(np.dtype(dt), np.unsignedinteger)


def is_bool(dt) -> bool:
    return np.dtype(dt) == bool_


def finfo(dt):
    """Machine limits of a floating dtype; of a complex dtype's parts (as NumPy's)."""
    return ml_dtypes.finfo(real_dtype(dt))


def iinfo(dt):
    return np.iinfo(dt)
