"""``ember-spmd``: replace each ``ember.spmd`` op by one copy of its function per device.

An op given the whole arrays (``in_splits``: ``jit`` with shardings) has its function
partitioned first (``ember/rules/partition.py``). The copies are emitted in lockstep
(``ember/rules/spmd.py``): a collective over a mesh axis sees every device's operand and
becomes transfers between devices and the combining ops.
The enclosing function's arguments and results that the op reads and gives are marked with
their device (``ember.device``), which ember-to-linalg hands IREE as ``iree.abi.affinity``;
IREE places every other op on the device of its operands.
"""

from __future__ import annotations

import ember.dialects  # noqa: F401  (fills SPMD: the collectives' rules)
from ember._mlir import ir, walk
from ember.dialects import OPS, decode_attrs
from ember.dialects.spmd import DEVICE_ATTR, edit_attr_dicts
from ember.errors import PassError
from ember.passes.registry import Pass, func_ops, register
from ember.rules.batching import callees
from ember.rules.partition import PartitionContext, partition_function
from ember.rules.spmd import SpmdContext, expand_body


@register
class Spmd(Pass):
    """Expand every ``ember.spmd`` op."""

    name = "ember-spmd"
    summary = "Replace ember.spmd ops by one copy of the per-device function per device"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            table = ir.SymbolTable(module.operation)
            expanded = set()
            for f in func_ops(module):
                for op in [o for o in walk(f.operation) if o.name == "ember.spmd"]:
                    expanded.add(self._expand(op, f, table))
            for name in expanded - callees(module.operation):
                table[name].operation.erase()

    def _expand(self, op, f, table) -> str:
        attrs = decode_attrs(OPS["ember.spmd"], op)
        callee = table[attrs["callee"]]
        ctx = SpmdContext(attrs["mesh_shape"], attrs["axis_names"].split(","), table)
        if attrs["in_splits"]:
            with op.location:
                callee = partition_function(
                    PartitionContext(ctx.axis_names[0], ctx.n), callee, attrs["in_splits"],
                    attrs["out_splits"], f"{attrs['callee']}_partitioned")
        k = len(op.operands) // ctx.n
        m = len(op.results) // ctx.n
        if op.parent.name != "func.func":
            raise PassError(f"{op.location}: error: ember.spmd must be in a function's body")
        _mark(f, "arg_attrs", [(i, j // k) for j, v in enumerate(op.operands)
                               for i, a in enumerate(f.arguments) if v == a],
              len(f.arguments))
        ret = f.regions[0].blocks[0].operations[len(f.regions[0].blocks[0].operations) - 1]
        _mark(f, "res_attrs", [(i, j // m) for j, r in enumerate(op.results)
                               for i, v in enumerate(ret.operands) if v == r],
              len(ret.operands))
        per_device = [list(op.operands[d * k:(d + 1) * k]) for d in range(ctx.n)]
        with op.location, ir.InsertionPoint(op):
            outs = expand_body(ctx, callee, per_device)
        for j, old in enumerate(op.results):
            old.replace_all_uses_with(outs[j // m][j % m])
        op.erase()
        if attrs["in_splits"]:
            callee.erase()
        return attrs["callee"]


def _mark(f, key: str, pairs, count: int) -> None:
    """Set ``ember.device`` on the function's arguments or results named by (index, device)
    ``pairs``; a value on two devices is an error."""
    devices: dict[int, int] = {}
    for i, d in pairs:
        if devices.setdefault(i, d) != d:
            raise PassError(f"{f.location}: error: {key[:3]} {i} of the function is given to "
                            f"devices {devices[i]} and {d} of an ember.spmd; each lives on one")
    i64 = ir.IntegerType.get_signless(64)

    def mark(i, entries):
        if i in devices:
            entries[DEVICE_ATTR] = ir.IntegerAttr.get(i64, devices[i])
    edit_attr_dicts(f, key, count, mark)
