"""The ember dialect. ``OPS`` maps each op name (``ember.add``) to its declaration."""

from ember.dialects import ops as _ops  # noqa: F401  (declares the ops)
from ember.dialects.base import OPS, Attr, OpDef, OpTypeError, aval_of_type, decode_attrs

__all__ = ["OPS", "Attr", "OpDef", "OpTypeError", "aval_of_type", "decode_attrs"]
