"""Sorting and cumulative ops: sort (multi-operand), cumulative sum/prod/max/min."""

from __future__ import annotations

__all__: list[str] = []
