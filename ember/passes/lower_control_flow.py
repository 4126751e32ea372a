"""Lowering rules of the ops in ember/dialects/control_flow.py (to scf)."""

from __future__ import annotations

__all__: list[str] = []
