"""``ember.spmd`` and ``ember.transfer``: one program over several devices (``pmap``,
``shard_map``).

``ember.spmd`` calls a per-device function once on every device of a mesh: its operands are
every device's arguments in turn (device-major: device 0's, then device 1's, ...), its
results every device's results in turn. With ``in_splits``/``out_splits`` (``jit`` with
shardings), the function is written for the whole arrays and ember-spmd partitions it first
(``ember/rules/partition.py``). ``mesh_shape`` and ``axis_names`` (comma-separated)
describe the mesh; the devices are numbered row-major along it. The ``ember-spmd`` pass
(``ember/rules/spmd.py``) replaces it with one copy of the function's body per device, the
collectives over mesh axes (``ember/dialects/collectives.py``) becoming transfers between
devices, and marks each argument and result of the enclosing function with its device
(``ember.device``), which ``ember-to-linalg`` hands IREE as ``iree.abi.affinity``.

``ember.transfer`` moves a value to device ``device`` of the program: IREE's
``flow.tensor.transfer`` to the device ``#hal.device.promise<@ember_device_<d>>``, which
the backend's flags for a program of several devices define (``--iree-hal-target-device=
ember_device_<d>=local[<d>]`` on the CPU).
"""

from __future__ import annotations

from ember._mlir import ir
from ember.errors import PassError
from ember.rules.autodiff import jvp, transpose
from ember.rules.base import Attr, OpTypeError, aval_of_type, callee_type, define
from ember.rules.batching import batching
from ember.rules.lowering import lowering
from ember.rules.partition import split_aval
from ember.rules.type_rules import aval

__all__ = ["DEVICE_ATTR", "DEVICE_SYMBOL", "device_promise", "edit_attr_dicts"]

DEVICE_ATTR = "ember.device"        # on an argument or result: the device it lives on
DEVICE_SYMBOL = "ember_device_"     # IREE's name of device d: ember_device_<d>


def device_promise(device: int) -> ir.Attribute:
    """IREE's affinity attribute for device ``device`` of a program of several devices."""
    return ir.Attribute.parse(f"#hal.device.promise<@{DEVICE_SYMBOL}{device}>")


def edit_attr_dicts(f, key: str, count: int, edit) -> None:
    """Rewrite a function's ``arg_attrs`` or ``res_attrs`` (``key``; ``count`` arguments or
    results where it has none yet): ``edit(i, entries)`` changes the dict of the ``i``-th
    one's attributes in place."""
    current = list(ir.ArrayAttr(f.attributes[key])) if key in f.attributes else \
        [ir.DictAttr.get({})] * count
    out = []
    for i, d in enumerate(current):
        entries = {a.name: a.attr for a in ir.DictAttr(d)}
        edit(i, entries)
        out.append(ir.DictAttr.get(entries))
    f.attributes[key] = ir.ArrayAttr.get(out)


def _verify_spmd(op, attrs):
    name = attrs["callee"]
    ftype = callee_type(op, name, "runs")
    shape = attrs["mesh_shape"]
    names = attrs["axis_names"].split(",")
    if not shape or any(s < 1 for s in shape) or len(names) != len(shape) or \
            len(set(names)) != len(names):
        raise OpTypeError(f"mesh_shape {shape} and axis_names {attrs['axis_names']!r} must "
                          "name each of the mesh's axes once, each of positive size")
    n = 1
    for s in shape:
        n *= s
    k, m = len(ftype.inputs), len(ftype.results)
    if len(op.operands) != n * k or len(op.results) != n * m:
        raise OpTypeError(f"{len(op.operands)} operands / {len(op.results)} results do not "
                          f"give each of the {n} devices the {k} arguments and {m} results "
                          f"of @{name}: {ftype}")
    splits = {"operand": attrs["in_splits"], "result": attrs["out_splits"]}
    if splits["operand"] or splits["result"]:
        if len(shape) != 1 or len(splits["operand"]) != k or len(splits["result"]) != m:
            raise OpTypeError(f"in_splits {splits['operand']} / out_splits "
                              f"{splits['result']} need a one-axis mesh and one entry per "
                              f"argument / result of @{name}")
    for kind, values, types, per in (("operand", op.operands, ftype.inputs, k),
                                     ("result", op.results, ftype.results, m)):
        for i, v in enumerate(values):
            want, got = aval_of_type(types[i % per]), aval_of_type(v.type)
            split = splits[kind][i % per] if splits[kind] else -1
            if split >= 0:
                if split >= want.ndim or want.shape[split] % n:
                    raise OpTypeError(f"{kind} {i % per} of @{name}, {want.str_short()}, "
                                      f"cannot be split along dimension {split} in {n}")
                want = split_aval(want, split, n)
            if (want.shape, want.dtype) != (got.shape, got.dtype):
                raise OpTypeError(f"{kind} {i} (device {i // per}) has type "
                                  f"{got.str_short()} but @{name} has {want.str_short()}")


define("spmd", None, None,
       attrs=(Attr("callee", "symbol"), Attr("mesh_shape", "i64s"), Attr("axis_names", "str"),
              Attr("in_splits", "i64s", None), Attr("out_splits", "i64s", None)),
       family="transform", verify_op=_verify_spmd,
       doc="Run a per-device func.func on every device of a mesh, each with its own operands "
           "(replaced by ember-spmd); with in_splits/out_splits, the func.func is on whole "
           "arrays, split in equal blocks along those dimensions (-1: whole), and ember-spmd "
           "partitions it first.")


def _transfer(avals, attrs):
    if attrs["device"] < 0:
        raise OpTypeError(f"device must be non-negative, got {attrs['device']}")
    (a,) = avals
    return [aval(a.shape, a.dtype)]


define("transfer", 1, _transfer, attrs=(Attr("device", "i64"),), family="collective",
       doc="The operand, moved to device `device` of a program of several devices.")


# --- lowering -----------------------------------------------------------------------------

@lowering("spmd")
def _lower_unexpanded_spmd(c):
    raise PassError(f"{c.op.location}: error: 'ember.spmd' must be replaced by the ember-spmd "
                    "pass before ember-to-linalg; add ember-spmd to the pipeline")


@lowering("transfer")
def _lower_transfer(c):
    op = ir.Operation.create("flow.tensor.transfer", results=[c.operands[0].type],
                             operands=[c.operands[0]],
                             attributes={"target": device_promise(c.attrs["device"])})
    return [op.result]


# --- batching and differentiation: a transfer moves whatever it is given --------------------

@batching("transfer")
def _batch_transfer(ctx, op, inputs, attrs):
    ((x, b),) = inputs
    return [(ctx.emit(op.name, [x], **attrs)[0], b)]


@jvp("transfer")
def _jvp_transfer(ad, op, x, out, t, attrs):
    return [ad.linear("transfer", [t[0]], **attrs)]


@transpose("transfer")
def _t_transfer(tc, op, cts, lin, attrs):
    # The cotangent stays where it is computed: IREE moves it to wherever it is read.
    return [cts[0]]
