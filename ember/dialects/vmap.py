"""``ember.vmap``: a call of a per-example function over a batch axis, replaced by the
``ember-batch`` pass with batched code.

``in_axes``/``out_axes`` hold one non-negative axis per operand/result, or -1 where the
operand is shared (``in_axes=None``) or the result is not batched (``out_axes=None``). An
optional ``axis_name`` names the batch axis for the collectives inside the callee.
"""

from __future__ import annotations

from ember.errors import PassError
from ember.rules.base import Attr, OpTypeError, aval_of_type, callee_type, define
from ember.rules.lowering import lowering

__all__: list[str] = []


def with_batch(aval, axis: int, size: int):
    """``aval`` with a batch dimension of ``size`` inserted at ``axis`` (-1: unchanged)."""
    if axis < 0:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return aval._replace(shape=tuple(shape))


def _verify_vmap(op, attrs):
    name = attrs["callee"]
    ftype = callee_type(op, name, "maps")
    in_axes, out_axes, size = attrs["in_axes"], attrs["out_axes"], attrs["axis_size"]
    if len(in_axes) != len(op.operands) or len(out_axes) != len(op.results) or \
            len(ftype.inputs) != len(op.operands) or len(ftype.results) != len(op.results):
        raise OpTypeError(f"in_axes {in_axes} / out_axes {out_axes} / operands / results do "
                          f"not match the signature of @{name}: {ftype}")
    for kind, axes, inner, outer in (("operand", in_axes, ftype.inputs, op.operands),
                                     ("result", out_axes, ftype.results, op.results)):
        for i, (axis, t, v) in enumerate(zip(axes, inner, outer)):
            a = aval_of_type(t)
            if axis > a.ndim:
                raise OpTypeError(f"{kind} {i}: axis {axis} is out of range for {a.str_short()}")
            want = with_batch(a, axis, size)
            got = aval_of_type(v.type)
            if (want.shape, want.dtype) != (got.shape, got.dtype):
                raise OpTypeError(f"{kind} {i} has type {got.str_short()} but @{name} with "
                                  f"axis {axis} and axis_size {size} gives {want.str_short()}")


define("vmap", None, None,
       attrs=(Attr("callee", "symbol"), Attr("in_axes", "i64s"), Attr("out_axes", "i64s"),
              Attr("axis_size", "i64"), Attr("axis_name", "str", None)),
       family="transform", verify_op=_verify_vmap,
       doc="Map a per-example func.func over a batch axis (replaced by ember-batch).")


# --- lowering ---------------------------------------------------------------------------------

@lowering("vmap")
def _lower_unbatched_vmap(c):
    raise PassError(f"{c.op.location}: error: 'ember.vmap' must be replaced by the ember-batch "
                    "pass before ember-to-linalg; add ember-batch to the pipeline")
