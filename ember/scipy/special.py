"""ember.scipy.special."""

from __future__ import annotations

__all__: list[str] = []
