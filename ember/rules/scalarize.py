"""A loop as one kernel: the step's linalg ops as scalar loops inside one dispatch region.

IREE runs an ``scf.for`` or ``scf.while`` from the host: each step is a command buffer and
each op of the step a dispatch, however little it computes, where XLA compiles the loop
into its code. A loop whose step is small (``ember-loop-kernels`` marks it) runs instead
inside one ``flow.dispatch.region``, its steps one after another in one workgroup (a
``while_loop``'s condition too: no value goes back to the host between steps). IREE's CPU
codegen accepts structured ops there only when it distributes them to workgroups, so the
step's ``linalg`` ops and slice insertions become scalar loops over their elements
(``tensor.extract``/``tensor.insert`` on tensors), which it compiles as they are; the
innermost small dimensions are written out rather than looped over. Carries are copied into
the loop's own carry tensors at the end of each step, so that each stays one buffer (IREE's
bufferization requires it), and start in tensors of the region's own (see
:func:`_start_carries` and :func:`_own_empties` for what IREE does otherwise).

Example (the linalg IR of a scan marked ``ember.kernel``):
    >>> can_scalarize(loop_body)
    True
    >>> results = loop_kernel(scf_for)      # the loop, now inside a flow.dispatch.region
"""

from __future__ import annotations

from ember._mlir import arith, captured, flow, ir, rewire, scf, tensor, walk
from ember.rules.base import clone_mapped
from ember.rules.lowering import optimization_barrier

__all__ = ["can_scalarize", "loop_kernel"]

# Ops that stay as they are inside the kernel (views, scalars, element reads and writes).
_KEPT = frozenset({
    "tensor.empty", "tensor.extract", "tensor.insert", "tensor.extract_slice",
    "tensor.from_elements", "tensor.cast", "tensor.bitcast", "flow.return"})
# Reshapes, copied element by element: IREE 3.13 hoists a reshape out of a dispatch region
# even when it reads a value of a loop inside the region ("operand #0 does not dominate this
# use", a crash without IREE's verifier).
_RESHAPES = frozenset({"tensor.expand_shape", "tensor.collapse_shape"})
_CONTRACTIONS = {   # named contractions: maps over (batch..., m, n, k) as linalg defines them
    "linalg.matmul": ("(m, n, k) -> (m, k)", "(m, n, k) -> (k, n)", "(m, n, k) -> (m, n)"),
    "linalg.batch_matmul": ("(b, m, n, k) -> (b, m, k)", "(b, m, n, k) -> (b, k, n)",
                            "(b, m, n, k) -> (b, m, n)"),
}
_STRUCTURED = frozenset({"linalg.generic", "linalg.fill", "linalg.transpose",
                         "linalg.broadcast", *_CONTRACTIONS})


def _static(v: ir.Value) -> bool:
    t = v.type
    return not isinstance(t, ir.ShapedType) or ir.ShapedType(t).has_static_shape


def _bool_tensor(v: ir.Value) -> bool:
    """IREE 3.13 stores a kernel's i1 arrays as i8 but leaves a ``tensor.insert`` of an i1
    scalar into them as it is, which its verifier rejects (a batched loop's step that makes
    a mask; rank-0 values are kept as i1): a step making such an array is not scalarized."""
    t = v.type
    return isinstance(t, ir.RankedTensorType) and t.rank > 0 and \
        isinstance(t.element_type, ir.IntegerType) and t.element_type.width == 1


def _ops(block: ir.Block):
    """The ops of ``block``, with those of the fusions (dispatch regions) in it in place of
    the region ops."""
    for op in block.operations:
        op = op.operation
        if op.name == "flow.dispatch.region":
            yield from _ops(op.regions[0].blocks[0])
        else:
            yield op


def can_scalarize(block: ir.Block) -> bool:
    """Whether :func:`loop_kernel` can turn a loop whose step is ``block`` (the lowered ops
    of a loop body, ending with its terminator) into one kernel."""
    if any(_bool_tensor(a) for a in block.arguments):
        return False
    for op in list(_ops(block))[:-1]:
        name = op.name
        if not all(_static(v) for v in [*op.operands, *op.results]) or \
                any(_bool_tensor(r) for r in op.results):
            return False
        if name.startswith(("arith.", "math.", "complex.")) or name in _KEPT:
            continue
        if name in _RESHAPES:
            continue
        if name == "tensor.insert_slice":
            if not _unit_strides(op) or ir.ShapedType.get_dynamic_size() in _attr(op,
                                                                                   "static_sizes"):
                return False
            continue
        if name not in _STRUCTURED or _domain(op) is None:
            return False
    return True


