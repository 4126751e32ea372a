"""Liveness of buffers over one block of ember IR, and a peak-aware list scheduler.

The model is plain Python (ints and lists), built once from the IR: each top-level op of a
function body is one node; an op holding regions (control flow, a fusion, a call) counts as
one op whose internals need no buffers of their own, and a value of an enclosing block used
inside its regions is a use by that op. A value is live from the op that defines it to its
last use; an op's operands and results are live together while it runs (no in-place reuse
is assumed). Function arguments belong to the caller and are not counted; results of the
function live for the whole program (IREE allocates them before it runs); ``ember.constant``
values are IREE constants.

IREE fuses elementwise ops into their consumers, so a value made by a ``fusable`` op (see
``Program.from_block``) whose users all absorb it takes no buffer: its users read the values
it was computed from instead, which therefore stay live until those users run.

With data tiling (ember's default CPU flags), IREE keeps contraction operands in packed
layouts (one per role: lhs, rhs, and the result's, which an output fusion's epilogue reads
its other operands in). An argument, a control-flow result, or a value read in several
layouts (or also unpacked) gets a packed copy per layout, made once and live from the first
to the last contraction that reads it (a recomputed contraction reads copies of its
operands, ember-to-linalg's ``distinct_copy``, packed for it alone); a temporary read in
one packed layout only is written in it in the first place and needs no copy. A broadcast
of one element has no buffer (IREE clones it into each kernel that reads it) unless it
starts a loop's carry. Control flow has buffers of its own, allocated apart from the others
(``control_flow_scratch``); a loop's carry updated in place is its init's buffer when that
is a temporary only the loop reads. IREE's ``transient-memory-size`` counts the results too
(each written into a buffer of its own unless donated storage takes it).

Example:
    >>> prog = Program.from_block(func_body)
    >>> profile = prog.profile(prog.order)
    >>> profile.peak, profile.peak_index
    (3145728, 4)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ember._mlir import element_bits, ir, walk
from ember.dialects.sort_scan import sort_scratch_bytes, sorted_operands
from ember.rules.base import KERNEL_ATTR, REMAT_ATTR, aval_of_type

ARG, TEMP, OUT, CONST, ENC, SCRATCH = "arg", "temp", "out", "const", "enc", "scratch"
CONTROL_FLOW = ("ember.cond", "ember.while", "ember.for", "ember.scan")


def tensor_bytes(t: ir.Type) -> int:
    """Bytes of a statically shaped tensor type (i1 takes a byte, as in IREE's buffers)."""
    if not isinstance(t, ir.RankedTensorType):
        return 0
    t = ir.RankedTensorType(t)
    bits = element_bits(t.element_type)
    return int(np.prod(t.shape, dtype=np.int64)) * max(bits // 8, 1)


def control_flow_scratch(op: ir.Operation, encoded=lambda op: ()) -> int:
    """Bytes IREE 3.13 allocates for a control-flow op besides its results, apart from the
    rest of the program's buffers (they add to its peak wherever that is): the results once
    more for ``cond`` (a branch's values are live with the op's; a ``for`` or ``while``
    updates its carries in place, ember-pin-loop-carries), for ``scan`` the copy of a carry
    that starts as an argument the step writes into (ember-protect-arguments) unless the
    step updates it in place (a ``scan`` carry's step result is otherwise a new buffer, the
    scan's result), and the packed operand copies of the contractions inside
    (``encoded``), as for top-level ones. Measured with IREE's statistics on programs of
    1-4 MiB values (``tests/test_memory.py``)."""
    if op.name not in CONTROL_FLOW or KERNEL_ATTR in op.attributes:
        return 0        # (a loop kernel's step is scalar code on the stack: ember-loop-kernels)
    results = list(op.results) if op.name == "ember.cond" else []
    if op.name == "ember.scan":
        results = [r for a, c, r, in_place in loop_carries(op)
                   if isinstance(a, ir.BlockArgument) and _updated(c) and not in_place]
    inside = 0          # regions run one at a time (a cond's branches, a loop's cond and body)
    for region in op.regions:
        n = 0
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                n += sum(tensor_bytes(inner.operands[k].type) for k, _ in encoded(inner))
                n += scratch_bytes(inner, encoded)
                if inner.name == "ember.sort":      # it reads its operands from buffers
                    n += sum(tensor_bytes(v.type) for v in set(inner.operands)
                             if isinstance(v, ir.OpResult) and v.owner.operation.block == block)
        inside = max(inside, n)
    return sum(tensor_bytes(r.type) for r in results) + inside


def scratch_bytes(op: ir.Operation, encoded=lambda op: ()) -> int:
    """Bytes ``op`` holds besides its operands and results while it runs: control flow's
    (``control_flow_scratch``) and a sort's (``sort_scratch_bytes``: its sorting network's
    packed operands)."""
    if op.name == "ember.sort":
        keys = ir.IntegerAttr(op.attributes["num_keys"]).value
        operands, _ = sorted_operands(list(op.operands), keys)
        return sort_scratch_bytes([aval_of_type(v.type) for v in operands], keys,
                                  ir.IntegerAttr(op.attributes["dimension"]).value)
    return control_flow_scratch(op, encoded)


_IN_PLACE = ("ember.scatter", "ember.dynamic_update_slice")   # write into their operand 0


def loop_carries(op: ir.Operation):
    """(init, carry, result, whether the step updates the carry in place) per carry of the
    loop ``op`` (``ember.scan``, ``for``, ``while``; [] for another op): an in-place carry's
    result is its init's buffer."""
    if op.name not in ("ember.scan", "ember.for", "ember.while"):
        return []
    body = op.regions[len(op.regions) - 1].blocks[0]
    step = list(body.operations[len(body.operations) - 1].operands)
    inits, carries, results = list(op.operands), list(body.arguments), list(op.results)
    if op.name == "ember.scan":
        nc = ir.IntegerAttr(op.attributes["num_carry"]).value
        inits, carries, results = inits[:nc], carries[:nc], results[:nc]
    elif op.name == "ember.for":
        inits, carries = inits[2:], carries[1:]         # after the bounds, the index
    return [(a, c, r, _updates(y, c)) for a, c, r, y in zip(inits, carries, results, step)]


def loop_inits(op: ir.Operation) -> list[ir.Value]:
    """The values that start the carries of the loop ``op`` ([] for another op): a carry
    is a buffer of the loop's own, even where it starts as a broadcast of one element."""
    return [a for a, *_ in loop_carries(op)]


def _updated(carry: ir.Value) -> bool:
    """Whether an op of a loop's step writes into ``carry`` (its operand 0)."""
    return any(u.owner.name in _IN_PLACE and u.operand_number == 0 for u in carry.uses)


def _updates(v: ir.Value, carry: ir.Value) -> bool:
    """Whether ``v`` is ``carry`` updated in place (by a chain of _IN_PLACE ops)."""
    while v != carry:
        if not isinstance(v, ir.OpResult) or v.owner.name not in _IN_PLACE:
            return False
        v = v.owner.operands[0]
    return True


def _argument_view(op: ir.Operation, ids: dict, kinds: list) -> bool:
    """Whether ``op`` is a slice of an argument that is one contiguous range of it (rows
    of a matrix, say), which IREE reads in place instead of copying."""
    if op.name != "ember.slice" or op.operands[0] not in ids \
            or kinds[ids[op.operands[0]]] != ARG:
        return False
    if any(s != 1 for s in ir.DenseI64ArrayAttr(op.attributes["strides"])):
        return False
    shape = ir.RankedTensorType(op.operands[0].type).shape
    start = list(ir.DenseI64ArrayAttr(op.attributes["start_indices"]))
    limit = list(ir.DenseI64ArrayAttr(op.attributes["limit_indices"]))
    # Row-major contiguity: dims of extent 1, then any range of one dim, then whole dims.
    partial = [d for d in range(len(shape)) if (start[d], limit[d]) != (0, shape[d])]
    return not partial or all(limit[d] - start[d] == 1 for d in range(partial[-1]))


def top_level(op: ir.Operation, block: ir.Block):
    """The ancestor of ``op`` (itself included) that lies directly in ``block``, or None."""
    while op is not None:
        parent = op.parent
        if parent is None:
            return None
        if op.block == block:
            return op
        op = parent
    return None


@dataclasses.dataclass
class Profile:
    """Live bytes at each step of an order: ``live[i]`` while the i-th op runs."""

    live: list[int]
    temp_live: list[int]

    @property
    def peak(self) -> int:
        return max(self.live, default=0)

    @property
    def peak_index(self) -> int:
        return int(np.argmax(self.live)) if self.live else 0

    @property
    def temp_peak(self) -> int:
        return max(self.temp_live, default=0)


@dataclasses.dataclass
class Program:
    """Ops as nodes (uses, defs: value ids), values with bytes and a kind."""

    sizes: list[int]
    kinds: list[str]
    uses: list[list[int]]          # per op: distinct value ids it (or its regions) reads
    defs: list[list[int]]          # per op: value ids it defines
    barrier: list[bool]            # ops that keep their order relative to each other
    order: list[int]               # the current program order (op ids)
    direct: list = dataclasses.field(default_factory=list)     # per op: ids read in the IR
    waves: bool = False    # model IREE running two independent kernels as one wave
    ops: list = dataclasses.field(default_factory=list)        # op id -> ir.Operation
    values: list = dataclasses.field(default_factory=list)     # value id -> ir.Value

    @classmethod
    def from_block(cls, block: ir.Block, movable=lambda op: True, fusable=lambda op: False,
                   absorbs=lambda op: False, encoded=lambda op: ()) -> Program:
        """The model of a function body (its terminator excluded).

        ``movable(op)``: False keeps the op's order relative to other such ops.
        ``fusable(op)``: its results can be computed inside a consumer's kernel;
        ``absorbs(op)``: the op's kernel can compute fusable producers inline.
        ``encoded(op)``: indices of the operands IREE packs (a twin buffer each).
        """
        ids: dict = {}
        prog = cls([], [], [], [], [], [])
        returned = set()
        ops = list(block.operations)
        terminator = ops[-1] if ops and ops[-1].operation.name == "func.return" else None
        if terminator is not None:
            returned = {v for v in terminator.operation.operands}
            ops = ops[:-1]

        def value_id(v, kind):
            prog.sizes.append(tensor_bytes(v.type))
            prog.kinds.append(kind)
            prog.values.append(v)
            ids[v] = len(prog.sizes) - 1
            return ids[v]

        for arg in block.arguments:
            value_id(arg, ARG)
        ops = [op.operation for op in ops]
        users: dict = {}
        for op in ops:
            for inner in walk(op):
                for v in inner.operands:
                    users.setdefault(v, set()).add(op)
        # A value read only in one packed layout is written in it in the first place (not a
        # control flow result): it needs no packed copy.
        layouts: dict = {}
        for op in ops:
            # One layout per operand and op (an epilogue's residual input read as lhs and as
            # the result's layout counts once): counting both copies and the value as well
            # over-predicted IREE's figure, which encodes the value twice and frees it.
            packed = dict(encoded(op))
            for k, v in enumerate(op.operands):
                layouts.setdefault(v, set()).add(packed.get(k))
            for inner in list(walk(op))[1:]:
                for v in inner.operands:
                    layouts.setdefault(v, set()).add(None)
        fused: dict[int, list[int]] = {}     # fused value -> the buffers it is computed from
        twins: dict = {}                     # (encoded value, layout) -> its packed copy
        for i, op in enumerate(ops):
            prog.ops.append(op)
            prog.order.append(i)
            used, direct = [], set()
            for inner in walk(op):
                for v in inner.operands:
                    vid = ids.get(v)
                    if vid is None:
                        continue
                    direct.add(vid)
                    for x in fused.get(vid, [vid]):
                        if x not in used:
                            used.append(x)
            # A recomputed op reads copies of the product operands it does not recompute
            # (ember-to-linalg's distinct_copy, a buffer before its packing), packed apart
            # from the copies other ops read.
            remat = REMAT_ATTR in op.attributes
            copies = recompute_copies(encoded(op), op, _recomputed) if remat else set()
            for k, layout in encoded(op):
                v = op.operands[k]
                vid = ids.get(v)
                if vid is None or not _needs_packed_copy(v, prog.kinds[vid], prog.sizes[vid],
                                                         layouts[v]):
                    continue
                copied = k in copies
                key = (vid, layout) + ((i,) if remat else ())
                if key not in twins:
                    twins[key] = len(prog.sizes)
                    prog.sizes.append(tensor_bytes(v.type) * (2 if copied else 1))
                    prog.kinds.append(ENC)
                    prog.values.append(None)
                if twins[key] not in used:
                    used.append(twins[key])
            scratch = scratch_bytes(op, encoded)
            if scratch:         # buffers of its own
                prog.sizes.append(scratch)
                prog.kinds.append(SCRATCH)
                prog.values.append(None)
                used.append(len(prog.sizes) - 1)
            prog.uses.append(used)
            prog.direct.append(direct)
            # IREE makes constants of what is computed from nothing (an iota it cannot fuse).
            const = op.name in ("ember.constant", "ember.iota")
            # A loop result updated in place in the buffer of a temporary only it reads is that
            # buffer (returned, the buffer is an output). IREE copies one that shares its
            # kernel's allocation with other results into a buffer of its own first.
            aliased = {r: ids[a] for a, _, r, in_place in loop_carries(op)
                if in_place and a in ids and prog.kinds[ids[a]] == TEMP and prog.sizes[ids[a]]
                and users.get(a) == {op} and len(a.owner.results) == 1}
            defs = []
            for r in op.results:
                kind = CONST if const else OUT if r in returned else TEMP
                vid = value_id(r, kind)
                # A reshape is a view of its operand's buffer (row-major, IREE copies nothing).
                if kind == TEMP and (op.name == "ember.reshape" or _splat(op) and not any(
                        r in loop_inits(u) for u in users.get(r, ())) or fusable(op)
                        and users.get(r) and all(absorbs(u) for u in users[r])):
                    prog.sizes[vid] = 0
                    fused[vid] = list(used)
                elif kind == TEMP and _argument_view(op, ids, prog.kinds):
                    prog.sizes[vid] = 0          # IREE reads it in place: a subview
                elif r in aliased:
                    prog.sizes[vid] = 0
                    if kind == OUT:
                        prog.kinds[aliased[r]] = OUT
                    else:
                        fused[vid] = [aliased[r]]
                defs.append(vid)
            prog.defs.append(defs)
            prog.barrier.append(not movable(op))
        return prog

    # -- liveness -------------------------------------------------------------------------

    def profile(self, order: list[int]) -> Profile:
        n = len(order)
        pos = {op: i for i, op in enumerate(order)}
        last: dict[int, int] = {}
        for op in order:
            for u in self.uses[op]:
                last[u] = max(last.get(u, -1), pos[op])
        delta = [0] * (n + 1)
        temp_delta = [0] * (n + 1)
        first: dict[int, int] = {}
        for op in reversed(order):
            for u in self.uses[op]:
                first[u] = pos[op]
        # IREE's stream scheduler runs a kernel together with the one before it when it does
        # not read its results: what the later one allocates is live from the earlier one.
        begin = dict(pos)
        if self.waves:
            prev = None
            for op in order:
                allocates = any(self.sizes[d] and self.kinds[d] in (TEMP, OUT)
                                for d in self.defs[op]) or any(
                    self.kinds[u] == ENC and first.get(u) == pos[op] for u in self.uses[op])
                if not allocates:
                    continue
                if prev is not None and not set(self.defs[prev]) & set(self.uses[op]):
                    begin[op] = pos[prev]
                prev = op
        for v, kind in enumerate(self.kinds):
            if kind in (ENC, SCRATCH) and v in first:
                # IREE allocates control flow's own buffers apart: never reused by the rest
                start, end = (0, n - 1) if kind == SCRATCH else (begin[order[first[v]]], last[v])
                for d in (delta, temp_delta):
                    d[start] += self.sizes[v]
                    d[end + 1] -= self.sizes[v]
        for op in order:
            start = begin[op]
            for d in self.defs[op]:
                kind, size = self.kinds[d], self.sizes[d]
                if kind in (ARG, CONST) or not size:
                    continue
                # IREE allocates the results before the program runs, temporaries as it runs
                first_live, end = (0, n - 1) if kind == OUT else (start, last.get(d, pos[op]))
                delta[first_live] += size
                delta[end + 1] -= size
                if kind == TEMP:
                    temp_delta[start] += size
                    temp_delta[end + 1] -= size
        return Profile(list(np.cumsum(delta[:n], dtype=np.int64).tolist()),
                       list(np.cumsum(temp_delta[:n], dtype=np.int64).tolist()))

    # -- scheduling -----------------------------------------------------------------------

    def schedule(self) -> list[int]:
        """A list schedule of the ops that lowers the peak of live bytes.

        Among the ops whose operands are ready, take the one that frees the most bytes net of
        what it allocates (as XLA's memory-aware list schedulers do); ties keep program order.
        The rule runs twice, counting the function's results as allocations and not (their
        buffers exist from the start wherever they are made: an op making one only frees,
        and delaying it keeps its operands live, as a gradient's weight updates made last
        keep every layer's cotangent); the order with the lower peak is returned. Barrier
        ops keep their relative order. Ops that make no buffer (constants, values fused into
        their users) are not scheduled on their own: each goes right before its first user,
        where IREE computes it.
        """
        return min((self._list_schedule(outputs) for outputs in (True, False)),
                   key=lambda order: self.profile(order).peak)

    def _list_schedule(self, count_outputs: bool) -> list[int]:
        lazy = {op for op in self.order if self.defs[op] and not self.barrier[op] and all(
            self.kinds[d] == CONST or (self.kinds[d] == TEMP and not self.sizes[d])
            for d in self.defs[op])}
        order = [op for op in self.order if op not in lazy]
        producer = {d: op for op in order for d in self.defs[op]}
        succs: dict[int, set[int]] = {op: set() for op in order}
        npred = {op: 0 for op in order}
        prev_barrier = None
        for op in order:
            preds = {producer[u] for u in self.uses[op] if u in producer}
            if self.barrier[op]:
                if prev_barrier is not None:
                    preds.add(prev_barrier)
                prev_barrier = op
            for p in preds:
                if op not in succs[p]:
                    succs[p].add(op)
                    npred[op] += 1
        remaining = {}
        for op in order:
            for u in self.uses[op]:
                remaining[u] = remaining.get(u, 0) + 1
        rank = {op: i for i, op in enumerate(order)}
        ready = {op for op in order if npred[op] == 0}
        out = []
        while ready:
            best = max(ready, key=lambda op: (self._gain(op, remaining, count_outputs),
                                              -rank[op]))
            ready.discard(best)
            out.append(best)
            for u in self.uses[best]:
                remaining[u] -= 1
            for s in succs[best]:
                npred[s] -= 1
                if npred[s] == 0:
                    ready.add(s)
        assert len(out) == len(order), "cycle in the dependence graph"
        users: dict[int, list[int]] = {}
        for op in self.order:
            for v in self.direct[op] if self.direct else self.uses[op]:
                users.setdefault(v, []).append(op)
        # Each lazy op goes before the first scheduled op that (maybe through other lazy
        # ops) reads it; those before one op keep their program order.
        pos = {o: i for i, o in enumerate(out)}
        anchor: dict[int, int] = {}
        for op in reversed(self.order):
            if op in lazy:
                at = [pos[u] if u in pos else anchor[u]
                      for d in self.defs[op] for u in users.get(d, [])]
                anchor[op] = min(at, default=len(out))
        before: dict[int, list[int]] = {}
        for op in self.order:
            if op in lazy:
                before.setdefault(anchor[op], []).append(op)
        final = []
        for i, op in enumerate(out):
            final.extend(before.get(i, ()))
            final.append(op)
        final.extend(before.get(len(out), ()))
        return final

    def _gain(self, op: int, remaining: dict[int, int], count_outputs: bool) -> int:
        freed = sum(self.sizes[u] for u in self.uses[op]
                    if self.kinds[u] == TEMP and remaining[u] == 1)
        alloc = sum(self.sizes[d] for d in self.defs[op]
                    if (self.kinds[d] == OUT and count_outputs) or
                    (self.kinds[d] == TEMP and d in remaining))
        return freed - alloc


def _needs_packed_copy(v, kind: str, size: int, layouts: set) -> bool:
    """Whether IREE copies contraction operand ``v`` into a packed layout: not a broadcast
    of one element (cloned into each kernel), nor a temporary read in that one layout only
    (written in it in the first place) unless control flow made it."""
    if kind != TEMP:
        return True
    op = v.owner.operation
    if _splat(op):
        return False
    return not (size and len(layouts) == 1 and op.name not in CONTROL_FLOW)


def _splat(op) -> bool:
    """A broadcast of one element (or a fusion computing one from single elements): IREE
    clones it into every kernel that reads it (a contraction with it becomes a matrix-vector
    product), so it has no buffer (but as a loop's carry: ``Program.from_block``)."""
    return op.name in ("ember.broadcast_in_dim", "ember.fusion") and bool(op.operands) and \
        all(np.prod(ir.RankedTensorType(v.type).shape) <= 1 for v in op.operands)


def recompute_copies(packed, op, recomputed) -> set[int]:
    """The operands a recomputed product reads through copies under data tiling
    (ember-to-linalg's ``distinct_copy``, counted here): of its ``packed`` (operand,
    layout) pairs, the "lhs" and "rhs" ones that ``recomputed(value)`` says no recomputed
    op computed."""
    return {i for i, layout in packed if layout != "acc" and not recomputed(op.operands[i])}


def _recomputed(v) -> bool:
    return not isinstance(v, ir.BlockArgument) and REMAT_ATTR in v.owner.attributes
