"""Control-flow ops: the region ops cond, while, for, scan and map, their terminator
yield, and call; with their rules.

Each region has one block ending in ``ember.yield``. Regions are not isolated from above: ops
inside may use values of the enclosing blocks directly (closures over traced values).

The result-type rule of a region op (trait ``"regions"``) gets the operand avals followed by
the avals yielded by each region, in region order, so the same rule types the op when tracing
and checks it when verifying IR read from a file:

- ``ember.cond(pred)``: two regions without arguments, ``then`` and ``else``; both yield the
  results. ``pred`` is a scalar bool.
- ``ember.while(init...)``: region ``cond`` (arguments: the carry) yields a scalar bool;
  region ``body`` (arguments: the carry) yields the next carry. Results: the final carry.
- ``ember.for(lower, upper, init...)``: ``lower``/``upper`` are scalar integers of one dtype;
  region ``body`` (arguments: the index as a scalar of that dtype, then the carry) yields the
  next carry; the index runs over ``lower, lower + 1, ..., upper - 1``.
- ``ember.scan(init..., xs...)``: region ``body`` (arguments: the carry, then one slice
  ``x[i]`` of each xs) yields the next carry and one slice of each stacked output ys.
  Results: the final carry, then the ys (leading dimension ``length``). ``reverse`` runs
  ``i`` from ``length - 1`` down to 0 (ys are still stored at index ``i``).
- ``ember.map(operands...)``: one region applied at each element position on its own, as
  ``linalg.map``: its block's arguments are rank-0 tensors, one element of each operand, and
  it yields one element of each result. Operands have one shape, the results', or are rank 0
  (the same element everywhere). The region is isolated from above and every value in it is
  rank 0: elementwise ops, constants and ``cond``/``while``/``for`` on scalars. ``ember-batch``
  makes one of a ``while`` whose condition is batched when everything it computes is
  per-lane scalar code, so that each lane loops on its own (see Batching below).

``ember.call`` calls a ``func.func`` of the module (a nested jit): ember-batch inlines it, and
so does ember-differentiate but for a checkpointed call in reverse mode.

Lowering (``ember-to-linalg``, to scf)
--------------------------------------

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
  both loops run in chunks of ``run-ahead`` steps when longer (``_host_loop``), but a
  ``while``, ``for`` or ``scan`` marked ``ember.kernel`` (``ember-loop-kernels``: its step
  computes little) runs whole inside one ``flow.dispatch.region``
  (:func:`ember.rules.scalarize.loop_kernel`) where the target takes dispatch regions;
- ``ember.map``   -> one ``linalg.generic`` whose body is the region as scalar code: each
  elementwise op's scalar emitter (``lowering.SCALAR``), and ``scf.while``/``scf.if``/
  ``scf.for`` on scalars for the control flow inside (``lowers_per_element``). IREE compiles
  the loop of each element into the dispatch: no condition is read back to the host.

Batching (``ember-batch``)
--------------------------

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

Differentiation (``ember-differentiate``)
-----------------------------------------

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

from ember import dtypes
from ember._mlir import arith, captured, func, ir, rewire, scf, tensor, tensor_type, walk
from ember.config import DEFAULT_LOOP_RUN_AHEAD
from ember.core import ShapedArray
from ember.dialects.autodiff import saveable
from ember.errors import PassError
from ember.rules.autodiff import (
    ADContext,
    TransposeContext,
    aval_of,
    inputs_of,
    jvp,
    linearize_block,
    transpose,
    transpose_ops,
)
from ember.rules.base import (
    CHECKPOINT_ATTR,
    KERNEL_ATTR,
    OPS,
    REMAT_ATTR,
    Attr,
    OpTypeError,
    aval_of_type,
    callee_of,
    callee_type,
    clone_mapped,
    decode_attrs,
    define,
    encode_attrs,
)
from ember.rules.batching import batch_block, batch_body, batching
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
from ember.rules.scalarize import can_scalarize, loop_kernel
from ember.rules.type_rules import fmt

__all__ = ["REGION_OPS", "region_yield_avals", "block_arg_avals", "map_shape",
           "lowers_per_element", "ReverseModeError", "WHILE_MESSAGE"]


REGION_OPS = ("ember.cond", "ember.while", "ember.for", "ember.scan", "ember.map")


def _types_equal(xs, ys) -> bool:
    return len(xs) == len(ys) and all(
        x.shape == y.shape and x.dtype == y.dtype for x, y in zip(xs, ys))


def _scalar_bool(a: ShapedArray, what: str) -> None:
    if a.shape != () or a.dtype != bool:
        raise OpTypeError(f"{what} must be a scalar bool, got {a.str_short()}")


def _cond_rule(avals, attrs):
    if not avals:
        raise OpTypeError("expects a predicate operand")
    _scalar_bool(avals[0], "the predicate")
    rest = avals[1:]
    if len(rest) % 2:
        raise OpTypeError(f"the two regions yield different numbers of values: {fmt(rest)}")
    then, else_ = rest[:len(rest) // 2], rest[len(rest) // 2:]
    if not _types_equal(then, else_):
        raise OpTypeError(f"the regions yield different types: then ({fmt(then)}) vs else "
                          f"({fmt(else_)})")
    return [ShapedArray(a.shape, a.dtype) for a in then]


def _while_rule(avals, attrs):
    if len(avals) % 2 != 1:
        raise OpTypeError("expects the carry, the cond yield (one scalar bool) and the body "
                          f"yields (as many as the carry), got {fmt(avals)}")
    n = len(avals) // 2
    init, (pred,), body = avals[:n], avals[n:n + 1], avals[n + 1:]
    _scalar_bool(pred, "the cond region's yield")
    if not _types_equal(init, body):
        raise OpTypeError(f"the body yields ({fmt(body)}), which differs from the carry "
                          f"({fmt(init)})")
    return [ShapedArray(a.shape, a.dtype) for a in init]


def _int_scalar(a: ShapedArray, what: str) -> None:
    if a.shape != () or a.dtype.kind not in "iu":
        raise OpTypeError(f"{what} must be a scalar integer, got {a.str_short()}")


def _for_rule(avals, attrs):
    if len(avals) < 2 or len(avals) % 2:
        raise OpTypeError("expects lower, upper, the carry and the body yields (as many as the "
                          f"carry), got {fmt(avals)}")
    lower, upper = avals[:2]
    _int_scalar(lower, "lower")
    _int_scalar(upper, "upper")
    if lower.dtype != upper.dtype:
        raise OpTypeError(f"lower and upper must have one dtype, got {fmt([lower, upper])}")
    n = (len(avals) - 2) // 2
    init, body = avals[2:2 + n], avals[2 + n:]
    if not _types_equal(init, body):
        raise OpTypeError(f"the body yields ({fmt(body)}), which differs from the carry "
                          f"({fmt(init)})")
    return [ShapedArray(a.shape, a.dtype) for a in init]


def _scan_rule(avals, attrs):
    nc, nx, length = attrs["num_carry"], attrs["num_xs"], attrs["length"]
    if nc < 0 or nx < 0 or length < 0:
        raise OpTypeError(f"num_carry={nc}, num_xs={nx} and length={length} must be >= 0")
    if len(avals) < 2 * nc + nx:
        raise OpTypeError(f"expects {nc} carry, {nx} xs and at least {nc} yields, got "
                          f"{fmt(avals)}")
    init, xs = avals[:nc], avals[nc:nc + nx]
    body_carry, ys = avals[nc + nx:2 * nc + nx], avals[2 * nc + nx:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise OpTypeError(f"every xs must have leading dimension length={length}, got "
                              f"{x.str_short()}")
    if not _types_equal(init, body_carry):
        raise OpTypeError(f"the body yields carry ({fmt(body_carry)}), which differs from the "
                          f"initial carry ({fmt(init)})")
    return ([ShapedArray(a.shape, a.dtype) for a in init]
            + [ShapedArray((length, *y.shape), y.dtype) for y in ys])


def block_arg_avals(name: str, operand_avals, attrs) -> list[list[ShapedArray]]:
    """The argument avals of each region's block, from the op's operand avals."""
    if name == "ember.cond":
        return [[], []]
    if name == "ember.while":
        return [list(operand_avals), list(operand_avals)]
    if name == "ember.for":
        return [[operand_avals[0], *operand_avals[2:]]]
    if name == "ember.scan":
        nc = attrs["num_carry"]
        return [list(operand_avals[:nc])
                + [ShapedArray(x.shape[1:], x.dtype) for x in operand_avals[nc:]]]
    raise AssertionError(name)


def region_yield_avals(op: ir.Operation) -> list[ShapedArray]:
    """The avals yielded by each region of ``op``, flattened in region order."""
    out = []
    for i, region in enumerate(op.regions):
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise OpTypeError(f"region #{i} must have exactly one block, has {len(blocks)}")
        ops = list(blocks[0].operations)
        if not ops or ops[-1].operation.name != "ember.yield":
            raise OpTypeError(f"region #{i} must end with ember.yield")
        out += [aval_of_type(v.type) for v in ops[-1].operation.operands]
    return out


def _verify_region_op(op: ir.Operation, attrs) -> None:
    """Region count and block argument types (yield types are checked by the rule)."""
    name = op.name
    operands = [aval_of_type(v.type) for v in op.operands]
    if name == "ember.scan" and attrs["num_carry"] + attrs["num_xs"] != len(operands):
        raise OpTypeError(f"num_carry + num_xs = {attrs['num_carry'] + attrs['num_xs']} but "
                          f"the op has {len(operands)} operands")
    if name == "ember.for" and len(operands) < 2:
        raise OpTypeError("expects lower and upper operands")
    expected = block_arg_avals(name, operands, attrs)
    if len(op.regions) != len(expected):
        raise OpTypeError(f"must have {len(expected)} regions, has {len(op.regions)}")
    for i, (region, want) in enumerate(zip(op.regions, expected)):
        for block in region.blocks:
            got = [aval_of_type(a.type) for a in block.arguments]
            if not _types_equal(got, want):
                raise OpTypeError(f"region #{i} has block arguments ({fmt(got)}); expected "
                                  f"({fmt(want)})")


def _verify_yield(op: ir.Operation, attrs) -> None:
    parent = op.parent
    if parent is None or "regions" not in getattr(OPS.get(parent.name), "traits", ()):
        raise OpTypeError("must be the terminator of a region of " + ", ".join(REGION_OPS))


def map_shape(avals) -> tuple[int, ...]:
    """The shape of an ``ember.map`` over operands of these avals (rank-0 ones broadcast)."""
    shapes = {a.shape for a in avals if a.shape}
    if len(shapes) > 1:
        raise OpTypeError(f"operands of different shapes: {fmt(avals)}")
    return shapes.pop() if shapes else ()


def _verify_map(op: ir.Operation, attrs) -> None:
    operands = [aval_of_type(v.type) for v in op.operands]
    shape = map_shape(operands)
    if len(op.regions) != 1 or len(list(op.regions[0].blocks)) != 1:
        raise OpTypeError("must have one region with one block")
    block = op.regions[0].blocks[0]
    args = [aval_of_type(a.type) for a in block.arguments]
    if [(a.shape, a.dtype) for a in args] != [((), a.dtype) for a in operands]:
        raise OpTypeError(f"block arguments ({fmt(args)}) must be rank-0 tensors of the "
                          f"operands' dtypes ({fmt(operands)})")
    yields = region_yield_avals(op)
    results = [aval_of_type(r.type) for r in op.results]
    if [(shape, a.dtype) for a in yields] != [(a.shape, a.dtype) for a in results] or any(
            a.shape for a in yields):
        raise OpTypeError(f"yields ({fmt(yields)}) but has results ({fmt(results)}); it "
                          f"must yield rank-0 tensors of the results' dtypes, which have the "
                          f"operands' shape {shape}")
    nested = [inner for child in block.operations for inner in walk(child)]
    inside = set(block.arguments)
    for inner in nested:
        inside.update(inner.results)
        inside.update(a for region in inner.regions for b in region.blocks for a in b.arguments)
    for inner in nested:
        for v in list(inner.operands) + list(inner.results):
            if v not in inside:
                raise OpTypeError(f"'{inner.name}' inside reads a value from outside the "
                                  "region (pass it as an operand)")
            if aval_of_type(v.type).shape:
                raise OpTypeError(f"'{inner.name}' inside has a value of type {v.type}; "
                                  "every value in the region is rank 0")


define("yield", None, None, family="control_flow", pure=False, traits=("terminator",),
       verify_op=_verify_yield,
       doc="Terminator of the regions of ember.cond/while/for/scan: the values the region "
           "produces.")
define("cond", None, _cond_rule, family="control_flow", pure=False, traits=("regions",),
       verify_op=_verify_region_op,
       doc="If-then-else on a scalar bool predicate: runs one of two regions (then, else), "
           "each yielding the results.")
define("while", None, _while_rule, family="control_flow", pure=False, traits=("regions",),
       verify_op=_verify_region_op,
       doc="While loop: regions cond(carry) -> bool and body(carry) -> carry; results are the "
           "final carry.")
define("for", None, _for_rule, family="control_flow", pure=False, traits=("regions",),
       verify_op=_verify_region_op,
       doc="Counted loop over lower <= i < upper (scalar integer operands): region body(i, "
           "carry) -> carry; results are the final carry.")
define("scan", None, _scan_rule, family="control_flow", pure=False, traits=("regions",),
       attrs=(Attr("num_carry", "i64"), Attr("num_xs", "i64"), Attr("length", "i64"),
              Attr("reverse", "bool", False)),
       verify_op=_verify_region_op,
       doc="Scan over the leading axis of xs: region body(carry, x[i]) -> (carry, y[i]); "
           "results are the final carry and the stacked ys (reverse=True runs i downwards).")
define("map", None, None, family="control_flow", traits=("regions", "own_body"),
       verify_op=_verify_map,
       doc="Elementwise map (as linalg.map): one region, isolated from above, applied to "
           "each element position of its operands (one shape, or rank 0) on its own; every "
           "value inside is rank 0. ember-batch makes one of a while loop that each lane "
           "of a vmap runs on its own.")


def _verify_call(op, attrs):
    """Check operand and result types against the callee's signature."""
    name = attrs["callee"]
    ftype = callee_type(op, name, "calls")
    if list(ftype.inputs) != [v.type for v in op.operands] or \
            list(ftype.results) != [r.type for r in op.results]:
        raise OpTypeError(f"types do not match the signature of @{name}: {ftype}")


