"""``ember-plan-memory``: liveness, peak-aware scheduling and rematerialization under a budget.

For each function (see :mod:`ember.passes.liveness` for the buffer model):

1. Scheduling: a list scheduler reorders independent ops to lower the peak of live bytes;
   the program order is kept unless the new order saves at least 10% of the peak and
   64 KiB.
2. Rematerialization: while the peak exceeds the memory budget, a value that is live across
   the peak and cheap to recompute (broadcasts, iotas, converts, elementwise ops, a layer's
   contraction with its epilogue, the results of ``ember.checkpoint`` calls) is recomputed
   right before its uses after the peak, cheapest per byte saved first, within a total
   recompute bound. A copy reads the copies of its operands where they were recomputed
   too, moved before it, so a chain of layers is recomputed from the last one kept (as
   checkpointing the chain would). Still over the budget, data tiling's packed copies are
   given up (each product's packed operands and result take buffers of their own) and
   rematerialization goes on (``give-up-data-tiling=false`` keeps them: ``jit`` compiles
   such a plan too and keeps it where IREE's figure meets the budget). What could not be
   saved is recorded as ``budget_missed``.
3. The plan is recorded on the function as ``ember.memory = {...}``: the peak of live bytes
   (results included, arguments excluded), the temporary peak, the op where the peak is, the
   argument/output/aliased bytes and what scheduling and rematerialization did.

The budget comes from the pass option ``budget``, else the function attribute
``ember.memory_budget`` (set by ``ember.jit(memory_budget=...)``), else the option
``default-budget`` (which ``jit`` sets from ``EMBER_MEMORY_BUDGET``). ``enabled=false``
(``jit`` with ``EMBER_NO_MEMORY_PLANNER=1``) keeps the order and recomputes nothing; the
analysis is still recorded. The pass reads nothing but its options and the IR.

Example:
    ember-opt f.mlir --ember-plan-memory='budget=16MiB'
"""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np

from ember._mlir import element_bits, ir, signless, walk
from ember.dialects import OPS, decode_attrs
from ember.dialects.reduction import REDUCE
from ember.dialects.sort_scan import network_sort, tiebreak_at_run_time
from ember.errors import MemoryBudgetError
from ember.passes.liveness import OUT, TEMP, Program, tensor_bytes, top_level
from ember.passes.registry import Pass, func_ops, register
from ember.rules.base import CHECKPOINT_ATTR, REMAT_ATTR, aval_of_type, is_splat_constant

# Per-element cost of recomputing an op, for choosing what to rematerialize, by the cost
# class its declaration gives (``OpDef.cost``); only ops declared ``recomputable`` are
# recomputed on their own (not reductions, contractions, gathers or control flow).
REMAT_WEIGHT = {"free": 0.25, "cheap": 1.0, "division": 4.0, "transcendental": 4.0}
RECOMPUTE_COST: dict[str, float] = {name: REMAT_WEIGHT[op.cost] for name, op in OPS.items()
                                    if op.recomputable}

MIN_GAIN_BYTES = 64 * 1024      # the scheduler's order is kept only if it saves this much ...
MIN_GAIN_FRACTION = 0.1         # ... and this fraction of the peak
POLICIES = ("nothing_saveable", "dots_saveable", "everything_saveable",
            "dots_with_no_batch_dims_saveable", "save_only_these_names",
            "save_any_names_but_these", "save_from_both_policies")

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKmMgGtT]?i?[bB]?)\s*$")
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
          "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40, "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}


def parse_size(value, what: str = "memory budget") -> int:
    """Bytes of a size given as a number or text like ``"12 GB"``, ``"1.5GiB"``, ``"256MiB"``.

    Raises MemoryBudgetError naming ``what`` for anything else.

    Example:
        >>> parse_size("1.5GiB"), parse_size(12e9), parse_size("64 kB")
        (1610612736, 12000000000, 64000)
    """
    if isinstance(value, bool):
        raise MemoryBudgetError(f"{what} must be a size in bytes, got {value!r}")
    if isinstance(value, int | float | np.integer | np.floating):
        if not np.isfinite(value) or value <= 0:
            raise MemoryBudgetError(f"{what} must be a positive number of bytes, got {value!r}")
        return int(value)
    if isinstance(value, str):
        m = _SIZE.match(value)
        unit = m.group(2).lower() if m else None
        if m and unit in _UNITS:
            size = float(m.group(1)) * _UNITS[unit]
            if size > 0:
                return int(size)
    raise MemoryBudgetError(
        f"{what} {value!r} is not a size: give bytes as a number (12e9) or text such as "
        "'12 GB', '256MiB', '1.5GiB'")


