"""Lowering rules of the ops in ember/dialects/control_flow.py (to scf).

``ember-to-linalg`` lowers the ops inside a region before the region op itself, so a rule
here finds its regions already in upstream dialects, each ending in ``ember.yield``. The rule
builds the scf op, moves each region's ops into the scf op's block (uses of the old block
arguments go to the new ones) and ends the block with the scf terminator:

- ``ember.cond``  -> ``scf.if`` on ``tensor.extract`` of the predicate;
- ``ember.while`` -> ``scf.while`` (``scf.condition`` on the extracted cond yield);
- ``ember.for``   -> ``scf.for`` over ``index`` bounds cast from the scalar operands; the index
  reaches the body as a rank-0 tensor (``tensor.from_elements``);
- ``ember.scan``  -> ``scf.for`` carrying the carry and the ys buffers: each iteration reads
  ``x[i]`` with ``tensor.extract_slice`` and writes ``y[i]`` with ``tensor.insert_slice``;
  both loops run in chunks of ``run-ahead`` steps when longer (``_host_loop``);
- ``ember.map``   -> one ``linalg.generic`` whose body is the region as scalar code: each
  elementwise op's scalar emitter (``lowering.SCALAR``), and ``scf.while``/``scf.if``/
  ``scf.for`` on scalars for the control flow inside (``lowers_per_element``). IREE compiles
  the loop of each element into the dispatch: no condition is read back to the host.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import arith, ir, scf, tensor, walk
from ember.config import DEFAULT_LOOP_RUN_AHEAD
from ember.dialects import OPS, aval_of_type, decode_attrs
from ember.errors import PassError
from ember.rules.lowering import (
    LOWERINGS,
    LowerCall,
    dims_map,
    elem,
    emit_scalar,
    empty,
    extract_index,
    generic,
    identity_map,
    int_constant,
    lower_elementwise,
    lowering,
    optimization_barrier,
    scalar_const,
    scf_while,
    to_index,
    ttype,
)

__all__: list[str] = []


def _move_body(old: ir.Block, new: ir.Block, new_args) -> list[ir.Value]:
    """Move the ops of ``old`` but its ``ember.yield`` to the end of ``new``; uses of
    ``old``'s arguments become uses of ``new_args``. Returns the yielded values."""
    for a, b in zip(old.arguments, new_args):
        a.replace_all_uses_with(b)
    ops = [op.operation for op in old.operations]
    if not ops or ops[-1].name != "ember.yield":
        raise PassError(f"{old.owner.location}: error: region does not end with ember.yield")
    for op in ops[:-1]:
        new.append(op)
    return list(ops[-1].operands)


def _block(op: ir.Operation, i: int) -> ir.Block:
    return op.regions[i].blocks[0]


def _index(v: ir.Value, dtype) -> ir.Value:
    """A scalar ``index`` from a rank-0 integer tensor."""
    return extract_index(v, dtype)


def _const_index(n: int) -> ir.Value:
    index = ir.IndexType.get()
    return arith.ConstantOp(index, ir.IntegerAttr.get(index, n)).result


# IREE runs an scf.for on the host: it records each iteration's dispatches while earlier ones
# still run, and every iteration in flight holds blocks of the device's block pool, which keeps
# them for good. 1000 steps over a 1 MiB carry grew the process by 8-48 MiB on local-task, so
# a loop longer than ember-to-linalg's run-ahead runs in chunks of that many steps, and the
# host reads one element of a chunk's results before it records the next: the next chunk
# starts at j + 0 * element (the 0 hidden behind a util.optimization_barrier), so IREE cannot
# move the read. (A hal.fence.await on a hal.tensor.barrier has no such dependency: IREE
# hoisted it above the work that signals it, and the program hung. Chunks of 4 or 8 steps
# cost 1.6-2.5x on a 1000-step scan of 50 us steps, 32 nothing measurable.)
# benchmarks/loops.py measures both.


def _host_loop(c: LowerCall, lo: ir.Value, hi: ir.Value, init: list[ir.Value],
               trips: int | None = None):
    """An ``scf.for`` from ``lo`` to ``hi`` carrying ``init``, in chunks of ``run_ahead``
    steps unless ``trips`` (when known) says it is shorter: (the loop whose body the caller
    fills, the results)."""
    one = _const_index(1)
    steps = c.options.get("run_ahead", DEFAULT_LOOP_RUN_AHEAD)
    probe = next((i for i, v in enumerate(init) if _readable(v.type)), None)
    if not steps or (trips is not None and trips <= steps) or probe is None:
        loop = scf.ForOp(lo, hi, one, init)
        return loop, list(loop.results)
    chunk = _const_index(steps)
    outer = scf.ForOp(lo, hi, chunk, [*init, _const_index(0)])
    with ir.InsertionPoint(outer.body):
        j, *carry, zero = list(outer.body.arguments)
        start = arith.AddIOp(j, zero).result
        top = arith.MinSIOp(arith.AddIOp(j, chunk).result, hi).result
        inner = scf.ForOp(start, top, one, carry)
        scf.YieldOp([*inner.results, _read_as_zero(inner.results[probe])])
    return inner, list(outer.results)[:-1]


