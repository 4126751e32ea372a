"""ember.numpy creation, shape, movement and linear-algebra functions beyond the first cut."""

from __future__ import annotations

__all__: list[str] = []