@dataclasses.dataclass
class BudgetOptions:
    """The budget options of the passes that plan under one (this and
    ember-auto-checkpoint)."""

    budget: str = dataclasses.field(default="", metadata={
        "help": "memory budget of every function, e.g. 16MiB (default: the function's "
                "ember.memory_budget, then default-budget)"})
    default_budget: str = dataclasses.field(default="", metadata={
        "help": "memory budget of the functions that set no ember.memory_budget"})

    def budget_of(self, f) -> int | None:
        """The budget of ``f`` in bytes: the ``budget`` option, else the function's own
        (``ember.memory_budget``), else ``default-budget``; None: no budget."""
        if self.budget:
            return parse_size(self.budget, "budget option")
        if "ember.memory_budget" in f.attributes:
            return ir.IntegerAttr(f.attributes["ember.memory_budget"]).value
        if self.default_budget:
            return parse_size(self.default_budget, "default-budget option")
        return None


@register
@dataclasses.dataclass
class PlanMemory(BudgetOptions, Pass):
    """Schedule ops to lower the peak of live bytes; rematerialize under a memory budget."""

    name = "ember-plan-memory"
    summary = "Peak-aware op scheduling and rematerialization under a memory budget"
    schedule: bool = dataclasses.field(default=True, metadata={
        "help": "reorder independent ops to lower the peak"})
    max_recompute: float = dataclasses.field(default=0.3, metadata={
        "help": "bound on recomputed work, as a fraction of the function's estimated work"})
    enabled: bool = dataclasses.field(default=True, metadata={
        "help": "false: only record the analysis (as EMBER_NO_MEMORY_PLANNER=1)"})
    data_tiling: bool = dataclasses.field(default=True, metadata={
        "help": "model IREE's packed copies of contraction operands (CPU data tiling) and "
                "its waves of independent kernels; false: a plain one-buffer-per-value "
                "model"})
    give_up_data_tiling: bool = dataclasses.field(default=True, metadata={
        "help": "still over the budget after rematerializing, plan without data tiling's "
                "packed copies (compiled without IREE's data tiling); false: keep them"})

    def run(self, module: ir.Module) -> None:
        enabled = self.enabled
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                if not f.regions[0].blocks:
                    continue
                budget = self.budget_of(f)
                plan_function(f, module, budget=budget if enabled else None,
                              schedule=self.schedule and enabled,
                              max_recompute=self.max_recompute, data_tiling=self.data_tiling,
                              give_up_data_tiling=self.give_up_data_tiling)


@dataclasses.dataclass
class Plan:
    """What the planner found and did for one function."""

    peak_bytes: int = 0
    temp_bytes: int = 0
    peak_op: str = ""
    argument_bytes: int = 0
    output_bytes: int = 0
    alias_bytes: int = 0
    unplanned_peak_bytes: int = 0
    scheduled: bool = False
    rematerialized: int = 0
    budget: int = 0
    budget_missed: int = 0
    # False: compile without IREE's data tiling (to meet a budget, or as no contraction
    # gains from it: vector_products_only)
    data_tiling: bool = True
    # What the budget did to data tiling: "" nothing; "given-up": its packed copies were
    # given up to meet the budget (data_tiling False); "kept": the model's peak with them is
    # over the budget and give-up-data-tiling=false kept them (memory.planned_flags then
    # takes data tiling from IREE's global optimization, leaner under recomputation)
    packing: str = ""

    @property
    def result_bytes(self) -> int:
        """The results IREE writes into buffers of their own (not into donated storage)."""
        return self.output_bytes - self.alias_bytes

    @property
    def transient_bytes(self) -> int:
        """The prediction of IREE's ``transient-memory-size``: the temporaries' peak and
        ``result_bytes``."""
        return self.temp_bytes + self.result_bytes

    def attribute(self) -> ir.DictAttr:
        i64 = ir.IntegerType.get_signless(64)
        items = {}
        for field in dataclasses.fields(self):
            v = getattr(self, field.name)
            if isinstance(v, bool):
                items[field.name] = ir.BoolAttr.get(v)
            elif isinstance(v, int):
                items[field.name] = ir.IntegerAttr.get(i64, v)
            else:
                items[field.name] = ir.StringAttr.get(v)
        return ir.DictAttr.get(items)

    @classmethod
    def of(cls, f) -> Plan:
        """The plan recorded on ``func.func`` ``f``; the defaults when none is."""
        if "ember.memory" not in f.attributes:
            return cls()
        return cls.from_attribute(f.attributes["ember.memory"])

    @classmethod
    def from_attribute(cls, attr) -> Plan:
        d = ir.DictAttr(attr)
        kw = {}
        for field in dataclasses.fields(cls):
            if field.name not in d:
                continue
            a = d[field.name]
            if isinstance(a, ir.BoolAttr):
                kw[field.name] = ir.BoolAttr(a).value
            elif isinstance(a, ir.IntegerAttr):
                kw[field.name] = ir.IntegerAttr(a).value
            else:
                kw[field.name] = ir.StringAttr(a).value
        return cls(**kw)