def _readable(t: ir.Type) -> bool:
    """A tensor with an element whose bits the host can read as an integer."""
    return (isinstance(t, ir.RankedTensorType) and 0 not in t.shape
            and isinstance(t.element_type, ir.IntegerType | ir.FloatType))


def _read_as_zero(t: ir.Value) -> ir.Value:
    """An ``index`` 0 that IREE can only know after reading the first element of ``t``."""
    ty = ir.RankedTensorType(t.type)
    x = tensor.ExtractOp(t, [_const_index(0)] * ty.rank).result
    if isinstance(ty.element_type, ir.FloatType):
        width = ir.FloatType(ty.element_type).width
        x = arith.BitcastOp(ir.IntegerType.get_signless(width), x).result
    x = arith.IndexCastUIOp(ir.IndexType.get(), x).result
    return arith.MulIOp(x, optimization_barrier(_const_index(0))).result


@lowering("yield")
def _lower_yield(c: LowerCall):
    # The region op's rule replaces its regions' yields; ember-to-linalg skips terminators.
    raise PassError(f"{c.op.location}: error: ember.yield outside a control-flow op")


@lowering("cond")
def _lower_cond(c: LowerCall):
    pred = tensor.ExtractOp(c.operands[0], []).result
    op = ir.Operation.create("scf.if", results=[ttype(a) for a in c.out_avals],
                             operands=[pred], regions=2)
    for i in range(2):
        block = op.regions[i].blocks.append()
        values = _move_body(_block(c.op, i), block, [])
        with ir.InsertionPoint(block):
            scf.YieldOp(values)
    return list(op.results)


@lowering("while")
def _lower_while(c: LowerCall):
    def cond(block):
        (pred,) = _move_body(_block(c.op, 0), block, list(block.arguments))
        return tensor.ExtractOp(pred, []).result

    return scf_while(c.operands, cond,
                     lambda block: _move_body(_block(c.op, 1), block, list(block.arguments)))


@lowering("for")
def _lower_for(c: LowerCall):
    lo, hi, *init = c.operands
    dt = c.in_avals[0].dtype
    bounds = [int_constant(v) for v in (lo, hi)]
    trips = None if any(b is None for b in bounds) else max(int(bounds[1] - bounds[0]), 0)
    loop, results = _host_loop(c, _index(lo, dt), _index(hi, dt), init, trips)
    body = loop.body
    with ir.InsertionPoint(body):
        cast = arith.IndexCastUIOp if dtypes.is_unsigned(dt) else arith.IndexCastOp
        i = cast(elem(dt), body.arguments[0]).result
        i = tensor.FromElementsOp(ir.RankedTensorType.get([], elem(dt)), [i]).result
    values = _move_body(_block(c.op, 0), body, [i, *list(body.arguments)[1:]])
    with ir.InsertionPoint(body):
        scf.YieldOp(values)
    return results


@lowering("scan")
def _lower_scan(c: LowerCall):
    nc, n, reverse = c.attrs["num_carry"], c.attrs["length"], c.attrs["reverse"]
    init, xs = c.operands[:nc], c.operands[nc:]
    x_avals, ys_avals = c.in_avals[nc:], c.out_avals[nc:]
    if n == 0:   # the body never runs
        return list(init) + [empty(y) for y in ys_avals]
    loop, results = _host_loop(c, _const_index(0), _const_index(n),
                               list(init) + [empty(y) for y in ys_avals], n)
    body = loop.body
    args = list(body.arguments)
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    with ir.InsertionPoint(body):
        t = args[0]
        if reverse:
            t = arith.SubIOp(_const_index(n - 1), t).result
        slices = []
        for x, xa in zip(xs, x_avals):
            rank = xa.ndim
            if 0 in xa.shape[1:]:     # an empty slice (MLIR rejects offset 0 in a 0-size dim)
                slices.append(empty(xa._replace(shape=xa.shape[1:])))
                continue
            item = ttype(xa._replace(shape=xa.shape[1:]))
            slices.append(tensor.ExtractSliceOp(
                item, x, [t], [], [], [dyn] + [0] * (rank - 1), [1, *xa.shape[1:]],
                [1] * rank).result)
    values = _move_body(_block(c.op, 0), body, args[1:1 + nc] + slices)
    with ir.InsertionPoint(body):
        ys = []
        for y, buf, ya in zip(values[nc:], args[1 + nc:], ys_avals):
            rank = ya.ndim
            if 0 in ya.shape[1:]:     # nothing to write
                ys.append(buf)
                continue
            ys.append(tensor.InsertSliceOp(
                y, buf, [t], [], [], [dyn] + [0] * (rank - 1), [1, *ya.shape[1:]],
                [1] * rank).result)
        scf.YieldOp(values[:nc] + ys)
    return results