def loop_kernel(loop) -> list[ir.Value]:
    """Put the ``scf.for`` or ``scf.while`` ``loop`` (its blocks accepted by
    :func:`can_scalarize`) in a ``flow.dispatch.region`` of its own, its structured ops as
    scalar loops; returns the region's results, which replace the loop's."""
    loop = loop.operation
    for region in loop.regions:
        _scalarize(region.blocks[0])
    # (an scf.while's condition passes its arguments on as they are: ember's lowering)
    step = loop.regions[-1].blocks[0]
    _carry_in_place(step, list(step.arguments)[1 if loop.name == "scf.for" else 0:])
    region = flow.DispatchRegionOp([r.type for r in loop.results], [], [],
                                   ip=ir.InsertionPoint(loop))
    block = region.body.blocks.append()
    block.append(loop)
    _start_carries(loop, region)
    with loop.location, ir.InsertionPoint(block):
        flow.ReturnOp(list(loop.results))
    _own_empties(region)
    _keep_producers_out(region)
    return list(region.results)


def _scalarize(block: ir.Block) -> None:
    """The structured ops, reshapes and slice insertions of ``block`` (those of the fusions
    in it too) as scalar loops."""
    for op in list(block.operations):
        if op.operation.name == "flow.dispatch.region":
            _inline_region(op.operation)
    for op in list(block.operations)[:-1]:
        op = op.operation
        if op.name in _STRUCTURED:
            rule = _structured
        elif op.name in _RESHAPES:
            rule = _reshape
        elif op.name == "tensor.insert_slice":
            rule = _insert_slice
        else:
            continue
        with op.location, ir.InsertionPoint(op):
            new = rule(op)
        for old, v in zip(op.results, new):
            old.replace_all_uses_with(v)
        op.erase()


def _start_carries(loop, region) -> None:
    """Where the carries of ``loop`` (now in ``region``) start. IREE makes the region's
    results the loop's carries' buffers when they start in empty tensors of the region; so
    a carry starting from an empty tensor (a scan's ys) starts from one of the region (from
    outside, IREE allocated a buffer of its own besides the result, and never wrote it), and
    one of an ``scf.for`` starting from a value from a copy made element by element (IREE's
    own copy is a structured op, which it distributes to workgroups: the loop's writes then
    no longer verify, "write affecting operations on global resources are restricted to
    workgroup distributed contexts"). An ``scf.while``'s results are its condition's, which
    IREE keeps apart from such a copy: its carries start from the values. A splat constant
    goes behind a barrier (:func:`_keep_producers_out`)."""
    first = 3 if loop.name == "scf.for" else 0
    for i, v in list(enumerate(loop.operands))[first:]:
        if not isinstance(v.type, ir.RankedTensorType):
            continue
        t = ir.RankedTensorType(v.type)
        owner = v.owner if isinstance(v, ir.OpResult) else None
        if owner is not None and owner.name == "tensor.empty":
            with loop.location, ir.InsertionPoint(loop):
                loop.operands[i] = tensor.EmptyOp(t.shape, t.element_type).result
            continue
        if loop.name == "scf.for":
            with loop.location, ir.InsertionPoint(loop):
                loop.operands[i] = _copy(v, tensor.EmptyOp(t.shape, t.element_type).result)


