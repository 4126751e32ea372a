"""``ember-value-ranges``: let ``sin``, ``cos`` and ``tan`` of small arguments take the cheap
argument reduction.

ember reduces a trigonometric function's argument by Payne and Hanek's method, exact for
every float but several times the work of the function's polynomial. Cody and Waite's
subtraction of pi/2 in three parts is as accurate up to ``trig.SMALL_ARGUMENT`` (float32).
This pass bounds values by the families' rules (``ember/rules/ranges.py``: a constant by its
largest element, ``sin`` by 1, a sum by the sum of its operands' bounds, ...; any value of a
float dtype by the dtype's largest float) and sets ``small_arguments`` on each ``sin``,
``cos`` and ``tan`` whose operand's bound is below it: in a chain such as
``sin(cos(x) * 3 + 1)``, every function after the first. The lowering reads the attribute.

A function with no bound on its operand (``sin(x)`` of an argument) of ``guard-elements``
elements or more, at the function's top level, is checked at run time instead: an
``ember.cond`` on ``max |x| <= SMALL_ARGUMENT`` runs it with ``small_arguments`` when every
element is small (NaN and infinities fail the check), as before otherwise. The check reads
the operand once and costs a host round trip, which a large operand amortizes; inside a loop
it would cost one per step, so loops are left alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ember._mlir import ir, walk
from ember.dialects import emit
from ember.dialects.trig import SMALL_ARGUMENT
from ember.passes.registry import Pass, func_ops, register
from ember.rules.base import aval_of_type
from ember.rules.ranges import bounds_of

_TRIG = ("ember.sin", "ember.cos", "ember.tan")
# (room for the rounding of the ops a bound was carried through: 2^-10 relative)
_SLACK = 1 + 2 ** -10
_SMALL = "small_arguments"


@register
@dataclasses.dataclass
class ValueRanges(Pass):
    """Set ``small_arguments`` on the trigonometric functions of provably small operands;
    check large unbounded operands at run time."""

    name = "ember-value-ranges"
    summary = "Mark sin, cos and tan of small arguments for the cheap argument reduction"
    guard_elements: int = dataclasses.field(default=1 << 16, metadata={
        "help": "the fewest elements of an unbounded operand checked at run time (0: none)"})

    def run(self, module: ir.Module) -> None:
        with module.context:
            for f in func_ops(module):
                trig = [op for op in walk(f) if op.name in _TRIG]
                if not trig:            # (no bounds to compute: most programs)
                    continue
                bounds = bounds_of(f)
                top = f.regions[0].blocks[0]
                for op in trig:
                    x = op.operands[0]
                    aval = aval_of_type(x.type)
                    if aval.dtype.kind != "f":      # complex operands: their own emitters
                        continue
                    bound = bounds.get(x, float(np.finfo(aval.dtype).max))
                    if bound * _SLACK <= SMALL_ARGUMENT:
                        op.attributes[_SMALL] = ir.BoolAttr.get(True)
                    elif (self.guard_elements and aval.size >= self.guard_elements
                          and aval.dtype != np.float64 and op.operation.block == top):
                        with op.location:
                            _checked(op, aval)


def _checked(op, aval) -> None:
    """Replace ``op`` by ``cond(max |x| <= SMALL_ARGUMENT, op with small_arguments, op)``."""
    x = op.operands[0]
    with ir.InsertionPoint(op):
        (m,) = emit("ember.reduce_max", emit("ember.abs", [x]), axes=tuple(range(aval.ndim)))
        (limit,) = emit("ember.constant", [],
                        value=np.array(SMALL_ARGUMENT / _SLACK, dtype=aval.dtype))
        (small,) = emit("ember.le", [m, limit])
        cond = ir.Operation.create("ember.cond", results=[op.results[0].type],
                                   operands=[small], regions=2)
    for region, cheap in zip(cond.regions, (True, False)):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            copy = op.clone()
            if cheap:
                copy.attributes[_SMALL] = ir.BoolAttr.get(True)
            ir.Operation.create("ember.yield", operands=[copy.results[0]])
    op.results[0].replace_all_uses_with(cond.results[0])
    op.erase()
