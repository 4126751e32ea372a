"""SPMD expansion rules: ember op name -> function that emits an op's copies on every device.

``ember.spmd`` runs one per-device function on each device of a mesh (``pmap``,
``shard_map``). The ``ember-spmd`` pass replaces it with one copy of the function's body per
device, emitted in lockstep so that a collective sees the values of every device at once.
An op without a rule here is copied once per device, reading that device's operands; IREE
places each copy on the device its operands live on. A collective over a mesh axis has a
rule: it gets the operands of every device and returns the results of every device, moving
values between devices with ``ember.transfer`` (IREE's own cross-device transfer).

Example:
    >>> @spmd("psum")
    ... def _spmd_psum(ctx, op, per_device, attrs): ...
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from ember._mlir import ir, walk
from ember.errors import PassError
from ember.rules.base import OPS, clone_mapped, decode_attrs, emit, rule_registrar

SPMD: dict[str, Callable] = {}

spmd = rule_registrar(SPMD)


class SpmdContext:
    """The mesh being expanded: its ``shape`` and ``axis_names`` (devices in row-major order
    of their mesh coordinates), and how to emit ops and transfers."""

    def __init__(self, shape, axis_names, table=None):
        self.shape, self.axis_names = tuple(shape), tuple(axis_names)
        self.n = math.prod(self.shape)
        self.coords = list(itertools.product(*(range(s) for s in self.shape)))
        self.table = table

    def emit(self, name: str, operands, **attrs) -> list[ir.Value]:
        return emit(name, operands, **attrs)

    def transfer(self, value, device: int):
        """``value`` moved to ``device`` (IREE skips a transfer to where it already is)."""
        return self.emit("ember.transfer", [value], device=device)[0]

    def groups(self, axis_name: str) -> list[list[int]]:
        """The devices that a collective over ``axis_name`` combines, one list per group (the
        devices that share their coordinates along the other mesh axes), each in order of the
        devices' position along the named axis (``axis_index``)."""
        named = self.axis_names.index(axis_name)
        groups: dict[tuple, list[int]] = {}
        for d in sorted(range(self.n), key=lambda d: self.coords[d][named]):
            key = tuple(c for i, c in enumerate(self.coords[d]) if i != named)
            groups.setdefault(key, []).append(d)
        return list(groups.values())

    def index_in_group(self, axis_name: str, device: int) -> int:
        """``device``'s position along the named axis (its place in its group)."""
        return self.coords[device][self.axis_names.index(axis_name)]


def names_mesh_axis(op, ctx: SpmdContext) -> bool:
    """Whether ``op`` or an op nested in it is a collective over an axis of the mesh."""
    for nested in walk(op):
        if nested.name in SPMD and "axis_name" in nested.attributes and \
                ir.StringAttr(nested.attributes["axis_name"]).value in ctx.axis_names:
            return True
    return False


def _calls_collective(op, ctx: SpmdContext, seen=None) -> bool:
    """Whether ``op`` (an ``ember.call``, or an op holding calls) reaches a collective over
    the mesh through the functions it calls."""
    seen = set() if seen is None else seen
    for nested in walk(op):
        if nested.name != "ember.call":
            continue
        name = ir.FlatSymbolRefAttr(nested.attributes["callee"]).value
        if name in seen:
            continue
        seen.add(name)
        callee = ctx.table[name]
        if names_mesh_axis(callee.operation, ctx) or _calls_collective(callee.operation, ctx,
                                                                       seen):
            return True
    return False


def expand_body(ctx: SpmdContext, func, per_device):
    """Emit every device's copy of ``func``'s body at the current insertion point;
    ``per_device[d]`` are device ``d``'s arguments. Returns each device's results."""
    block = func.regions[0].blocks[0]
    envs = [dict(zip(block.arguments, args)) for args in per_device]
    for op in block.operations:
        op = op.operation
        if op.name in ("func.return", "ember.yield"):
            return [[env[v] for v in op.operands] for env in envs]
        ins = [[env[v] for v in op.operands] for env in envs]
        if op.name in SPMD and names_mesh_axis(op, ctx):
            with op.location:
                outs = SPMD[op.name](ctx, op, ins, decode_attrs(OPS[op.name], op))
        elif op.name == "ember.call" and _calls_collective(op, ctx):
            # A called function with a collective inside: expanded in place, as its body.
            callee = ctx.table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
            outs = expand_body(ctx, callee, ins)
        elif names_mesh_axis(op, ctx) or _calls_collective(op, ctx):
            raise PassError(
                f"{op.location}: error: ember-spmd cannot expand '{op.name}': it holds a "
                "collective over a mesh axis inside its regions (a collective inside "
                "cond/scan/while under pmap or shard_map is not supported yet); move the "
                "collective out of the control flow")
        else:
            outs = [list(clone_mapped(op, args, env).results) for env, args in zip(envs, ins)]
        for env, results in zip(envs, outs):
            env.update(zip(op.results, results))
    raise PassError(f"{func.location}: error: the per-device function has no terminator")
