"""``ember-batch``: replace each ``ember.vmap`` op by batched code, innermost first.

The per-example callee is walked in order; each op is re-emitted through its batching rule
(``batching.BATCHING``) with the batch dimension of every value tracked beside it. Ops whose
operands are all unbatched are copied as they are, so shared weights stay unbatched.
``ember.call`` inside a mapped function is batched by inlining its callee.
"""

from __future__ import annotations

from ember._mlir import ir, tensor_type, walk
from ember.dialects import OPS, aval_of_type, decode_attrs
from ember.passes import (
    batch_collectives,  # noqa: F401  (collective rules)
    batch_control_flow,  # noqa: F401  (control-flow rules)
    batch_indexing,  # noqa: F401  (indexing rules)
    batching,  # noqa: F401  (the rules)
)
from ember.passes.batching import BATCHING, BatchContext
from ember.passes.lowering import LOWERINGS
from ember.passes.registry import Pass, PassError, func_ops, register


@register
class Batch(Pass):
    """Batch every ``ember.vmap`` op."""

    name = "ember-batch"
    summary = "Replace ember.vmap ops by batched ember ops (vmap as a compiler pass)"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            self._table = ir.SymbolTable(module.operation)
            self._done: set[str] = set()
            mapped = set()
            for f in func_ops(module):
                mapped |= self._batch_function(f)
            # Per-example callees nothing else refers to any more are dead, and so are the
            # functions only they called (their bodies were inlined into the batched code).
            dead = mapped
            while dead:
                used = _callees(module.operation)
                dead = {name for name in dead - used
                        if "sym_visibility" in self._table[name].attributes}
                called = set().union(*(_callees(self._table[n]) for n in dead)) if dead \
                    else set()
                for name in dead:
                    self._table[name].operation.erase()
                dead = called

    def _batch_function(self, f) -> set[str]:
        name = ir.StringAttr(f.attributes["sym_name"]).value
        if name in self._done:
            return set()
        self._done.add(name)
        mapped = set()
        # Functions it calls first: a mapped function's ``ember.call`` is batched by inlining
        # its callee's body (``batching._call``), which must hold no ``ember.vmap`` by then.
        for op in [o for o in walk(f.operation) if o.name == "ember.call"]:
            mapped |= self._batch_function(
                self._table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value])
        for op in [o for o in walk(f.operation) if o.name == "ember.vmap"]:
            mapped |= self._replace_vmap(op)
        return mapped

    def _replace_vmap(self, op) -> set[str]:
        attrs = decode_attrs(OPS["ember.vmap"], op)
        callee = self._table[attrs["callee"]]
        mapped = {attrs["callee"]} | self._batch_function(callee)   # innermost first
        ctx = BatchContext(attrs["axis_size"], attrs["axis_name"])
        inputs = [(v, None if a < 0 else a) for v, a in zip(op.operands, attrs["in_axes"])]
        with op.location, ir.InsertionPoint(op):
            outs = batch_body(ctx, callee, inputs)
            results = []
            for i, ((v, b), axis) in enumerate(zip(outs, attrs["out_axes"])):
                if axis < 0:
                    if b is not None:
                        raise PassError(
                            f"{op.location}: error: vmap has out_axes=None for output {i}, "
                            "but that output is batched (it depends on a mapped argument); "
                            "give it an out_axes entry")
                    results.append(v)
                else:
                    results.append(ctx.materialize(v, b, axis))
        for old, new in zip(op.results, results):
            old.replace_all_uses_with(new)
        op.erase()
        return mapped


def batched_results(module, callee: str, in_batched, size: int,
                    axis_name: str | None = None) -> list[bool]:
    """Which results of ``callee`` a vmap with the given batched arguments maps (carries a
    batch dimension in): found by batching a scratch copy of ``module`` exactly as the pass
    will, so that the frontend can check ``out_axes`` before anything is compiled.

    Example:
        >>> batched_results(module, "f_per_example", [True, False], 8)   # f(x, w)
        [True, False]
    """
    with module.context, ir.Location.unknown():
        scratch = module.operation.clone()
        try:
            batch = Batch()
            batch._table, batch._done = ir.SymbolTable(scratch), set()
            func = batch._table[callee]
            batch._batch_function(func)       # nested vmaps inside the callee first
            block = func.regions[0].blocks[0]
            types = [_type_with_batch(a.type, size) if b else a.type
                     for a, b in zip(block.arguments, in_batched)]
            with ir.InsertionPoint(scratch.regions[0].blocks[0]):
                holder = ir.Operation.create("ember.region_holder", regions=1)
            args = holder.regions[0].blocks.append(*types)
            with ir.InsertionPoint(args):
                outs = batch_body(BatchContext(size, axis_name), func, [
                    (v, 0 if b else None) for v, b in zip(args.arguments, in_batched)])
            return [b is not None for _, b in outs]
        finally:
            scratch.erase()


