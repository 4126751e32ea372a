"""The registry of ember passes, and a driver that mixes them with upstream MLIR passes.

A pass is a small named object: ``name`` (kebab-case), a one-line ``summary``, options as
dataclass fields, and ``run(module)``. Instances are callable as ``(op, pass_)`` so
``PassManager.add`` accepts them too.
"""

from __future__ import annotations

import dataclasses
import re
from typing import ClassVar

from ember._mlir import PassManager, ir
from ember.errors import PassError

PASSES: dict[str, type[Pass]] = {}


class Pass:
    """Base class of ember passes."""

    name: ClassVar[str]
    summary: ClassVar[str]

    def run(self, module: ir.Module) -> None:
        raise NotImplementedError

    def __call__(self, op, pass_=None):
        # PassManager hands an Operation; its ModuleOp view has .body and .context too.
        module = op if isinstance(op, ir.Module) else op.operation.opview
        try:
            self.run(module)
        except PassError:
            if pass_ is None:
                raise
            pass_.signal_pass_failure()

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else []


def register(cls: type[Pass]) -> type[Pass]:
    assert cls.name not in PASSES, f"pass {cls.name} registered twice"
    PASSES[cls.name] = cls
    return cls


def location_of(op) -> str:
    return str(op.location)


def func_ops(module: ir.Module):
    """The ``func.func`` ops of a module, in order."""
    return [op for op in module.body.operations if op.operation.name == "func.func"]


_STEP = re.compile(r"\s*([\w.\-]+)\s*(\{[^}]*\})?\s*")


def make_pass(name: str, options: str = "") -> Pass:
    """An ember pass instance from its name and ``{key=value ...}`` options text."""
    cls = PASSES.get(name)
    if cls is None:
        raise PassError(f"unknown ember pass {name!r}; known: {sorted(PASSES)}")
    kwargs = {}
    fields = {f.name.replace("_", "-"): f for f in cls.options()}
    for item in options.strip("{} ").split():
        key, _, value = item.partition("=")
        if key not in fields:
            raise PassError(f"pass {name} has no option {key!r}; options: {sorted(fields)}")
        f = fields[key]
        kwargs[f.name] = _parse_option(f, value, name)
    return cls(**kwargs)


def _parse_option(field, value: str, pass_name: str):
    ty = field.type if isinstance(field.type, type) else eval(field.type)  # noqa: S307
    try:
        if ty is bool:
            if value not in ("", "true", "false", "1", "0"):
                raise ValueError(value)
            return value in ("", "true", "1")
        parsed = ty(value)
        # Every numeric option is a count, a limit or a ratio.
        if ty in (int, float) and not 0 <= parsed < float("inf"):
            raise ValueError(value)
        return parsed
    except ValueError:
        what = f"a non-negative {ty.__name__}" if ty in (int, float) else f"a {ty.__name__}"
        raise PassError(f"option {field.name} of {pass_name} needs {what}, "
                        f"got {value!r}") from None


def run_pipeline(module: ir.Module, steps) -> None:
    """Run a list of steps in order: ember Pass objects or upstream pipeline text.

    Consecutive upstream steps share one PassManager. An upstream step is text in MLIR's
    syntax, e.g. ``"canonicalize"`` or ``"func.func(cse)"``.
    """
    pending: list[str] = []

    def flush():
        if pending:
            pm = PassManager.parse(f"builtin.module({','.join(pending)})", module.context)
            pm.run(module.operation)
            pending.clear()

    for step in steps:
        if isinstance(step, Pass):
            flush()
            step.run(module)
        else:
            pending.append(step)
    flush()