define("call", None, None, attrs=(Attr("callee", "symbol"),), family="call",
       verify_op=_verify_call, doc="Call a func.func in the same module (nested jit).")


# === lowering =============================================================================

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
               trips: int | None = None, kernel: bool = False):
    """An ``scf.for`` from ``lo`` to ``hi`` carrying ``init``, in chunks of ``run_ahead``
    steps unless ``trips`` (when known) says it is shorter or the loop runs as one
    ``kernel``: (the loop whose body the caller fills, the results)."""
    one = _const_index(1)
    steps = c.options.get("run_ahead", DEFAULT_LOOP_RUN_AHEAD)
    probe = next((i for i, v in enumerate(init) if _readable(v.type)), None)
    if not steps or kernel or (trips is not None and trips <= steps) or probe is None:
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


def _kernel(c: LowerCall) -> bool:
    """Whether the loop ``c`` lowers runs as one kernel: ember-loop-kernels marked it, the
    target takes dispatch regions, and its lowered step is one that
    :func:`~ember.rules.scalarize.loop_kernel` can run."""
    return (KERNEL_ATTR in c.op.attributes and bool(c.options.get("dispatch_regions"))
            and all(can_scalarize(r.blocks[0]) for r in c.op.regions))


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

    kernel = _kernel(c) and bool(c.operands)
    results = scf_while(c.operands, cond,
                        lambda block: _move_body(_block(c.op, 1), block, list(block.arguments)))
    return loop_kernel(results[0].owner) if kernel else results


