"""More elementwise math ops (inverse trig and hyperbolic, cbrt, erf_inv, lgamma, ...).

All take floating-point operands of equal shape and dtype (as ``lax``); f16 and bf16 are
computed in f32 by their lowerings. Functions with no accurate ``math`` dialect lowering in
IREE use rational approximations as XLA does (Cephes for erfc, Giles for erf_inv, Lanczos
for lgamma and digamma).
"""

from __future__ import annotations

from ember import dtypes
from ember.rules.base import define
from ember.rules.type_rules import binary_rule, unary_rule

MATH_UNARY = {
    "asin": "arc sine", "acos": "arc cosine", "atan": "arc tangent",
    "sinh": "hyperbolic sine", "cosh": "hyperbolic cosine",
    "asinh": "inverse hyperbolic sine", "acosh": "inverse hyperbolic cosine",
    "atanh": "inverse hyperbolic tangent", "cbrt": "cube root (real, signed)",
    "exp2": "2 ** x", "log2": "base-2 logarithm",
    "erfc": "complementary error function 1 - erf(x), accurate for large x",
    "erf_inv": "inverse error function on [-1, 1] (+-inf at +-1, NaN outside)",
    "lgamma": "log of the absolute value of the gamma function",
    "digamma": "digamma function (NaN at the non-positive integers, as XLA)",
}
MATH_BINARY = {
    "nextafter": "the next representable value after x1 towards x2",
    "copysign": "the magnitude of x1 with the sign of x2",
}

# The functions with a complex form too (ember/passes/lower_complex.py).
COMPLEX_MATH = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")

# All are transcendental in cost (a function or a long polynomial) and have no float64 form
# in IREE's SPIR-V lowering, but for the cheap bit-level ones below.
for _name, _what in MATH_UNARY.items():
    _complex = _name in COMPLEX_MATH
    define(_name, 1, unary_rule("inexact" if _complex else "float", None),
           family="elementwise", cost="transcendental", traits=("f64_math",),
           doc=f"Elementwise {_what}, of a floating-point"
               f"{' or complex' if _complex else ''} operand.")

for _name, _what in MATH_BINARY.items():
    define(_name, 2, binary_rule("float"), family="elementwise",
           cost="transcendental" if _name == "nextafter" else "cheap",
           traits=("exact_bf16",),
           doc=f"Elementwise {_what}; floating-point operands of equal shape and dtype.")

define("signbit", 1, unary_rule("float", dtypes.bool_), family="elementwise",
       doc="Elementwise sign bit of a float (True for -0.0 and negative NaNs), as bool.")

__all__: list[str] = ["COMPLEX_MATH", "MATH_BINARY", "MATH_UNARY"]
