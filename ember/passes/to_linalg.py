"""``ember-to-linalg``: replace every ember op by linalg/tensor/arith/math IR.

A plain walk in program order: the ops in an op's regions are lowered before the op, whose
rule then moves its region bodies into the ops it builds (``ember.yield`` terminators are left
for it). Each op's rule (``lowering.LOWERINGS``) emits its replacement
before it, uses are redirected and the op is erased. Function signatures lose their unsigned
types (IREE wants signless integers).
"""

from __future__ import annotations

import dataclasses

from ember._mlir import ir, signless, walk
from ember.config import DEFAULT_LOOP_RUN_AHEAD
from ember.dialects import OPS, aval_of_type, decode_attrs
from ember.dialects.spmd import DEVICE_ATTR, device_promise, edit_attr_dicts
from ember.passes.liveness import recompute_copies
from ember.passes.plan_memory import Plan, packed_layouts
from ember.passes.registry import Pass, PassError, func_ops, register
from ember.rules.base import REMAT_ATTR, inline_call
from ember.rules.complex import materialize_complex_splats
from ember.rules.lowering import (
    LOWERINGS,
    TRAITS,
    LowerCall,
    Traits,
    distinct_copy,
    optimization_barrier,
)

_TERMINATORS = frozenset(n for n, d in OPS.items() if "terminator" in d.traits)


@register
@dataclasses.dataclass
class ToLinalg(Pass):
    """Lower ember ops to upstream dialects IREE accepts; with ``dispatch-regions`` (the
    default), a fusion IREE might split becomes one ``flow.dispatch.region``."""

    name = "ember-to-linalg"
    summary = "Lower ember ops to linalg, tensor, arith, math and func"
    dispatch_regions: bool = dataclasses.field(default=True, metadata={
        "help": "wrap a fusion IREE might split in one flow.dispatch.region (false: the GPU "
                "backends, whose codegen does not take them)"})
    float64: bool = dataclasses.field(default=True, metadata={
        "help": "the target computes in float64, which some float32 functions use for "
                "precision (false: Vulkan, whose generic targets have none)"})
    outer_reductions: bool = dataclasses.field(default=True, metadata={
        "help": "a reduction along leading axes may be fused with its consumers (false: "
                "Vulkan, where IREE 3.13's fused dispatch computes x - x.max(axis=0) wrongly "
                "from 8 columns up, intermittently: a util.optimization_barrier follows it)"})
    exact_division: bool = dataclasses.field(default=True, metadata={
        "help": "the target's signed integer division is exact at the type's minimum "
                "(false: Vulkan and CUDA, which get ember's own from unsigned division)"})
    exact_rounding: bool = dataclasses.field(default=True, metadata={
        "help": "the target rounds float arithmetic as written (false: Vulkan, whose drivers "
                "may reassociate float adds: ember pins its error-free steps there)"})
    run_ahead: int = dataclasses.field(default=DEFAULT_LOOP_RUN_AHEAD, metadata={
        "help": "a host loop (scan, fori_loop) longer than this runs in chunks of this many "
                "steps, the host waiting for each before it records the next, which bounds "
                "the memory IREE keeps for steps in flight (0: no chunks)"})

    def run(self, module: ir.Module) -> None:
        token = TRAITS.set(Traits(**{f.name: getattr(self, f.name)
                                     for f in dataclasses.fields(Traits)}))
        try:
            self._run(module)
            with module.context, ir.Location.unknown():
                materialize_complex_splats(module)
            if not self.outer_reductions:
                with module.context, ir.Location.unknown():
                    _barrier_after_outer_reductions(module)
        finally:
            TRAITS.reset(token)

    def _run(self, module: ir.Module) -> None:
        # Ember types of values already replaced by signless ones (ui32 lowers to i32).
        self._avals: dict[ir.Value, object] = {}
        self._recomputed: set[ir.Value] = set()     # results of lowered recomputed ops
        with module.context, ir.Location.unknown():
            _inline_recomputed_calls(module)
            for f in func_ops(module):
                # Remember the ember types of the arguments, then make them signless first:
                # generic bodies take their element types from their operands.
                for block in f.regions[0].blocks:
                    for arg in block.arguments:
                        self._avals[arg] = aval_of_type(arg.type)
                _signless_signature(f)
                _device_affinities(f)
                # (without data tiling, which the memory plan may give up, IREE packs nothing)
                self._packed = Plan.of(f).data_tiling
                for block in f.regions[0].blocks:
                    self._lower_block(block)

    def _lower_block(self, block: ir.Block) -> None:
        for op in list(block.operations):
            name = op.operation.name
            # An op whose rule lowers its body as a whole (ember.fusion) keeps it as it is.
            own_body = name in OPS and "own_body" in OPS[name].traits
            for region in [] if own_body else op.regions:
                for b in region.blocks:
                    if name.startswith("ember."):
                        # Region arguments of ember ops are tensors: signless first, as for
                        # function arguments, remembering their ember types.
                        for arg in b.arguments:
                            self._avals[arg] = aval_of_type(arg.type)
                            arg.set_type(signless(arg.type))
                    self._lower_block(b)
            if not name.startswith("ember.") or name in _TERMINATORS:
                continue   # region terminators are replaced by their parent op's rule
            rule = LOWERINGS.get(name)
            if rule is None or name not in OPS:
                raise PassError(f"{op.location}: error: no lowering for '{name}'")
            opdef = OPS[name]
            operation = op.operation
            call = LowerCall(operation, list(operation.operands),
                             [self._aval(v) for v in operation.operands],
                             [aval_of_type(r.type) for r in operation.results],
                             decode_attrs(opdef, operation),
                             {"dispatch_regions": self.dispatch_regions,
                              "run_ahead": self.run_ahead})
            with operation.location, ir.InsertionPoint(operation):
                remat = REMAT_ATTR in operation.attributes
                if remat:
                    _distinct_operands(call, self._recomputed, self._packed)
                new = rule(call)
            if remat:
                self._recomputed.update(new)
            for old, value, aval in zip(operation.results, new, call.out_avals):
                self._avals[value] = aval
                old.replace_all_uses_with(value)
            operation.erase()

    def _aval(self, v: ir.Value):
        aval = self._avals.get(v)
        return aval if aval is not None else aval_of_type(v.type)