@lowering("for")
def _lower_for(c: LowerCall):
    lo, hi, *init = c.operands
    dt = c.in_avals[0].dtype
    bounds = [int_constant(v) for v in (lo, hi)]
    trips = None if any(b is None for b in bounds) else max(int(bounds[1] - bounds[0]), 0)
    kernel = _kernel(c)
    loop, results = _host_loop(c, _index(lo, dt), _index(hi, dt), init, trips, kernel)
    body = loop.body
    with ir.InsertionPoint(body):
        cast = arith.IndexCastUIOp if dtypes.is_unsigned(dt) else arith.IndexCastOp
        i = cast(elem(dt), body.arguments[0]).result
        i = tensor.FromElementsOp(ir.RankedTensorType.get([], elem(dt)), [i]).result
    values = _move_body(_block(c.op, 0), body, [i, *list(body.arguments)[1:]])
    with ir.InsertionPoint(body):
        scf.YieldOp(values)
    return loop_kernel(loop) if kernel else results


@lowering("scan")
def _lower_scan(c: LowerCall):
    nc, n, reverse = c.attrs["num_carry"], c.attrs["length"], c.attrs["reverse"]
    init, xs = c.operands[:nc], c.operands[nc:]
    x_avals, ys_avals = c.in_avals[nc:], c.out_avals[nc:]
    if n == 0:   # the body never runs
        return list(init) + [empty(y) for y in ys_avals]
    kernel = _kernel(c)
    loop, results = _host_loop(c, _const_index(0), _const_index(n),
                               list(init) + [empty(y) for y in ys_avals], n, kernel)
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
    return loop_kernel(loop) if kernel else results


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


