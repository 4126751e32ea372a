"""Structured control flow: cond, switch, while_loop, fori_loop, scan, map."""

from __future__ import annotations

__all__: list[str] = []
