"""Differentiation rules of the control-flow ops: ``ember.cond``, ``ember.scan``,
``ember.for``, ``ember.while`` and ``ember.map`` (``ember.yield`` is their terminator, handled
by the region op's rule).

A region op's rule gets, after its operands, the values of enclosing blocks its regions read
(:func:`ember.rules.autodiff.inputs_of`): a closure over a differentiated value carries
a tangent into the region. Each rule linearizes the op's regions with
:func:`~ember.rules.autodiff.linearize_block` into new blocks, in one of two modes:

- forward mode (``ember.jvp``: primal and linear ops go to one place): one op whose regions
  compute the primal values and their tangents, as JAX's JVP rules of ``cond``, ``scan`` and
  ``while`` do. A loop carries a tangent for each carry that has one initially or gets one
  from the body (found by re-linearizing until the set is stable, as JAX's fixpoint).
- reverse mode (``ember.vjp``: linear ops go to the scratch block that is transposed): the op
  is split as JAX's partial evaluation splits it. The primal op computes the results and the
  *residuals* (the values of its regions the linear ops read); a linear op of the same kind
  computes the tangents from the tangents and the residuals. ``cond``: the primal cond returns
  the residuals of both branches, zeros for those of the branch not taken; the linear cond
  branches on the same predicate. ``scan``: the residuals are stacked per step (ys of the
  primal scan, xs of the linear one); those computed from loop invariants alone are computed
  once before the loop. ``for`` with constant bounds is a ``scan`` over the index; ``while``
  and ``for`` with traced bounds raise JAX's error; ``map`` (a vmapped while loop) too.

The transpose rules of the linear ``cond`` and ``scan`` transpose their blocks op by op:
``cond`` branch by branch, ``scan`` as a scan in the other direction whose carry holds the
cotangents of the carry and of the linear values the body reads (summed over the steps).
"""

from __future__ import annotations

import numpy as np

from ember._mlir import ir, tensor_type, walk
from ember.dialects import OPS, aval_of_type, decode_attrs
from ember.dialects.control_flow import map_shape, region_yield_avals
from ember.errors import PassError
from ember.rules.autodiff import (
    JVP,
    TRANSPOSE,
    ADContext,
    TransposeContext,
    inputs_of,
    linearize_block,
    remap_nested,
)
from ember.rules.base import REMAT_ATTR, encode_attrs

__all__ = ["ReverseModeError"]

WHILE_MESSAGE = ("Reverse-mode differentiation does not work for lax.while_loop or "
                 "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using "
                 "fori_loop with static start/stop.")


class ReverseModeError(PassError, ValueError):
    """A loop without a static trip count differentiated in reverse mode (JAX's ValueError)."""


def _rule(table, *names):
    def deco(fn):
        for n in names:
            table[f"ember.{n}"] = fn
        return fn
    return deco


# --- helpers --------------------------------------------------------------------------------

def _aval(v):
    return aval_of_type(v.type)


def _fused(ad: ADContext) -> bool:
    """Forward mode: primal and tangent ops go to one place."""
    return ad.primal_ip is ad.linear_ip


def _holder(ip, n: int) -> ir.Operation:
    """A placeholder op whose regions the new blocks are built in (see :func:`_finish`)."""
    with ip:
        return ir.Operation.create("ember.region_holder", regions=n)


def _slice_type(v) -> ir.Type:
    a = _aval(v)
    return tensor_type(a.shape[1:], a.dtype)


def _yield(block, values) -> None:
    with ir.InsertionPoint(block):
        ir.Operation.create("ember.yield", operands=list(values))


def _finish(ip, name: str, operands, attrs: dict, holder, result_types=None, *,
            remat: bool = False) -> ir.Operation:
    """Emit the region op ``name`` at ``ip`` with the holder's blocks, typed by its rule;
    ``remat``: marked recomputed (a checkpoint's backward pass)."""
    opdef = OPS[name]
    attrs = opdef.check_attrs(attrs)
    if result_types is None:
        avals = [_aval(v) for v in operands] + region_yield_avals(holder)
        result_types = [tensor_type(a.shape, a.dtype)
                        for a in opdef.result_avals(avals, attrs)]
    with ip:
        op = ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                 attributes=encode_attrs(opdef, attrs),
                                 regions=len(holder.regions))
    if remat:
        op.attributes[REMAT_ATTR] = ir.UnitAttr.get()
    for src, dst in zip(holder.regions, op.regions):
        for block in list(src.blocks):
            block.append_to(dst)
    holder.erase()
    return op


