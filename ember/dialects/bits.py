"""Bit-level ops: shifts, bitcast_convert_type, population_count."""

from __future__ import annotations

__all__: list[str] = []
