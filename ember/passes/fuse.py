"""``ember-fuse``: group ember ops into ``ember.fusion`` region ops (XLA's fusion kinds).

Fusible ops are elementwise ops (every op lowered by the shared elementwise rule: arithmetic,
math, compare, ``select``, ``convert``), ``broadcast_in_dim``, ``iota``,
``concatenate``, ``gather``, ``reshape`` that only adds or drops unit dimensions, the ``reduce_*``
reductions and ``dot_general``. Producer -> consumer edges between fusible ops are merged
greedily, in program order, unless one of these holds (each is a reason the report gives):

- the consumer is a ``dot_general``: a dot reads its operands from memory, so its producers
  stay outside (output fusion fuses a dot with what *follows* it);
- a ``gather`` whose operand or indices come from a slice, transpose or other unfusible op
  (not elementwise from arguments): IREE fails to compile their inline reads
  (``_COMPUTED_INDICES``);
- the group would hold two ``dot_general`` ops, or a ``dot_general`` and a reduction (an
  output fusion takes only an elementwise epilogue);
- both sides hold reductions and share no input: the fusion would keep every reduced input
  live at once (``sum(a) + sum(b)`` of two large intermediates); sibling fusion is for
  reductions of the same inputs (mean and variance of a layernorm);
- a reduction's consumer also reads a value computed after the reduction: fused, the
  reduction would run late and its input stay live until then (not a value computed from
  the arguments and constants alone, a layernorm's scale or eps: it fuses too, and the
  normalization's epilogue joins the reduction's fusion);
- the group would have more than ``max-ops`` ops;
- the group would bind more than ``max-bindings`` buffers (its distinct operands, splat
  constants aside, and its results): IREE's runtime refuses to load a dispatch binding more
  than its target allows (32 on the CPU and Vulkan, 16 on CUDA) and its compiler does not
  check it, so ``a0 + a1 + ... + a32`` of 33 arguments failed at load as one fusion (an op
  that alone reads more, a ``concatenate`` of 40 arrays, stays unfused: its lowering inserts
  each piece, which IREE copies);
- merging would create a cycle (a path from the group through an op outside it back in);
- the consumer is recomputed (``ember.rematerialized``: a checkpoint's backward pass, the
  memory planner's rematerialization) and the producer is not: fused, the recomputation
  would run with the forward pass's op, its results kept until the backward pass;
- the producer is not fusible (sort, scatter, control flow, ...): listed once per consumer;
- the producer is a ``transpose``, which IREE runs faster as ``linalg.transpose`` than as a
  transposed indexing map (measured; ``_KEPT_APART``);
- the ops form ``e = exp(x - max(x)); e / sum(e)``, a softmax that IREE recognizes in this
  op-by-op form (one dispatch at its default level; two once fused into generics), unless
  the fusions will be dispatch regions (``dispatch-regions``, the CPU's) and its result is
  not read by a ``dot_general`` (which keeps a fusion from being a region): as one region,
  with its rows split, it ran 0.6x IREE's own softmax at IREE's default level and 0.9x at
  O3.

A group of two or more ops becomes one ``ember.fusion`` (splat constants it reads are
copied into it); its ``kind`` is ``output`` when it holds a dot, ``input`` when it holds a
reduction, else ``loop``, and ``multi_output`` when a loop or input fusion has several
results. Inside a fusion the lowering (``ember/dialects/fusion.py``) recomputes cheap
elementwise producers in each consumer and computes expensive ones once:
:func:`ember.rules.cost.op_cost` is the cost model.

``ember-opt in.mlir --ember-fuse=report=true`` (``{report=true}``) prints each fusion's kind
and ops, and each producer left unfused with the reason, on stderr.
"""

from __future__ import annotations

import dataclasses
import sys

from ember._mlir import ir
from ember.dialects import OPS, aval_of_type
from ember.passes.registry import Pass, func_ops, register
from ember.rules.base import REMAT_ATTR, encode_attr
from ember.rules.cost import op_cost
from ember.rules.lowering import LOWERINGS, lower_elementwise

__all__ = ["Fuse", "op_cost", "fusible_kind", "DUPLICATE_LIMIT"]