def _own_empties(region) -> None:
    """Keep the empty tensors of ``region`` its own. CSE would merge equal ones: one of the
    kernel with one outside it, which IREE then binds as a buffer from outside the
    dispatch, one it may not write, and two that start two carries, which IREE then makes
    one result buffer, written twice: each carry's gets a number of its own. The step's own
    values become allocations, which neither CSE nor IREE's folding of a chain of element
    insertions into a splat (a fill, which IREE distributes to workgroups) takes for empty
    tensors."""
    i64 = ir.IntegerType.get_signless(64)
    empties = [op for op in walk(region.operation) if op.name == "tensor.empty"]
    for n, op in enumerate(empties):
        if op.parent == region.operation:
            op.attributes[_OWN] = ir.IntegerAttr.get(i64, n)
            continue
        with op.location, ir.InsertionPoint(op):
            alloc = ir.Operation.create(
                "bufferization.alloc_tensor", results=[op.results[0].type],
                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0, 0])})
        op.results[0].replace_all_uses_with(alloc.results[0])
        op.erase()


_OWN = "ember.kernel_own"

# Ops IREE looks through when it moves the producers of what a region reads into it.
_VIEWS = frozenset({"tensor.extract_slice", "tensor.cast", *_RESHAPES})


def _keep_producers_out(region) -> None:
    """Put the tensors that ``region`` reads from outside behind a barrier where they are
    made by a structured op or are a splat constant (through slices and reshapes). IREE
    moves such producers into the dispatch region that reads them (an elementwise op, a
    transpose, a gather-like generic, a splat constant as a fill); in a kernel that op is
    then the one IREE distributes to workgroups, and the loop's writes no longer verify
    ("write affecting operations on global resources are restricted to workgroup
    distributed contexts"): a scan over ``where(x > 0, x, 0)`` compiled five times, the
    last without dispatch regions, and ran as a host loop."""
    barriers = {}
    with region.location, ir.InsertionPoint(region):
        for v in captured(region):
            if _producer_iree_moves(v):
                barriers[v] = optimization_barrier(v)
    rewire(region.regions[0].blocks[0].operations, barriers)


def _producer_iree_moves(v: ir.Value) -> bool:
    """Whether tensor ``v`` is, through views, the result of a structured op or a splat."""
    if not isinstance(v.type, ir.RankedTensorType):
        return False
    while isinstance(v, ir.OpResult) and v.owner.name in _VIEWS:
        v = v.owner.operands[0]
    if not isinstance(v, ir.OpResult):
        return False
    op = v.owner
    if op.name == "arith.constant":
        attr = op.attributes["value"]
        return isinstance(attr, ir.DenseElementsAttr) and attr.is_splat
    return op.name.startswith("linalg.")


# --- pieces ---------------------------------------------------------------------------------

