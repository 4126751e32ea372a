"""``ember.jvp`` and ``ember.vjp``: derivatives of a callee, replaced by the
``ember-differentiate`` pass with the ops that compute them.

Both call ``callee`` on the primal operands (the first ``n`` operands, ``n`` its arity).
``diff_args`` lists the arguments differentiated with respect to, ``diff_results`` the
results differentiated.

- ``ember.jvp`` (forward mode): operands are the primals, then one tangent per ``diff_args``
  entry; results are the callee's results, then one tangent per ``diff_results`` entry.
- ``ember.vjp`` (reverse mode): operands are the primals, then one cotangent per
  ``diff_results`` entry; results are the callee's results, then one cotangent per
  ``diff_args`` entry.

A tangent or cotangent has its primal's type.

The rest of the family marks what differentiation treats specially: ``stop_gradient`` and
``checkpoint_name`` (identities with a zero derivative, or named for a checkpoint policy),
user-defined derivatives and checkpoints. Their rules live here:

- ``custom_jvp_call``: the user's JVP function is inlined; its ops on tangents become linear
  ops, which reverse mode transposes. ``custom_vjp_call`` (reverse mode only): the user's
  forward function computes the results and the residuals; a ``custom_vjp_bwd`` linear op
  stands for the backward function until the transpose calls it.
- ``ember.checkpoint`` under reverse mode: the residuals of a checkpointed call are not kept
  for the backward pass; the backward pass recomputes them from the call's arguments and the
  values its policy saves (JAX's ``jax.checkpoint``, with JAX's policies). The JVP rule of a
  checkpointed ``ember.call`` (in ``control_flow.py``, with the call) computes its results
  forward (inlined when the policy saves some of its intermediates, so that they exist) and
  emits one linear op, ``ember.checkpoint_linear``, reading the tangents, the arguments and
  the saved values. Its transpose runs reverse mode on the callee again, right where the
  backward pass needs it, reading only the arguments and the saved values; the forward ops
  it copies are marked rematerialized. IREE keeps the recomputation: ember-to-linalg reads
  one operand of each recomputed op (or fusion holding one) through ``distinct_copy``, so
  IREE's CSE does not merge it back into the forward pass (docs/guide.md, "Checkpointing",
  has the figures).
"""

from __future__ import annotations

from ember._mlir import ir
from ember.errors import PassError
from ember.rules.autodiff import jvp, transpose, vjp_block
from ember.rules.base import (
    REMAT_ATTR,
    Attr,
    OpTypeError,
    aval_of_type,
    callee_type,
    clone_mapped,
    define,
    module_of,
)
from ember.rules.batching import batch_elementwise, batching
from ember.rules.lowering import lowering

__all__ = ["saveable"]


def _verify(kind):
    def verify(op, attrs):
        name = attrs["callee"]
        ftype = callee_type(op, name, "differentiates")
        ins, outs = list(ftype.inputs), list(ftype.results)
        dargs, dres = attrs["diff_args"], attrs["diff_results"]
        for what, idx, n in (("diff_args", dargs, len(ins)), ("diff_results", dres, len(outs))):
            if sorted(set(idx)) != list(idx) or any(not 0 <= i < n for i in idx):
                raise OpTypeError(f"{what} {tuple(idx)} must be increasing indices below {n}")
        extra_in = [ins[i] for i in dargs] if kind == "jvp" else [outs[i] for i in dres]
        extra_out = [outs[i] for i in dres] if kind == "jvp" else [ins[i] for i in dargs]
        want_in, want_out = ins + extra_in, outs + extra_out
        got_in = [v.type for v in op.operands]
        got_out = [v.type for v in op.results]
        if len(got_in) != len(want_in) or len(got_out) != len(want_out):
            raise OpTypeError(f"{len(got_in)} operands / {len(got_out)} results do not match "
                              f"@{name}: {ftype} with diff_args {tuple(dargs)} and "
                              f"diff_results {tuple(dres)}")
        for what, got, want in (("operand", got_in, want_in), ("result", got_out, want_out)):
            for i, (g, w) in enumerate(zip(got, want)):
                if aval_of_type(g) != aval_of_type(w):
                    raise OpTypeError(f"{what} {i} has type {g} but @{name} gives {w}")
    return verify