def _movable(op) -> bool:
    opdef = OPS.get(op.name)
    return opdef is not None and (opdef.pure or "regions" in opdef.traits)


# What IREE fuses: elementwise producers (broadcasts, transposes, slices included) into elementwise
# consumers and reductions.
_FUSABLE = frozenset(RECOMPUTE_COST) | {"ember.transpose", "ember.slice"}
_ABSORBS = _FUSABLE | {f"ember.{n}" for n in REDUCE} | {"ember.argmax", "ember.argmin"}


def _fusion_kind(op) -> str | None:
    if op.name != "ember.fusion":
        return None
    return ir.StringAttr(op.attributes["kind"]).value


# An ember.fusion lowers to generics IREE treats like the ops it holds: an elementwise (loop)
# fusion still fuses into its consumers, and any fusion but an output one (whose dot reads its
# operands from memory) computes elementwise producers inline. A sorting network's results
# come out of its packed buffer through an elementwise kernel, which fuses into consumers too
# (not out of the scf.if that picks the tiebreak at run time: they are a buffer then).
def _fusable(op) -> bool:
    return op.name in _FUSABLE or _fusion_kind(op) == "loop" or op.name == "ember.sort" and \
        network_sort(aval_of_type(op.operands[0].type),
                     ir.IntegerAttr(op.attributes["dimension"]).value) and \
        not tiebreak_at_run_time([aval_of_type(v.type) for v in op.operands])


def _absorbs(op) -> bool:
    return op.name in _ABSORBS or _fusion_kind(op) is not None or _copied_sort(op)


# An iree_linalg_ext.sort works on copies of its operands (each an elementwise kernel,
# lowering.distinct_copy), which compute elementwise producers inline.
def _copied_sort(op) -> bool:
    return op.name == "ember.sort" and not network_sort(
        aval_of_type(op.operands[0].type), ir.IntegerAttr(op.attributes["dimension"]).value)


# A constant contraction operand of this size or more is packed once, when the module loads:
# the CPU backend then takes data tiling from IREE's global-optimization phase, whose hoisting
# of constant expressions packs it (ember/backends/cpu.py, program_flags).
CONSTANT_PACKED_AT_LOAD_BYTES = 64 * 1024


def _packed_at_load(v) -> bool:
    v = _outer(v)
    if not _constant(v) or is_splat_constant(v.owner):
        return False
    return aval_of_type(v.type).nbytes >= CONSTANT_PACKED_AT_LOAD_BYTES


def _packed_operands(op) -> tuple[tuple[int, str], ...]:
    """Operands IREE copies into a packed layout at every call, with the layout: a
    contraction's ("lhs", "rhs"), also inside an output fusion, whose epilogue reads its
    operands in the packed layout of the result ("acc"; a residual add's input is packed
    twice). A layout names the contraction's dimensions too: a gradient's products read a
    weight transposed (``dz @ w.T``), which IREE packs apart from the forward product's copy
    of it. A large constant is packed when the module loads, not per call."""
    return tuple((i, layout) for i, layout in packed_layouts(op)
                 if not _packed_at_load(op.operands[i]))


def packed_layouts(op) -> tuple[tuple[int, str], ...]:
    """The operands of ``op`` that IREE's data tiling packs, with their layouts (as
    ``_packed_operands``, large constants included): ember-to-linalg copies a recomputed
    product's "lhs" and "rhs" ones."""
    if op.name == "ember.dot_general":
        return ((0, _layout(op, "lhs")), (1, _layout(op, "rhs")))
    if _fusion_kind(op) != "output":
        return ()
    body = op.regions[0].blocks[0]
    if any(inner.operation.name == "ember.conv" for inner in body.operations):
        return ()       # IREE's CPU data tiling packs matmuls, not convolutions
    args = list(body.arguments)
    out = set()
    for inner in body.operations:
        inner = inner.operation
        for i, v in enumerate(inner.operands):
            if v in args:
                dot = inner.name == "ember.dot_general"
                out.add((args.index(v), _layout(inner, ("lhs", "rhs")[i]) if dot else "acc"))
    return tuple(sorted(out))