def _primal_op(ad, name: str, operands, attrs: dict, holder, result_types=None):
    return _finish(ad.primal_ip, name, operands, attrs, holder, result_types,
                   remat=ad.remat)


def _replace_primal(ad, op, values) -> None:
    """The rule's new op computes ``op``'s results: use ``values`` for them, drop ``op``."""
    for r, v in zip(op.results, values):
        ad.replace(r, v)
    op.erase()


def _linearize(parent, pblock, lblock, old, args, tan_args, caps, cap_t):
    """Linearize ``old`` (a block of the primal copy of a region op) with its arguments bound
    to ``args`` (tangents ``tan_args``) and the values it reads from outside, ``caps``, bound
    to themselves (tangents ``cap_t``): primal ops at the end of ``pblock``, linear ones at
    the end of ``lblock`` (the same block: forward mode). ``parent``: the rule's context."""
    env = {c: c for c in caps}
    env.update(zip(old.arguments, args))
    tangents = {c: t for c, t in zip(caps, cap_t) if t is not None}
    tangents.update((a, t) for a, t in zip(old.arguments, tan_args) if t is not None)
    ip = ir.InsertionPoint(pblock)
    fused = lblock is pblock
    ad = ADContext(ip, ip if fused else ir.InsertionPoint(lblock), parent.table,
                   reverse=parent.reverse and not fused)
    ad.remat = parent.remat
    return linearize_block(ad, old, env, tangents)


def _region_rule(fn):
    """Register ``fn`` as the JVP rule of a region op. When reverse mode reuses the op's
    saved results (a checkpoint's backward pass hands the rule the callee's op itself), the
    rule differentiates a copy reading ``x`` and the saved results stay the primal ones."""
    def rule(ad, op, x, out, t, attrs):
        if not (op.results and all(r in ad.reuse for r in op.results)):
            return fn(ad, op, x, out, t, attrs)
        mapping = dict(zip(inputs_of(op), x))
        with ad.primal_ip:
            copy = op.clone()
        for i, v in enumerate(op.operands):
            copy.operands[i] = mapping[v]
        remap_nested(copy, mapping)
        results = list(copy.results)
        tangents = fn(ad, copy, x, list(results), t, attrs)
        for r in results:
            ad.replaced.pop(r, None)
        return tangents
    return rule



def _zeros(ip, like_type) -> ir.Value:
    return TransposeContext(ip).zeros(aval_of_type(like_type))


def _or_zeros(block, value, like) -> ir.Value:
    return value if value is not None else _zeros(ir.InsertionPoint(block), like.type)


def _spread(flags, values) -> list:
    """``values`` at the positions where ``flags`` holds, None elsewhere."""
    it = iter(values)
    return [next(it) if f else None for f in flags]


def _defined_in(block) -> set:
    """The values defined in ``block`` and in the regions of its ops."""
    values = set(block.arguments)
    for top in block.operations:
        for o in walk(top):
            values.update(o.results)
            values.update(a for r in o.regions for b in r.blocks for a in b.arguments)
    return values


def _read_from(block, defined: set) -> list:
    """The values of ``defined`` that ops of ``block`` (nested ones too) read, in order."""
    return list(dict.fromkeys(v for top in block.operations for o in walk(top)
                              for v in o.operands if v in defined))


def _rewire(block, mapping: dict) -> None:
    """Point every use inside ``block`` of a key of ``mapping`` at its value."""
    for top in block.operations:
        for o in walk(top):
            for i, v in enumerate(o.operands):
                if v in mapping:
                    o.operands[i] = mapping[v]


def _chain(v, defined: set, outer_ok: bool, memo: dict):
    """The ops (in program order) that compute ``v`` from constants, and from values outside
    ``defined`` when ``outer_ok``; None when ``v`` depends on a block argument or a region op
    of the block (a residual that must be passed on)."""
    if v not in defined:
        return [] if outer_ok else None
    if v in memo:
        return memo[v]
    memo[v] = None
    if isinstance(v, ir.OpResult) and not v.owner.operation.regions:
        owner = v.owner.operation
        ops = []
        for u in owner.operands:
            sub = _chain(u, defined, outer_ok, memo)
            if sub is None:
                return None
            ops += [o for o in sub if o not in ops]
        memo[v] = ops + [owner]
    return memo[v]