_ATTRS = (Attr("callee", "symbol"), Attr("diff_args", "i64s"), Attr("diff_results", "i64s"))
define("jvp", None, None, attrs=_ATTRS, family="transform", verify_op=_verify("jvp"),
       doc="The callee's results and their tangents (replaced by ember-differentiate).")
define("vjp", None, None, attrs=_ATTRS, family="transform", verify_op=_verify("vjp"),
       doc="The callee's results and the cotangents of its arguments (replaced by "
           "ember-differentiate).")


def _identity(avals, attrs):
    return [avals[0]]


define("stop_gradient", 1, _identity, family="autodiff",
       doc="Its operand, with a zero derivative (removed by ember-differentiate).")


def _verify_custom(*symbols):
    def verify(op, attrs):
        for s in symbols:
            callee_type(op, attrs[s], "calls")
    return verify


define("custom_jvp_call", None, None,
       attrs=(Attr("callee", "symbol"), Attr("jvp", "symbol"), Attr("num_args", "i64"),
              Attr("num_callee_operands", "i64")),
       family="autodiff", verify_op=_verify_custom("callee", "jvp"),
       doc="callee(operands[:num_callee_operands]), differentiated by the user's rule: @jvp "
           "takes the num_args arguments, their tangents and the remaining operands and "
           "returns the results and their tangents (ember-differentiate uses the rule and "
           "then calls callee).")
define("custom_vjp_call", None, None,
       attrs=(Attr("callee", "symbol"), Attr("fwd", "symbol"), Attr("bwd", "symbol"),
              Attr("num_residuals", "i64")),
       family="autodiff", verify_op=_verify_custom("callee", "fwd", "bwd"),
       doc="callee(operands), whose reverse-mode derivative is the user's: @fwd(operands) "
           "returns the results and num_residuals residuals, @bwd(residuals, cotangents) the "
           "operands' cotangents.")
define("custom_vjp_bwd", None, None,
       attrs=(Attr("bwd", "symbol"), Attr("num_residuals", "i64")),
       family="autodiff", verify_op=_verify_custom("bwd"),
       doc="The linear map of a custom_vjp_call (its tangents, then its residuals, in; its "
           "results' tangents out), transposed by calling @bwd; only inside "
           "ember-differentiate.")
define("checkpoint_linear", None, None,
       attrs=(Attr("callee", "symbol"), Attr("num_args", "i64"), Attr("saved", "i64s")),
       family="autodiff",
       doc="The linear map of a checkpointed call (tangents of its num_args arguments, the "
           "arguments, then the residuals its policy saved: the results (op, result) pairs of "
           "``saved`` name in the callee), transposed by recomputing the rest of the callee; "
           "only inside ember-differentiate.")
define("checkpoint_name", 1, _identity, attrs=(Attr("tag", "str"),), family="autodiff",
       doc="Its operand, named for checkpoint policies (save_only_these_names, ...); removed "
           "by ember-differentiate.")


# --- stop_gradient, checkpoint_name: identities ---------------------------------------------

@jvp("stop_gradient")
def _stop_gradient(ad, op, x, out, t, attrs):
    return [None]


@jvp("checkpoint_name")
def _name_jvp(ad, op, x, out, t, attrs):
    return [t[0]]       # a name is the identity: so is its derivative


# ember-differentiate removes both; a pipeline without it batches and lowers them as the
# identities they are.
batching("stop_gradient", "checkpoint_name")(batch_elementwise)


