"""Sorting and cumulative ops: sort (multi-operand), cumulative sum/prod/max/min."""

from __future__ import annotations

from ember.rules.base import Attr, OpTypeError, define
from ember.rules.type_rules import aval, check_axes, check_class, fmt

__all__: list[str] = ["CUMULATIVE"]


def _sort(avals, attrs):
    if not avals:
        raise OpTypeError("needs at least one operand")
    first = avals[0]
    for a in avals:
        if a.shape != first.shape:
            raise OpTypeError(f"operands must have equal shapes, got {fmt(avals)}")
    if first.ndim == 0:
        raise OpTypeError(f"cannot sort a rank-0 operand, got {fmt(avals)}")
    check_axes([attrs["dimension"]], first.ndim, "dimension")
    if not 1 <= attrs["num_keys"] <= len(avals):
        raise OpTypeError(f"num_keys={attrs['num_keys']} must be between 1 and the number of "
                          f"operands ({len(avals)})")
    check_class(avals[:attrs["num_keys"]], "real")     # complex keys have no order
    return [aval(a.shape, a.dtype) for a in avals]


define("sort", None, _sort,
       attrs=(Attr("dimension", "i64"), Attr("num_keys", "i64", 1)),
       family="sort_scan",
       doc="Stable sort of all operands along `dimension`, ordered lexicographically by the "
           "first `num_keys` operands (ascending; NaN after everything, -0.0 equal to 0.0; "
           "the others follow their keys).")

# name: (dtype class, combining elementwise op)
CUMULATIVE = {"cumsum": ("numeric", "add"), "cumprod": ("numeric", "mul"),
              "cummax": ("real", "max"), "cummin": ("real", "min")}


def _cumulative_rule(cls):
    def infer(avals, attrs):
        (x,) = avals
        check_class(avals, cls)
        if x.ndim == 0:
            raise OpTypeError(f"needs an operand of rank >= 1, got {fmt(avals)}")
        check_axes([attrs["axis"]], x.ndim)
        return [aval(x.shape, x.dtype)]
    return infer


for _name, (_cls, _combine) in CUMULATIVE.items():
    define(_name, 1, _cumulative_rule(_cls),
           attrs=(Attr("axis", "i64"), Attr("reverse", "bool", False)), family="sort_scan",
           doc=f"Inclusive cumulative {_combine} along `axis` (from the end if `reverse`); "
               "NaN propagates.")
