"""The Array API standard's inspection namespace (``__array_namespace_info__``)."""

from __future__ import annotations

import numpy as np

from ember import dtypes

_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}


# The standard's real dtypes (float16 and bfloat16 are ember's, not the standard's).
_STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128")


class Info:
    """What ``ember.numpy`` supports, as the Array API describes it (2024.12)."""

    __module__ = "ember.numpy"

    def capabilities(self) -> dict:
        # Boolean masks give data-dependent shapes, which jit refuses (as JAX reports).
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self):
        from ember.backends import default_backend, devices
        return devices(default_backend())[0]

    def devices(self) -> list:
        from ember.backends import devices
        return devices()

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": dtypes.default_float(),
                "complex floating": dtypes.default_complex(),
                "integral": dtypes.default_int(), "indexing": dtypes.default_int()}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The supported dtypes by name, of ``kind`` (a name of the standard's kinds, a dtype
        or a tuple of them) when given; 64-bit ones only under ``enable_x64``."""
        from ember.config import config
        found = {}
        for dt in dtypes.SUPPORTED:
            dt = np.dtype(dt)
            if dt in dtypes._NARROW and not config.enable_x64:
                continue
            if dt.name in _STANDARD and self._is_kind(dt, kind):
                found[dt.name] = dt
        return found

    def _is_kind(self, dt: np.dtype, kind) -> bool:
        if kind is None:
            return True
        if isinstance(kind, tuple):
            return any(self._is_kind(dt, k) for k in kind)
        if isinstance(kind, str) and kind in _KINDS:
            return dt.kind in _KINDS[kind]
        return dt == np.dtype(kind)