# --- call ---------------------------------------------------------------------------------

@lowering("call")
def _lower_call(c: LowerCall):
    callee = c.attrs["callee"]
    return list(func.CallOp([ttype(a) for a in c.out_avals], ir.FlatSymbolRefAttr.get(callee),
                            c.operands).results)


# === batching =============================================================================

# --- helpers ------------------------------------------------------------------------------

def _yield(block, values) -> None:
    """End ``block`` with ``ember.yield`` of ``values`` (batching and differentiation)."""
    with ir.InsertionPoint(block):
        ir.Operation.create("ember.yield", operands=list(values))


def _type(ctx, per_example_type, batched: bool) -> ir.Type:
    """The type of a value whose per-example type is given, batched at 0 or not."""
    a = aval_of_type(per_example_type)
    return tensor_type(((ctx.size,) if batched else ()) + tuple(a.shape), a.dtype)


def _holder_here(num_regions: int) -> ir.Operation:
    """A placeholder op (at the insertion point) whose regions the new blocks are built in;
    :func:`_finish_here` moves them into the real op once its result types are known."""
    return ir.Operation.create("ember.region_holder", regions=num_regions)


def _batch_block(ctx, old_block, arg_vbs, new_block=None):
    """Batch ``old_block`` (its arguments bound to ``arg_vbs``) at the end of ``new_block``,
    or at the current insertion point; returns the (value, bdim) it yields."""
    env = ctx.env
    for a, vb in zip(old_block.arguments, arg_vbs):
        env[a] = vb
    if new_block is None:
        return batch_block(ctx, old_block, env)
    with ir.InsertionPoint(new_block):
        return batch_block(ctx, old_block, env)


