"""Differentiation rules of user-defined derivatives: ``custom_jvp_call`` (the user's JVP
function, inlined: its ops on tangents become linear ops, which reverse mode transposes) and
``custom_vjp_call`` (reverse mode only: the user's forward function computes the results and
the residuals; a ``custom_vjp_bwd`` linear op stands for the backward function until the
transpose calls it)."""

from __future__ import annotations

from ember._mlir import ir
from ember.dialects import aval_of_type
from ember.errors import PassError
from ember.rules.autodiff import JVP, TRANSPOSE, ADContext, remap_nested
from ember.rules.batching import batching
from ember.rules.lowering import lowering


def _inline_rule(ad: ADContext, block, env: dict, tangents: set):
    """Copy the ops of a user's JVP function: those reading a tangent go with the linear ops
    (reverse mode transposes them: they must be linear), the others with the primal ops."""
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        linear = any(env[v] in tangents for v in op.operands)
        with ad.linear_ip if linear else ad.primal_ip:
            new = op.clone()
        for i, v in enumerate(op.operands):
            new.operands[i] = env[v]
        remap_nested(new, env)
        for old, r in zip(op.results, new.results):
            env[old] = r
            if linear:
                tangents.add(r)
    raise PassError(f"{block.owner.location}: error: block has no terminator")


def _call(ip, fn: str, operands, result_types) -> list:
    with ip:
        return list(ir.Operation.create(
            "ember.call", results=list(result_types), operands=list(operands),
            attributes={"callee": ir.FlatSymbolRefAttr.get(fn)}).results)


def _custom_jvp(ad, op, x, out, t, attrs):
    n, m = attrs["num_args"], attrs["num_callee_operands"]
    block = ad.table[attrs["jvp"]].regions[0].blocks[0]
    given = {ti for ti in t[:n] if ti is not None}
    tangents = [ti if ti is not None else ad.zeros(xi) for xi, ti in zip(x[:n], t[:n])]
    env = dict(zip(block.arguments, x[:n] + tangents + x[m:]))
    outs = _inline_rule(ad, block, env, given)
    return outs[len(op.results):]


def _custom_vjp(ad, op, x, out, t, attrs):
    if not ad.reverse:
        raise PassError(f"{op.location}: error: can't apply forward-mode autodiff (jvp) to a "
                        "custom_vjp function.")
    fwd = ad.table[attrs["fwd"]]
    k = len(op.results)
    results = _call(ad.primal_ip, attrs["fwd"], x,
                    ir.FunctionType(ir.TypeAttr(fwd.attributes["function_type"]).value).results)
    for r, v in zip(op.results, results[:k]):
        ad.replace(r, v)
    tangents = [ti if ti is not None else ad.zeros(xi) for xi, ti in zip(x, t)]
    with ad.linear_ip:
        lin = ir.Operation.create(
            "ember.custom_vjp_bwd", results=[r.type for r in op.results],
            operands=tangents + results[k:],
            attributes={"bwd": ir.FlatSymbolRefAttr.get(attrs["bwd"]),
                        "num_residuals": ir.IntegerAttr.get(
                            ir.IntegerType.get_signless(64), attrs["num_residuals"])})
    return list(lin.results)


def _t_custom_vjp_bwd(tc, op, cts, lin, attrs):
    r = attrs["num_residuals"]
    n = len(op.operands) - r
    cts = [c if c is not None else tc.zeros(aval_of_type(v.type))
           for v, c in zip(op.results, cts)]
    out = _call(tc.ip, attrs["bwd"], list(op.operands)[n:] + cts,
                [v.type for v in list(op.operands)[:n]])
    return out + [None] * r


JVP["ember.custom_jvp_call"] = _custom_jvp
JVP["ember.custom_vjp_call"] = _custom_vjp
TRANSPOSE["ember.custom_vjp_bwd"] = _t_custom_vjp_bwd



@lowering("custom_jvp_call", "custom_vjp_call", "custom_vjp_bwd")
def _lower_custom(c):
    raise PassError(f"{c.op.location}: error: '{c.op.name}' reached ember-to-linalg; run "
                    "ember-differentiate first")


@batching("custom_jvp_call", "custom_vjp_call", "custom_vjp_bwd")
def _batch_custom(ctx, op, inputs, attrs):
    raise PassError(f"{op.location}: error: '{op.name}' inside a vmap reached ember-batch; "
                    "run ember-differentiate first")
