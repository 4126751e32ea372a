"""``ember-pin-loop-carries``: let IREE update a loop's carried tensors in place.

IREE 3.13's conversion to its stream dialect does not know on which device a loop's block
argument lives, and copies ("transfers") it before each op that reads it: a ``fori_loop``
that writes one row of a 1 MiB buffer per step copied the buffer at every step (a 512-step
row fill took 20 ms; JAX 0.5 ms), a ``while_loop`` as well (35 ms). Behind a
``flow.tensor.barrier`` naming the device, IREE's own way to place a value, the update is in
place (2.8 and 2.9 ms, benchmarks/loops.py). An ``scf.while`` carry is pinned in its body,
not in its condition region: pinned there too, IREE's runtime rejected some programs' command
buffers ("indirect buffer reference slot 0 is out range of the declared binding capacity",
two batched ``while_loop``s of ember.scipy.special.expi and expn in one program).

IREE's copy-on-write does not follow a carry through the loop, though. It copies a constant
that a carry starts as, but it wrote into an init still used after the loop, into one value
that started two carries, and into a value from outside the loop that a step passed on. So a
carry is pinned only when its buffer is the loop's own (:func:`_own_carry`); IREE keeps
copying the others. An argument a pinned carry starts as gets a copy of its own from
``ember-protect-arguments``, which runs next. (``util.optimization_barrier`` in place of the
``flow.tensor.barrier`` hides the carry from IREE's analysis altogether: IREE then wrote into
a hoisted constant, and its command buffers used transient buffers before they existed.)

ember's backends compile for one target device, which IREE names ``@__device_0``.
"""

from __future__ import annotations

from ember._mlir import ir, walk_host
from ember.passes.protect_arguments import VIEW_OPS, donated_arguments, forwards_arguments
from ember.passes.registry import Pass, func_ops, register

DEVICE = "#hal.device.affinity<@__device_0>"


@register
class PinLoopCarries(Pass):
    """Put each ``scf.for`` and ``scf.while`` carry whose buffer is the loop's own behind a
    ``flow.tensor.barrier`` on the device (see the module docstring)."""

    name = "ember-pin-loop-carries"
    summary = "Place loop carries on the device, so that IREE updates them in place"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            target = ir.Attribute.parse(DEVICE)
            for f in func_ops(module):
                if not f.regions[0].blocks:
                    continue
                entry = f.regions[0].blocks[0]
                shared = [entry.arguments[i] for i in donated_arguments(f)]
                pinned: list[ir.Value] = []
                # pre-order: a loop's carries are pinned before those of the loops inside it
                for loop in [op for op in walk_host(f) if op.name in ("scf.for", "scf.while")]:
                    pinned += _pin(loop, entry, shared, pinned, target)


def _loop_carries(loop) -> list[tuple[ir.Value, ir.BlockArgument, ir.Value]]:
    """(init, the body's block argument carrying it, the value a step passes on) of each
    carry of an ``scf.for``, or of an ``scf.while`` whose condition passes its arguments on
    unchanged (as ember's lowering builds it; [] otherwise)."""
    if loop.name == "scf.for":
        body = loop.regions[0].blocks[0]
        steps = list(body.operations[len(body.operations) - 1].operands)
        return list(zip(list(loop.operands)[3:], list(body.arguments)[1:], steps))
    if not forwards_arguments(loop):
        return []
    body = loop.regions[1].blocks[0]
    steps = list(body.operations[len(body.operations) - 1].operands)
    return list(zip(loop.operands, body.arguments, steps))


def _pin(loop, entry, shared, pinned, target) -> list[ir.Value]:
    carries = _loop_carries(loop)
    inits = [c[0] for c in carries]
    yields = [c[2] for c in carries]
    out = []
    for init, arg, step in carries:
        if not (isinstance(arg.type, ir.RankedTensorType)
                and _own_carry(arg, init, step, inits, yields, entry, shared, pinned)):
            continue
        with ir.InsertionPoint.at_block_begin(arg.owner):
            value = ir.Operation.create("flow.tensor.barrier", results=[arg.type],
                                        operands=[arg], attributes={"target": target}).result
        arg.replace_all_uses_except(value, value.owner.operation)
        out.append(value)
    return out


def _own_carry(arg, init, step, inits, yields, entry, shared, pinned) -> bool:
    """Whether the buffer of the carry ``arg`` is the loop's alone: it starts as ``init``,
    which nothing else uses (an argument may be used elsewhere: ember-protect-arguments gives
    the loop a copy, unless it is donated, in ``shared``; a carry of an enclosing loop must
    be pinned itself), and each step passes on the carry itself or a value the step made
    (``step``), in no other carry too."""
    if inits.count(init) > 1 or yields.count(step) > 1:
        return False
    uses = len(list(init.uses))
    if isinstance(init, ir.BlockArgument) and init.owner == entry:
        if init in shared and uses > 1:
            return False
    elif init in pinned:
        if uses > 1:
            return False
    elif isinstance(init, ir.BlockArgument) or init.owner.name in VIEW_OPS or uses > 1:
        return False
    if isinstance(step, ir.BlockArgument):
        return step == arg
    return step.owner.operation.block == arg.owner and step.owner.name not in VIEW_OPS
