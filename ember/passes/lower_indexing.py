"""Lowering rules of the ops in ember/dialects/indexing.py."""

from __future__ import annotations

__all__: list[str] = []
