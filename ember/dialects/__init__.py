"""The ember dialect. ``OPS`` maps each op name (``ember.add``) to its declaration."""

# Importing a module declares its ops.
from ember.dialects import ops as _ops  # noqa: F401, I001  (first: the others build on it)
from ember.dialects import bits, collectives, control_flow, conv, indexing, math  # noqa: F401
from ember.dialects import autodiff, fusion, sort_scan, vmap  # noqa: F401
from ember.rules.base import (
    OPS,
    Attr,
    OpDef,
    OpTypeError,
    aval_of_type,
    decode_attrs,
    emit,
)

__all__ = ["OPS", "Attr", "OpDef", "OpTypeError", "aval_of_type", "decode_attrs", "emit"]
