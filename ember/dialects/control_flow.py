"""Region-holding control-flow ops: cond, while, for, scan, and their terminator yield.

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
  per-lane scalar code, so that each lane loops on its own (``batch_control_flow.py``).
"""

from __future__ import annotations

from ember._mlir import ir, walk
from ember.core import ShapedArray
from ember.rules.base import OPS, Attr, OpTypeError, aval_of_type, define
from ember.rules.type_rules import fmt

__all__ = ["REGION_OPS", "region_yield_avals", "block_arg_avals", "map_shape"]

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
