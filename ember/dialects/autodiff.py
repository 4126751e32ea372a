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
"""

from __future__ import annotations

from ember.rules.base import Attr, OpTypeError, aval_of_type, callee_type, define

__all__: list[str] = []


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