def _finish_here(name: str, operands, attrs, holder) -> list[ir.Value]:
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
def _batch_yield(ctx, op, inputs, attrs):
    raise AssertionError("ember.yield is batched by the rule of its region op")


# --- cond ---------------------------------------------------------------------------------

@batching("cond")
def _batch_cond(ctx, op, inputs, attrs):
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
    holder = _holder_here(2)
    blocks = [holder.regions[i].blocks.append() for i in range(2)]
    outs_t = _batch_block(ctx, then_old, [], blocks[0])
    outs_e = _batch_block(ctx, else_old, [], blocks[1])
    batched = [tb is not None or eb is not None for (_, tb), (_, eb) in zip(outs_t, outs_e)]
    for block, outs in zip(blocks, (outs_t, outs_e)):
        with ir.InsertionPoint(block):
            values = _at0(ctx, outs, batched)
        _yield(block, values)
    results = _finish_here("ember.cond", [pred], {}, holder)
    return list(zip(results, _bdims(batched)))


# --- while --------------------------------------------------------------------------------

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
def _batch_while(ctx, op, inputs, attrs):
    cond_old, body_old = (op.regions[i].blocks[0] for i in range(2))
    per_example = [v.type for v in op.operands]
    batched = [b is not None for _, b in inputs]
    pred_batched = False
    while True:     # until the carry's batching is stable
        types = [_type(ctx, t, bt) for t, bt in zip(per_example, batched)]
        holder = _holder_here(2)
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
        results = _finish_here("ember.while", _at0(ctx, inputs, batched), {}, holder)
        return list(zip(results, _bdims(batched)))


def _while_per_lane(ctx, op, inputs):
    """The per-example loop ``op`` as the region of an ``ember.map`` over the lanes: its
    carry and the values its regions read from outside become the map's operands."""
    free = captured(op)
    vbs = list(inputs) + [ctx.env[v] for v in free]
    arg_types = [v.type for v in list(op.operands) + free]

    def region(block):
        loop = op.clone()
        for i, a in enumerate(block.arguments[:len(inputs)]):
            loop.operands[i] = a
        rewire([loop], {v: block.arguments[len(inputs) + i] for i, v in enumerate(free)})
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


# --- map ----------------------------------------------------------------------------------

