"""Operators and NumPy-style methods shared by tracers (inside jit) and Arrays (outside)."""

from __future__ import annotations


def _np():
    import ember.numpy as enp
    return enp


def _binop(name, reflected=False):
    def op(self, other):
        fn = getattr(_np(), name)
        return fn(other, self) if reflected else fn(self, other)
    return op


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def install(cls) -> None:
    """Give ``cls`` NumPy's operators and the methods ``.T .reshape .sum ...``."""
    for dunder, fn in _BINOPS.items():
        setattr(cls, f"__{dunder}__", _binop(fn))
        setattr(cls, f"__r{dunder}__", _binop(fn, reflected=True))
    for dunder, fn in _COMPARE.items():
        setattr(cls, f"__{dunder}__", _binop(fn))
    cls.__neg__ = lambda self: _np().negative(self)
    cls.__pos__ = lambda self: _np().positive(self)
    cls.__abs__ = lambda self: _np().absolute(self)
    cls.__invert__ = lambda self: _np().invert(self)
    cls.__getitem__ = lambda self, idx: _np()._getitem(self, idx)
    cls.at = property(_at, doc="JAX's functional updates: ``x.at[idx].set(y)``, ``.add``, "
                      "``.subtract``, ``.multiply``, ``.divide``, ``.min``, ``.max``, ``.get``.")
    cls.T = property(lambda self: _np().transpose(self))
    cls.reshape = lambda self, *shape, order="C": _np().reshape(
        self, shape[0] if len(shape) == 1 else shape, order)
    cls.astype = lambda self, dtype: _np().astype(self, dtype)
    cls.transpose = lambda self, *axes: _np().transpose(
        self, None if not axes else axes[0] if len(axes) == 1 else axes)
    cls.squeeze = lambda self, axis=None: _np().squeeze(self, axis)
    cls.ravel = lambda self: _np().ravel(self)
    cls.flatten = cls.ravel
    for name in ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin"):
        setattr(cls, name, _method(name))
    cls.dot = lambda self, other: _np().dot(self, other)


def _at(self):
    from ember.numpy._indexing import _IndexUpdateHelper
    return _IndexUpdateHelper(self)


def _method(name):
    def m(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    m.__name__ = name
    return m