def _clone_chain(ops, ip, mapping: dict) -> None:
    """Copy ``ops`` at ``ip``, their operands read through ``mapping`` (which gets the
    copies' results)."""
    for o in ops:
        if o.results[0] in mapping:
            continue
        with ip:
            c = o.clone()
        for i, u in enumerate(o.operands):
            if u in mapping:
                c.operands[i] = mapping[u]
        mapping.update(zip(o.results, c.results))


def _reverse_error(op):
    return ReverseModeError(f"{op.location}: error: {WHILE_MESSAGE}")


def _transpose_block(tc_ip, ops, linear: set, ct: dict, where) -> None:
    """Transpose ``ops`` (a linear block's, in program order, terminator excluded) backwards:
    ``ct`` maps values to their cotangents and gets those of the ``linear`` values (the
    block's linear inputs) and of every value computed from them. Ops that read no linear
    value (zeros of a missing tangent) are copied to ``tc_ip``, where the transposed code that
    may read them goes."""
    linear = set(linear)
    for lop in ops:
        if any(v in linear for v in inputs_of(lop)):
            linear.update(lop.results)
            continue
        with tc_ip:
            copy = lop.clone()
        for r, c in zip(lop.results, copy.results):
            r.replace_all_uses_with(c)
    tctx = TransposeContext(tc_ip)
    for lop in reversed(ops):
        outs_ct = [ct.get(r) for r in lop.results]
        if all(c is None for c in outs_ct) or not any(r in linear for r in lop.results):
            continue
        rule = TRANSPOSE.get(lop.name)
        if rule is None:
            raise PassError(f"{where}: error: ember-differentiate: no transpose rule for the "
                            f"linear op '{lop.name}'")
        reads = inputs_of(lop)
        is_linear = [v in linear for v in reads]
        with lop.location:
            cts = rule(tctx, lop, outs_ct, is_linear, decode_attrs(OPS[lop.name], lop))
        for v, c, lin in zip(reads, cts, is_linear):
            if lin and c is not None:
                prev = ct.get(v)
                ct[v] = c if prev is None else tctx.emit("add", [prev, c])


def _move_ops(src, dst) -> None:
    for o in [o.operation for o in src.operations]:
        dst.append(o)


def _block_ops(block):
    ops = [o.operation for o in block.operations]
    return ops[:-1], list(ops[-1].operands)


# --- cond -----------------------------------------------------------------------------------

@_rule(JVP, "cond")
@_region_rule
def _cond(ad, op, x, out, t, attrs):
    pred, caps, cap_t = x[0], x[1:], t[1:]
    n = len(op.results)
    olds = [op.regions[i].blocks[0] for i in range(2)]
    if _fused(ad):
        holder = _holder(ad.primal_ip, 2)
        blocks = [holder.regions[i].blocks.append() for i in range(2)]
        lin = [_linearize(ad, b, b, old, [], [], caps, cap_t) for b, old in zip(blocks, olds)]
        has_t = [any(touts[k] is not None for _, touts in lin) for k in range(n)]
        for block, (outs, touts) in zip(blocks, lin):
            _yield(block, outs + [_or_zeros(block, touts[k], outs[k])
                                  for k in range(n) if has_t[k]])
        new = _primal_op(ad, "ember.cond", [pred], {}, holder)
        _replace_primal(ad, op, list(new.results)[:n])
        return _spread(has_t, list(new.results)[n:])

    ph, lh = _holder(ad.primal_ip, 2), _holder(ad.linear_ip, 2)
    pblocks = [ph.regions[i].blocks.append() for i in range(2)]
    lblocks = [lh.regions[i].blocks.append() for i in range(2)]
    lin = [_linearize(ad, p, lb, old, [], [], caps, cap_t)
           for p, lb, old in zip(pblocks, lblocks, olds)]
    has_t = [any(touts[k] is not None for _, touts in lin) for k in range(n)]
    if not any(has_t):
        del lin     # no Python reference may outlive the ops it refers to
        lh.erase()      # first: its ops read values of the primal blocks
        ph.erase()
        return [None] * n
    residuals = []
    for pblock, lblock, (outs, touts) in zip(pblocks, lblocks, lin):
        _yield(lblock, [_or_zeros(lblock, touts[k], outs[k]) for k in range(n) if has_t[k]])
        defined = _defined_in(pblock)
        memo, local, passed = {}, {}, []
        for r in _read_from(lblock, defined):
            chain = _chain(r, defined, False, memo)
            if chain is None:
                passed.append(r)
            else:       # constants: made again in the linear branch
                _clone_chain(chain, ir.InsertionPoint(list(lblock.operations)[0]), local)
        _rewire(lblock, local)
        residuals.append(passed)
    # Each branch returns the residuals of both, zeros for the other's (as JAX's cond).
    for i, (pblock, (outs, _)) in enumerate(zip(pblocks, lin)):
        rs = [r if j == i else _zeros(ir.InsertionPoint(pblock), r.type)
              for j, branch in enumerate(residuals) for r in branch]
        _yield(pblock, outs + rs)
    primal = list(_primal_op(ad, "ember.cond", [pred], {}, ph).results)
    at = n
    for lblock, branch in zip(lblocks, residuals):
        _rewire(lblock, dict(zip(branch, primal[at:at + len(branch)])))
        at += len(branch)
    linear = _finish(ad.linear_ip, "ember.cond", [pred], {}, lh)
    _replace_primal(ad, op, primal[:n])
    return _spread(has_t, list(linear.results))


