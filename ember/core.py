"""Abstract values shared by the dialect, the tracer and the runtime."""

from __future__ import annotations

import dataclasses
import operator
import re
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


class SymbolicDim(str):
    """A dimension whose size is not fixed (``symbolic_shape``): a name; dimensions of one
    name have one size."""

    __slots__ = ()

    def __repr__(self):
        return str(self)


_SYMBOL = re.compile(r"[A-Za-z_]\w*")


def symbolic_shape(spec: str) -> tuple[int | SymbolicDim, ...]:
    """A shape of names and sizes for ``ember.export`` and ``ember.jit(f).lower``, as
    ``jax.export.symbolic_shape``: ``"b, 64"`` is a first axis of any size ``b`` and a
    second of 64. Names are plain identifiers (no expressions such as ``2*b``).

    Example:
        >>> spec = ember.ShapeDtypeStruct(ember.symbolic_shape("b, 64"), np.float32)
        >>> ember.export(ember.jit(f), spec).save("f.vmfb")   # runs at every size of b
    """
    dims = []
    for part in spec.split(",") if spec.strip() else ():
        part = part.strip()
        if part.isdigit():
            dims.append(int(part))
        elif _SYMBOL.fullmatch(part):
            dims.append(SymbolicDim(part))
        else:
            raise ValueError(f"symbolic_shape({spec!r}): {part!r} is neither a size nor a "
                             "name (names are identifiers; expressions are not supported)")
    return tuple(dims)


def is_symbolic(shape) -> bool:
    """Whether ``shape`` has a ``SymbolicDim``."""
    return any(isinstance(d, SymbolicDim) for d in shape)


def has_symbolic(tree) -> bool:
    """Whether a pytree of argument specs has a ShapeDtypeStruct with a ``SymbolicDim``."""
    from ember import tree_util
    return any(isinstance(x, ShapeDtypeStruct) and is_symbolic(x.shape)
               for x in tree_util.tree_leaves(tree))


def bind_sizes(shapes, wanted, symbols: dict, names) -> dict[str, int]:
    """The size of each symbolic dimension in ``shapes`` (tuples of ints, of the arguments
    ``names``), whose shapes are to be ``wanted`` (ints and ``SymbolicDim``s): ValueError,
    naming the argument, when a shape does not fit, dimensions of one name differ, or a size
    is below its name's ``"min"`` or no multiple of its ``"multiple_of"`` (``symbols``).

    Example:
        >>> bind_sizes([(3, 4)], [(SymbolicDim("b"), 4)], {}, ["x"])
        {'b': 3}
    """
    sizes: dict = {}       # name -> (size, the argument it is from)
    for shape, want, name in zip(shapes, wanted, names):
        ok = len(shape) == len(want)
        for n, d in zip(shape, want) if ok else ():
            ok = ok and (sizes.setdefault(d, (n, name))[0] == n if isinstance(d, SymbolicDim)
                         else n == d)
        if not ok:
            given = "".join(f", {d} = {sizes[d][0]} (from {sizes[d][1]})"
                            for d in dict.fromkeys(want)
                            if isinstance(d, SymbolicDim) and sizes.get(d, (0, name))[1] != name)
            raise ValueError(f"{name} must be of shape [{','.join(map(str, want))}]{given}, "
                             f"got [{','.join(map(str, shape))}]")
    for d, (n, name) in sizes.items():
        c = symbols.get(d, {"min": 1, "multiple_of": 1})
        if n < c["min"] or n % c["multiple_of"]:
            raise ValueError(f"{d} = {n} (from {name}) must be at least {c['min']}" + (
                f" and a multiple of {c['multiple_of']}" if c["multiple_of"] > 1 else "") +
                ": the program holds for those sizes")
    return {d: n for d, (n, _) in sizes.items()}


class ShapeDtypeStruct:
    """A shape and dtype standing for an argument in ``jit(f).lower(...)``, as in JAX. The
    shape may hold ``SymbolicDim``s (``symbolic_shape``) for ``lower`` and ``ember.export``.

    Example:
        >>> spec = ShapeDtypeStruct((8, 4), np.float32)
        >>> spec.shape, spec.dtype
        ((8, 4), dtype('float32'))
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        try:
            self.shape = tuple(d if isinstance(d, SymbolicDim) else operator.index(d)
                               for d in shape)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be a tuple of ints, got "
                            f"{tuple(shape)!r} (a dimension of any size: "
                            "ember.symbolic_shape)") from None
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