@lowering("stop_gradient", "checkpoint_name")
def _lower_identity(c):
    return [c.operands[0]]


# --- jvp, vjp: replaced by ember-differentiate ----------------------------------------------

@lowering("jvp", "vjp")
def _lower_underived(c):
    raise PassError(f"{c.op.location}: error: '{c.op.name}' reached ember-to-linalg; run "
                    "ember-differentiate first")


@batching("jvp", "vjp")
def _batch_underived(ctx, op, inputs, attrs):
    raise PassError(f"{op.location}: error: '{op.name}' inside a vmap reached ember-batch; "
                    "run ember-differentiate first")


# --- custom_jvp_call, custom_vjp_call, custom_vjp_bwd ---------------------------------------

def _inline_rule(ad, block, env: dict, tangents: set):
    """Copy the ops of a user's JVP function: those reading a tangent go with the linear ops
    (reverse mode transposes them: they must be linear), the others with the primal ops."""
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        linear = any(env[v] in tangents for v in op.operands)
        with ad.linear_ip if linear else ad.primal_ip:
            new = clone_mapped(op, [env[v] for v in op.operands], env)
        if ad.remat and not linear:
            # A checkpoint's backward pass recomputing the function (a softmax): marked as
            # linearize_block marks its copies, or CSE merges it back into the forward pass
            new.attributes[REMAT_ATTR] = ir.UnitAttr.get()
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


@jvp("custom_jvp_call")
def _custom_jvp(ad, op, x, out, t, attrs):
    n, m = attrs["num_args"], attrs["num_callee_operands"]
    block = ad.table[attrs["jvp"]].regions[0].blocks[0]
    given = {ti for ti in t[:n] if ti is not None}
    tangents = [ti if ti is not None else ad.zeros(xi) for xi, ti in zip(x[:n], t[:n])]
    env = dict(zip(block.arguments, x[:n] + tangents + x[m:]))
    outs = _inline_rule(ad, block, env, given)
    # The rule's primal results are the op's (as JAX's): the function's own copy would
    # compute them once more (a softmax twice, until CSE).
    for r, v in zip(out, outs[:len(op.results)]):
        ad.replace(r, v)
    return outs[len(op.results):]


@jvp("custom_vjp_call")
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


@transpose("custom_vjp_bwd")
def _t_custom_vjp_bwd(tc, op, cts, lin, attrs):
    r = attrs["num_residuals"]
    n = len(op.operands) - r
    cts = [c if c is not None else tc.zeros(aval_of_type(v.type))
           for v, c in zip(op.results, cts)]
    out = _call(tc.ip, attrs["bwd"], list(op.operands)[n:] + cts,
                [v.type for v in list(op.operands)[:n]])
    return out + [None] * r


@lowering("custom_jvp_call", "custom_vjp_call", "custom_vjp_bwd")
def _lower_custom(c):
    raise PassError(f"{c.op.location}: error: '{c.op.name}' reached ember-to-linalg; run "
                    "ember-differentiate first")


@batching("custom_jvp_call", "custom_vjp_call", "custom_vjp_bwd")
def _batch_custom(ctx, op, inputs, attrs):
    raise PassError(f"{op.location}: error: '{op.name}' inside a vmap reached ember-batch; "
                    "run ember-differentiate first")


# --- checkpoints: checkpoint_linear -----------------------------------------------------------

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




@transpose("checkpoint_linear")
def _t_checkpoint_linear(tc, op, cts, lin, attrs):
    n = attrs["num_args"]
    table = ir.SymbolTable(module_of(op))
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


@lowering("checkpoint_linear")
def _lower_internal(c):
    raise PassError(f"{c.op.location}: error: '{c.op.name}' exists only inside "
                    "ember-differentiate")


@batching("checkpoint_linear")
def _batch_internal(ctx, op, inputs, attrs):
    raise PassError(f"{op.location}: error: '{op.name}' exists only inside "
                    "ember-differentiate")
