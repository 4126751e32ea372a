"""ember.scipy."""

from __future__ import annotations

from ember.scipy import linalg, special

__all__: list[str] = ["linalg", "special"]
