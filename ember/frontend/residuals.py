"""``saved_residuals``: what reverse mode keeps from a function's forward pass for its backward
pass, as ``jax.ad_checkpoint.saved_residuals``/``print_saved_residuals``.

ember's differentiation is a pass: ``ember.vjp`` of the function, after ``ember-differentiate``,
is one function whose backward ops are those that read the cotangent (or a value computed
from it) or recompute a checkpoint's values (``ember.rematerialized``). A residual is a
value such an op reads that the forward pass made: an argument, or an op's result. What this
lists is decided by the derivative rules and checkpoint policies, before ember-simplify,
fusion and the memory planner (whose figures ``jit(...).lower(...).compile().
memory_analysis()`` gives); as JAX's, from its jaxpr before XLA.
"""

from __future__ import annotations

import inspect

import numpy as np

from ember import tree_util
from ember._mlir import ir, walk
from ember.core import ShapedArray, ShapeDtypeStruct
from ember.dialects import aval_of_type
from ember.passes.plan_memory import _where
from ember.rules.base import REMAT_ATTR

__all__ = ["saved_residuals", "print_saved_residuals"]

_FROM_NOTHING = ("ember.constant", "ember.iota")


def saved_residuals(f, *args, **kwargs) -> list[tuple[ShapeDtypeStruct, str]]:
    """The values reverse mode through ``f`` at these arguments keeps for the backward pass,
    each as (its ShapeDtypeStruct, where it comes from): ``from the argument x``, ``named
    'h' from model.py:12`` (``checkpoint_name``) or ``output of tanh from model.py:12``.
    Every floating-point argument is differentiated, as ``jax.linearize`` does.

    Example:
        >>> res = ember.ad_checkpoint.saved_residuals(lambda w, x: enp.tanh(x @ w).sum(), w, x)
        >>> [(r.shape, source) for r, source in res]      # w (3, 5), x (4, 3)
        [((3, 5), 'from the argument w'), ((4, 3), 'from the argument x'),
         ((4, 5), 'output of sub from <stdin>:1')]
    """
    from ember.frontend.api import _leaf_paths, _path_str, call_with_leaves, eval_shape, jit
    from ember.frontend.autodiff import vjp
    from ember.passes import pipelines

    leaves, tree = tree_util.tree_flatten((args, kwargs))
    try:
        argnames = [p.name for p in inspect.signature(f).parameters.values()
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        argnames = []
    names = [_path_str("", argnames, p).replace("'", "") for p in _leaf_paths(tree)]
    diff = [i for i, x in enumerate(leaves) if np.issubdtype(np.dtype(_dtype(x)), np.inexact)]
    flat = call_with_leaves(f, leaves, tree, diff)
    outs = eval_shape(flat, *[leaves[i] for i in diff])
    cts = [ShapeDtypeStruct(o.shape, o.dtype) for o in tree_util.tree_leaves(outs)]

    def program(d, ct):
        return vjp(flat, *d)[1](tree_util.tree_unflatten(
            tree_util.tree_structure(outs), list(ct)))

    lowered = jit(program).lower([leaves[i] for i in diff], cts)
    ember_ir = lowered._stage("ember")
    with ember_ir.context:
        module = ir.Module.parse(ember_ir.operation.get_asm(enable_debug_info=True))
    pipelines.run(module, ["ember-verify", "ember-differentiate{keep-names=true}"])
    main = next(op for op in module.body.operations
                if ir.StringAttr(op.attributes["sym_name"]).value == "main")
    block = main.regions[0].blocks[0]
    arg_names = [names[i] for i in diff]
    return _residuals(block, len(diff), arg_names)


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Print :func:`saved_residuals`, a line each (``f32[512,256] from the argument x``), as
    ``jax.ad_checkpoint.print_saved_residuals``.

    Example:
        >>> ember.ad_checkpoint.print_saved_residuals(loss, params, x)
        f32[256,256] from the argument params[0]
        f32[128,256] output of tanh from model.py:12
    """
    for aval, source in saved_residuals(f, *args, **kwargs):
        print(f"{_short(aval)} {source}")


def _residuals(block, n_primals: int, arg_names: list[str]) -> list:
    ops = [op.operation for op in block.operations]
    ret = ops[-1]
    ops = ops[:-1]
    # Live ops: those the results need (the forward pass's value is not returned).
    needed = set(ret.operands)
    live = []
    for op in reversed(ops):
        if any(r in needed for r in op.results):
            live.append(op)
            needed.update(_reads(op))
    live.reverse()
    # Backward ops: those reading the cotangents (or what is computed from them), and the
    # recomputations of checkpoints.
    backward_values = set(list(block.arguments)[n_primals:])
    backward = []
    for op in live:
        if REMAT_ATTR in op.attributes or any(v in backward_values for v in _reads(op)):
            backward.append(op)
            backward_values.update(op.results)
    seen, out = set(), []
    for op in backward:
        for v in _reads(op):
            if v in backward_values or v in seen:
                continue
            seen.add(v)
            source = _source(v, arg_names)
            if source is not None:
                aval = aval_of_type(v.type)
                out.append((ShapeDtypeStruct(aval.shape, aval.dtype), source))
    # Arguments first, in their order (as JAX lists them), then values in program order.
    order = {f"from the argument {n}": i for i, n in enumerate(arg_names)}
    return sorted(out, key=lambda r: order.get(r[1], len(order)))


def _reads(op) -> list:
    """The values of the enclosing block ``op`` (or an op in its regions) reads."""
    inner = list(walk(op))
    defined = {r for o in inner for r in o.results} | {
        a for o in inner for region in o.regions for b in region.blocks for a in b.arguments}
    return list(dict.fromkeys(v for o in inner for v in o.operands if v not in defined))


def _source(v, arg_names) -> str | None:
    """Where a residual comes from; None for one computed from constants alone."""
    if isinstance(v.owner, ir.Block):
        return f"from the argument {arg_names[v.arg_number]}"
    op = v.owner.operation
    if _constant(op):
        return None
    where = _where(op)
    if op.name == "ember.checkpoint_name":
        return f"named '{ir.StringAttr(op.attributes['tag']).value}' from {where}"
    if op.name == "ember.call":         # a checkpointed function's result
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        return f"output of the checkpointed {callee} from {where}"
    return f"output of {op.name.removeprefix('ember.')} from {where}"


def _constant(op) -> bool:
    stack, seen = [op], set()
    while stack:
        o = stack.pop()
        if o in seen:
            continue
        seen.add(o)
        if o.name in _FROM_NOTHING:
            continue
        if not o.operands and not o.regions:
            return False
        for v in o.operands:
            if isinstance(v.owner, ir.Block):
                return False
            stack.append(v.owner.operation)
    return True


def _dtype(x):
    return getattr(x, "dtype", None) or np.asarray(x).dtype


def _short(aval) -> str:
    return ShapedArray(tuple(aval.shape), np.dtype(aval.dtype)).str_short()