@batching("map")
def _batch_map(ctx, op, inputs, attrs):
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


# --- for ----------------------------------------------------------------------------------

@batching("for")
def _batch_for(ctx, op, inputs, attrs):
    (lo, lb), (hi, hb), *init = inputs
    if lb is not None or hb is not None:
        return _for_as_while(ctx, op, inputs)
    body_old = op.regions[0].blocks[0]
    index_type = op.operands[0].type
    per_example = [v.type for v in list(op.operands)[2:]]
    batched = [b is not None for _, b in init]
    while True:     # until the carry's batching is stable
        types = [_type(ctx, t, bt) for t, bt in zip(per_example, batched)]
        holder = _holder_here(1)
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
        results = _finish_here("ember.for", [lo, hi, *_at0(ctx, init, batched)], {}, holder)
        return list(zip(results, _bdims(batched)))


def _for_as_while(ctx, op, inputs):
    """A ``for`` with batched bounds: a ``while`` over (i, carry) whose condition
    ``i < upper`` is batched; lanes whose range is done are frozen."""
    (lo, lb), (hi, hb), *init = inputs
    body_old = op.regions[0].blocks[0]
    i0, hi = ctx.materialize(lo, lb, 0), ctx.materialize(hi, hb, 0)
    carry0 = [ctx.materialize(v, b, 0) for v, b in init]
    types = [i0.type] + [v.type for v in carry0]
    holder = _holder_here(2)
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
    results = _finish_here("ember.while", [i0, *carry0], {}, holder)
    return [(r, 0) for r in results[1:]]


# --- scan ---------------------------------------------------------------------------------

@batching("scan")
def _batch_scan(ctx, op, inputs, attrs):
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
        holder = _holder_here(1)
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
        results = _finish_here("ember.scan", _at0(ctx, init, batched) + [v for v, _ in xs],
                          dict(attrs), holder)
        return (list(zip(results[:nc], _bdims(batched)))
                + [(r, 1 if bt else None) for r, bt in zip(results[nc:], ys_batched)])


# --- call ---------------------------------------------------------------------------------

@batching("call")
def _batch_call(ctx, op, inputs, attrs):
    """A call inside a mapped function: its callee's body, batched in place (inlined)."""
    return batch_body(ctx, callee_of(op), inputs)




# === differentiation ======================================================================

WHILE_MESSAGE = ("Reverse-mode differentiation does not work for lax.while_loop or "
                 "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using "
                 "fori_loop with static start/stop.")


class ReverseModeError(PassError, ValueError):
    """A loop without a static trip count differentiated in reverse mode (JAX's ValueError)."""


# --- helpers ------------------------------------------------------------------------------


def _fused(ad: ADContext) -> bool:
    """Forward mode: primal and tangent ops go to one place."""
    return ad.primal_ip is ad.linear_ip


def _holder(ip, n: int) -> ir.Operation:
    """A placeholder op whose regions the new blocks are built in (see :func:`_finish`)."""
    with ip:
        return ir.Operation.create("ember.region_holder", regions=n)


def _slice_type(v) -> ir.Type:
    a = aval_of(v)
    return tensor_type(a.shape[1:], a.dtype)


def _finish(ip, name: str, operands, attrs: dict, holder, result_types=None, *,
            remat: bool = False) -> ir.Operation:
    """Emit the region op ``name`` at ``ip`` with the holder's blocks, typed by its rule;
    ``remat``: marked recomputed (a checkpoint's backward pass)."""
    opdef = OPS[name]
    attrs = opdef.check_attrs(attrs)
    if result_types is None:
        avals = [aval_of(v) for v in operands] + region_yield_avals(holder)
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
            copy = clone_mapped(op, [mapping[v] for v in op.operands], mapping)
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
    transpose_ops(TransposeContext(tc_ip), ops, linear, ct, where)


def _move_ops(src, dst) -> None:
    for o in [o.operation for o in src.operations]:
        dst.append(o)


def _block_ops(block):
    ops = [o.operation for o in block.operations]
    return ops[:-1], list(ops[-1].operands)


# --- cond ---------------------------------------------------------------------------------

