"""ember.scipy."""

from __future__ import annotations

from ember.scipy import special

__all__: list[str] = ["special"]