@_rule(TRANSPOSE, "cond")
def _t_cond(tc, op, cts, lin, attrs):
    caps = inputs_of(op)[1:]
    lcaps = [c for c, is_lin in zip(caps, lin[1:]) if is_lin]
    if not lcaps:
        return [None] * len(lin)
    holder = _holder(tc.ip, 2)
    for i in range(2):
        old = op.regions[i].blocks[0]
        block = holder.regions[i].blocks.append()
        ip = ir.InsertionPoint(block)
        ops, yields = _block_ops(old)
        ct = {}
        for y, c in zip(yields, cts):
            if c is not None:
                ct[y] = c if y not in ct else TransposeContext(ip).emit("add", [ct[y], c])
        _transpose_block(ip, ops, set(lcaps), ct, op.location)
        _yield(block, [_or_zeros(block, ct.get(c), c) for c in lcaps])
    new = _finish(tc.ip, "ember.cond", [op.operands[0]], {}, holder)
    by_cap = dict(zip(lcaps, new.results))
    return [None] + [by_cap.get(c) if is_lin else None for c, is_lin in zip(caps, lin[1:])]


# --- scan -----------------------------------------------------------------------------------

@_rule(JVP, "scan")
@_region_rule
def _scan(ad, op, x, out, t, attrs):
    primal, tangents = _scan_jvp(ad, op, x, t, attrs)
    _replace_primal(ad, op, primal)
    return tangents


