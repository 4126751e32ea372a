"""NumPy indexing on tracers and Arrays (gather/scatter), and JAX's x.at[...] updates."""

from __future__ import annotations

__all__: list[str] = []
