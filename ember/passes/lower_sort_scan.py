"""Lowering rules of the ops in ember/dialects/sort_scan.py."""

from __future__ import annotations

__all__: list[str] = []
