"""``ember-differentiate``: replace ``ember.jvp`` and ``ember.vjp`` ops by the ops computing
the derivatives, innermost first (the engine is ``ember/rules/autodiff.py``; the rules live
with their op families in ``ember/dialects/``).
"""

from __future__ import annotations

import dataclasses

from ember._mlir import ir, walk
from ember.dialects import OPS, aval_of_type, decode_attrs
from ember.passes.registry import Pass, func_ops, register
from ember.rules.autodiff import ADContext, differentiable, linearize_block, vjp_block, where_of
from ember.rules.base import REMAT_ATTR, inline_call
from ember.rules.batching import Batcher


@register
@dataclasses.dataclass
class Differentiate(Pass):
    """Expand every ``ember.jvp`` and ``ember.vjp`` op."""

    name = "ember-differentiate"
    summary = "Replace ember.jvp/ember.vjp ops by derivative code (forward mode, and " \
              "reverse mode as linearize + transpose)"
    keep_names: bool = dataclasses.field(default=False, metadata={
        "help": "leave the ember.checkpoint_name ops (identities) in place, so that the "
                "residuals they name can be told (ember.ad_checkpoint.saved_residuals)"})

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            self._module = module
            self._table = ir.SymbolTable(module.operation)
            self._done: set[str] = set()
            used = set()
            for f in func_ops(module):
                used |= self._expand_function(f)
            gone = ("ember.stop_gradient",) + (() if self.keep_names else
                                               ("ember.checkpoint_name",))
            for f in func_ops(module):
                for op in [o for o in walk(f.operation) if o.name in gone]:
                    op.results[0].replace_all_uses_with(op.operands[0])
                    op.erase()
            for f in func_ops(module):      # (the callees' stop_gradients gone: inlined)
                for op in [o for o in walk(f.operation) if o.name in CUSTOM_CALLS]:
                    used |= set(_symbols(op))
                    if any(_has_uses(r) for r in op.results):
                        _inline_primal(op, self._table)
                    else:       # a custom_vjp_call whose results its fwd computed
                        op.erase()
                for op in [o for o in walk(f.operation) if o.name == "ember.call"]:
                    if not any(_has_uses(r) for r in op.results):
                        op.erase()      # a checkpointed call whose callee was inlined
            _erase_dead(module, self._table, used)

    def _expand_function(self, f) -> set[str]:
        name = ir.StringAttr(f.attributes["sym_name"]).value
        if name in self._done:
            return set()
        self._done.add(name)
        used = set()
        for op in walk(f.operation):
            for callee in _symbols(op):
                if callee in self._table:
                    used |= self._expand_function(self._table[callee])
        for op in [o for o in walk(f.operation) if o.name in ("ember.jvp", "ember.vjp")]:
            used |= self._replace(op)
        return used

    def _replace(self, op) -> set[str]:
        attrs = decode_attrs(OPS[op.name], op)
        callee = self._table[attrs["callee"]]
        batched = _batch_inner(self._module, callee)
        block = callee.regions[0].blocks[0]
        n_in = len(block.arguments)
        primals = list(op.operands)[:n_in]
        extra = list(op.operands)[n_in:]
        dargs, dres = list(attrs["diff_args"]), list(attrs["diff_results"])
        with op.location:
            if op.name == "ember.jvp":
                results = self._forward(op, block, primals, dict(zip(dargs, extra)), dres)
            else:
                results = self._reverse(op, block, primals, dargs, dict(zip(dres, extra)))
        for old, new in zip(op.results, results):
            old.replace_all_uses_with(new)
        op.erase()
        return {attrs["callee"]} | batched

    def _forward(self, op, block, primals, tangents_in, dres):
        ip = ir.InsertionPoint(op)
        ad = ADContext(ip, ip, self._table)
        tangents = {}
        for i, arg in enumerate(block.arguments):
            t = tangents_in.get(i)
            if t is not None and differentiable(aval_of_type(arg.type).dtype):
                tangents[arg] = t
        outs, touts = linearize_block(ad, block, dict(zip(block.arguments, primals)), tangents)
        return outs + [t if t is not None else ad.zeros(outs[i]) for i, t in
                       ((i, touts[i]) for i in dres)]

    def _reverse(self, op, block, primals, dargs, cts_in):
        return vjp_block(ir.InsertionPoint(op), block, primals, dargs, cts_in, self._table,
                         where=where_of(op))


def _batch_inner(module, callee) -> set[str]:
    """Expand the ``ember.vmap`` ops inside ``callee`` (and what it calls) first: the
    differentiation rules see batched code, never a vmap. Returns the vmaps' callees, dead
    now (left alive, one's unresolved collectives would fail to lower)."""
    vmaps = [o for o in walk(callee.operation) if o.name == "ember.vmap"]
    if not vmaps:
        return set()
    names = {ir.FlatSymbolRefAttr(o.attributes["callee"]).value for o in vmaps}
    Batcher(module.operation).batch_function(callee)
    return names


CUSTOM_CALLS = ("ember.custom_jvp_call", "ember.custom_vjp_call")


def _symbols(op) -> list[str]:
    """The functions an op refers to (``callee`` and the custom rules' ``jvp``/``fwd``/
    ``bwd``)."""
    return [ir.FlatSymbolRefAttr(op.attributes[k]).value
            for k in ("callee", "jvp", "fwd", "bwd") if k in op.attributes]


def _has_uses(value) -> bool:
    return any(True for _ in value.uses)


def _inline_primal(op, table) -> None:
    """Replace a custom_jvp_call/custom_vjp_call that nothing differentiated by the ops of
    its primal function: what a call computes where no derivative is taken (a call would
    keep ember-fuse from fusing a softmax or a relu with its neighbours)."""
    n = ir.IntegerAttr(op.attributes["num_callee_operands"]).value \
        if "num_callee_operands" in op.attributes else len(op.operands)
    body = table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value].regions[0].blocks[0]
    inline_call(op, body, list(op.operands)[:n], remat=REMAT_ATTR in op.attributes)


def _erase_dead(module, table, candidates: set[str]) -> None:
    """Erase private callees of the expanded ops that nothing refers to any more."""
    dead = candidates
    while dead:
        used = {n for o in walk(module.operation) for n in _symbols(o)}
        dead = {n for n in dead - used if n in table and
                "sym_visibility" in table[n].attributes}
        called = set()
        for n in dead:
            called |= {c for o in walk(table[n].operation) for c in _symbols(o)}
            table[n].operation.erase()
        dead = called

