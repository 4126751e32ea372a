"""Region-holding control-flow ops: cond, while, scan."""

from __future__ import annotations

__all__: list[str] = []
