"""The ember dialect: its op families, each one module holding its ops' declarations and all
of their rules (types, lowering, batching, differentiation).

``FAMILIES`` is the one list of them; importing this package declares every op and fills every
rule table, so a pass that reads ``OPS`` from here sees the whole dialect. ``OPS`` maps each op
name (``ember.add``) to its declaration.
"""

from ember.dialects import (
    arithmetic,
    autodiff,
    bits,
    collectives,
    contraction,
    control_flow,
    conv,
    fusion,
    indexing,
    math,
    reduction,
    shape,
    sort_scan,
    special,
    spmd,
    trig,
    vmap,
)
from ember.rules.base import (
    OPS,
    Attr,
    OpDef,
    OpTypeError,
    aval_of_type,
    decode_attrs,
    emit,
)

FAMILIES = (arithmetic, math, trig, special, bits, shape, reduction, contraction, conv, indexing,
            sort_scan, collectives, control_flow, fusion, vmap, spmd, autodiff)

__all__ = ["FAMILIES", "OPS", "Attr", "OpDef", "OpTypeError", "aval_of_type", "decode_attrs",
           "emit"]