def _layout(dot, side: str) -> str:
    """The packed layout of a dot_general's ``side`` ("lhs", "rhs"): the side and which of
    its dimensions are contracted and batched."""
    return "{} {} {}".format(side, *(list(ir.DenseI64ArrayAttr(dot.attributes[f"{side}_{k}"]))
                                     for k in ("contracting", "batch")))


def model(block, data_tiling: bool = True, waves: bool | None = None) -> Program:
    """The buffer model of a function body, with IREE's elementwise fusion and (with
    ``data_tiling``, as ember's CPU flags compile) the packed operand copies of contractions
    and IREE's pairing of independent kernels into one wave (``waves``, by default with
    ``data_tiling``: the plain model has neither)."""
    # An elementwise producer of a contraction operand keeps one buffer: IREE writes it in
    # the packed layout directly (measured on benchmarks/memory.py, within 4% on each).
    encoded = _packed_operands if data_tiling else (lambda op: ())
    prog = Program.from_block(block, _movable, _fusable, _absorbs, encoded)
    prog.waves = data_tiling if waves is None else waves
    return prog


def vector_products_only(module) -> bool:
    """Whether every contraction of ``module`` (data tiling is a flag of the whole program)
    is a matrix-vector product (one operand without free dimensions) whose matrix is not a
    constant. IREE's data tiling would pack each such matrix into a copy at every call,
    which costs more than the product itself: without it a per-example MLP (three 512x512
    matrix-vector products) ran 1.4x faster, and 1.2-2.6x on other sizes; a constant matrix
    is packed once, when IREE compiles, and its packed product was 1.6x faster."""
    dots = [op for op in walk(module.operation) if op.name == "ember.dot_general"]
    matrices = [_vector_product_matrix(op) for op in dots]
    return bool(dots) and all(m is not None and not _constant(_outer(m)) for m in matrices)


def _vector_product_matrix(dot):
    """The matrix operand of a dot_general whose other operand has no free dimensions, or
    None."""
    attrs = decode_attrs(OPS[dot.name], dot)
    free = []
    for i, kind in ((0, "lhs"), (1, "rhs")):
        t = ir.RankedTensorType(dot.operands[i].type)
        skip = set(attrs[f"{kind}_contracting"]) | set(attrs[f"{kind}_batch"])
        free.append(int(np.prod([n for d, n in enumerate(t.shape) if d not in skip],
                                dtype=np.int64)))
    if free[0] == 1:
        return dot.operands[1]
    if free[1] == 1:
        return dot.operands[0]
    return None


def _outer(v):
    """The value a fusion's block argument stands for (fusions read their operands so)."""
    while isinstance(v, ir.BlockArgument):
        owner = v.owner.owner
        if owner.name != "ember.fusion":
            return v
        v = owner.operands[v.arg_number]
    return v


def _constant(v) -> bool:
    return not isinstance(v, ir.BlockArgument) and v.owner.name == "ember.constant"


def plan_function(f, module, *, budget, schedule=True, max_recompute=0.3,
                  data_tiling=True, give_up_data_tiling=True) -> Plan:
    """Plan one ``func.func`` in place and record ``ember.memory`` on it; returns the Plan."""
    block = f.regions[0].blocks[0]
    tiled = data_tiling and not vector_products_only(module)
    prog = model(block, tiled)
    before = prog.profile(prog.order)
    plan = Plan(unplanned_peak_bytes=before.peak, budget=budget or 0, data_tiling=tiled)
    data_tiling = tiled
    if schedule and len(prog.order) > 2:
        order = prog.schedule()
        # Reorder only for a real gain: a new order is a new program for IREE, and one
        # reordering (test_shape.py's 81-output program, a 4% gain) hit an IREE miscompile.
        if prog.profile(order).peak <= before.peak - max(MIN_GAIN_BYTES,
                                                          MIN_GAIN_FRACTION * before.peak):
            _reorder(prog, order, block)
            plan.scheduled = True
    if budget is not None:
        plan.rematerialized = _rematerialize(block, budget, max_recompute, module,
                                             data_tiling)
    prog = model(block, data_tiling)
    prof = prog.profile(prog.order)
    over = budget is not None and data_tiling and prof.peak > budget
    if over and not give_up_data_tiling:
        plan.packing = "kept"
    elif over:
        # Still over the budget: the packed operand copies of data tiling are the last thing
        # to give up. Without them (and IREE's faster packed matmuls, 1.1-2x) the program
        # compiles with --iree-opt-data-tiling=false (memory.planned_flags).
        plain = model(block, data_tiling=False, waves=True)
        plain_prof = plain.profile(plain.order)
        if plain_prof.peak < prof.peak:
            prog, prof, plan.data_tiling, plan.packing = plain, plain_prof, False, "given-up"
            # Without packed copies the peak is elsewhere: recompute for that one too.
            plan.rematerialized += _rematerialize(block, budget, max_recompute, module, False)
            prog = model(block, data_tiling=False, waves=True)
            prof = prog.profile(prog.order)
    plan.peak_bytes, plan.temp_bytes = prof.peak, prof.temp_peak
    if prog.order:
        op = prog.ops[prog.order[prof.peak_index]]
        plan.peak_op = f"{_describe(op)} at {_where(op)}"
    plan.argument_bytes = sum(tensor_bytes(a.type) for a in block.arguments)
    plan.output_bytes = sum(tensor_bytes(r.type) for r in _returned(block))
    pairs, _ = donation_pairs(f)
    plan.alias_bytes = sum(tensor_bytes(block.arguments[a].type) for a, _ in pairs)
    if pairs:
        f.attributes["ember.donation"] = ir.DenseI64ArrayAttr.get(
            [x for pair in pairs for x in pair])
    if budget is not None:
        plan.budget_missed = max(0, plan.peak_bytes - budget)
    f.attributes["ember.memory"] = plan.attribute()
    return plan