def _type_with_batch(t, size: int):
    a = aval_of_type(t)
    return tensor_type((size,) + tuple(a.shape), a.dtype)


def batch_body(ctx: BatchContext, func, inputs):
    """Emit the batched body of ``func`` at the current insertion point; ``inputs`` are the
    (value, bdim) of its arguments. Returns (value, bdim) of its results."""
    block = func.regions[0].blocks[0]
    return batch_block(ctx, block, dict(zip(block.arguments, inputs)))


def batch_block(ctx: BatchContext, block, env: dict):
    """Emit the batched ops of ``block`` (all but its terminator) at the current insertion
    point and return the (value, bdim) of the terminator's operands (``func.return`` or
    ``ember.yield``).

    ``env`` maps values to their batched (value, bdim): the block's arguments and, for the
    block of a region, the values of the enclosing blocks its ops read. It is extended with
    the block's values and is ``ctx.env`` while the rules run, so that rules of region ops
    (see ``batch_control_flow.py``) can batch their regions' blocks with it.
    """
    outer_env = getattr(ctx, "env", None)
    ctx.env = env
    try:
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "ember.yield"):
                return [env[v] for v in op.operands]
            ins = [env[v] for v in op.operands]
            if all(b is None for _, b in ins) and not _names_axis(op, ctx.axis_name) and \
                    not _uses_batched_from_regions(op, env, ctx.axis_name):
                new = op.clone()
                for i, (v, _) in enumerate(ins):
                    new.operands[i] = v
                _remap_nested(new, env)
                for old, r in zip(op.results, new.results):
                    env[old] = (r, None)
                continue
            rule = BATCHING.get(op.name)     # ember.call: batching._call inlines the callee
            if rule is None:
                raise NotImplementedError(
                    f"ember-batch: no batching rule for '{op.name}' (at {op.location})")
            with op.location:
                outs = rule(ctx, op, ins, decode_attrs(OPS[op.name], op)
                            if op.name in OPS else {})
            for old, vb in zip(op.results, outs):
                env[old] = vb
    finally:
        ctx.env = outer_env
    raise PassError(f"{block.owner.location}: error: block has no terminator "
                    "(func.return or ember.yield)")


def _callees(op) -> set[str]:
    """The functions that ops in ``op`` (and ``op`` itself) call."""
    return {ir.FlatSymbolRefAttr(o.attributes["callee"]).value for o in walk(op)
            if "callee" in o.attributes}


def _names_axis(op, axis_name) -> bool:
    """Whether ``op`` is a collective over the axis being batched."""
    return axis_name is not None and "axis_name" in op.attributes and \
        op.name != "ember.vmap" and ir.StringAttr(op.attributes["axis_name"]).value == axis_name


def _uses_batched_from_regions(op, env, axis_name=None) -> bool:
    """Whether an op's nested regions read a batched value of the enclosing body or hold a
    collective over the axis being batched."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for nested in walk(inner):
                    if _names_axis(nested, axis_name):
                        return True
                    for v in nested.operands:
                        if v in env and env[v][1] is not None:
                            return True
    return False


def _remap_nested(op, env) -> None:
    """Point uses inside a copied op's regions at the batched body's values."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for nested in walk(inner):
                    for i, v in enumerate(nested.operands):
                        if v in env:
                            nested.operands[i] = env[v][0]


def _module_of(op):
    op = op.operation
    while op.name != "builtin.module":
        op = op.parent
    return op


def _lower_unbatched_vmap(c):
    raise PassError(f"{c.op.location}: error: 'ember.vmap' must be replaced by the ember-batch "
                    "pass before ember-to-linalg; add ember-batch to the pipeline")


LOWERINGS["ember.vmap"] = _lower_unbatched_vmap


def _lower_unbound_collective(c):
    name = ir.StringAttr(c.op.attributes["axis_name"]).value
    raise PassError(f"{c.op.location}: error: '{c.op.name}' names the axis {name!r}, which no "
                    "enclosing ember.vmap binds (vmap(..., axis_name=...)); ember-batch "
                    "resolves collectives of the vmaps it batches")


for _name, _op in OPS.items():
    if _op.family == "collective":
        LOWERINGS[_name] = _lower_unbound_collective
