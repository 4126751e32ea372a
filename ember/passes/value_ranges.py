"""``ember-value-ranges``: mark ``sin``, ``cos`` and ``tan`` whose arguments are known to be
small, for the cheap argument reduction.

ember reduces a trigonometric function's argument by Payne and Hanek's method, exact for
every float but several times the work of the function's polynomial. Cody and Waite's
subtraction of pi/2 in three parts is as accurate up to ``trig.SMALL_ARGUMENT`` (float32).
This pass bounds values by the families' rules (``ember/rules/ranges.py``: a constant by its
largest element, ``sin`` by 1, a sum by the sum of its operands' bounds, ...; any value of a
float dtype by the dtype's largest float) and sets ``small_arguments`` on each ``sin``,
``cos`` and ``tan`` whose operand's bound is below it: in a chain such as
``sin(cos(x) * 3 + 1)``, every function after the first. The lowering reads the attribute.
"""

from __future__ import annotations

import numpy as np

from ember._mlir import ir, walk
from ember.dialects.trig import SMALL_ARGUMENT
from ember.passes.registry import Pass, func_ops, register
from ember.rules.base import aval_of_type
from ember.rules.ranges import bounds_of

_TRIG = ("ember.sin", "ember.cos", "ember.tan")
# (room for the rounding of the ops a bound was carried through: 2^-10 relative)
_SLACK = 1 + 2 ** -10


@register
class ValueRanges(Pass):
    """Set ``small_arguments`` on the trigonometric functions of provably small operands."""

    name = "ember-value-ranges"
    summary = "Mark sin, cos and tan of provably small arguments for the cheap reduction"

    def run(self, module: ir.Module) -> None:
        with module.context:
            for f in func_ops(module):
                trig = [op for op in walk(f) if op.name in _TRIG]
                if not trig:            # (no bounds to compute: most programs)
                    continue
                bounds = bounds_of(f)
                for op in trig:
                    x = op.operands[0]
                    dtype = aval_of_type(x.type).dtype
                    if dtype.kind != "f":       # complex operands: their own emitters
                        continue
                    bound = bounds.get(x, float(np.finfo(dtype).max))
                    if bound * _SLACK <= SMALL_ARGUMENT:
                        op.attributes["small_arguments"] = ir.BoolAttr.get(True)