def _scan_jvp(ad, op, x, t, attrs):
    """The scan's primal results (from the new scan) and tangents."""
    nc, nx = attrs["num_carry"], attrs["num_xs"]
    ny = len(op.results) - nc
    old = op.regions[0].blocks[0]
    init, xs, caps = x[:nc], x[nc:nc + nx], x[nc + nx:]
    t_init, t_xs, cap_t = t[:nc], t[nc:nc + nx], t[nc + nx:]
    c_types = [v.type for v in init]
    x_types = [_slice_type(v) for v in xs]
    has_x = [tx is not None for tx in t_xs]
    has_c = [tc is not None for tc in t_init]
    fused = _fused(ad)
    while True:     # until the set of carries with tangents is stable
        tc_types = [ty for ty, h in zip(c_types, has_c) if h]
        tx_types = [ty for ty, h in zip(x_types, has_x) if h]
        ph = _holder(ad.primal_ip, 1)
        if fused:
            pblock = lblock = ph.regions[0].blocks.append(*c_types, *tc_types, *x_types,
                                                          *tx_types)
            a = list(pblock.arguments)
            pc, tcs = a[:nc], a[nc:nc + len(tc_types)]
            px = a[nc + len(tc_types):nc + len(tc_types) + nx]
            txs = a[nc + len(tc_types) + nx:]
        else:
            lh = _holder(ad.linear_ip, 1)
            pblock = ph.regions[0].blocks.append(*c_types, *x_types)
            lblock = lh.regions[0].blocks.append(*tc_types, *tx_types)
            pc, px = list(pblock.arguments)[:nc], list(pblock.arguments)[nc:]
            tcs = list(lblock.arguments)[:len(tc_types)]
            txs = list(lblock.arguments)[len(tc_types):]
        outs, touts = _linearize(ad, pblock, lblock, old, pc + px,
                                 _spread(has_c, tcs) + _spread(has_x, txs), caps, cap_t)
        grown = [h or touts[i] is not None for i, h in enumerate(has_c)]
        if grown == has_c:
            break
        has_c = grown
        del outs, touts     # no Python reference may outlive the ops it refers to
        if not fused:
            lh.erase()      # first: its ops read values of the primal block
        ph.erase()
    has_y = [touts[nc + k] is not None for k in range(ny)]
    t_carry = [_or_zeros(lblock, touts[i], outs[i]) for i in range(nc) if has_c[i]]
    t_ys = [touts[nc + k] for k in range(ny) if has_y[k]]
    t_init = [ti if ti is not None else ad.zeros(v)
              for v, ti, h in zip(init, t_init, has_c) if h]
    t_xs = [tx for tx in t_xs if tx is not None]
    common = {"length": attrs["length"], "reverse": attrs["reverse"]}
    if fused:
        _yield(pblock, outs[:nc] + t_carry + outs[nc:] + t_ys)
        new = list(_primal_op(ad, "ember.scan", init + t_init + xs + t_xs,
                           {"num_carry": nc + len(t_init), "num_xs": nx + len(t_xs), **common},
                           ph).results)
        k = len(t_init)
        return (new[:nc] + new[nc + k:nc + k + ny],
                _spread(has_c, new[nc:nc + k]) + _spread(has_y, new[nc + k + ny:]))

    _yield(lblock, t_carry + t_ys)
    defined = _defined_in(pblock)
    memo, invariant, stacked, sliced = {}, [], [], []
    x_args = dict(zip(list(pblock.arguments)[nc:], xs))
    for r in _read_from(lblock, defined):
        chain = _chain(r, defined, True, memo)
        if chain is not None:
            invariant.append((r, chain))
        elif r in x_args:       # a slice of an xs: the linear scan slices the xs itself
            sliced.append(r)
        else:
            stacked.append(r)
    _yield(pblock, outs + stacked)
    primal_op = _primal_op(ad, "ember.scan", init + xs,
                        {"num_carry": nc, "num_xs": nx, **common}, ph)
    primal = list(primal_op.results)
    # Residuals computed from loop invariants alone are computed once, before the loop.
    hoisted = {}
    for _, chain in invariant:
        _clone_chain(chain, ir.InsertionPoint(primal_op), hoisted)
    mapping = {r: hoisted[r] for r, _ in invariant}
    mapping.update((r, lblock.add_argument(r.type, ir.Location.unknown()))
                   for r in stacked + sliced)
    _rewire(lblock, mapping)
    residual_xs = primal[nc + ny:] + [x_args[r] for r in sliced]
    linear = list(_finish(ad.linear_ip, "ember.scan", t_init + t_xs + residual_xs,
                          {"num_carry": len(t_init), "num_xs": len(t_xs) + len(residual_xs),
                           **common}, lh).results)
    return (primal[:nc + ny],
            _spread(has_c, linear[:len(t_init)]) + _spread(has_y, linear[len(t_init):]))


