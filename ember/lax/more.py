"""lax functions of the ops in ember/dialects/{math,indexing,bits,sort_scan}.py."""

from __future__ import annotations

__all__: list[str] = []