@jvp("cond")
@_region_rule
def _jvp_cond(ad, op, x, out, t, attrs):
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
        rewire(lblock.operations, local)
        residuals.append(passed)
    # Each branch returns the residuals of both, zeros for the other's (as JAX's cond).
    for i, (pblock, (outs, _)) in enumerate(zip(pblocks, lin)):
        rs = [r if j == i else _zeros(ir.InsertionPoint(pblock), r.type)
              for j, branch in enumerate(residuals) for r in branch]
        _yield(pblock, outs + rs)
    primal = list(_primal_op(ad, "ember.cond", [pred], {}, ph).results)
    at = n
    for lblock, branch in zip(lblocks, residuals):
        rewire(lblock.operations, dict(zip(branch, primal[at:at + len(branch)])))
        at += len(branch)
    linear = _finish(ad.linear_ip, "ember.cond", [pred], {}, lh)
    _replace_primal(ad, op, primal[:n])
    return _spread(has_t, list(linear.results))


@transpose("cond")
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


# --- scan ---------------------------------------------------------------------------------

@jvp("scan")
@_region_rule
def _jvp_scan(ad, op, x, out, t, attrs):
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
    rewire(lblock.operations, mapping)
    residual_xs = primal[nc + ny:] + [x_args[r] for r in sliced]
    linear = list(_finish(ad.linear_ip, "ember.scan", t_init + t_xs + residual_xs,
                          {"num_carry": len(t_init), "num_xs": len(t_xs) + len(residual_xs),
                           **common}, lh).results)
    return (primal[:nc + ny],
            _spread(has_c, linear[:len(t_init)]) + _spread(has_y, linear[len(t_init):]))


@transpose("scan")
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
    ct_carry = [c if c is not None else tc.zeros(aval_of(r))
                for c, r in zip(cts[:nc], list(op.results)[:nc])]
    ct_ys = [(k, c) for k, c in enumerate(cts[nc:]) if c is not None]
    residual = [j for j in range(nx) if not lin_x[j]]
    acc0 = [tc.zeros(aval_of(c)) for c in lcaps]
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


# --- for, while ---------------------------------------------------------------------------

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


@jvp("while")
@_region_rule
def _jvp_while(ad, op, x, out, t, attrs):
    new, has_c, n = _loop_jvp(ad, op, x, t, 0, False)
    if new is None:
        if any(has_c):
            raise _reverse_error(op)
        return [None] * n
    _replace_primal(ad, op, list(new.results)[:n])
    return _spread(has_c, list(new.results)[n:])


@jvp("for")
@_region_rule
def _jvp_for(ad, op, x, out, t, attrs):
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
        lo, max(lo, hi), dtype=aval_of(op.operands[0]).dtype))
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


# --- map ----------------------------------------------------------------------------------

@jvp("map")
@_region_rule
def _jvp_map(ad, op, x, out, t, attrs):
    """Forward mode: one map computing each element's value and tangent. Reverse mode raises
    JAX's while_loop error: ember makes a map of a while loop that each lane of a vmap runs
    on its own (a dynamic trip count)."""
    old = op.regions[0].blocks[0]
    shape = map_shape([aval_of(v) for v in x])
    has = [ti is not None for ti in t]
    types = [a.type for a in old.arguments]
    holder = _holder(ad.primal_ip, 1)
    block = holder.regions[0].blocks.append(*types, *[ty for ty, h in zip(types, has) if h])
    a = list(block.arguments)
    outs, touts = _linearize(ad, block, block, old, a[:len(x)], _spread(has, a[len(x):]), [], [])
    has_y = [tt is not None for tt in touts]
    if not _fused(ad):
        n_out = len(outs)
        del outs, touts     # no Python reference may outlive the ops it refers to
        holder.erase()
        if any(has_y):
            raise _reverse_error(op)
        return [None] * n_out
    _yield(block, outs + [tt for tt in touts if tt is not None])
    result_types = [tensor_type(shape, aval_of(v).dtype) for v in outs + [
        tt for tt in touts if tt is not None]]
    new = _primal_op(ad, "ember.map", list(x) + [ti for ti in t if ti is not None],
                  {}, holder, result_types)
    n = len(op.results)
    _replace_primal(ad, op, list(new.results)[:n])
    return _spread(has_y, list(new.results)[n:])


# --- call ---------------------------------------------------------------------------------

# Reached only for checkpointed calls in reverse mode (ember.checkpoint; other calls are
# inlined by the engine): see ember/dialects/autodiff.py.
@jvp("call")
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
                new = clone_mapped(o, [env.get(v, v) for v in o.operands], env)
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