@_rule(TRANSPOSE, "scan")
def _t_scan(tc, op, cts, lin, attrs):
    """The transpose of a linear scan (every carry linear; xs linear or residuals): a scan in
    the other direction over the cotangents of the ys and the residuals, carrying the
    cotangents of the carry and of the linear values the body reads."""
    nc, nx = attrs["num_carry"], attrs["num_xs"]
    old = op.regions[0].blocks[0]
    reads = inputs_of(op)
    caps = reads[nc + nx:]
    lin_x, lin_caps = lin[nc:nc + nx], lin[nc + nx:]
    lcaps = [c for c, is_lin in zip(caps, lin_caps) if is_lin]
    ct_carry = [c if c is not None else tc.zeros(_aval(r))
                for c, r in zip(cts[:nc], list(op.results)[:nc])]
    ct_ys = [(k, c) for k, c in enumerate(cts[nc:]) if c is not None]
    residual = [j for j in range(nx) if not lin_x[j]]
    acc0 = [tc.zeros(_aval(c)) for c in lcaps]
    xs = list(op.operands)[nc:]
    holder = _holder(tc.ip, 1)
    block = holder.regions[0].blocks.append(
        *[v.type for v in ct_carry], *[c.type for c in lcaps],
        *[_slice_type(c) for _, c in ct_ys], *[_slice_type(xs[j]) for j in residual])
    a = list(block.arguments)
    a_ct, a_acc = a[:nc], a[nc:nc + len(lcaps)]
    a_y, a_res = a[nc + len(lcaps):nc + len(lcaps) + len(ct_ys)], a[nc + len(lcaps) +
                                                                      len(ct_ys):]
    for j, arg in zip(residual, a_res):
        old.arguments[nc + j].replace_all_uses_with(arg)
    ip = ir.InsertionPoint(block)
    btc = TransposeContext(ip)
    ops, yields = _block_ops(old)
    ct = {}
    for y, c in list(zip(yields[:nc], a_ct)) + [(yields[nc + k], c) for (k, _), c in
                                                  zip(ct_ys, a_y)]:
        ct[y] = c if y not in ct else btc.emit("add", [ct[y], c])
    linear = set(old.arguments[:nc]) | set(lcaps)
    linear |= {old.arguments[nc + j] for j in range(nx) if lin_x[j]}
    _transpose_block(ip, ops, linear, ct, op.location)
    new_ct = [_or_zeros(block, ct.get(arg), arg) for arg in old.arguments[:nc]]
    new_acc = [btc.emit("add", [acc, ct[c]]) if c in ct else acc
               for acc, c in zip(a_acc, lcaps)]
    ct_xs = [_or_zeros(block, ct.get(old.arguments[nc + j]), old.arguments[nc + j])
             for j in range(nx) if lin_x[j]]
    _yield(block, new_ct + new_acc + ct_xs)
    new = list(_finish(tc.ip, "ember.scan",
                       ct_carry + acc0 + [c for _, c in ct_ys] + [xs[j] for j in residual],
                       {"num_carry": nc + len(lcaps), "num_xs": len(ct_ys) + len(residual),
                        "length": attrs["length"], "reverse": not attrs["reverse"]},
                       holder).results)
    by_cap = dict(zip(lcaps, new[nc:nc + len(lcaps)]))
    ct_x = iter(new[nc + len(lcaps):])
    return (new[:nc] + [next(ct_x) if is_lin else None for is_lin in lin_x]
            + [by_cap.get(c) if is_lin else None for c, is_lin in zip(caps, lin_caps)])


# --- for, while -----------------------------------------------------------------------------

def _static_int(v):
    """The value of a scalar integer computed from constants alone, else None."""
    if not isinstance(v, ir.OpResult):
        return None
    owner = v.owner.operation
    if owner.name == "ember.constant":
        return int(np.asarray(decode_attrs(OPS[owner.name], owner)["value"]))
    if owner.name == "ember.convert":
        return _static_int(owner.operands[0])
    return None


def _loop_jvp(ad, op, x, t, carry_at: int, index_arg: bool):
    """Forward mode of ``while`` (``index_arg`` False) and ``for``: the loop with a tangent
    carried for each carry that has one. Returns (new op or None, has_c, number of carries);
    None (and nothing emitted) in reverse mode."""
    n = len(op.results)
    init, caps = x[carry_at:carry_at + n], x[carry_at + n:]
    t_init, cap_t = t[carry_at:carry_at + n], t[carry_at + n:]
    c_types = [v.type for v in init]
    has_c = [ti is not None for ti in t_init]
    body = op.regions[-1].blocks[0]
    head = [op.operands[0].type] if index_arg else []
    while True:
        tc_types = [ty for ty, h in zip(c_types, has_c) if h]
        holder = _holder(ad.primal_ip, len(op.regions))
        blocks = [r.blocks.append(*head, *c_types, *tc_types) for r in holder.regions]
        bblock = blocks[-1]
        a = list(bblock.arguments)[len(head):]
        outs, touts = _linearize(ad, bblock, bblock, body, list(bblock.arguments)[:len(head)] +
                                 a[:n], [None] * len(head) + _spread(has_c, a[n:]),
                                 caps, cap_t)
        grown = [h or touts[i] is not None for i, h in enumerate(has_c)]
        if grown == has_c:
            break
        has_c = grown
        del outs, touts     # no Python reference may outlive the ops it refers to
        holder.erase()
    if not _fused(ad):
        del outs, touts
        holder.erase()
        return None, has_c, n
    if len(blocks) == 2:     # while: the condition reads the primal carry only
        cblock = blocks[0]
        ca = list(cblock.arguments)
        pred, _ = _linearize(ad, cblock, cblock, op.regions[0].blocks[0], ca[:n], [], caps,
                             [None] * len(caps))
        _yield(cblock, pred)
    _yield(bblock, outs + [_or_zeros(bblock, touts[i], outs[i])
                           for i in range(n) if has_c[i]])
    t0 = [ti if ti is not None else ad.zeros(v) for v, ti, h in zip(init, t_init, has_c) if h]
    new = _primal_op(ad, op.name, list(x[:carry_at]) + init + t0, {}, holder)
    return new, has_c, n


