"""ember.numpy elementwise functions beyond the first cut."""

from __future__ import annotations

__all__: list[str] = []
