"""``ember.checkpoint`` under reverse mode: the residuals of a checkpointed call are not kept
for the backward pass; the backward pass recomputes them from the call's arguments and the
values its policy saves (JAX's ``jax.checkpoint``, with JAX's policies).

The JVP rule of a checkpointed ``ember.call`` computes its results forward (inlined when the
policy saves some of its intermediates, so that they exist) and emits one linear op,
``ember.checkpoint_linear``, reading the tangents, the arguments and the saved values. Its
transpose runs reverse mode on the callee again, right where the backward pass needs it,
reading only the arguments and the saved values; the forward ops it copies are marked
rematerialized.

IREE keeps the recomputation: ember-to-linalg reads one operand of each recomputed op (or
fusion holding one) through ``distinct_copy``, so IREE's CSE does not merge it back into the
forward pass (docs/guide.md, "Checkpointing", has the figures).
"""

from __future__ import annotations

from ember._mlir import ir
from ember.errors import PassError
from ember.rules.autodiff import JVP, TRANSPOSE, remap_nested, vjp_block
from ember.rules.base import CHECKPOINT_ATTR
from ember.rules.batching import batch_elementwise, batching
from ember.rules.lowering import lowering

_CONTRACTIONS = ("ember.dot_general", "ember.conv")


def saveable(policy: str, op) -> bool:
    """Whether ``policy`` (JAX's policy names; ``save_only_these_names:a,b`` and
    ``save_any_names_but_these:a,b`` with their names; ``save_from_both_policies:p|q``)
    saves the results of ``op`` for the backward pass."""
    name, _, arg = policy.partition(":")
    if name == "everything_saveable":
        return True
    if name == "nothing_saveable":
        return False
    if name == "dots_saveable":
        return op.name in _CONTRACTIONS
    if name == "dots_with_no_batch_dims_saveable":
        return op.name == "ember.dot_general" and \
            len(ir.DenseI64ArrayAttr(op.attributes["lhs_batch"])) == 0
    if name in ("save_only_these_names", "save_any_names_but_these"):
        if op.name != "ember.checkpoint_name":
            return False
        named = ir.StringAttr(op.attributes["tag"]).value in arg.split(",")
        return named if name == "save_only_these_names" else not named
    if name == "save_from_both_policies":
        first, _, second = arg.partition("|")
        return saveable(first, op) or saveable(second, op)
    raise ValueError(f"unknown checkpoint policy {policy!r}")


def _table_of(op):
    module = op.operation
    while module.name != "builtin.module":
        module = module.parent
    return ir.SymbolTable(module)


def _checkpointed_call(ad, op, x, out, t, attrs):
    callee = ad.table[attrs["callee"]]
    block = callee.regions[0].blocks[0]
    policy = ir.StringAttr(op.attributes[CHECKPOINT_ATTR]).value
    ops = [o.operation for o in block.operations][:-1]
    picks = [(i, j) for i, o in enumerate(ops) if saveable(policy, o)
             for j in range(len(o.results))]
    saved = []
    if picks:      # the saved values must exist: compute the callee inline, not by a call
        env = dict(zip(block.arguments, x))
        for o in ops:
            with ad.primal_ip:
                new = o.clone()
            for k, v in enumerate(o.operands):
                new.operands[k] = env.get(v, v)
            remap_nested(new, env)
            for old, r in zip(o.results, new.results):
                env[old] = r
        ret = list(block.operations)[-1].operation
        for r, v in zip(op.results, [env[v] for v in ret.operands]):
            ad.replace(r, v)
        saved = [env[ops[i].results[j]] for i, j in picks]
    tangents = [ti if ti is not None else ad.zeros(xi) for xi, ti in zip(x, t)]
    i64 = ir.IntegerType.get_signless(64)
    with ad.linear_ip:
        lin = ir.Operation.create(
            "ember.checkpoint_linear", results=[r.type for r in op.results],
            operands=tangents + list(x) + saved,
            attributes={"callee": ir.FlatSymbolRefAttr.get(attrs["callee"]),
                        "num_args": ir.IntegerAttr.get(i64, len(x)),
                        "saved": ir.DenseI64ArrayAttr.get([v for p in picks for v in p])})
    return list(lin.results)


def _t_checkpoint_linear(tc, op, cts, lin, attrs):
    n = attrs["num_args"]
    table = _table_of(op)
    block = table[attrs["callee"]].regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    operands = list(op.operands)
    flat = list(attrs["saved"])
    reuse = {ops[i].results[j]: v
             for (i, j), v in zip(zip(flat[::2], flat[1::2]), operands[2 * n:])}
    dargs = [k for k in range(n) if lin[k]]
    cts_in = {i: c for i, c in enumerate(cts) if c is not None}
    results = vjp_block(tc.ip, block, operands[n:2 * n], dargs, cts_in, table,
                        where=str(op.location), reuse=reuse, remat=True)
    grads = dict(zip(dargs, results[len(op.results):]))
    return [grads.get(k) for k in range(n)] + [None] * (len(operands) - n)


def _name_jvp(ad, op, x, out, t, attrs):
    return [t[0]]       # a name is the identity: so is its derivative


JVP["ember.checkpoint_name"] = _name_jvp
JVP["ember.call"] = _checkpointed_call      # reached only for checkpointed calls in reverse
TRANSPOSE["ember.checkpoint_linear"] = _t_checkpoint_linear


# --- the other rules of these ops --------------------------------------------------------------

batching("checkpoint_name")(batch_elementwise)


@lowering("checkpoint_name")
def _lower_name(c):
    return [c.operands[0]]


@lowering("checkpoint_linear")
def _lower_internal(c):
    raise PassError(f"{c.op.location}: error: '{c.op.name}' exists only inside "
                    "ember-differentiate")


@batching("checkpoint_linear")
def _batch_internal(ctx, op, inputs, attrs):
    raise PassError(f"{op.location}: error: '{op.name}' exists only inside "
                    "ember-differentiate")