# --- map ----------------------------------------------------------------------------------

_SCALAR_CONTROL = ("ember.cond", "ember.while", "ember.for")
_SAME_SCALAR = ("ember.reshape", "ember.broadcast_in_dim", "ember.transpose")  # on rank 0


def lowers_per_element(op: ir.Operation) -> bool:
    """Whether ``op`` and the ops in its regions have scalar forms for an ``ember.map``
    body: elementwise ops, constants and cond/while/for, all on rank-0 values."""
    for inner in walk(op):
        name = inner.name
        if not (name in _SCALAR_CONTROL or name in _SAME_SCALAR
                or name in ("ember.yield", "ember.constant")
                or LOWERINGS.get(name) is lower_elementwise):
            return False
        if any(aval_of_type(v.type).shape for v in list(inner.operands) + list(inner.results)):
            return False
    return True


@lowering("map")
def _lower_map(c: LowerCall):
    rank = len(c.out_avals[0].shape)
    maps = [identity_map(rank) if a.shape else dims_map(rank, ()) for a in c.in_avals]
    block = _block(c.op, 0)
    return generic(c.operands, maps, [empty(a) for a in c.out_avals],
                   [identity_map(rank)] * len(c.out_avals), ["parallel"] * rank,
                   lambda *args: _scalars(block, args[:len(c.operands)], {}))


def _scalars(block: ir.Block, args, values: dict) -> list[ir.Value]:
    """Emit ``block`` as scalar code with its arguments bound to ``args`` (``values`` maps
    the ember values of enclosing blocks to their scalars); returns what it yields."""
    values.update(zip(block.arguments, args))
    for op in block.operations:
        op = op.operation
        name = op.name
        ins = [values[v] for v in op.operands]
        if name == "ember.yield":
            return ins
        if not lowers_per_element(op):
            raise PassError(f"{op.location}: error: '{name}' inside ember.map has no "
                            "per-element scalar form")
        attrs = decode_attrs(OPS[name], op)
        out = aval_of_type(op.results[0].type).dtype if op.results else None
        if name == "ember.constant":
            res = [scalar_const(np.asarray(attrs["value"]).flat[0], out)]
        elif name in _SAME_SCALAR:
            res = ins
        elif name == "ember.while":
            res = _scalar_while(op, ins, values)
        elif name == "ember.cond":
            res = _scalar_if(op, ins, values)
        elif name == "ember.for":
            res = _scalar_for(op, ins, values)
        else:
            in_dt = aval_of_type(op.operands[0].type).dtype if op.operands else out
            res = [emit_scalar(name.split(".", 1)[1], ins, in_dt, out, attrs)]
        values.update(zip(op.results, res))
    raise PassError(f"{block.owner.location}: error: region does not end with ember.yield")


def _scalar_while(op, ins, values) -> list[ir.Value]:
    return scf_while(ins, lambda block: _scalars(_block(op, 0), list(block.arguments),
                                                 values)[0],
                     lambda block: _scalars(_block(op, 1), list(block.arguments), values))


def _scalar_if(op, ins, values) -> list[ir.Value]:
    types = [elem(aval_of_type(r.type).dtype) for r in op.results]
    branch = ir.Operation.create("scf.if", results=types, operands=ins[:1], regions=2)
    for i in range(2):
        with ir.InsertionPoint(branch.regions[i].blocks.append()):
            scf.YieldOp(_scalars(_block(op, i), [], values))
    return list(branch.results)


def _scalar_for(op, ins, values) -> list[ir.Value]:
    lo, hi, *init = ins
    dt = aval_of_type(op.operands[0].type).dtype
    loop = scf.ForOp(to_index(lo, dt), to_index(hi, dt), _const_index(1), init)
    body = loop.body
    with ir.InsertionPoint(body):
        cast = arith.IndexCastUIOp if dtypes.is_unsigned(dt) else arith.IndexCastOp
        i = cast(elem(dt), body.arguments[0]).result
        scf.YieldOp(_scalars(_block(op, 0), [i, *list(body.arguments)[1:]], values))
    return list(loop.results)