def _distinct_operands(call: LowerCall, recomputed: set, packed: bool) -> None:
    """A recomputed op (or fusion) that reads no recomputed value reads its smallest tensor
    operand through ``distinct_copy``: it then differs from the op it copies, and so does
    every op after it that reads it, or IREE's CSE merges the recomputation back into the
    forward pass (which keeps its results live until the backward pass, as if nothing were
    recomputed).

    With data tiling (``packed``) a product (a ``dot_general``, or an output fusion holding
    one) reads each of its operands that is not recomputed through a copy: IREE then packs
    each operand and computes the product in kernels of their own, apart from the fusion's
    epilogue. With one copied operand CSE merged the other's packing with the forward
    pass's, which then stayed live until the backward pass (a layer's packed weights); with
    only the epilogue's operand copied (a bias), the whole packed product (a layer's packed
    result). Without data tiling one copy keeps the product's kernel distinct, as any other
    op's: copies of its weights cost 4 MiB a layer of a 1024-wide MLP for nothing."""
    tensors = [i for i, v in enumerate(call.operands) if isinstance(v.type, ir.RankedTensorType)]
    copied = sorted(recompute_copies(packed_layouts(call.op), call.op,
                                     recomputed.__contains__)) if packed else []
    if not copied and tensors and not any(call.operands[i] in recomputed for i in tensors):
        copied = [min(tensors, key=lambda i: (call.in_avals[i].size, i))]
    for i in copied:
        call.operands[i] = distinct_copy(call.operands[i], call.in_avals[i])


def _inline_recomputed_calls(module: ir.Module) -> None:
    """A recomputed ``ember.call`` becomes its callee's ops, each marked recomputed: IREE
    inlines calls, and the recomputed ops' copied operands (``_distinct_operands``) keep its
    CSE from merging them back into the forward call's (a recomputed segment of layers kept
    its layers' packed weights live until the backward pass). Inlined here rather than as a
    marked copy of the callee, which would take a distinct flag (a barrier) of its own."""
    table = ir.SymbolTable(module.operation)
    work = [op for f in func_ops(module) for op in walk(f)
            if op.name == "ember.call" and REMAT_ATTR in op.attributes]
    while work:
        call = work.pop()
        body = table[ir.FlatSymbolRefAttr(call.attributes["callee"]).value].regions[0].blocks[0]
        for new in inline_call(call, body, list(call.operands), remat=True):
            work.extend(o for o in walk(new) if o.name == "ember.call")  # (inlined in turn)


def _device_affinities(f) -> None:
    """The arguments and results ember-spmd gave a device (``ember.device``) get IREE's
    ``iree.abi.affinity`` for that device instead."""
    def affinity(i, entries):
        if DEVICE_ATTR in entries:
            device = ir.IntegerAttr(entries.pop(DEVICE_ATTR)).value
            entries["iree.abi.affinity"] = device_promise(device)
    for key in ("arg_attrs", "res_attrs"):
        if key in f.attributes:
            edit_attr_dicts(f, key, 0, affinity)


def _signless_signature(f) -> None:
    for block in f.regions[0].blocks:
        for arg in block.arguments:
            arg.set_type(signless(arg.type))
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [signless(t) for t in ftype.inputs], [signless(t) for t in ftype.results]))


def _barrier_after_outer_reductions(module: ir.Module) -> None:
    """Each result of a ``linalg.generic`` that reduces along other than its trailing loop
    dims goes through ``util.optimization_barrier``, so that IREE does not fuse it with its
    consumers (``outer-reductions=false``): with it, Vulkan's x - x.max(axis=0) was right 20
    times in 20, without it wrong 20 times (lavapipe, 3x17)."""
    for op in [o for o in walk(module.operation) if o.name == "linalg.generic"]:
        reduced = ["reduction" in str(k) for k in ir.ArrayAttr(op.attributes["iterator_types"])]
        if not any(reduced) or all(reduced[reduced.index(True):]):
            continue
        for r in op.results:
            with ir.InsertionPoint.after(op):
                barrier = optimization_barrier(r)
            r.replace_all_uses_except(barrier, barrier.owner.operation)
