"""ember.numpy reductions, statistics, sorting and searching beyond the first cut."""

from __future__ import annotations

__all__: list[str] = []