# The largest cost (see op_cost) of elementwise work the lowering recomputes in each of
# several consumers rather than computing it once: a few arithmetic ops, no transcendental
# function (benchmarks/fusion.py: recomputing exp(x) in the sum and the division of a softmax
# without max subtraction saved a dispatch but ran 1.17x slower). In a dispatch region, where
# recomputing a row reduction's operand lets the reduction be split, twice this (see
# ``ember/dialects/fusion.py``).
DUPLICATE_LIMIT = 3


# A fused gather reads its indices and its operand with tensor.extract inside the generic;
# IREE 3.13 fails to compile that ("LLVM Translation failed for operation:
# builtin.unrealized_conversion_cast") when either comes from a transpose or slice before it
# (indices: found by the vmap table test; the operand: `sort(x[:, 1][perm])` of an int32 x).
# Gathers of operands and indices computed elementwise from arguments fuse.
_COMPUTED_INDICES = ("a gather fuses only with an operand and indices computed elementwise "
                     "from arguments (IREE fails to compile them read from a slice or "
                     "transpose inside a fused kernel)")

# Ops that could be indexing maps of a fused generic but measured faster left to IREE.
_KEPT_APART = {
    # benchmarks/fusion.py reshape_chain: a tanh chain through a transpose ran 1.24x slower at
    # IREE's default level with the transpose as an indexing map, 0.83x with it kept apart.
    "ember.transpose": "a transpose stays a linalg.transpose (IREE runs it faster than a "
                       "transposed indexing map)",
}


# A recomputed op (a checkpoint's backward pass, ember-plan-memory's rematerialization)
# fused with an op it reads that is not recomputed would run with it, in the forward pass,
# its results kept until the backward pass reads them: nothing would be recomputed (with
# dots_saveable, every block's attention scores were fused with their recomputed scaling,
# exponentials and masks, 4 MiB each kept per block).
_FORWARD_PRODUCER = ("a recomputed op is not fused with an op of the forward pass (it would "
                     "run there, its results kept until the backward pass)")


def _unit_dims_only(op: ir.Operation) -> bool:
    src = aval_of_type(op.operands[0].type).shape
    dst = aval_of_type(op.results[0].type).shape
    return [d for d in src if d != 1] == [d for d in dst if d != 1]


def fusible_kind(op: ir.Operation) -> str | None:
    """``elementwise``, ``shape``, ``reduce``, ``dot`` or None (not fusible).

    Example:
        >>> fusible_kind(reduce_sum_op)
        'reduce'
    """
    name = op.name
    if name not in OPS or op.regions:
        return None
    if LOWERINGS.get(name) is lower_elementwise:
        return "elementwise"
    if name in ("ember.broadcast_in_dim", "ember.iota",
                "ember.concatenate", "ember.gather"):
        return "shape"
    if name == "ember.reshape":
        return "shape" if _unit_dims_only(op) else None
    if name.startswith("ember.reduce_"):
        return "reduce"
    if name in ("ember.dot_general", "ember.conv"):      # a contraction: its epilogue fuses
        return "dot"
    return None


def _short(op) -> str:
    return op.name.split(".", 1)[1]


def _loc(op) -> str:
    text = str(op.location)
    return text[4:-1] if text.startswith("loc(") else text


@register
@dataclasses.dataclass
class Fuse(Pass):
    """Group fusible ember ops into ``ember.fusion`` ops; optionally report the decisions.

    Example:
        >>> run_pipeline(module, [Fuse(report=True)])
    """

    name = "ember-fuse"
    summary = "Group ember ops into ember.fusion ops (loop, input, output, multi-output)"
    max_ops: int = dataclasses.field(default=64, metadata={
        "help": "the most ops one fusion may hold"})
    max_bindings: int = dataclasses.field(default=16, metadata={
        "help": "the most buffers (distinct operands and results) one fusion may bind; 0: no "
                "limit (16, the least of ember's targets, CUDA's; the CPU's and Vulkan's is 32: "
                "ember.backends' max_bindings trait)"})
    max_duplicate_cost: int = dataclasses.field(default=DUPLICATE_LIMIT, metadata={
        "help": "recompute elementwise work up to this cost (op_cost) in each consumer"})
    multi_result: bool = dataclasses.field(default=False, metadata={
        "help": "lower sibling values of one iteration space into one multi-result generic "
                "(IREE 3.13 mis-compiles it when a result is transposed afterwards)"})
    dispatch_regions: bool = dataclasses.field(default=True, metadata={
        "help": "the fusions will be IREE dispatch regions (as ember-to-linalg makes them by "
                "default); without them a softmax is left to IREE, which recognizes it"})
    report: bool = dataclasses.field(default=False, metadata={
        "help": "print each fusion (kind, ops) and each unfused producer's reason on stderr"})

    def run(self, module: ir.Module) -> None:
        self.lines: list[str] = []
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                for block in f.regions[0].blocks:
                    self._fuse_nested(block)
        if self.report:
            print("\n".join(self.lines) if self.lines else "ember-fuse: no fusions",
                  file=sys.stderr)

    def _fuse_nested(self, block) -> None:
        for op in block.operations:
            op = op.operation
            # A fusion's or a map's body is lowered as a whole (trait "own_body").
            if op.name in OPS and op.regions and "own_body" not in OPS[op.name].traits:
                for region in op.regions:
                    for inner in region.blocks:
                        self._fuse_nested(inner)
        _split_shared_splats(block)
        _BlockFusion(self, block).run()


