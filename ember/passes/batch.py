"""``ember-batch``: replace each ``ember.vmap`` op by batched code, innermost first.

The per-example callee is walked in order; each op is re-emitted through its batching rule
(``batching.BATCHING``) with the batch dimension of every value tracked beside it. Ops whose
operands are all unbatched are copied as they are, so shared weights stay unbatched.
``ember.call`` inside a mapped function is batched by inlining its callee.
"""

from __future__ import annotations

from ember._mlir import ir
from ember.dialects import OPS
from ember.passes import (
    batch_collectives,  # noqa: F401  (collective rules)
    batch_control_flow,  # noqa: F401  (control-flow rules)
    batch_indexing,  # noqa: F401  (indexing rules)
)
from ember.passes.registry import Pass, PassError, func_ops, register
from ember.rules.batching import Batcher, _callees
from ember.rules.lowering import LOWERINGS


@register
class Batch(Pass):
    """Batch every ``ember.vmap`` op."""

    name = "ember-batch"
    summary = "Replace ember.vmap ops by batched ember ops (vmap as a compiler pass)"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            batcher = Batcher(module.operation)
            mapped = set()
            for f in func_ops(module):
                mapped |= batcher.batch_function(f)
            # Per-example callees nothing else refers to any more are dead, and so are the
            # functions only they called (their bodies were inlined into the batched code).
            dead = mapped
            while dead:
                used = _callees(module.operation)
                dead = {name for name in dead - used
                        if "sym_visibility" in batcher.table[name].attributes}
                called = set().union(*(_callees(batcher.table[n]) for n in dead)) if dead \
                    else set()
                for name in dead:
                    batcher.table[name].operation.erase()
                dead = called



def _lower_unbatched_vmap(c):
    raise PassError(f"{c.op.location}: error: 'ember.vmap' must be replaced by the ember-batch "
                    "pass before ember-to-linalg; add ember-batch to the pipeline")


LOWERINGS["ember.vmap"] = _lower_unbatched_vmap


def _lower_unbound_collective(c):
    name = ir.StringAttr(c.op.attributes["axis_name"]).value
    raise PassError(f"{c.op.location}: error: '{c.op.name}' names the axis {name!r}, which no "
                    "enclosing ember.vmap binds (vmap(..., axis_name=...)); ember-batch "
                    "resolves collectives of the vmaps it batches")


for _name, _op in OPS.items():
    if _op.family == "collective":
        LOWERINGS[_name] = _lower_unbound_collective
