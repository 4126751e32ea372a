"""``ember.fusion``: a group of ember ops that ``ember-fuse`` decided to compute together.

``%r:n = ember.fusion(%a, %b, ...) {kind = "loop"}`` holds one region with one block whose
arguments stand for the operands (the region is isolated from above: its ops read only the
block arguments and each other) and which ends in ``ember.yield`` of the results. Its
results are typed by its verifier (the yielded types), not by a result-type rule. ``kind``
names the kind of fusion, after XLA's names (``duplicate_limit`` and ``multi_result``: see the
lowering):

- ``loop``: elementwise ops (selects and converts included), broadcasts, unit-dim reshapes,
  iotas, concatenations and gathers (transposes lower too, but ember-fuse keeps them apart);
- ``input``: reductions with their elementwise producers (and consumers);
- ``output``: one ``dot_general`` with its elementwise epilogue;
- ``multi_output``: a loop or input fusion with several results of one iteration space.

The ``ember-to-linalg`` rule (``ember/passes/lower_fusion.py``) lowers the body as a whole,
into as few ``linalg.generic`` ops as it can, rather than op by op.
"""

from __future__ import annotations

from ember._mlir import ir
from ember.rules.base import Attr, OpTypeError, aval_of_type, define
from ember.rules.type_rules import fmt

__all__ = ["FUSION_KINDS"]

FUSION_KINDS = ("loop", "input", "output", "multi_output")


def _verify_fusion(op: ir.Operation, attrs) -> None:
    if len(op.regions) != 1 or len(list(op.regions[0].blocks)) != 1:
        raise OpTypeError("must have one region with one block")
    block = op.regions[0].blocks[0]
    operands = [aval_of_type(v.type) for v in op.operands]
    args = [aval_of_type(a.type) for a in block.arguments]
    if [(a.shape, a.dtype) for a in args] != [(a.shape, a.dtype) for a in operands]:
        raise OpTypeError(f"block arguments ({fmt(args)}) differ from the operands "
                          f"({fmt(operands)})")
    ops = [o.operation for o in block.operations]
    if not ops or ops[-1].name != "ember.yield":
        raise OpTypeError("region must end with ember.yield")
    yielded = [aval_of_type(v.type) for v in ops[-1].operands]
    results = [aval_of_type(r.type) for r in op.results]
    if [(a.shape, a.dtype) for a in yielded] != [(a.shape, a.dtype) for a in results]:
        raise OpTypeError(f"yields ({fmt(yielded)}) but has results ({fmt(results)})")
    inside = set(block.arguments) | {r for o in ops for r in o.results}
    for inner in ops:
        if inner.regions:
            raise OpTypeError(f"holds '{inner.name}', an op with regions")
        if not inner.name.startswith("ember."):
            raise OpTypeError(f"holds '{inner.name}', which is not an ember op")
        for v in inner.operands:
            if v not in inside:
                raise OpTypeError(f"'{inner.name}' inside reads a value from outside the "
                                  "region (pass it as an operand)")


define(
    "fusion", None, None, family="fusion", pure=True, traits=("regions", "own_body"),
    attrs=(Attr("kind", "str", "loop", choices=FUSION_KINDS),
           Attr("duplicate_limit", "i64", 3), Attr("multi_result", "bool", False)),
    verify_op=_verify_fusion,
    doc="A group of ember ops computed together (ember-fuse): one region, isolated from "
        "above, whose block arguments are the operands and whose ember.yield gives the "
        "results; lowered as a whole into as few linalg.generic ops as possible.")
