"""Bounds on values: ``BOUNDS``, what bounds on an op's operands say of its result.

A bound ``B`` of a value says that every finite element ``x`` has ``|x| <= B``; NaNs and
infinities are not bounded (the ops that use a bound handle them alone). A rule
``rule(bounds, attrs) -> B | None`` gets its operands' bounds (None: not known) and returns
its single result's, or None; an op without a rule has results of no known bound, and so
does a block argument. The families register their rules with :func:`value_bound` beside
their other rules; ``ember-value-ranges`` (``passes/value_ranges.py``) runs the engine,
:func:`bounds_of`.

Example (in an op family's module, for its op ``ember.my_op``):
    >>> @value_bound("my_op")
    ... @known
    ... def _my_op_bound(bounds, attrs):
    ...     return bounds[0]
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ember._mlir import ir, walk
from ember.rules.base import OPS, decode_attrs

Rule = Callable[[list, dict], "float | None"]
BOUNDS: dict[str, Rule] = {}


def value_bound(*names: str):
    """Register a bound rule for the ops ``ember.<name>``."""
    def register(rule: Rule) -> Rule:
        for name in names:
            key = f"ember.{name}"
            assert key not in BOUNDS, f"{key}: two bound rules"
            BOUNDS[key] = rule
        return rule
    return register


def known(fn: Rule) -> Rule:
    """A rule that needs the bound of every operand (else the result has none)."""
    def rule(bounds, attrs):
        return None if any(b is None for b in bounds) else fn(bounds, attrs)
    return rule


def bounds_of(func: ir.Operation) -> dict[ir.Value, float]:
    """The bound of each value of ``func`` that has one: its ops in order, nested regions
    included (a value is defined before the ops that read it)."""
    out: dict[ir.Value, float] = {}
    for op in walk(func):
        rule = BOUNDS.get(op.name)
        if rule is None or len(op.results) != 1:
            continue
        bound = rule([out.get(v) for v in op.operands], decode_attrs(OPS[op.name], op))
        if bound is not None and math.isfinite(bound):
            out[op.results[0]] = float(bound)
    return out
