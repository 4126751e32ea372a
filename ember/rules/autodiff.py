"""The differentiation engine: forward mode (``linearize_block``) and reverse mode
(``vjp_block``), and the rule tables they apply.

Forward mode walks the callee once: each op is copied (the primal) and its JVP rule emits
the tangent ops. Reverse mode is JAX's linearize-then-transpose: the same walk emits the
primal ops where the ``ember.vjp`` was and the tangent ops into a scratch block (they are
linear in the tangents by construction of the JVP rules); then the scratch block is walked
backwards, each linear op's transpose rule turning the cotangents of its results into those
of its linear operands. Values the transposed ops read from the primal computation are the
residuals a reverse pass keeps alive. Only linear ops need a transpose rule.

The rules are the tables ``JVP`` and ``TRANSPOSE``, filled by each op family's module;
``NOT_DIFFERENTIABLE`` marks ops whose results have zero derivatives (comparisons, integer
and bit ops, argmax): their tangents are symbolic zeros. An op with neither is an error
naming the op and the user's line.

A JVP rule ``rule(ad, op, x, out, t, attrs)`` gets the primal copy of the op, its operands
``x`` and results ``out``, the operands' tangents ``t`` (None: zero) and the attributes; it
returns one tangent per result (None: zero). Values computed from primals only go through
``ad.primal``; ops on tangents through ``ad.linear``, and only linear ones (each a linear
op of this table with a tangent in its linear position), so that reverse mode can transpose
them. The derivatives follow JAX's rules (``jax/_src/lax/lax.py``), including its choices
at kinks: ``abs`` at 0 has slope 1, ``max`` at a tie splits the tangent in halves.

A transpose rule ``rule(tc, op, cts, is_linear, attrs)`` gets the cotangents of the op's
results and which operands are linear, and returns a cotangent per operand (None for the
non-linear ones).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import captured, ir
from ember.errors import PassError
from ember.rules.base import (
    CHECKPOINT_ATTR,
    OPS,
    REMAT_ATTR,
    aval_of_type,
    callee_of,
    clone_mapped,
    decode_attrs,
    emit,
    rule_registrar,
)

JVP: dict = {}


TRANSPOSE: dict = {}


NOT_DIFFERENTIABLE: set[str] = set()


def differentiable(dtype) -> bool:
    """Whether values of ``dtype`` carry tangents (floats and complex; not ints or bools)."""
    return dtypes.is_float(dtype) or dtypes.is_complex(dtype)


class ADContext:
    """What a rule emits with: ``primal`` ops where the forward computation goes, ``linear``
    ops on tangents (the scratch block that reverse mode transposes)."""

    def __init__(self, primal_ip, linear_ip, table=None, reverse: bool = False):
        self.primal_ip, self.linear_ip = primal_ip, linear_ip
        self.table, self.reverse = table, reverse
        # Reverse mode inside a checkpoint's backward pass (see ``vjp_block``).
        self.reuse: dict = {}
        self.remat = False
        self.replaced: dict = {}

    def replace(self, result: ir.Value, value: ir.Value) -> None:
        """Use ``value`` for the primal ``result`` of the op being differentiated: a rule that
        recomputes its op (sort with an iota operand for the permutation, as JAX's) replaces
        the copy's results and erases it."""
        self.replaced[result] = value

    def primal(self, name: str, operands, **attrs) -> ir.Value:
        with self.primal_ip:
            return emit(f"ember.{name}", operands, **attrs)[0]

    def linear(self, name: str, operands, **attrs) -> ir.Value:
        with self.linear_ip:
            return emit(f"ember.{name}", operands, **attrs)[0]

    def const(self, value, like: ir.Value) -> ir.Value:
        """``value`` broadcast to the shape and dtype of ``like`` (emitted with the primal
        ops: a constant is not a function of the tangents, whichever side reads it)."""
        a = aval_of_type(like.type)
        with self.primal_ip:
            (s,) = emit("ember.constant", [], value=np.asarray(value, dtype=a.dtype))
            if a.shape == ():
                return s
            return emit("ember.broadcast_in_dim", [s], shape=tuple(a.shape),
                        broadcast_dimensions=())[0]

    def zeros(self, like: ir.Value) -> ir.Value:
        return self.const(0, like)


class TransposeContext:
    """What a transpose rule emits with (all ops go before the ``ember.vjp``)."""

    def __init__(self, ip):
        self.ip = ip

    def emit(self, name: str, operands, **attrs) -> ir.Value:
        with self.ip:
            return emit(f"ember.{name}", operands, **attrs)[0]

    def zeros(self, aval) -> ir.Value:
        with self.ip:
            (s,) = emit("ember.constant", [], value=np.zeros((), aval.dtype))
            if aval.shape == ():
                return s
            return emit("ember.broadcast_in_dim", [s], shape=tuple(aval.shape),
                        broadcast_dimensions=())[0]


def vjp_block(primal_ip, block, primals, dargs, cts_in: dict, table, *, where: str = "",
              reuse: dict | None = None, remat: bool = False) -> list:
    """Reverse mode on ``block`` at ``primal_ip``: its primal results, then the cotangents of
    the arguments ``dargs`` given those of the results (``cts_in``: result index -> value).

    ``reuse`` maps values of ``block`` to values computed elsewhere (saved residuals), which
    are not computed again; with ``remat``, the primal ops it copies are marked
    rematerialized (the backward pass of a checkpoint recomputes them: CSE must not merge
    them with the forward pass's).
    """
    with primal_ip:
        holder = ir.Operation.create("ember.region_holder", regions=1)
    scratch = holder.regions[0].blocks.append(*[block.arguments[i].type for i in dargs])
    ad = ADContext(ir.InsertionPoint(holder), ir.InsertionPoint(scratch), table,
                   reverse=True)
    ad.reuse, ad.remat = reuse or {}, remat
    tangents = {block.arguments[i]: scratch.arguments[k] for k, i in enumerate(dargs)
                if differentiable(aval_of_type(block.arguments[i].type).dtype)}
    outs, touts = linearize_block(ad, block, dict(zip(block.arguments, primals)), tangents)
    ct = {}
    for i, c in cts_in.items():
        if touts[i] is not None:
            _accumulate(ct, touts[i], c, TransposeContext(ir.InsertionPoint(holder)))
    tctx = TransposeContext(ir.InsertionPoint(holder))
    linear = set(scratch.arguments) | {r for o in scratch.operations for r in o.results}
    transpose_ops(tctx, [o.operation for o in scratch.operations], linear, ct, where)
    results = list(outs)
    for k, i in enumerate(dargs):
        c = ct.get(scratch.arguments[k])
        results.append(c if c is not None else tctx.zeros(aval_of_type(
            block.arguments[i].type)))
    # The scratch ops are transposed; drop them (innermost uses first).
    for lop in reversed(list(scratch.operations)):
        lop.operation.erase()
    holder.erase()
    return results


def transpose_ops(tctx: TransposeContext, ops: list, linear: set, ct: dict, where: str) -> None:
    """Walk the linear ``ops`` (in program order) backwards: each op with a cotangent on a
    ``linear`` result has its transpose rule turn its results' cotangents into those of its
    linear operands, accumulated into ``ct`` (value -> cotangent)."""
    for lop in reversed(ops):
        outs_ct = [ct.get(r) for r in lop.results]
        if all(c is None for c in outs_ct) or not any(r in linear for r in lop.results):
            continue
        rule = TRANSPOSE.get(lop.name)
        if rule is None:
            raise PassError(f"{where}: error: ember-differentiate: no transpose rule "
                            f"for the linear op '{lop.name}'")
        reads = inputs_of(lop)
        is_linear = [v in linear for v in reads]
        with lop.location:
            cts = rule(tctx, lop, outs_ct, is_linear, decode_attrs(OPS[lop.name], lop))
        for v, c, lin in zip(reads, cts, is_linear):
            if lin and c is not None:
                _accumulate(ct, v, c, tctx)


def _accumulate(ct: dict, value, c, tctx: TransposeContext) -> None:
    prev = ct.get(value)
    ct[value] = c if prev is None else tctx.emit("add", [prev, c])


def inputs_of(op) -> list:
    """What ``op`` reads: its operands, then (for a region op) the values of enclosing blocks
    that its regions read, in order of first use. Rules of region ops get the primal copies
    and tangents (JVP) or linearity (transpose) of all of these, in this order, since a
    closure over a differentiated value carries a tangent into the region."""
    return list(op.operands) + (captured(op) if op.regions else [])


def linearize_block(ad: ADContext, block, env: dict, tangents: dict):
    """Emit the primal copy of ``block``'s ops (``env`` maps its values, and the values of
    enclosing blocks its region ops read, to their copies) and their tangents (``tangents``
    maps its values to tangent values; absent: zero). Returns the primal and tangent values
    of the terminator's operands."""
    for op in block.operations:
        op = op.operation
        if op.name in ("func.return", "ember.yield"):
            return [env[v] for v in op.operands], [tangents.get(v) for v in op.operands]
        if op.name == "ember.call" and not (ad.reverse and CHECKPOINT_ATTR in op.attributes):
            callee = callee_of(op)
            inner = callee.regions[0].blocks[0]
            sub_env = dict(zip(inner.arguments, [env[v] for v in op.operands]))
            sub_t = {a: tangents[v] for a, v in zip(inner.arguments, op.operands)
                     if v in tangents}
            outs, touts = linearize_block(ad, inner, sub_env, sub_t)
            for r, o, t in zip(op.results, outs, touts):
                env[r] = o
                if t is not None:
                    tangents[r] = t
            continue
        reads = inputs_of(op)
        ins_t = [tangents.get(v) for v in reads]
        if op.results and all(r in ad.reuse for r in op.results):
            new, outs = op, [ad.reuse[r] for r in op.results]    # a saved residual
        else:
            with ad.primal_ip:
                new = clone_mapped(op, [env[v] for v in op.operands], env)
            if ad.remat:
                new.attributes[REMAT_ATTR] = ir.UnitAttr.get()
            outs = list(new.results)
        for old, r in zip(op.results, outs):
            env[old] = r
        if all(t is None for t in ins_t) or op.name in NOT_DIFFERENTIABLE:
            continue
        rule = JVP.get(op.name)
        if rule is None:
            raise PassError(f"{where_of(op)}: error: ember-differentiate: no differentiation "
                            f"rule for '{op.name}'")
        with op.location:
            outs_t = rule(ad, new, [env[v] for v in reads], outs, ins_t,
                          decode_attrs(OPS[op.name], op))
        for old, t in zip(op.results, outs_t):
            env[old] = ad.replaced.pop(env[old], env[old])
            if t is not None and differentiable(aval_of_type(old.type).dtype):
                tangents[old] = t
    raise PassError(f"{block.owner.location}: error: block has no terminator")


jvp = rule_registrar(JVP, declared=True)
transpose = rule_registrar(TRANSPOSE, declared=True)


def where_of(op) -> str:
    return str(op.location)


def aval_of(v):
    return aval_of_type(v.type)


def scale(ad, t, d):
    """``t * d`` with ``d`` a primal value: the linear op of most unary rules."""
    return ad.linear("mul", [t, d])


def add_tangents(ad, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return ad.linear("add", [a, b])


def unary_jvp(derivative):
    """A JVP rule ``t * derivative(ad, x, out)``."""
    def rule(ad, op, x, out, t, attrs):
        return [scale(ad, t[0], derivative(ad, x[0], out[0]))]
    return rule


def same_op_transpose(tc, op, cts, lin, attrs):
    """The transpose of an op that is its own transpose (``neg``, ``rev``)."""
    return [tc.emit(op.name.split(".")[1], [cts[0]], **attrs)]


def const(ad, value, like):
    return ad.const(value, like)


def primal(ad, name, *xs, **attrs):
    return ad.primal(name, list(xs), **attrs)


def same_op_jvp(ad, op, x, out, t, attrs):
    """The JVP of a linear op: the op applied to the tangent."""
    return [ad.linear(op.name.split(".")[1], [t[0]], **attrs)]


def primal_all(ad, name, operands, **attrs):
    """All results of a primal op (``ad.primal`` gives the first)."""
    with ad.primal_ip:
        return emit(f"ember.{name}", list(operands), **attrs)


def full(em, value, shape, dtype):
    """A constant of ``shape`` (a broadcast scalar), emitted by ``em(name, operands, **a)``."""
    s = em("constant", [], value=np.asarray(value, dtype=dtype))
    if tuple(shape) == ():
        return s
    return em("broadcast_in_dim", [s], shape=tuple(shape), broadcast_dimensions=())


def primal_emitter(ad):
    return lambda name, operands, **a: ad.primal(name, list(operands), **a)


def broadcast_to(em, v, shape):
    """``v`` (of the leading dimensions of ``shape``) broadcast over the trailing ones."""
    nd = aval_of(v).ndim
    if tuple(aval_of(v).shape) == tuple(shape):
        return v
    return em("broadcast_in_dim", [v], shape=tuple(shape),
              broadcast_dimensions=tuple(range(nd)))


def balanced_eq(ad, x, z, y):
    """1 where x == z != y, 1/2 where x == z == y, 0 elsewhere: JAX's tie rule."""
    one, half, zero = const(ad, 1, z), const(ad, 0.5, z), const(ad, 0, z)
    return primal(ad, "select", primal(ad, "eq", x, z),
                  primal(ad, "select", primal(ad, "eq", y, z), half, one), zero)
