"""``ember-forward-while-carries``: every ``scf.while`` condition passes all its arguments on.

Upstream canonicalization drops a carry that only the condition reads (a convergence test's
error, which each step computes anew) from what the condition passes to the body, so the
two regions of the loop take different arguments. IREE 3.13's conversion to its stream
dialect miscounts such a loop when two of its inits are one value (after IREE hoists equal
constants into one global), and fails: "'scf.while' op along control flow edge from
Operation scf.condition to Region #1: region branch point has 10 operands, but region
successor needs 12 inputs" (a batched program of ember.scipy.special's series loops).

So the loop is rebuilt with the condition passing every argument on, as ember's lowering
builds it, and each body argument that nothing reads is held by a
``util.optimization_barrier``, without which IREE's own canonicalization drops it again.
IREE removes the barriers before it generates code. ember-pin-loop-carries, which runs next,
pins only the carries of loops that pass their arguments on.
"""

from __future__ import annotations

from ember._mlir import ir, walk
from ember.passes.protect_arguments import forwards_arguments
from ember.passes.registry import Pass, func_ops, register


@register
class ForwardWhileCarries(Pass):
    """Rebuild each ``scf.while`` whose condition leaves some of its arguments out of what it
    passes to the body (see the module docstring)."""

    name = "ember-forward-while-carries"
    summary = "Make every scf.while condition pass all its arguments to the body"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                for loop in [op for op in walk(f) if op.name == "scf.while"]:
                    if not forwards_arguments(loop):
                        _forward_all(loop)


def _forward_all(loop) -> None:
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    condition = before.operations[len(before.operations) - 1]
    passed = list(condition.operands)[1:]
    args = list(before.arguments)
    if not all(v in args for v in passed):       # the condition passes on computed values
        return
    where = [args.index(v) for v in passed]      # the argument each body argument was
    types = [a.type for a in args]
    with ir.InsertionPoint(loop):
        new = ir.Operation.create("scf.while", results=types, operands=list(loop.operands),
                                  regions=2)
    old = len(passed)
    for t in types:
        after.add_argument(t, ir.Location.unknown())
    for k in range(old):
        after.arguments[k].replace_all_uses_with(after.arguments[old + where[k]])
    for _ in range(old):
        after.erase_argument(0)
    before.append_to(new.regions[0])
    after.append_to(new.regions[1])
    with ir.InsertionPoint(condition):
        ir.Operation.create("scf.condition", operands=[condition.operands[0], *args])
    condition.erase()
    for k, result in enumerate(loop.results):
        result.replace_all_uses_with(new.results[where[k]])
    loop.erase()
    body = new.regions[1].blocks[0]
    with ir.InsertionPoint.at_block_begin(body):
        for arg in body.arguments:
            if not list(arg.uses):
                ir.Operation.create("util.optimization_barrier", results=[arg.type],
                                    operands=[arg])
