"""Per-target legality: find what a target cannot run before IREE sees the program.

Each backend module lists the dtypes it cannot run correctly (``unsupported(**options)``:
dtype name -> reason), the ops it cannot run on some dtypes and, where it has one, a rule for
the arrays it cannot hold in buffers (``unsupported_values``). The check walks the ember IR
first (so the error names the ember op and the user's source line), then the lowered IR IREE
would receive, as a safety net for anything the lowering introduced.
"""

from __future__ import annotations

import numpy as np

from ember._mlir import dtype_of_element, ir, walk
from ember.errors import BackendUnsupportedError


def check(backend, ember_module: ir.Module, linalg_module: ir.Module | None = None,
          fun_name: str = "the program", options: dict | None = None) -> None:
    """Raise BackendUnsupportedError naming the first op (or argument) whose dtype
    ``backend`` (a backend module, with target ``options``) cannot run.

    Example:
        >>> check(get_backend("vulkan"), lowered._stage("optimized"))   # f16 program
        Traceback (most recent call last):
        BackendUnsupportedError: ember.mul (at loc("x.py":3:0)) computes float16 ...
    """
    bad = backend.unsupported(**(options or {}))
    bad_ops = getattr(backend, "unsupported_ops", dict)(**(options or {}))
    if bad_ops:
        _check_ops(backend.NAME, bad_ops, ember_module, fun_name)
    if bad:
        _check_module(backend.NAME, bad, ember_module, fun_name)
        # The lowering computes indices in i64 itself (IREE emulates those casts and adds):
        # the safety net over the lowered IR looks at floats only.
        floats = {k: v for k, v in bad.items() if k.startswith(("float", "bfloat"))}
        if linalg_module is not None and floats:
            _check_module(backend.NAME, floats, linalg_module, fun_name)
    values = getattr(backend, "unsupported_values", lambda **_: None)(**(options or {}))
    if values is not None:
        _check_values(backend.NAME, values, ember_module, fun_name)


def _check_ops(target: str, bad_ops: dict, module: ir.Module, fun_name: str) -> None:
    for op in walk(module.operation):
        for value in op.operands:
            why = bad_ops.get((op.name, _dtype_name(value.type)))
            if why is not None:
                raise BackendUnsupportedError(
                    f"{fun_name}: {op.name} (at {op.location}) on "
                    f"{_dtype_name(value.type)} ({value.type}) cannot run on the {target!r} "
                    f"backend: {why}.")


def _check_values(target: str, rule, module: ir.Module, fun_name: str) -> None:
    """Arrays the program keeps in buffers (arguments, results of ops outside fusion bodies,
    whose values stay in registers) that ``rule(itemsize, nbytes)`` refuses."""
    def refused(t: ir.Type) -> str | None:
        if not isinstance(t, ir.RankedTensorType) or _dtype_name(t) is None:
            return None
        dt = dtype_of_element(ir.ShapedType(t).element_type)
        size = int(np.prod(ir.ShapedType(t).shape, dtype=np.int64))
        return rule(dt.itemsize, size * dt.itemsize)

    decisions = set()      # (op, operand number) of the scalars that decide control flow
    for op in walk(module.operation):
        if op.name == "ember.cond":
            decisions.add((op, 0))
        elif op.name == "ember.while":
            decisions.add((op.regions[0].blocks[0].operations[-1].operation, 0))

    def held(value) -> bool:
        # A scalar that only decides a cond or a while is read by the host (IREE got those
        # right on the generic target); fusion bodies and ember.map's scalar code stay in
        # registers.
        return not all((u.owner, u.operand_number) in decisions for u in value.uses)

    def visit(block, where: str) -> None:
        for i, arg in enumerate(block.arguments):
            why = refused(arg.type)
            if why is not None:
                raise BackendUnsupportedError(
                    f"{fun_name}: {where} #{i} ({arg.type}) cannot be held by the "
                    f"{target!r} backend: {why}.")
        for op in block.operations:
            op = op.operation
            for i, value in enumerate(op.results):
                why = refused(value.type) if held(value) else None
                if why is not None:
                    maker = op
                    if op.name == "ember.fusion":   # name the fused op that computes it
                        owner = op.regions[0].blocks[0].operations[-1].operands[i].owner
                        maker = op if isinstance(owner, ir.Block) else owner
                    raise BackendUnsupportedError(
                        f"{fun_name}: {maker.name} (at {maker.location}) makes {value.type}, "
                        f"which the {target!r} backend cannot hold: {why}.")
            if op.name not in ("ember.fusion", "ember.map"):
                for region in op.regions:
                    for inner in region.blocks:
                        visit(inner, f"a block argument of {op.name}")

    for op in module.body.operations:
        if op.operation.name == "func.func":
            visit(op.operation.regions[0].blocks[0], "argument")


def _dtype_name(t: ir.Type) -> str | None:
    if isinstance(t, ir.ShapedType):
        t = ir.ShapedType(t).element_type
    try:
        return dtype_of_element(t).name
    except KeyError:
        return None  # index, none, ...: not an array dtype


# Constants and returns of a bad dtype are reported through the op that computes them, or the
# argument they pass through (or, failing that, by the lowered IR's check).
_NOT_COMPUTE = frozenset({"builtin.module", "ember.constant", "func.return"})


def _check_module(target: str, bad: dict[str, str], module: ir.Module, fun_name: str) -> None:
    """Ops first (their message names the op and source line), then function arguments that
    no op computes with (passed through)."""
    arguments = None
    for op in walk(module.operation):
        name = op.name
        if name == "func.func":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            for i, t in enumerate(ftype.inputs):
                dt = _dtype_name(t)
                if dt in bad and arguments is None:
                    arguments = (f"{fun_name}: argument #{i} has dtype {dt} ({t}), which the "
                                 f"{target!r} backend cannot run: {bad[dt]}.")
            continue
        if name in _NOT_COMPUTE or name == "ember.fusion":
            continue    # a fusion's ops are walked next: the error names the one computing
        for value in list(op.results) + list(op.operands):
            dt = _dtype_name(value.type)
            if dt in bad:
                raise BackendUnsupportedError(
                    f"{fun_name}: {name} (at {op.location}) computes with dtype {dt} "
                    f"({value.type}), which the {target!r} backend cannot run: {bad[dt]}.")
    if arguments is not None:
        raise BackendUnsupportedError(arguments)
