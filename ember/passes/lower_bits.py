"""Lowering rules of the ops in ember/dialects/bits.py."""

from __future__ import annotations

__all__: list[str] = []
