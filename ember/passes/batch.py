"""``ember-batch``: replace each ``ember.vmap`` op by batched code, innermost first.

The per-example callee is walked in order; each op is re-emitted through its batching rule
(``batching.BATCHING``) with the batch dimension of every value tracked beside it. Ops whose
operands are all unbatched are copied as they are, so shared weights stay unbatched.
``ember.call`` inside a mapped function is batched by inlining its callee.
"""

from __future__ import annotations

import ember.dialects  # noqa: F401  (fills BATCHING: every family's batching rules)
from ember._mlir import ir
from ember.passes.registry import Pass, func_ops, register
from ember.rules.batching import Batcher, callees


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
                used = callees(module.operation)
                dead = {name for name in dead - used
                        if "sym_visibility" in batcher.table[name].attributes}
                called = set().union(*(callees(batcher.table[n]) for n in dead)) if dead \
                    else set()
                for name in dead:
                    batcher.table[name].operation.erase()
                dead = called
