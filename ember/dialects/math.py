"""More elementwise math ops (inverse trig and hyperbolic, cbrt, erf_inv, lgamma, ...)."""

from __future__ import annotations

__all__: list[str] = []
