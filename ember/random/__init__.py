"""ember.random: JAX's functional threefry-2x32 PRNG, in ember ops."""

from __future__ import annotations

__all__: list[str] = []