class _BlockFusion:
    """The grouping of one block's ops."""

    def __init__(self, pass_: Fuse, block):
        self.p = pass_
        self.block = block
        self.ops = [o.operation for o in block.operations]
        self.pos = {op: i for i, op in enumerate(self.ops)}
        self.kind = {op: fusible_kind(op) for op in self.ops}
        self.parent = {op: op for op in self.ops}
        self.members = {op: [op] for op in self.ops}
        self.users: dict = {op: [] for op in self.ops}
        for op in self.ops:
            for p in self._producers(op):
                self.users[p].append(op)
        self.left_to_iree = {}
        for op in self.ops:
            softmax = self._softmax(op) if op.name == "ember.reduce_max" else []
            # A fusion read by a dot_general is no dispatch region (dialects/fusion.py): then
            # IREE's own softmax is the better one there too.
            if softmax and (not pass_.dispatch_regions or any(
                    u.name == "ember.dot_general" for u in self.users[softmax[-1]])):
                for o in softmax:
                    self.left_to_iree[o] = "IREE raises this softmax to linalg.softmax itself"

    def _top(self, op):
        """The op of this block that holds ``op`` (itself or an ancestor), or None."""
        while op is not None and op not in self.pos:
            op = op.parent
        return op

    def _producers(self, op):
        """Ops of this block whose results ``op`` (or an op nested in it) reads, in order."""
        out = []
        stack = [op]
        while stack:
            o = stack.pop()
            for v in o.operands:
                owner = v.owner
                if isinstance(owner, ir.Block):
                    continue
                top = self._top(owner.operation)
                if top is not None and top != op and top not in out:
                    out.append(top)
            for region in o.regions:
                for b in region.blocks:
                    stack.extend(x.operation for x in b.operations)
        return out

    def _through_shape(self, op):
        """The users of ``op``, looking through reshapes and broadcasts (collected too)."""
        seen, out, stack = [], [], list(self.users[op])
        while stack:
            u = stack.pop()
            if u.name in ("ember.reshape", "ember.broadcast_in_dim"):
                seen.append(u)
                stack.extend(self.users[u])
            else:
                out.append(u)
        return seen, out

    def _softmax(self, max_op) -> list:
        """The ops of ``e = exp(x - max(x)); e / sum(e)`` around ``max_op``, or []. IREE
        (3.13, default level) recognizes this exact op-by-op form as a softmax and makes one
        dispatch of it; fused into generics it made two."""
        shape1, users = self._through_shape(max_op)
        subs = [u for u in users if u.name == "ember.sub"]
        if len(subs) != 1 or len(users) != 1:
            return []
        exps = self.users[subs[0]]
        if len(exps) != 1 or exps[0].name != "ember.exp":
            return []
        sums = [u for u in self.users[exps[0]] if u.name == "ember.reduce_sum"]
        divs = [u for u in self.users[exps[0]] if u.name == "ember.div"]
        if len(sums) != 1 or len(divs) != 1 or len(self.users[exps[0]]) != 2:
            return []
        shape2, users2 = self._through_shape(sums[0])
        if users2 != divs:
            return []
        return [max_op, *shape1, subs[0], exps[0], sums[0], *shape2, divs[0]]

    def find(self, op):
        while self.parent[op] is not op:
            self.parent[op] = self.parent[self.parent[op]]
            op = self.parent[op]
        return op

    def run(self) -> None:
        for consumer in self.ops:
            if self.kind[consumer] is None:
                continue
            for producer in self._producers(consumer):
                reason = self._refusal(producer, consumer)
                if reason is None:
                    self._union(producer, consumer)
                elif self.p.report and producer.name != "ember.constant":
                    self.p.lines.append(
                        f"ember-fuse: not fused: {producer.name} at {_loc(producer)} into "
                        f"{consumer.name} at {_loc(consumer)}: {reason}")
        groups = {}
        for op in self.ops:
            groups.setdefault(self.find(op), []).append(op)
        # Plan every fusion before changing the IR: after ops had been moved, looking up
        # other ops in these dicts failed here (the bindings' hashes of ops did not stay
        # stable), so once the IR changes ops are only compared with ==.
        plans = [self._plan(ops) for ops in groups.values() if len(ops) >= 2]
        for plan in plans:
            self._apply(*plan)
        if plans:
            for op in [o.operation for o in self.block.operations]:
                if op.name == "ember.constant" and not list(op.results[0].uses):
                    op.erase()      # splat constants now copied into the fusions
            _toposort(self.block)

    def _refusal(self, producer, consumer) -> str | None:
        if producer.name in _KEPT_APART or consumer.name in _KEPT_APART:
            return _KEPT_APART.get(producer.name) or _KEPT_APART[consumer.name]
        if self.kind[producer] is None:
            return "the producer is not a fusible op"
        for op in (producer, consumer):
            if op.name == "ember.gather" and not self._from_arguments(op.operands):
                return _COMPUTED_INDICES
        if producer in self.left_to_iree or consumer in self.left_to_iree:
            return self.left_to_iree.get(producer) or self.left_to_iree[consumer]
        a, b = self.find(producer), self.find(consumer)
        if a is b:
            return None
        if REMAT_ATTR in consumer.attributes and REMAT_ATTR not in producer.attributes and \
                producer.operands:
            return _FORWARD_PRODUCER
        if self.kind[consumer] == "dot":
            return (f"a {_short(consumer)} reads its operands from memory (only its epilogue "
                    "fuses)")
        merged = self.members[a] + self.members[b]
        kinds = [self.kind[o] for o in merged]
        if kinds.count("dot") > 1:
            return "the fusion would hold two contractions (dot_general, conv)"
        if "dot" in kinds and "reduce" in kinds:
            return "an output fusion takes only an elementwise epilogue, not a reduction"
        if not self._siblings(a, b, merged):
            return ("the reductions read different inputs: one fusion would keep all of them "
                    "live at once (sibling fusion joins reductions of the same inputs)")
        if len(merged) > self.p.max_ops:
            return f"the fusion would hold more than max-ops={self.p.max_ops} ops"
        bindings = self._bindings(merged) if self.p.max_bindings else 0
        if bindings > self.p.max_bindings:
            return (f"the fusion would bind {bindings} buffers (operands and results), more "
                    f"than max-bindings={self.p.max_bindings} (the target's limit)")
        through = self._cycle(set(merged))
        if through is not None:
            return f"fusing would create a cycle through {through.name} at {_loc(through)}"
        late = self._late_operand(a, b, consumer)
        if late is not None:
            return (f"{consumer.name} also waits for {late.name} at {_loc(late)}, computed after "
                    "the reduction: fused, the reduced input would stay live until then")
        return None

    def _bindings(self, merged) -> int:
        """The buffers a fusion of ``merged`` would bind: its distinct operands from outside
        (splat constants are copied in) and its results read outside. An upper bound: IREE
        binds the intermediate values of one execution region as one buffer."""
        group = set(merged)
        operands, results = set(), 0
        for op in merged:
            for v in op.operands:
                owner = v.owner
                if (isinstance(owner, ir.Block) or owner.operation not in group) and \
                        v not in operands and not _is_splat(v):
                    operands.add(v)
            for r in op.results:
                if any(self._top(u.owner.operation) not in group for u in r.uses):
                    results += 1
        return len(operands) + results

    def _late_operand(self, a, b, consumer):
        """An op outside both groups, defined after group ``a``'s last reduction, that
        ``consumer`` reads: fusing the reduction into the consumer would delay it (and keep
        its input live) until that op has run."""
        reduces = [self.pos[o] for o in self.members[a] if self.kind[o] == "reduce"]
        if not reduces:
            return None
        for p in self._producers(consumer):
            # Constants and what fusible ops compute from them and the arguments alone (a
            # broadcast eps, a layernorm's scale) fuse too: they keep nothing waiting.
            if not self._from_arguments(p.results) and self.pos[p] > max(reduces) and \
                    self.find(p) not in (a, b):
                return p
        return None

    def _from_arguments(self, values) -> bool:
        """Whether ``values`` (a gather's operands, a producer's results) are computed, by
        fusible elementwise and shape ops, from the block's arguments and constants only
        (not from a slice, a transpose, a reduction, ...)."""
        stack, seen = list(values), set()    # (a DAG: each op once, or exponential)
        while stack:
            owner = stack.pop().owner
            if isinstance(owner, ir.Block):
                continue
            op = owner.operation
            if op in seen or op.name == "ember.constant":
                continue
            seen.add(op)
            if self.kind.get(op) not in ("elementwise", "shape") or op.name in _KEPT_APART:
                return False
            stack.extend(op.operands)
        return True

    def _siblings(self, a, b, merged) -> bool:
        """False when groups ``a`` and ``b`` both hold reductions and no reduction of one reads
        the same data as one of the other (through the elementwise ops of the merged group)."""
        ra = [o for o in self.members[a] if self.kind[o] == "reduce"]
        rb = [o for o in self.members[b] if self.kind[o] == "reduce"]
        if not ra or not rb:
            return True
        sources_b = [self._sources(r, merged) for r in rb]
        return any(v == w for r in ra for v in self._sources(r, merged)
                   for src in sources_b for w in src)

    def _sources(self, reduction, merged) -> list:
        """The values from outside ``merged`` that ``reduction`` reads through elementwise
        members (other reductions' results are not data it reduces)."""
        members, seen = set(merged), set()
        out, stack = [], list(reduction.operands)
        while stack:
            v = stack.pop()
            owner = v.owner
            member = None if isinstance(owner, ir.Block) or owner.operation not in members \
                else owner.operation
            if member is None:
                if not any(v == w for w in out):
                    out.append(v)
            elif member not in seen and self.kind[member] != "reduce":
                seen.add(member)
                stack.extend(member.operands)
        return out

    def _cycle(self, group):
        """An op outside ``group`` on a path from the group back into it, or None. An op in
        another fusion group stands for its whole group: the fusion runs as one op, so each of
        its results waits for all of its inputs."""
        last = max(self.pos[o] for o in group)
        stack = [u for o in group for u in self.users[o] if u not in group]
        seen = set()
        while stack:
            o = stack.pop()
            if o in seen or self.pos[o] > last:
                continue
            members = self.members[self.find(o)]
            seen.update(members)
            for m in members:
                for u in self.users[m]:
                    if u in group:
                        return o
                    stack.append(u)
        return None

    def _union(self, producer, consumer) -> None:
        a, b = self.find(producer), self.find(consumer)
        if a is b:
            return
        self.parent[b] = a
        self.members[a] = self.members[a] + self.members.pop(b)

    def _plan(self, ops):
        ops = sorted(ops, key=lambda o: self.pos[o])
        group = set(ops)
        operands, results = [], []
        for op in ops:
            for v in op.operands:
                owner = v.owner
                inside = not isinstance(owner, ir.Block) and owner.operation in group
                if not inside and v not in operands:
                    operands.append(v)
        for op in ops:
            for r in op.results:
                if any(self._top(u.owner.operation) not in group for u in r.uses):
                    results.append(r)
        kinds = {self.kind[o] for o in ops}
        kind = "output" if "dot" in kinds else "input" if "reduce" in kinds else "loop"
        if kind != "output" and len(results) > 1:
            kind = "multi_output"
        if self.p.report:
            names = ", ".join(_short(o) for o in ops)
            self.p.lines.append(f"ember-fuse: fusion ({kind}, {len(ops)} ops: {names}; "
                                f"{len(results)} result{'s' * (len(results) != 1)}) at "
                                f"{_loc(ops[0])}")
        return ops, operands, results, kind

    def _apply(self, ops, operands, results, kind) -> None:
        # Operands again: fusions applied before this one replaced some of them. Splat
        # constants are copied into the body instead (the lowering emits them as scalars).
        operands, splats = [], []
        for op in ops:
            for v in op.operands:
                inside = not isinstance(v.owner, ir.Block) and _within(v.owner.operation, ops)
                if inside or any(v == w for w in operands + splats):
                    continue
                (splats if _is_splat(v) else operands).append(v)
        last = ops[-1]
        with last.location, ir.InsertionPoint(last):
            fusion = ir.Operation.create(
                "ember.fusion", results=[r.type for r in results], operands=operands,
                attributes={"kind": encode_attr("str", kind),
                            "duplicate_limit": encode_attr("i64", self.p.max_duplicate_cost),
                            "multi_result": encode_attr("bool", self.p.multi_result)},
                regions=1)
        if any(REMAT_ATTR in op.attributes for op in ops):
            fusion.attributes[REMAT_ATTR] = ir.UnitAttr.get()   # (see ember-to-linalg)
        body = fusion.regions[0].blocks.append(*[v.type for v in operands])
        inner = []
        with ir.InsertionPoint(body):
            for v in splats:
                inner.append(v.owner.operation.clone().results[0])
        for r, new in zip(results, fusion.results):
            for use in list(r.uses):
                owner = use.owner.operation
                if not _within(owner, ops):
                    owner.operands[use.operand_number] = new
        for op in ops:
            body.append(op)
            for i, v in enumerate(op.operands):
                for w, new in zip(operands + splats, list(body.arguments) + inner):
                    if v == w:
                        op.operands[i] = new
                        break
        with ir.InsertionPoint(body):
            ir.Operation.create("ember.yield", operands=results)