def _describe(op) -> str:
    """An op's name; a fusion's also says what it holds (``ember.fusion(output: dot_general,
    tanh)``), which is what a user can find in their code."""
    kind = _fusion_kind(op)
    if kind is None:
        return op.name
    body = op.regions[0].blocks[0].operations
    names = [o.operation.name.removeprefix("ember.") for o in body]
    names = [n for n in names if n not in ("yield", "constant")]
    return f"{op.name}({kind}: {', '.join(names)})"


def _where(op) -> str:
    loc = str(op.location)
    m = re.match(r'loc\("([^"]*)":(\d+)', loc)
    return f"{os.path.basename(m.group(1))}:{m.group(2)}" if m else loc


def _returned(block):
    ops = list(block.operations)
    if ops and ops[-1].operation.name == "func.return":
        return list(ops[-1].operation.operands)
    return []


def _reorder(prog: Program, order: list[int], block) -> None:
    terminator = list(block.operations)[-1]
    for op in order:
        prog.ops[op].move_before(terminator)


# --- rematerialization ------------------------------------------------------------------


def op_work(op) -> float:
    """Estimated work of an op: elements times a per-element weight (contractions by flops).

    Example:
        >>> op_work(matmul_of_64x32_by_32x16)
        65536.0
    """
    name = op.name
    out = sum(tensor_bytes(r.type) // max(_itemsize(r.type), 1) for r in op.results)
    if name == "ember.constant":
        return 0.0
    if name in RECOMPUTE_COST:
        return out * RECOMPUTE_COST[name]
    if name == "ember.dot_general":
        lhs = ir.RankedTensorType(op.operands[0].type)
        contracting = ir.DenseI64ArrayAttr(op.attributes["lhs_contracting"])
        k = int(np.prod([lhs.shape[d] for d in contracting], dtype=np.int64))
        return 2.0 * out * max(k, 1)
    inner = 0.0
    for region in op.regions:
        for b in region.blocks:
            for child in b.operations:
                inner += op_work(child.operation)
    ins = sum(tensor_bytes(v.type) // max(_itemsize(v.type), 1) for v in op.operands)
    return max(inner, float(out + ins))


def _itemsize(t) -> int:
    if not isinstance(t, ir.RankedTensorType):
        return 1
    return max(element_bits(ir.RankedTensorType(t).element_type) // 8, 1)


def _callee(op, module):
    name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    table = ir.SymbolTable(module.operation)
    return table[name] if name in table else None


def _recompute_cost(op, result_index: int, module) -> float | None:
    """Cost of recomputing ``op`` to get its result ``result_index``; None if not allowed."""
    name = op.name
    if name == "ember.call" and CHECKPOINT_ATTR in op.attributes:
        policy = ir.StringAttr(op.attributes[CHECKPOINT_ATTR]).value
        callee = _callee(op, module)
        if callee is None or policy == "everything_saveable":
            return None
        body = callee.regions[0].blocks[0]
        if policy == "dots_saveable":
            ret = list(body.operations)[-1].operation
            owner = ret.operands[result_index].owner
            if isinstance(owner, ir.OpView | ir.Operation) and \
                    owner.name == "ember.dot_general":
                return None
        return sum(op_work(o.operation) for o in body.operations)
    if (name in RECOMPUTE_COST or _fusion_kind(op) == "loop") and len(op.results) == 1:
        return op_work(op)     # a loop fusion holds only ops of RECOMPUTE_COST
    # A contraction and its epilogue: what a gradient program keeps for its backward pass
    # (a layer's activations), recomputed from its operands as a checkpoint would.
    if name == "ember.dot_general" or _fusion_kind(op) == "output":
        return op_work(op)     # (of several results, each later use reads the copy)
    return None


def _rematerialize(block, budget: int, max_recompute: float, module, data_tiling) -> int:
    """Recompute cheap values after the peak until the peak fits ``budget``; returns how many
    values were recomputed."""
    prog = model(block, data_tiling)
    total_work = sum(op_work(op) for op in prog.ops) or 1.0
    spent, count = 0.0, 0
    refused: set = set()
    copies: dict = {}       # value -> its recomputed copy
    while True:
        prog = model(block, data_tiling)
        prof = prog.profile(prog.order)
        if prof.peak <= budget:
            return count
        p = prof.peak_index
        pos = {op: i for i, op in enumerate(prog.order)}
        users: dict[int, list[int]] = {}
        for u in prog.order:
            for x in prog.uses[u]:
                users.setdefault(x, []).append(pos[u])
        best = None
        for op_id in prog.order[:p]:
            op = prog.ops[op_id]
            for ri, v in enumerate(prog.defs[op_id]):
                if prog.kinds[v] != TEMP or not prog.sizes[v]:
                    continue
                user_pos = users.get(v, [])
                # Read at the peak too: recomputed right before it, fused into its reader.
                start = p if p in user_pos else p + 1
                if prog.values[v] in refused or not any(
                        q >= start and v in prog.direct[prog.order[q]] for q in user_pos):
                    continue
                cost = _recompute_cost(op, ri, module)
                # Checkpointed results are recomputed at any cost: the user asked for it.
                if cost is None or (CHECKPOINT_ATTR not in op.attributes
                                    and spent + cost > max_recompute * total_work):
                    continue
                saved = prof.peak - _trial_peak(prog, op_id, start, copies)
                if saved <= 0:
                    continue
                key = (cost / saved, pos[op_id])
                if best is None or key < best[0]:
                    best = (key, op_id, v, cost, start)
        if best is None:
            return count
        _, op_id, v, cost, start = best
        undo = _apply_remat(prog, op_id, start, block, copies)
        after = model(block, data_tiling)
        if after.profile(after.order).peak >= prof.peak:
            # The model's trial was optimistic (the value also reaches later ops through
            # fused values computed before the peak): take the clone back.
            undo()
            refused.add(prog.values[v])
            continue
        if CHECKPOINT_ATTR not in prog.ops[op_id].attributes:
            spent += cost
        count += 1


def _trial_peak(prog: Program, op_id: int, start: int, copies: dict) -> int:
    """The peak if ``op_id`` were recomputed before the first use of its results at or after
    position ``start``, every such use reading the copy, on a copy of the model. The copy
    reads the recomputed copies of its operands, moved before it (as _apply_remat does)."""
    order = prog.order
    defs = prog.defs[op_id]
    later = [u for u in order[start:] if set(defs) & set(prog.uses[u])]
    clone = len(prog.uses)
    new_vals = []
    sizes, kinds = list(prog.sizes), list(prog.kinds)
    for d in defs:
        sizes.append(prog.sizes[d])
        kinds.append(prog.kinds[d] if prog.kinds[d] != OUT else TEMP)
        new_vals.append(len(sizes) - 1)
    renamed = dict(zip(defs, new_vals))
    at = order.index(later[0])
    ids = {v: i for i, v in enumerate(prog.values) if v is not None}
    producer = {d: op for op in order for d in prog.defs[op]}
    pos = {op: i for i, op in enumerate(order)}
    clone_uses, moved = list(prog.uses[op_id]), []
    made = set(copies.values())

    def chain(uses_of, before):     # the copies ``uses_of`` reads, moved before ``before``
        for k, x in enumerate(uses_of):
            c = copies.get(prog.values[x])
            if c is None and prog.values[x] in made:
                c = prog.values[x]
            if c is None or c not in ids:
                continue
            uses_of[k] = ids[c]
            op = producer.get(ids[c])
            if op is not None and pos[op] >= before and op not in moved:
                moved.append(op)
                chain(list(prog.uses[op]), before)
    chain(clone_uses, at)
    uses = [list(u) for u in prog.uses] + [clone_uses]
    # Recomputed next to consumers that fuse it, the values need no buffer (as in model()).
    fused = _fusable(prog.ops[op_id]) and all(_absorbs(prog.ops[u]) for u in later)
    if fused:
        for nv in new_vals:
            sizes[nv] = 0
    for u in later:
        uses[u] = [renamed.get(x, x) for x in uses[u]]
        if fused:
            uses[u] += [x for x in clone_uses if x not in uses[u]]
    trial = Program(sizes, kinds, uses, prog.defs + [new_vals], prog.barrier + [False],
                    [])
    rest = [op for op in order[at:] if op not in moved]
    new_order = order[:at] + sorted(moved, key=pos.get) + [clone] + rest
    return trial.profile(new_order).peak


def _apply_remat(prog: Program, op_id: int, start: int, block, copies: dict):
    """Recompute ``op_id`` before its first later use; every use of its results at or after
    position ``start`` reads the copy, which reads the recomputed copies of its operands
    (moved before it: a chain of layers recomputed from the last one kept, as a checkpoint
    of the chain would). Returns a function that takes it back."""
    op = prog.ops[op_id]
    defs = set(prog.defs[op_id])
    later_ops = {prog.ops[u] for u in prog.order[start:] if defs & set(prog.uses[u])}
    first = next(prog.ops[u] for u in prog.order[start:] if prog.ops[u] in later_ops)
    clone = op.clone(ip=ir.InsertionPoint(first))
    clone.attributes[REMAT_ATTR] = ir.UnitAttr.get()
    ops = [o.operation for o in block.operations]
    after = ops[next(i for i, x in enumerate(ops) if x == clone.operation) + 1:]

    def after_clone(o) -> bool:     # (MLIR's Operation objects compare, but do not hash, equal)
        return any(x == o for x in after)

    moved = []              # (op, the op it was before)
    redirected = []         # (op, operand number, the value it read)
    made = set(copies.values())

    def chain(reader):      # ``reader`` reads copies; those after the clone move before it
        for inner in walk(reader):
            for k, v in enumerate(inner.operands):
                c = copies.get(v)
                if c is not None:
                    inner.operands[k] = c
                    redirected.append((inner, k, v))
                elif v in made:
                    c = v
                else:
                    continue
                owner = c.owner.operation
                if after_clone(owner) and all(owner != m for m, _ in moved):
                    now = [o.operation for o in block.operations]
                    moved.append((owner, now[next(i for i, x in enumerate(now)
                                                  if x == owner) + 1]))
                    owner.move_before(reader)
                    chain(owner)
    chain(clone.operation)
    for value, new in zip(op.results, clone.results):
        for use in list(value.uses):
            owner = use.owner
            owner = owner.operation if hasattr(owner, "operation") else owner
            top = top_level(owner, block)
            if top is not None and top in later_ops and owner != clone:
                owner.operands[use.operand_number] = new
                redirected.append((owner, use.operand_number, value))
        copies[value] = new

    def undo():
        for owner, n, value in redirected:
            owner.operands[n] = value
        for value in op.results:
            copies.pop(value, None)
        for owner, after in reversed(moved):
            owner.move_before(after)
        clone.erase()
    return undo


# --- donation ---------------------------------------------------------------------------


def donation_pairs(f) -> tuple[list[tuple[int, int]], list[tuple[int, str]]]:
    """Pair the donated arguments of ``f`` (``ember.donate``, argument indices) with results
    of the same type: ([(argument, result)], [(argument, why it cannot be used)]).

    IREE writes a result into donated storage while the program runs, and does not know that
    the storage is an argument: a donation is only made when no kernel can read the argument
    after (or at other elements than) the result is written, that is when every use of the
    argument is an elementwise op whose values flow only into that result.

    Example:
        >>> donation_pairs(main)
        ([(0, 0)], [(2, 'no result has its type tensor<3xf32> (results: tensor<f32>)')])
    """
    if "ember.donate" not in f.attributes:
        return [], []
    donated = list(ir.DenseI64ArrayAttr(f.attributes["ember.donate"]))
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    inputs, results = list(ftype.inputs), list(ftype.results)
    block = f.regions[0].blocks[0] if f.regions[0].blocks else None
    taken: set[int] = set()
    pairs, unused = [], []
    for a in donated:
        want = str(signless(inputs[a]))    # ui32 storage serves an i32 result as well
        same = [r for r, t in enumerate(results) if str(signless(t)) == want]
        free = [r for r in same if r not in taken]
        reached, why = _elementwise_slice(block, a) if block is not None else (set(), None)
        if not same:
            why = (f"no result has its type {inputs[a]} (results: "
                   f"{', '.join(str(t) for t in results) or 'none'})")
        elif why is None and len(reached) > 1:
            why = f"it flows into several results ({', '.join(map(str, sorted(reached)))})"
        elif why is None and reached and next(iter(reached)) not in free:
            why = (f"the result computed from it (#{next(iter(reached))}) has another type or "
                   "already reuses another donated argument")
        elif why is None and not free:
            why = f"each result of its type {inputs[a]} already reuses another donated argument"
        if why is not None:
            unused.append((a, why))
            continue
        r = next(iter(reached)) if reached else free[0]
        taken.add(r)
        pairs.append((a, r))
    return pairs, unused


def _elementwise_slice(block, a: int):
    """(results reached, None) when argument ``a`` is only read by elementwise ops (of its
    shape) whose values flow only into results; else (set(), why not)."""
    ret = list(block.operations)[-1].operation

    def in_block(owner, use) -> bool:
        return owner.parent is not None and owner.block == block and _elementwise_use(owner, use)
    reached, bad = _flow(block.arguments[a], lambda owner: owner == ret, in_block)
    if bad is None:
        return reached, None
    if bad.parent is None or bad.block != block:
        return set(), f"it is read inside a region ({top_level(bad, block).name})"
    return set(), (f"it is read by {bad.name} at {_where(bad)}, which may run after (or read "
                   "other elements than) the result written into its buffer")


def _flow(value, is_end, follow):
    """Follow ``value`` forward through the ops ``follow(owner, use)`` accepts: (the operand
    numbers by which it reaches ``is_end`` ops, None), or (set(), the first op refused)."""
    seen, work, reached = set(), [value], set()
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            owner = use.owner
            owner = owner.operation if hasattr(owner, "operation") else owner
            if is_end(owner):
                reached.add(use.operand_number)
            elif not follow(owner, use):
                return set(), owner
            else:
                work.extend(owner.results)
    return reached, None


def _elementwise_use(owner, use) -> bool:
    """Whether ``owner`` reads its operand elementwise into results of the operand's shape
    (so each element is read where the result's element is written): an elementwise op, or a
    loop fusion whose body does so."""
    opdef = OPS.get(owner.name)
    shape = ir.RankedTensorType(owner.operands[use.operand_number].type).shape
    elementwise = (opdef is not None and opdef.family == "elementwise") or (
        _fusion_kind(owner) == "loop" and _flow(
            owner.regions[0].blocks[0].arguments[use.operand_number],
            lambda o: o.name == "ember.yield", _elementwise_use)[1] is None)
    return elementwise and all(ir.RankedTensorType(r.type).shape == shape
                               for r in owner.results)


@register
class DonateBuffers(Pass):
    """Lower donation to IREE's ABI: one ``!hal.buffer {iree.abi.output = r}`` argument per
    usable donated argument, after the others, into which IREE writes result ``r``.

    Runs on lowered IR, on the pairs ``ember-plan-memory`` chose (``ember.donation =
    array<i64: arg0, res0, ...>``). Each such argument also names its donor
    (``donation.argument = a``) so that the runtime passes argument ``a``'s buffer there.
    The planner's function attributes (``ember.memory``, ``ember.donate``,
    ``ember.memory_budget``, ``ember.donation``) are dropped: IREE does not need them.
    """

    name = "ember-donate-buffers"
    summary = "Give donated arguments' storage to results (IREE's iree.abi.output ABI)"

    def run(self, module: ir.Module) -> None:
        with module.context, ir.Location.unknown():
            for f in func_ops(module):
                pairs = []
                if "ember.donation" in f.attributes:
                    flat = list(ir.DenseI64ArrayAttr(f.attributes["ember.donation"]))
                    pairs = list(zip(flat[0::2], flat[1::2]))
                for name in ("ember.memory", "ember.donate", "ember.memory_budget",
                             "ember.donation"):
                    if name in f.attributes:
                        del f.attributes[name]
                if not pairs or not f.regions[0].blocks:
                    continue
                block = f.regions[0].blocks[0]
                ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
                n = len(ftype.inputs)
                old = (list(ir.ArrayAttr(f.attributes["arg_attrs"]))
                       if "arg_attrs" in f.attributes else
                       [ir.DictAttr.get({}) for _ in range(n)])
                buffer = ir.Type.parse("!hal.buffer")
                index = ir.IndexType.get()
                new_attrs = []
                for a, r in pairs:
                    block.add_argument(buffer, ir.Location.unknown())
                    new_attrs.append(ir.DictAttr.get(
                        {"iree.abi.output": ir.IntegerAttr.get(index, r),
                         "donation.argument": ir.IntegerAttr.get(index, a)}))
                f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                    list(ftype.inputs) + [buffer] * len(pairs), list(ftype.results)))
                f.attributes["arg_attrs"] = ir.ArrayAttr.get(old + new_attrs)
