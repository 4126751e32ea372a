"""lax functions of the ops in ember/dialects/math.py: the elementwise special functions."""

from __future__ import annotations

from ember.frontend.eager import eager
from ember.frontend.tracing import bind, current_trace

_MATH_UNARY = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt",
               "exp2", "log2", "erfc", "erf_inv", "lgamma", "digamma", "signbit")
__all__ = list(_MATH_UNARY) + ["nextafter", "copysign"]


def _unary(name):
    def f(x):
        x = current_trace().lift(x)
        return bind(f"ember.{name}", x, _weak=x.weak_type and name != "signbit")[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` of a float array (the ``ember.{name}`` op)."
    return eager(f)


def _binary(name):
    def f(x, y):
        # lax/__init__.py imports this module at its end: its helpers are read at call time.
        from ember.lax import _binary_operands, _is_weak
        weak = _is_weak(x) and _is_weak(y)
        x, y = _binary_operands(x, y)
        return bind(f"ember.{name}", x, y, _weak=weak)[0]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise ``{name}`` of float arrays of equal shape and dtype (the "
                 f"``ember.{name}`` op).")
    return eager(f)


for _name in _MATH_UNARY:
    globals()[_name] = _unary(_name)
nextafter = _binary("nextafter")
copysign = _binary("copysign")
