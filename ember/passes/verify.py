"""``ember-verify``: check every ember op against its declaration in the dialect."""

from __future__ import annotations

from ember._mlir import ir, walk
from ember.dialects import OPS, OpTypeError, aval_of_type, decode_attrs
from ember.dialects.control_flow import region_yield_avals
from ember.passes.registry import Pass, PassError, register
from ember.rules.type_rules import fmt


def verify_op(op: ir.Operation) -> str | None:
    """The problem with one ember op, or None if it matches its declaration."""
    name = op.name
    opdef = OPS.get(name)
    if opdef is None:
        return f"'{name}' is not an ember op (known: {len(OPS)} ops, e.g. ember.add)"
    try:
        _check_types(op)
        _check_attr_names(opdef, op)
        attrs = decode_attrs(opdef, op)
        if opdef.verify_op is not None:
            opdef.verify_op(op, attrs)
        if opdef.infer is None:
            return None
        avals = [aval_of_type(v.type) for v in op.operands]
        yields = region_yield_avals(op) if "regions" in opdef.traits else []
        expected = opdef.result_avals(avals + yields, attrs)
        got = [aval_of_type(r.type) for r in op.results]
        if [(a.shape, a.dtype) for a in expected] != [(a.shape, a.dtype) for a in got]:
            also = f", region yields ({fmt(yields)})" if yields else ""
            return (f"'{name}' has result types {fmt(got)} but its operands "
                    f"({fmt(avals) or 'none'}){also} and attributes give {fmt(expected)}")
    except OpTypeError as e:
        return f"'{name}' op {e}"
    return None


def _check_types(op: ir.Operation) -> None:
    """Operands and results must be statically shaped tensors of ember dtypes."""
    for kind, values in (("operand", op.operands), ("result", op.results)):
        for i, v in enumerate(values):
            aval = aval_of_type(v.type)     # raises for non-tensors and unknown dtypes
            if any(d < 0 for d in aval.shape):
                raise OpTypeError(f"{kind} #{i} has dynamic shape {v.type}; ember needs "
                                  f"static shapes")


def _check_attr_names(opdef, op: ir.Operation) -> None:
    """Undeclared attributes are errors, except dialect-prefixed (discardable) ones."""
    declared = {a.name for a in opdef.attrs}
    for item in op.attributes:
        name = getattr(item, "name", item)   # names, or NamedAttributes in other versions
        if name not in declared and "." not in name:
            raise OpTypeError(f"unknown attribute {name!r}; expected "
                              f"{sorted(declared) or 'none'}")


@register
class Verify(Pass):
    """Check each ember op's operands, attributes and result types; report all problems."""

    name = "ember-verify"
    summary = "Check every ember op against its declaration (types, attributes, callees)"

    def run(self, module: ir.Module) -> None:
        problems: list[str] = []
        for op in walk(module.operation):
            if op.name.startswith("ember."):
                msg = verify_op(op)
                if msg:
                    problems.append(f"{op.location}: error: {msg}")
        problems += _recursion(module)
        if problems:
            raise PassError("ember-verify found invalid ops:\n" + "\n".join(problems), problems)


def _recursion(module: ir.Module) -> list[str]:
    """A function that calls itself, directly or through others (ember.call, ember.vmap,
    func.call): ember inlines calls, so IREE would never finish compiling it."""
    calls: dict[str, list] = {}
    for f in module.body.operations:
        if f.operation.name != "func.func":
            continue
        name = ir.StringAttr(f.attributes["sym_name"]).value
        calls[name] = [(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, op)
                       for op in walk(f.operation) if "callee" in op.attributes]
    problems, done = [], set()

    def visit(name, path):
        for callee, op in calls.get(name, ()):
            if callee in path:
                cycle = " -> ".join(f"@{n}" for n in [*path[path.index(callee):], callee])
                problems.append(f"{op.location}: error: '{op.name}' makes a recursive call "
                                f"({cycle}); ember cannot compile recursion: use "
                                "lax.while_loop or lax.fori_loop")
            elif callee not in done:
                visit(callee, [*path, callee])
        done.add(name)

    for name in calls:
        if name not in done:
            visit(name, [name])
    return problems
