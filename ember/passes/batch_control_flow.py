"""Batching rules of the control-flow ops (``ember.cond``, ``ember.while``, ``ember.for``,
``ember.scan``; ``ember.yield`` is their terminator, handled by the region ops' rules).

A region op's rule builds the batched op's regions by batching each old region's block with
:func:`ember.rules.batching.batch_block` into a new block, with the enclosing body's batched
values (``ctx.env``) visible, since regions read values of the enclosing blocks directly.
Batched carries, branch results and ys slices keep their batch dimension in front (axis 0);
stacked ys come out with it at axis 1 (``scan`` stacks along axis 0).

Semantics (as JAX's ``vmap`` of ``lax.cond``/``while_loop``/``fori_loop``/``scan``):

- ``cond`` with an unbatched predicate stays one ``ember.cond`` whose branches are batched; a
  result batched in one branch is batched (at 0) in both. With a *batched* predicate both
  branches are computed for every lane and each result is ``select(pred, then, else)``: both
  branches always run (they have no side effects, and ember's integer division never traps,
  so running the branch a lane did not take is harmless, only extra work). JAX does the same.
- ``while`` with an unbatched condition stays a loop whose carry is batched where the initial
  value or the body makes it so (found by re-batching until the carry's batching is stable).
  With a batched condition the whole carry is batched and the loop runs while *any* lane's
  condition holds; lanes that are done are frozen: ``carry = select(pred, body(carry),
  carry)`` with ``pred`` the lane's condition on the carry before the step, several such
  steps per iteration when the carry is small (``_steps``). When the loop is scalar code per
  lane (its carry and the values it reads are scalars per example, and it holds only
  elementwise ops, constants and scalar control flow: ``lowers_per_element``), it becomes an
  ``ember.map`` whose region is the per-example loop: each lane runs its own loop inside one
  dispatch, with no condition read back to the host and no steps for lanes that are done.
- ``map`` batches its operands (at 0; rank-0 ones that are not batched stay as they are); its
  region, which computes one element, is unchanged.
- ``for`` with unbatched bounds batches its body like ``while``; batched bounds turn it into a
  ``while`` over ``(i, carry)`` with a batched condition ``i < upper``.
- ``scan``: batched ``xs`` get their batch dimension at 1 (the scanned axis stays leading),
  so each slice is batched at 0; batched ys are stacked as ``(length, batch, ...)``.
"""

from __future__ import annotations

import numpy as np

from ember._mlir import ir, tensor_type, walk
from ember.dialects import OPS, aval_of_type
from ember.dialects.control_flow import map_shape, region_yield_avals
from ember.passes.lower_control_flow import lowers_per_element
from ember.rules.base import encode_attrs
from ember.rules.batching import batching

__all__: list[str] = []


# --- helpers --------------------------------------------------------------------------------

def _type(ctx, per_example_type, batched: bool) -> ir.Type:
    """The type of a value whose per-example type is given, batched at 0 or not."""
    a = aval_of_type(per_example_type)
    return tensor_type(((ctx.size,) if batched else ()) + tuple(a.shape), a.dtype)


def _holder(num_regions: int) -> ir.Operation:
    """A placeholder op (at the insertion point) whose regions the new blocks are built in;
    :func:`_finish` moves them into the real op once its result types are known."""
    return ir.Operation.create("ember.region_holder", regions=num_regions)


def _batch_block(ctx, old_block, arg_vbs, new_block=None):
    """Batch ``old_block`` (its arguments bound to ``arg_vbs``) at the end of ``new_block``,
    or at the current insertion point; returns the (value, bdim) it yields."""
    from ember.rules.batching import batch_block

    env = ctx.env
    for a, vb in zip(old_block.arguments, arg_vbs):
        env[a] = vb
    if new_block is None:
        return batch_block(ctx, old_block, env)
    with ir.InsertionPoint(new_block):
        return batch_block(ctx, old_block, env)


def _yield(block, values) -> None:
    with ir.InsertionPoint(block):
        ir.Operation.create("ember.yield", operands=list(values))


def _finish(name: str, operands, attrs, holder) -> list[ir.Value]:
    """Emit the region op ``name`` typed by its dialect rule, with the holder's blocks."""
    opdef = OPS[name]
    attrs = opdef.check_attrs(attrs)
    avals = [aval_of_type(v.type) for v in operands] + region_yield_avals(holder)
    outs = opdef.result_avals(avals, attrs)
    op = ir.Operation.create(name, results=[tensor_type(o.shape, o.dtype) for o in outs],
                             operands=list(operands), attributes=encode_attrs(opdef, attrs),
                             regions=len(holder.regions))
    for src, dst in zip(holder.regions, op.regions):
        for block in list(src.blocks):
            block.append_to(dst)
    holder.erase()
    return list(op.results)