def _split_shared_splats(block) -> None:
    """Give each user of a broadcast of a splat constant (``1 - y * y`` of each layer's
    backward pass reads one ``1.0``) a copy of its own. Shared, the broadcast joined all its
    users into one multi-output fusion, which ran every backward layer's elementwise work at
    once, all their inputs live together (the recomputation of checkpointed layers
    undone). Each copy fuses into its user's fusion, or is left unfused as before."""
    for op in [o.operation for o in block.operations]:
        if op.name != "ember.broadcast_in_dim" or not _is_splat(op.operands[0]):
            continue
        uses = [(u.owner, u.operand_number) for u in op.results[0].uses]
        for user, k in uses[1:]:
            user.operands[k] = op.clone(ir.InsertionPoint(op)).results[0]


def _is_splat(v) -> bool:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "ember.constant":
        return False
    return ir.DenseElementsAttr(owner.operation.attributes["value"]).is_splat


def _within(op, ops) -> bool:
    """Whether ``op`` is one of ``ops`` or nested in one (compared with ==, not hashed)."""
    while op is not None:
        if any(op == o for o in ops):
            return True
        op = op.parent
        if op is not None and op.name in ("func.func", "builtin.module"):
            return False
    return False


def _toposort(block) -> None:
    """Reorder ``block``'s ops (its terminator stays last) so that every op follows the ops
    whose results it reads, keeping the order it has where it can."""
    import heapq

    ops = [o.operation for o in block.operations]
    body, terminator = ops[:-1], ops[-1]
    index = {op: i for i, op in enumerate(body)}

    def top(op):
        while op is not None and op not in index:
            op = op.parent
        return op

    deps = {op: set() for op in body}
    for op in body:
        stack = [op]
        while stack:
            o = stack.pop()
            for v in o.operands:
                if not isinstance(v.owner, ir.Block):
                    t = top(v.owner.operation)
                    if t is not None and t != op:
                        deps[op].add(t)
            for region in o.regions:
                for b in region.blocks:
                    stack.extend(x.operation for x in b.operations)
    users = {op: [] for op in body}
    for op, ds in deps.items():
        for d in ds:
            users[d].append(op)
    left = {op: len(ds) for op, ds in deps.items()}
    heap = [index[op] for op in body if not left[op]]
    heapq.heapify(heap)
    order = []
    while heap:
        i = heapq.heappop(heap)
        op = body[i]
        order.append(op)
        for u in users[op]:
            left[u] -= 1
            if not left[u]:
                heapq.heappush(heap, index[u])
    assert len(order) == len(body), "ember-fuse: a cycle among the ops of a block"
    if order == body:
        return
    for op in order:
        op.move_before(terminator)
