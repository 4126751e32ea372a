"""Abstract values shared by the dialect, the tracer and the runtime."""

from __future__ import annotations

import dataclasses
import operator
from typing import NamedTuple

import numpy as np


class ShapedArray(NamedTuple):
    """The abstract value of an array: shape, dtype and JAX's weak-type bit.

    Example:
        >>> ShapedArray((2, 3), np.dtype("float32")).str_short()
        'f32[2,3]'
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def strong(self) -> ShapedArray:
        return self._replace(weak_type=False) if self.weak_type else self

    def str_short(self) -> str:
        return f"{short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"


_SHORT = {"bool": "bool", "bfloat16": "bf16"}


def short_dtype(dtype) -> str:
    name = np.dtype(dtype).name
    if name in _SHORT:
        return _SHORT[name]
    kind = {"f": "f", "i": "i", "u": "u", "c": "c"}[np.dtype(dtype).kind]
    return f"{kind}{np.dtype(dtype).itemsize * 8}"


class ShapeDtypeStruct:
    """A shape and dtype standing for an argument in ``jit(f).lower(...)``, as in JAX.

    Example:
        >>> spec = ShapeDtypeStruct((8, 4), np.float32)
        >>> spec.shape, spec.dtype
        ((8, 4), dtype('float32'))
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        try:
            self.shape = tuple(operator.index(d) for d in shape)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be a tuple of ints, got "
                            f"{tuple(shape)!r}") from None
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """What a lowered or compiled function takes for one argument leaf, and whether it is
    donated (``lowered.args_info``), as ``jax.stages.ArgInfo``. A leaf, not a pytree node.

    Example:
        >>> ArgInfo(ShapedArray((3,), np.dtype("float32")), donated=True).shape
        (3,)
    """

    aval: ShapedArray
    donated: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    def __repr__(self):
        return f"ArgInfo({self.aval.str_short()}, donated={self.donated})"