def _select_lanes(ctx, pred, on_true, on_false):
    """Per-lane select: ``pred`` has shape (batch,), the operands are batched at 0."""
    shape = aval_of_type(on_true.type).shape
    if len(shape) > 1:
        pred = ctx.emit("ember.broadcast_in_dim", [pred], shape=tuple(shape),
                        broadcast_dimensions=(0,))[0]
    return ctx.emit("ember.select", [pred, on_true, on_false])[0]


def _any_lane(ctx, pred, bdim):
    """A scalar bool: whether ``pred`` (batched) holds in some lane."""
    pred = ctx.materialize(pred, bdim, 0)
    return ctx.emit("ember.reduce_or", [pred], axes=(0,))[0]


def _at0(ctx, vbs, batched):
    """Each (value, bdim) batched at 0 where ``batched`` says so, else left unbatched."""
    return [ctx.materialize(v, b, 0) if bt else v for (v, b), bt in zip(vbs, batched)]


def _bdims(batched):
    return [0 if bt else None for bt in batched]


@batching("yield")
def _yield_rule(ctx, op, inputs, attrs):
    raise AssertionError("ember.yield is batched by the rule of its region op")


# --- cond -----------------------------------------------------------------------------------

@batching("cond")
def _cond(ctx, op, inputs, attrs):
    ((pred, pb),) = inputs
    then_old, else_old = (op.regions[i].blocks[0] for i in range(2))
    if pb is not None:
        # Batched predicate: both branches for every lane, then a per-lane select.
        outs_t = _batch_block(ctx, then_old, [])
        outs_e = _batch_block(ctx, else_old, [])
        pred = ctx.materialize(pred, pb, 0)
        results = []
        for (t, tb), (e, eb) in zip(outs_t, outs_e):
            if tb is None and eb is None and t == e:
                results.append((t, None))
                continue
            t, e = ctx.materialize(t, tb, 0), ctx.materialize(e, eb, 0)
            results.append((_select_lanes(ctx, pred, t, e), 0))
        return results
    holder = _holder(2)
    blocks = [holder.regions[i].blocks.append() for i in range(2)]
    outs_t = _batch_block(ctx, then_old, [], blocks[0])
    outs_e = _batch_block(ctx, else_old, [], blocks[1])
    batched = [tb is not None or eb is not None for (_, tb), (_, eb) in zip(outs_t, outs_e)]
    for block, outs in zip(blocks, (outs_t, outs_e)):
        with ir.InsertionPoint(block):
            values = _at0(ctx, outs, batched)
        _yield(block, values)
    results = _finish("ember.cond", [pred], {}, holder)
    return list(zip(results, _bdims(batched)))


# --- while ----------------------------------------------------------------------------------

# A loop's condition is read on the host once per iteration (a round trip to the device). A
# batched loop freezes the lanes that are done, so running its body several steps per check
# gives the same results: without nested region ops it takes as many steps as keep the
# carry updated per check under STEP_BYTES, at most MAX_STEPS (wasting at most that many
# steps once every lane is done). Measured: Newton's sqrt over 256 lanes (2 KiB of carry,
# ~20 iterations) took 57 us with one step per check, 40 us with 4, 21 us with 8, 17 with 16.
# The steps are copies of the body: at most STEP_OPS ops in all, or a loop batched again (a
# vmap of a vmapped loop) would multiply its copies (16 x 16 steps of random.gamma's
# rejection loop: 100k lines of IR and minutes of compiling).
MAX_STEPS = 16
STEP_BYTES = 64 * 1024
STEP_OPS = 256