def _attr(op, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _unit_strides(op) -> bool:
    return all(s == 1 for s in _attr(op, "static_strides"))


def _index(n: int) -> ir.Value:
    index = ir.IndexType.get()
    return arith.ConstantOp(index, ir.IntegerAttr.get(index, n)).result


def _maps(op) -> list[ir.AffineMap] | None:
    """The indexing maps of a structured op, inputs then outputs."""
    name = op.name
    if "indexing_maps" in op.attributes:
        return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if name in _CONTRACTIONS:
        return [_parse_map(m) for m in _CONTRACTIONS[name]]
    out = ir.RankedTensorType(op.results[0].type).rank
    ident = ir.AffineMap.get_identity(out)
    if name == "linalg.fill":
        return [ir.AffineMap.get(out, 0, []), ident]
    if name == "linalg.transpose":
        # out[i] = in[..., at perm[i]: i, ...]
        perm = _attr(op, "permutation")
        inverse = [perm.index(j) for j in range(len(perm))]
        return [ir.AffineMap.get(out, 0, [ir.AffineDimExpr.get(i) for i in inverse]), ident]
    if name == "linalg.broadcast":
        added = set(_attr(op, "dimensions"))
        return [ir.AffineMap.get(out, 0, [ir.AffineDimExpr.get(i) for i in range(out)
                                          if i not in added]), ident]
    return None


def _parse_map(text: str) -> ir.AffineMap:
    names, results = text.split(" -> ")
    dims = [d.strip() for d in names.strip("()").split(",")]
    exprs = [ir.AffineDimExpr.get(dims.index(r.strip()))
             for r in results.strip("()").split(",")]
    return ir.AffineMap.get(len(dims), 0, exprs)


def _domain(op) -> list[int] | None:
    """The static loop ranges of a structured op (None where some loop's range is read
    from no operand's dimension)."""
    maps = _maps(op)
    if maps is None:
        return None
    operands = list(op.operands)
    ranges: list[int | None] = [None] * maps[0].n_dims
    for v, m in zip(operands, maps):
        if not isinstance(v.type, ir.RankedTensorType):
            continue
        shape = ir.RankedTensorType(v.type).shape
        for p, e in enumerate(m.results):
            if isinstance(e, ir.AffineDimExpr):
                ranges[ir.AffineDimExpr(e).position] = shape[p]
    return None if None in ranges else ranges


def _at(m: ir.AffineMap, ivs: list[ir.Value]) -> list[ir.Value]:
    """The indices ``m`` maps the loop indices ``ivs`` to."""
    out = []
    for e in m.results:
        if isinstance(e, ir.AffineDimExpr):
            out.append(ivs[ir.AffineDimExpr(e).position])
        elif isinstance(e, ir.AffineConstantExpr):
            out.append(_index(ir.AffineConstantExpr(e).value))
        else:
            single = ir.AffineMap.get(m.n_dims, 0, [e])
            out.append(ir.Operation.create("affine.apply", results=[ir.IndexType.get()],
                                           operands=ivs,
                                           attributes={"map": ir.AffineMapAttr.get(single)})
                       .result)
    return out


def _nest(ranges: list[int], carried: list[ir.Value], point) -> list[ir.Value]:
    """Loops over ``ranges`` carrying ``carried``; ``point(indices, carried)`` emits one
    iteration's code and returns the carried values after it. The innermost ranges of at
    most ``_UNROLLED`` elements (``_UNROLLED_ALL`` together) are written out instead of
    looped over: LLVM's vectorizer makes slower code of a loop of 3 than of 3 copies."""
    unrolled, size = len(ranges), 1
    while unrolled and ranges[unrolled - 1] <= _UNROLLED and \
            size * ranges[unrolled - 1] <= _UNROLLED_ALL:
        unrolled -= 1
        size *= ranges[unrolled]

    def level(d, ivs, values):
        if d == len(ranges):
            return point(ivs, values)
        if d >= unrolled:
            for k in range(ranges[d]):
                values = level(d + 1, [*ivs, _index(k)], values)
            return values
        loop = scf.ForOp(_index(0), _index(ranges[d]), _index(1), values)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(level(d + 1, [*ivs, loop.induction_variable],
                              list(loop.inner_iter_args)))
        return list(loop.results)
    return level(0, [], carried)


_UNROLLED, _UNROLLED_ALL = 4, 16


def _structured(op) -> list[ir.Value]:
    maps, ranges = _maps(op), _domain(op)
    operands = list(op.operands)
    n_out = len(op.results)
    ins, outs = operands[:-n_out], operands[-n_out:]
    name = op.name

    # (an output's element is read only where the op reads it: a reduction's accumulator)
    reads = [True] * len(ins) + (
        [bool(list(a.uses)) for a in op.regions[0].blocks[0].arguments[len(ins):]]
        if name == "linalg.generic" else [name in _CONTRACTIONS] * n_out)

    def point(ivs, values):
        scalars = [(tensor.ExtractOp(v, _at(m, ivs)).result
                    if isinstance(v.type, ir.RankedTensorType) else v) if read else None
                   for v, m, read in zip(ins + values, maps, reads)]
        if name == "linalg.generic":
            yields = _body(op.regions[0].blocks[0], scalars, ivs)
        elif name in _CONTRACTIONS:
            a, b, acc = scalars
            floating = not isinstance(acc.type, ir.IntegerType)
            mul = (arith.MulFOp if floating else arith.MulIOp)(a, b).result
            yields = [(arith.AddFOp if floating else arith.AddIOp)(acc, mul).result]
        else:       # fill, transpose, broadcast: the input element
            yields = [scalars[0]]
        return [tensor.InsertOp(y, v, _at(m, ivs)).result
                for y, v, m in zip(yields, values, maps[len(ins):])]
    return _nest(ranges, outs, point)


def _body(block: ir.Block, args, ivs) -> list[ir.Value]:
    """Copies of a ``linalg.generic`` body's ops, its arguments reading ``args`` and its
    ``linalg.index`` ops the loop indices ``ivs``; returns what it yields."""
    env = dict(zip(block.arguments, args))
    ops = [op.operation for op in block.operations]
    for op in ops[:-1]:
        if op.name == "linalg.index":
            env[op.results[0]] = ivs[ir.IntegerAttr(op.attributes["dim"]).value]
            continue
        new = clone_mapped(op, [env.get(v, v) for v in op.operands], env)
        env.update(zip(op.results, new.results))
    return [env.get(v, v) for v in ops[-1].operands]


def _insert_slice(op) -> list[ir.Value]:
    """``tensor.insert_slice`` (static sizes, unit strides) element by element."""
    source, dest = op.operands[0], op.operands[1]
    shape = ir.RankedTensorType(source.type).shape
    sizes = _attr(op, "static_sizes")
    dynamic = iter(op.opview.offsets)
    offsets = [next(dynamic) if o == ir.ShapedType.get_dynamic_stride_or_offset() else
               _index(o) for o in _attr(op, "static_offsets")]
    # The source's dimensions among the slice's (a rank-reducing insert drops unit sizes:
    # which ones does not matter, the index there is the offset either way).
    drops, j, dims = len(sizes) - len(shape), 0, []
    for s in sizes:
        if s == 1 and drops and (j == len(shape) or shape[j] != 1 or drops > len(shape) - j):
            dims.append(None)
            drops -= 1
        else:
            dims.append(j)
            j += 1

    def point(ivs, values):
        x = tensor.ExtractOp(source, ivs).result
        at = [off if d is None else arith.AddIOp(off, ivs[d]).result
              for off, d in zip(offsets, dims)]
        return [tensor.InsertOp(x, values[0], at).result]
    return _nest(shape, [dest], point)


def _reshape(op) -> list[ir.Value]:
    """A reshape element by element: the result's elements in row-major order are the
    source's."""
    source = op.operands[0]
    shape = ir.RankedTensorType(source.type).shape
    out = ir.RankedTensorType(op.results[0].type)

    def point(ivs, values):
        flat = _index(0)
        for i, n in zip(ivs, out.shape):
            flat = arith.AddIOp(arith.MulIOp(flat, _index(n)).result, i).result
        at = []
        for n in reversed(shape):
            at.append(arith.RemUIOp(flat, _index(n)).result)
            flat = arith.DivUIOp(flat, _index(n)).result
        x = tensor.ExtractOp(source, at[::-1]).result
        return [tensor.InsertOp(x, values[0], ivs).result]
    return _nest(list(out.shape), [tensor.EmptyOp(out.shape, out.element_type).result], point)


def _inline_region(region) -> None:
    """Replace a ``flow.dispatch.region`` by its ops (a fusion inside the kernel's step)."""
    block = region.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    for op in ops[:-1]:
        op.move_before(region)
    for r, v in zip(region.results, ops[-1].operands):
        r.replace_all_uses_with(v)
    region.erase()


def _carry_in_place(step: ir.Block, args) -> None:
    """Each step writes its carries into the loop's carry tensors (``args``, arguments of its
    ``step`` block): IREE's bufferization takes a loop only where each yielded value is its
    argument's buffer (a carry passed on unchanged, or written in place, stays as it is)."""
    term = list(step.operations)[-1].operation
    with term.location, ir.InsertionPoint(term):
        for i, (v, arg) in enumerate(zip(list(term.operands), args)):
            if _written_into(v) != arg and isinstance(v.type, ir.RankedTensorType):
                term.operands[i] = _copy(v, arg)


def _written_into(v: ir.Value) -> ir.Value:
    """The tensor whose buffer ``v`` is, through element insertions and the loops of
    :func:`_nest` (``v`` itself otherwise)."""
    while isinstance(v, ir.OpResult):
        op = v.owner
        if op.name == "tensor.insert":
            v = op.operands[1]
        elif op.name == "scf.for":
            v = op.operands[3 + ir.OpResult(v).result_number]
        else:
            break
    return v


def _copy(source: ir.Value, dest: ir.Value) -> ir.Value:
    shape = ir.RankedTensorType(source.type).shape

    def point(ivs, values):
        return [tensor.InsertOp(tensor.ExtractOp(source, ivs).result, values[0], ivs).result]
    return _nest(shape, [dest], point)[0]
