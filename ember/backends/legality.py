"""Per-target legality: find what a target cannot run before IREE sees the program.

Each backend module lists the dtypes it cannot run correctly (``unsupported(**options)``:
dtype name -> reason). The check walks the ember IR first (so the error names the ember op
and the user's source line), then the lowered IR IREE would receive, as a safety net for
anything the lowering introduced.
"""

from __future__ import annotations

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
    if not bad:
        return
    _check_module(backend.NAME, bad, ember_module, fun_name)
    # The lowering computes indices in i64 itself (IREE emulates those casts and adds): the
    # safety net over the lowered IR looks at floats only.
    floats = {k: v for k, v in bad.items() if k.startswith(("float", "bfloat"))}
    if linalg_module is not None and floats:
        _check_module(backend.NAME, floats, linalg_module, fun_name)


def _check_ops(target: str, bad_ops: dict, module: ir.Module, fun_name: str) -> None:
    for op in walk(module.operation):
        for value in op.operands:
            why = bad_ops.get((op.name, _dtype_name(value.type)))
            if why is not None:
                raise BackendUnsupportedError(
                    f"{fun_name}: {op.name} (at {op.location}) on "
                    f"{_dtype_name(value.type)} ({value.type}) cannot run on the {target!r} "
                    f"backend: {why}.")


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