def _steps(types, *blocks) -> int:
    if any(len(op.operation.regions) for b in blocks for op in b.operations):
        return 1
    carry = sum(aval_of_type(t).size * aval_of_type(t).dtype.itemsize for t in types)
    ops = sum(len(b.operations) for b in blocks)
    return max(1, min(MAX_STEPS, STEP_BYTES // max(carry, 1), STEP_OPS // max(ops, 1)))


@batching("while")
def _while(ctx, op, inputs, attrs):
    cond_old, body_old = (op.regions[i].blocks[0] for i in range(2))
    per_example = [v.type for v in op.operands]
    batched = [b is not None for _, b in inputs]
    pred_batched = False
    while True:     # until the carry's batching is stable
        types = [_type(ctx, t, bt) for t, bt in zip(per_example, batched)]
        holder = _holder(2)
        cblock = holder.regions[0].blocks.append(*types)
        bblock = holder.regions[1].blocks.append(*types)
        bdims = _bdims(batched)
        ((pred, pb),) = _batch_block(ctx, cond_old, list(zip(cblock.arguments, bdims)), cblock)
        if pb is not None and not pred_batched:
            holder.erase()
            if lowers_per_element(op):
                return _while_per_lane(ctx, op, inputs)
            pred_batched, batched = True, [True] * len(batched)
            continue
        body_args = list(zip(bblock.arguments, bdims))
        if pred_batched:
            with ir.InsertionPoint(cblock):
                pred = _any_lane(ctx, pred, pb)
            _yield(cblock, [pred])
            # The body recomputes each lane's condition and freezes the lanes that are done,
            # ``_steps`` times per check of the condition.
            args = body_args
            for _ in range(_steps(types, cond_old, body_old)):
                ((lane, lb),) = _batch_block(ctx, cond_old, args, bblock)
                outs = _batch_block(ctx, body_old, args, bblock)
                with ir.InsertionPoint(bblock):
                    lane = ctx.materialize(lane, lb, 0)
                    values = [_select_lanes(ctx, lane, ctx.materialize(v, b, 0), a)
                              for (v, b), (a, _) in zip(outs, args)]
                args = [(v, 0) for v in values]
            _yield(bblock, values)
        else:
            _yield(cblock, [pred])
            outs = _batch_block(ctx, body_old, body_args, bblock)
            grown = [bt or b is not None for bt, (_, b) in zip(batched, outs)]
            if grown != batched:
                holder.erase()
                batched = grown
                continue
            with ir.InsertionPoint(bblock):
                values = _at0(ctx, outs, batched)
            _yield(bblock, values)
        results = _finish("ember.while", _at0(ctx, inputs, batched), {}, holder)
        return list(zip(results, _bdims(batched)))


def _while_per_lane(ctx, op, inputs):
    """The per-example loop ``op`` as the region of an ``ember.map`` over the lanes: its
    carry and the values its regions read from outside become the map's operands."""
    nested = list(walk(op))[1:]
    inside = {v for inner in nested for v in inner.results}
    inside.update(a for inner in [op, *nested] for region in inner.regions
                  for b in region.blocks for a in b.arguments)
    captured = list(dict.fromkeys(v for inner in nested for v in inner.operands
                                  if v not in inside))
    vbs = list(inputs) + [ctx.env[v] for v in captured]
    arg_types = [v.type for v in list(op.operands) + captured]

    def region(block):
        loop = op.clone()
        for i, a in enumerate(block.arguments[:len(inputs)]):
            loop.operands[i] = a
        index = {v: block.arguments[len(inputs) + i] for i, v in enumerate(captured)}
        for inner in walk(loop):
            for i, v in enumerate(inner.operands):
                if v in index:
                    inner.operands[i] = index[v]
        return list(loop.results)

    return _map_op(ctx, vbs, (ctx.size,), arg_types, [r.type for r in op.results], region)


def _map_op(ctx, vbs, shape, arg_types, result_types, region):
    """An ``ember.map`` of result ``shape`` over the batched (value, bdim) ``vbs``: batched
    ones at 0 and broadcast to ``shape``, unbatched rank-0 ones left as they are.
    ``region(block)`` fills its block (arguments of ``arg_types``) and returns the yield."""
    operands = []
    for v, b in vbs:
        if b is None and not aval_of_type(v.type).shape:
            operands.append(v)
            continue
        x = ctx.materialize(v, b, 0)
        if aval_of_type(x.type).shape != shape:     # a lane's scalar, the map is over more
            x = ctx.emit("ember.broadcast_in_dim", [x], shape=shape,
                         broadcast_dimensions=(0,))[0]
        operands.append(x)
    new = ir.Operation.create(
        "ember.map", operands=operands, regions=1,
        results=[tensor_type(shape, aval_of_type(t).dtype) for t in result_types])
    block = new.regions[0].blocks.append(*[tensor_type((), aval_of_type(t).dtype)
                                           for t in arg_types])
    with ir.InsertionPoint(block):
        _yield(block, region(block))
    return [(r, 0) for r in new.results]


# --- map ------------------------------------------------------------------------------------

@batching("map")
def _map(ctx, op, inputs, attrs):
    shape = (ctx.size, *map_shape([aval_of_type(v.type) for v in op.operands]))
    old = op.regions[0].blocks[0]

    def region(block):
        copy = op.clone()
        inner = copy.regions[0].blocks[0]
        for a, b in zip(inner.arguments, block.arguments):
            a.replace_all_uses_with(b)
        ops = [o.operation for o in inner.operations]
        for o in ops[:-1]:
            block.append(o)
        yielded = list(ops[-1].operands)
        copy.erase()
        return yielded

    return _map_op(ctx, inputs, shape, [a.type for a in old.arguments],
                   [r.type for r in op.results], region)


# --- for ------------------------------------------------------------------------------------

@batching("for")
def _for(ctx, op, inputs, attrs):
    (lo, lb), (hi, hb), *init = inputs
    if lb is not None or hb is not None:
        return _for_as_while(ctx, op, inputs)
    body_old = op.regions[0].blocks[0]
    index_type = op.operands[0].type
    per_example = [v.type for v in list(op.operands)[2:]]
    batched = [b is not None for _, b in init]
    while True:     # until the carry's batching is stable
        types = [_type(ctx, t, bt) for t, bt in zip(per_example, batched)]
        holder = _holder(1)
        block = holder.regions[0].blocks.append(index_type, *types)
        args = [(block.arguments[0], None)] + list(zip(list(block.arguments)[1:],
                                                       _bdims(batched)))
        outs = _batch_block(ctx, body_old, args, block)
        grown = [bt or b is not None for bt, (_, b) in zip(batched, outs)]
        if grown != batched:
            holder.erase()
            batched = grown
            continue
        with ir.InsertionPoint(block):
            values = _at0(ctx, outs, batched)
        _yield(block, values)
        results = _finish("ember.for", [lo, hi, *_at0(ctx, init, batched)], {}, holder)
        return list(zip(results, _bdims(batched)))


def _for_as_while(ctx, op, inputs):
    """A ``for`` with batched bounds: a ``while`` over (i, carry) whose condition
    ``i < upper`` is batched; lanes whose range is done are frozen."""
    (lo, lb), (hi, hb), *init = inputs
    body_old = op.regions[0].blocks[0]
    i0, hi = ctx.materialize(lo, lb, 0), ctx.materialize(hi, hb, 0)
    carry0 = [ctx.materialize(v, b, 0) for v, b in init]
    types = [i0.type] + [v.type for v in carry0]
    holder = _holder(2)
    cblock = holder.regions[0].blocks.append(*types)
    bblock = holder.regions[1].blocks.append(*types)
    with ir.InsertionPoint(cblock):
        pred = _any_lane(ctx, ctx.emit("ember.lt", [cblock.arguments[0], hi])[0], 0)
    _yield(cblock, [pred])
    i, *carry = bblock.arguments
    with ir.InsertionPoint(bblock):
        lane = ctx.emit("ember.lt", [i, hi])[0]
    outs = _batch_block(ctx, body_old, [(i, 0)] + [(c, 0) for c in carry], bblock)
    with ir.InsertionPoint(bblock):
        dtype = aval_of_type(i.type).dtype
        one = ctx.emit("ember.constant", [], value=np.ones((ctx.size,), dtype))[0]
        values = [_select_lanes(ctx, lane, ctx.emit("ember.add", [i, one])[0], i)]
        values += [_select_lanes(ctx, lane, ctx.materialize(v, b, 0), c)
                   for (v, b), c in zip(outs, carry)]
    _yield(bblock, values)
    results = _finish("ember.while", [i0, *carry0], {}, holder)
    return [(r, 0) for r in results[1:]]


# --- scan -----------------------------------------------------------------------------------

@batching("scan")
def _scan(ctx, op, inputs, attrs):
    nc = attrs["num_carry"]
    body_old = op.regions[0].blocks[0]
    init, xs = inputs[:nc], inputs[nc:]
    # The scanned axis stays leading: a batched xs gets its batch dimension at 1, so that
    # its slices are batched at 0.
    xs = [(ctx.move(v, b, 1), 0) if b is not None else (v, None) for v, b in xs]
    x_types = []
    for t, (_, b) in zip(list(op.operands)[nc:], xs):
        a = aval_of_type(t.type)
        x_types.append(tensor_type(((ctx.size,) if b is not None else ()) + a.shape[1:],
                                   a.dtype))
    per_example = [v.type for v in list(op.operands)[:nc]]
    batched = [b is not None for _, b in init]
    while True:     # until the carry's batching is stable
        types = [_type(ctx, t, bt) for t, bt in zip(per_example, batched)]
        holder = _holder(1)
        block = holder.regions[0].blocks.append(*types, *x_types)
        args = list(zip(block.arguments, _bdims(batched) + [b for _, b in xs]))
        outs = _batch_block(ctx, body_old, args, block)
        carry_out, ys = outs[:nc], outs[nc:]
        grown = [bt or b is not None for bt, (_, b) in zip(batched, carry_out)]
        if grown != batched:
            holder.erase()
            batched = grown
            continue
        ys_batched = [b is not None for _, b in ys]
        with ir.InsertionPoint(block):
            values = _at0(ctx, carry_out, batched) + _at0(ctx, ys, ys_batched)
        _yield(block, values)
        results = _finish("ember.scan", _at0(ctx, init, batched) + [v for v, _ in xs],
                          dict(attrs), holder)
        return (list(zip(results[:nc], _bdims(batched)))
                + [(r, 1 if bt else None) for r, bt in zip(results[nc:], ys_batched)])