@_rule(JVP, "while")
@_region_rule
def _while(ad, op, x, out, t, attrs):
    new, has_c, n = _loop_jvp(ad, op, x, t, 0, False)
    if new is None:
        if any(has_c):
            raise _reverse_error(op)
        return [None] * n
    _replace_primal(ad, op, list(new.results)[:n])
    return _spread(has_c, list(new.results)[n:])


@_rule(JVP, "for")
@_region_rule
def _for(ad, op, x, out, t, attrs):
    if _fused(ad):
        new, has_c, n = _loop_jvp(ad, op, x, t, 2, True)
        _replace_primal(ad, op, list(new.results)[:n])
        return _spread(has_c, list(new.results)[n:])
    lo, hi = _static_int(x[0]), _static_int(x[1])
    if lo is None or hi is None:
        _, has_c, n = _loop_jvp(ad, op, x, t, 2, True)
        if any(has_c):
            raise _reverse_error(op)
        return [None] * n
    # Constant bounds: a scan over the indices, whose reverse mode saves the residuals.
    n = len(op.results)
    init, caps = x[2:2 + n], x[2 + n:]
    index_type = op.operands[0].type
    indices = ad.primal("constant", [], value=np.arange(
        lo, max(lo, hi), dtype=_aval(op.operands[0]).dtype))
    holder = _holder(ad.primal_ip, 1)
    body = op.regions[0].blocks[0]
    block = holder.regions[0].blocks.append(*[v.type for v in init], index_type)
    body.arguments[0].replace_all_uses_with(block.arguments[n])
    for old_arg, arg in zip(list(body.arguments)[1:], block.arguments):
        old_arg.replace_all_uses_with(arg)
    _move_ops(body, block)
    attrs = {"num_carry": n, "num_xs": 1, "length": max(hi - lo, 0), "reverse": False}
    scan = _primal_op(ad, "ember.scan", init + [indices], attrs, holder)
    primal, tangents = _scan_jvp(ad, scan, init + [indices] + caps,
                                 list(t[2:2 + n]) + [None] + list(t[2 + n:]),
                                 OPS["ember.scan"].check_attrs(attrs))
    scan.erase()
    _replace_primal(ad, op, primal)
    return tangents


# --- map ------------------------------------------------------------------------------------

@_rule(JVP, "map")
@_region_rule
def _map(ad, op, x, out, t, attrs):
    """Forward mode: one map computing each element's value and tangent. Reverse mode raises
    JAX's while_loop error: ember makes a map of a while loop that each lane of a vmap runs
    on its own (a dynamic trip count)."""
    old = op.regions[0].blocks[0]
    shape = map_shape([_aval(v) for v in x])
    has = [ti is not None for ti in t]
    types = [a.type for a in old.arguments]
    holder = _holder(ad.primal_ip, 1)
    block = holder.regions[0].blocks.append(*types, *[ty for ty, h in zip(types, has) if h])
    a = list(block.arguments)
    outs, touts = _linearize(ad, block, block, old, a[:len(x)], _spread(has, a[len(x):]), [], [])
    has_y = [tt is not None for tt in touts]
    if not _fused(ad):
        del outs, touts     # no Python reference may outlive the ops it refers to
        holder.erase()
        if any(has_y):
            raise _reverse_error(op)
        return [None] * len(outs)
    _yield(block, outs + [tt for tt in touts if tt is not None])
    result_types = [tensor_type(shape, _aval(v).dtype) for v in outs + [
        tt for tt in touts if tt is not None]]
    new = _primal_op(ad, "ember.map", list(x) + [ti for ti in t if ti is not None],
                  {}, holder, result_types)
    n = len(op.results)
    _replace_primal(ad, op, list(new.results)[:n])
    return _spread(has_y, list(new.results)[n:])

