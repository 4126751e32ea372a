"""``ember.jit`` and its AOT objects ``Lowered`` and ``Compiled``."""

from __future__ import annotations

import concurrent.futures
import copy
import functools
import inspect
import time
import weakref

import numpy as np

from ember import tree_util
from ember._mlir import ir, walk
from ember.backends import device_flags, dispatch_regions, get_backend, legality, traits
from ember.backends import target_options as _target_options
from ember.backends.array import Array, device_of_arrays
from ember.backends.compiler import compile_mlir, discard_ir, log_level, start_worker, stop_worker
from ember.backends.compiler import log as compile_log
from ember.backends.runtime import FENCED_CALLS_FLAG, Executable
from ember.backends.statistics import compile_with_statistics
from ember.config import TRACED_OPTIONS, config
from ember.core import (
    ArgInfo,
    ShapedArray,
    ShapeDtypeStruct,
    bind_sizes,
    has_symbolic,
    is_symbolic,
)
from ember.dtypes import dtype_and_weak
from ember.errors import (
    ArgumentError,
    CompileError,
    DeviceMismatchError,
    DonationError,
    EmberError,
    UnsupportedDtypeError,
)
from ember.frontend import memory, tracing
from ember.frontend.dynamic import DynamicShapes
from ember.frontend.once import OnceCache
from ember.frontend.sharding import ShardedArray, sharded_jit
from ember.frontend.tracing import Trace, Tracer
from ember.passes.liveness import tensor_bytes

_ALL_JITS: weakref.WeakSet = weakref.WeakSet()
STAGES = ("ember", "optimized", "linalg")
# Compiles of a program with a memory budget, the first with the budget given, the others
# each tighter by what IREE's figure exceeded the budget.
MAX_BUDGET_TRIES = 3


def clear_caches() -> None:
    """Forget every compiled executable (in memory; the on-disk compile cache stays) and end
    the compile worker, the child process that runs IREE's compiler (200-300 MiB resident):
    the next compile starts a new one. A compile in flight in another thread finishes first,
    on its worker, which ends after it.

    Example:
        >>> import ember
        >>> ember.clear_caches()
    """
    _forget_executables()
    stop_worker()


def _forget_executables() -> None:
    for j in list(_ALL_JITS):
        j.clear_cache()
    _CANONICAL.clear()
    from ember.frontend import array_methods, eager
    eager.clear_cache()
    array_methods._SCALARS.clear()     # (a weak int is int64 with x64 on)


# An option traced programs depend on changed: every cached executable may be wrong (the
# worker stays: it compiles what it is sent, whatever the options).
config.on_change(TRACED_OPTIONS, lambda name, value: _forget_executables())


def _leaf_aval(leaf, path) -> ShapedArray:
    """The abstract value of an argument leaf; ``path`` (a str, or a function making one)
    names the argument in errors."""
    if isinstance(leaf, Array | Tracer):
        return leaf.aval
    if isinstance(leaf, ShardedArray):       # gathered to the host by the call
        return ShapedArray(leaf.shape, leaf.dtype)
    if isinstance(leaf, ShapeDtypeStruct):
        if is_symbolic(leaf.shape):
            raise ArgumentError(
                f"argument {_name(path)} has the symbolic shape {leaf.shape}: symbolic "
                "dimensions are for ember.jit(f).lower and ember.export")
        dtype, _ = dtype_and_weak(np.empty(0, leaf.dtype))
        return ShapedArray(leaf.shape, dtype, leaf.weak_type)
    if isinstance(leaf, np.ndarray | np.generic | bool | int | float | complex):
        try:
            dtype, weak = dtype_and_weak(leaf)
        except UnsupportedDtypeError as e:
            raise ArgumentError(f"argument {_name(path)}: {e}") from None
        if type(leaf) is int and not np.iinfo(dtype).min <= leaf <= np.iinfo(dtype).max:
            raise OverflowError(f"argument {_name(path)}: Python int {leaf} is too large to "
                                f"convert to {np.dtype(dtype).name} (as in JAX; pass a NumPy "
                                "array of a wider dtype with x64 enabled)")
        return ShapedArray(np.shape(leaf), dtype, weak)
    raise ArgumentError(
        f"argument {_name(path)} is a {type(leaf).__name__}, which is not an array. Pass arrays, "
        "Python scalars or pytrees of them, or mark the argument static with static_argnums/"
        "static_argnames.")


def _name(path) -> str:
    return path() if callable(path) else path


def call_with_leaves(fun, leaves, tree, positions):
    """``fun`` of the arguments whose flat leaves (of ``tree``, ``((args...), kwargs)``) are
    ``leaves``, as a function of the leaves at ``positions`` only (the others fixed).

    Example:
        >>> g = call_with_leaves(f, [x, 2.0], tree, [0])    # g(x2) is f(x2, 2.0)
    """
    def flat(*values):
        full = list(leaves)
        for i, v in zip(positions, values):
            full[i] = v
        a, k = tree_util.tree_unflatten(tree, full)
        return fun(*a, **k)
    return flat


def _leaf_paths(tree) -> list[tuple]:
    """The key path of each leaf of the arguments' tree ``((args...), kwargs)``."""
    paths, _ = tree_util.tree_flatten_with_path(tree_util.tree_unflatten(
        tree, list(range(tree.num_leaves))))
    return [p for p, _ in paths]


def _path_str(fun_name, argnames, path) -> str:
    """Name an argument leaf like ``'params'[0]`` from its pytree path."""
    (_top, kind_key), rest = path[:2], path[2:]
    key = getattr(kind_key, "idx", None)
    if key is None:
        key = getattr(kind_key, "key", kind_key)
    name = argnames[key] if isinstance(key, int) and key < len(argnames) else str(key)
    return f"'{name}'" + tree_util.keystr(rest)


class Lowered:
    """A traced program, before IREE compiles it (``jitted.lower(*args)``).

    ``as_text(stage)`` shows the IR at a stage: "ember" (as traced), "optimized" (after
    ember's passes) or "linalg" (what IREE receives). ``backend`` is the target it compiles
    for; ``device`` the device it loads on (None: the backend's first).
    """

    def __init__(self, module: ir.Module, fun_name, in_tree, in_avals, out_tree, out_avals,
                 backend: str, device=None):
        self._modules = {"ember": module}
        self.fun_name = fun_name
        self.in_tree, self.in_avals = in_tree, in_avals
        self.out_tree, self.out_avals = out_tree, out_avals
        self.backend = backend
        self.device = device
        self._text = {"ember": str(module)}
        self._steps: dict[str, list[str]] = {}   # the passes each stage ran
        self.fusion: bool | None = None   # ember-fuse on/off; None: ember.config.fusion
        # fusions as IREE dispatch regions; None: as the backend allows (export: all targets)
        self.dispatch_regions: bool | None = None
        self.traits: dict | None = None     # the target's arithmetic; None: the backend's
        self.static_positions: tuple[int, ...] = ()   # static positional arguments given
        # the budget ember-plan-memory plans under, over the function's own: set tighter when
        # IREE's figure missed the budget (see compile)
        self.plan_budget: int | None = None
        # ember-plan-memory keeps data tiling over the budget (see compile)
        self.keep_data_tiling = False
        self.iree_transient: int | None = None   # IREE's figure, when a budget asked for it
        # A program of several devices (ember.pmap, shard_map): its devices, whose arguments
        # and results come device by device (device 0's leaves, then device 1's, ...).
        self.devices: list | None = None
        # The linalg program has dynamic sizes (``generalized``): one executable for them all.
        self.dynamic = False
        # Lowered for symbolic dimensions (``ember.frontend.dynamic.SymbolicProgram``): its
        # Compiled takes every size of them.
        self.symbolic = None

    def generalized(self, text: str) -> Lowered:
        """This program with ``text`` for its linalg stage: the same program with some sizes
        dynamic (``ember.frontend.dynamic``)."""
        other = copy.copy(self)
        other._modules, other._text = dict(self._modules), dict(self._text)
        with self._stage("linalg").context:
            other._modules["linalg"] = ir.Module.parse(text)
        other._text["linalg"] = text
        other.dynamic = True
        return other

    def pipeline(self, stage: str = "linalg") -> str:
        """The ``--pass-pipeline`` that takes the IR of the stage before ``stage`` to
        ``stage`` ("optimized" or "linalg"): ``ember-opt`` given this string and
        ``as_text(<previous stage>, debug_info=True)`` prints ``as_text(stage)``, bit for bit.

        Example:
            >>> ember.jit(f).lower(x).pipeline("optimized")
            'builtin.module(ember-verify,ember-batch,...,ember-plan-memory)'
        """
        from ember.passes import pipelines
        if stage not in STAGES[1:]:
            raise ValueError(f"stage {stage!r} has no pipeline; stages with one are "
                             f"{STAGES[1:]}")
        return pipelines.pipeline_text(self._steps.get(stage) or self._choose_steps(stage))

    def _choose_steps(self, stage: str) -> list[str]:
        """The passes ``stage`` runs with the current configuration and settings."""
        from ember.passes import pipelines
        regions = self.dispatch_regions
        if regions is None:
            regions = dispatch_regions((self.backend,))
        target = self.traits or traits((self.backend,))
        if stage == "optimized":
            return pipelines.optimize_steps(fusion=self.fusion, dispatch_regions=regions,
                                            max_bindings=target["max_bindings"],
                                            plan_budget=self.plan_budget,
                                            keep_data_tiling=self.keep_data_tiling)
        return pipelines.lower_steps(dispatch_regions=regions, **target)

    def _stage(self, stage: str) -> ir.Module:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; stages are {STAGES}")
        if stage not in self._modules:
            from ember.passes import pipelines
            prev = self._stage(STAGES[STAGES.index(stage) - 1])
            with prev.context:
                module = ir.Module.parse(prev.operation.get_asm(enable_debug_info=True))
            self._steps[stage] = self._choose_steps(stage)
            pipelines.run(module, self._steps[stage])
            self._modules[stage] = module
            self._text[stage] = str(module)
        return self._modules[stage]

    def as_text(self, stage: str = "ember", *, debug_info: bool = False) -> str:
        """The IR at ``stage`` as MLIR text.

        Example:
            >>> print(ember.jit(f).lower(x).as_text("linalg"))
        """
        module = self._stage(stage)
        if debug_info:
            return module.operation.get_asm(enable_debug_info=True)
        return self._text[stage]

    @property
    def args_info(self):
        """The arguments, static ones left out, as a pytree ``(args, kwargs)`` of
        :class:`ArgInfo` (shape, dtype, donated), as JAX's ``Lowered.args_info``.

        Example:
            >>> ember.jit(f, donate_argnums=0).lower(x, y).args_info
            ((ArgInfo(f32[3], donated=True), ArgInfo(f32[3], donated=False)), {})
        """
        donated = set(memory.donated_leaves_of(self._stage("ember")))
        args, kwargs = tree_util.tree_unflatten(self.in_tree, [
            ArgInfo(a, i in donated) for i, a in enumerate(self.in_avals)])
        return tuple(a for i, a in enumerate(args) if i not in self.static_positions), kwargs

    @property
    def out_info(self):
        """The outputs as a pytree of ShapeDtypeStructs, as JAX's ``Lowered.out_info``.

        Example:
            >>> ember.jit(lambda x: {"y": x * 2}).lower(np.ones(3, np.float32)).out_info
            {'y': ShapeDtypeStruct(shape=(3,), dtype=float32)}
        """
        return tree_util.tree_unflatten(self.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in self.out_avals])

    def compiler_ir(self, dialect: str = "linalg") -> ir.Module:
        """The IR at a stage as an MLIR module: "linalg" (what IREE compiles, the default),
        "optimized" or "ember"; as JAX's ``Lowered.compiler_ir``.

        Example:
            >>> ember.jit(f).lower(x).compiler_ir().operation.name
            'builtin.module'
        """
        return self._stage(dialect)

    def compile_linalg(self, build):
        """``build()``, which compiles ``as_text("linalg")``; should IREE fail on a program whose
        fusions are dispatch regions (``ember.dialects.fusion``), it is lowered again
        without them and compiled again: IREE's codegen does not take every region."""
        try:
            return build()
        except CompileError as e:
            # (a dynamic program's text is not lowered again: that would be a static one)
            if self.dynamic or "flow.dispatch.region" not in self.as_text("linalg"):
                raise
            first = e
        compile_log.log(log_level(), "IREE failed on %s with dispatch regions; lowering it "
                        "again without them", self.fun_name)
        self.dispatch_regions = False
        del self._modules["linalg"], self._text["linalg"], self._steps["linalg"]
        result = build()
        discard_ir(first)
        return result

    def compile(self, target_options: dict | None = None) -> Compiled:
        """Compile with IREE for the backend and load it; returns a callable Compiled.

        ``target_options`` override the backend's (``ember.config``) defaults, e.g.
        ``{"arch": "sm_89"}`` for CUDA. The program is checked against what the target can
        run first (BackendUnsupportedError). Compiling never needs the backend's driver: on a
        machine without it the Compiled loads lazily, and calling it raises
        BackendUnavailableError saying what to install.

        Example:
            >>> ember.jit(f, backend="cuda").lower(x).compile()   # no GPU needed
        """
        start = time.perf_counter()
        backend = get_backend(self.backend)
        options = _target_options(self.backend, target_options)
        budget = memory.budget_of(self)
        best = None

        def build():
            optimized = self._stage("optimized")
            # (a dynamic program's sizes are the caller's: sized as large, it runs on the
            # driver with worker threads)
            size = (1 << 62, None) if self.dynamic else program_size(self._stage("linalg"))
            calls = (FENCED_CALLS_FLAG,) if backend.fenced_calls(*size) or self.devices \
                else ()
            flags, fallbacks = self.iree_flags(backend, options, calls)
            legality.check(backend, optimized, self._stage("linalg"), self.fun_name, options)
            if budget is None:
                return self.compile_linalg(lambda: compile_mlir(
                    self.as_text("linalg"), flags, fallbacks=fallbacks)), size, None
            vmfb, stats = self.compile_linalg(lambda: compile_with_statistics(
                self.as_text("linalg"), flags, fallbacks))
            nonlocal best
            figure = stats.transient_memory_size
            if best is None or figure < best[0]:
                best = (figure, vmfb, size, self.plan_budget, self.keep_data_tiling,
                        self.dispatch_regions, dict(self._modules), dict(self._text),
                        dict(self._steps))
            return vmfb, size, figure

        if budget is None:
            vmfb, size, _ = build()
        kept_tried = False
        for attempt in range(MAX_BUDGET_TRIES if budget is not None else 0):
            # A budget is judged by IREE's own figure. A plan that gives data tiling up to
            # meet it in ember's model runs its products 1.1-2x slower: the first time one
            # does, the plan that keeps data tiling is compiled first, and kept where IREE's
            # figure meets the budget.
            if not kept_tried and \
                    memory.plan_of(self._stage("optimized")).packing == "given-up":
                given_up = (self.dispatch_regions, dict(self._modules), dict(self._text),
                            dict(self._steps))
                kept_tried = self.keep_data_tiling = True
                self.replan(self.plan_budget)
                if build()[2] <= budget:
                    break
                self.keep_data_tiling = False
                if self.dispatch_regions == given_up[0]:
                    # the plan without data tiling as made above, not planned again
                    self._modules, self._text, self._steps = given_up[1:]
                else:
                    self.replan(self.plan_budget)
            # Over it, plan again under a budget tighter by what IREE needed beyond it, or
            # beyond the plan's own modelled peak where that is more (a plan whose model has
            # slack under its budget does not change when the budget tightens by less than
            # the slack), and keep the compile with the lowest figure (a tighter plan is not
            # always lower).
            _, _, figure = build()
            plan = memory.plan_of(self._stage("optimized"))
            over = figure - budget
            tighter = (self.plan_budget or plan.budget) - max(over, figure - plan.peak_bytes)
            if over <= 0 or tighter <= 0 or attempt == MAX_BUDGET_TRIES - 1:
                break
            self.replan(tighter)
        if best is not None:
            (self.iree_transient, vmfb, size, self.plan_budget, self.keep_data_tiling,
             self.dispatch_regions, self._modules, self._text, self._steps) = best
        compile_log.log(log_level(), "Compiled %s for %s (%s) in %.2f s", self.fun_name,
                        self.backend, ", ".join(a.str_short() for a in self.in_avals),
                        time.perf_counter() - start)
        device = self.device

        def load():
            if self.devices:
                return Executable(vmfb, self.devices[0], devices=self.devices)
            return Executable(vmfb, backend.runtime_device(device, *size))
        if device is not None or backend.devices():
            return Compiled(load(), self)
        return Compiled(None, self, vmfb=vmfb, load=load)

    def leaf_devices(self, count: int) -> list | None:
        """The device of each of ``count`` argument (or result) leaves of a program of
        several devices; None for a program of one."""
        if not self.devices:
            return None
        per = count // len(self.devices)
        return [self.devices[j // per] for j in range(count)]

    def iree_flags(self, backend, options: dict, calls=()):
        """IREE's flags for this program on ``backend`` (a backend module) with target
        ``options``, and the flag sets to fall back on: the backend's, as this program
        asks (its constants, ``backend.program_flags``; its memory plan; its devices), with
        ``calls`` (the calling convention) appended."""
        optimized, linalg = self._stage("optimized"), self._stage("linalg")

        def finish(flags):
            if self.devices:
                flags = device_flags(flags, len(self.devices))
            else:
                flags = backend.program_flags(flags, linalg)
            return memory.planned_flags(optimized, flags) + tuple(calls)
        return finish(backend.compiler_flags(**options)), [
            finish(f) for f in backend.fallback_flags(**options)]

    def compile_async(self, target_options: dict | None = None
                      ) -> concurrent.futures.Future:
        """:meth:`compile` in a background thread: returns at once with a
        ``concurrent.futures.Future`` whose ``result()`` is the Compiled (or raises the
        compile's error). IREE runs in ember's compile worker process, so the calling thread
        goes on tracing and running other programs meanwhile.

        Example:
            >>> future = ember.jit(f).lower(x).compile_async()
            >>> ...                               # serve other requests
            >>> future.result()(x)
        """
        return _BACKGROUND.submit(self.compile, target_options)

    def replan(self, plan_budget: int) -> None:
        """Forget the "optimized" and "linalg" stages; they are made again with
        ember-plan-memory planning under ``plan_budget`` bytes."""
        self.plan_budget = plan_budget
        for stage in STAGES[1:]:
            for table in (self._modules, self._text, self._steps):
                table.pop(stage, None)

    def memory_plan(self):
        """The memory planner's figures for the entry function (``ember.memory`` on it in the
        "optimized" stage), as a :class:`ember.passes.plan_memory.Plan`.

        Example:
            >>> plan = ember.jit(f, memory_budget="64MiB").lower(x).memory_plan()
            >>> plan.peak_bytes, plan.peak_op, plan.budget_missed
            (4194304, 'ember.dot_general at model.py:12', 0)
        """
        return memory.plan_of(self._stage("optimized"))


class Traced:
    """A traced program (``jitted.trace(*args)``): its ember IR and the shapes it takes and
    gives; ``lower()`` goes on to the :class:`Lowered`, as JAX's ``Traced``."""

    def __init__(self, lowered: Lowered):
        self._lowered = lowered
        self.fun_name = lowered.fun_name
        self.in_tree, self.in_avals = lowered.in_tree, lowered.in_avals
        self.out_tree, self.out_avals = lowered.out_tree, lowered.out_avals

    @property
    def args_info(self):
        """As :attr:`Lowered.args_info`."""
        return self._lowered.args_info

    @property
    def out_info(self):
        """As :attr:`Lowered.out_info`."""
        return self._lowered.out_info

    def as_text(self, *, debug_info: bool = False) -> str:
        """The program as traced, in the ember dialect."""
        return self._lowered.as_text("ember", debug_info=debug_info)

    def lower(self) -> Lowered:
        """The Lowered program (traced once: this is the program ``trace`` made)."""
        return self._lowered


def program_size(module: ir.Module) -> tuple[int, int]:
    """Bytes of the largest tensor of a linalg program and the loop iterations of its linalg
    ops in all (a contraction's M*N*K), to pick the driver."""
    return _largest_tensor(module), sum(_iterations(op) for op in walk(module.operation)
                                        if op.name.startswith("linalg."))


def _iterations(op) -> int:
    """Loop iterations of a linalg op: its loop ranges read through its indexing maps."""
    tensors = [v.type for v in list(op.operands) + list(op.results)]
    if "indexing_maps" in op.attributes:
        ranges = {}
        for t, m in zip(tensors, ir.ArrayAttr(op.attributes["indexing_maps"])):
            if isinstance(t, ir.RankedTensorType):
                for e, n in zip(ir.AffineMapAttr(m).value.results, t.shape):
                    if isinstance(e, ir.AffineDimExpr):
                        ranges[ir.AffineDimExpr(e).position] = n
        return int(np.prod(list(ranges.values()), dtype=np.int64))
    shapes = [ir.RankedTensorType(t).shape for t in tensors
              if isinstance(t, ir.RankedTensorType)]
    most = max((int(np.prod(s, dtype=np.int64)) for s in shapes), default=0)
    if "matmul" in op.name and len(shapes) >= 2:      # (..., M, K) @ (..., K, N)
        return int(np.prod(shapes[0], dtype=np.int64)) * shapes[1][-1]
    return most


def _largest_tensor(module: ir.Module) -> int:
    """Bytes of the largest tensor of the program."""
    largest = 0
    for op in walk(module.operation):
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    largest = max(largest, tensor_bytes(arg.type))
        for r in op.results:
            largest = max(largest, tensor_bytes(r.type))
    return largest


class Compiled:
    """A compiled program: call it with arguments of the lowered signature.

    ``vmfb`` is IREE's compiled module. A program compiled for a backend this machine has no
    device for is loaded on first use, which raises BackendUnavailableError.
    """

    def __init__(self, executable: Executable | None, lowered: Lowered, *, vmfb=None,
                 load=None):
        if executable is not None:
            self.executable = executable   # else __getattr__ loads it when first asked
        self.vmfb = executable.vmfb if vmfb is None else vmfb
        self._load = load
        self.lowered = lowered
        self.in_tree, self.in_avals = lowered.in_tree, lowered.in_avals
        self.out_tree, self.out_avals = lowered.out_tree, lowered.out_avals
        self.single_output = tree_util.treedef_is_strict_leaf(self.out_tree)
        self.donation = memory.donation_of(lowered._stage("linalg"))
        self.donated_leaves = memory.donated_leaves_of(lowered._stage("ember"))
        self._memory = None
        memory.report(lowered)

    def sharing(self, lowered: Lowered) -> Compiled:
        """This program's module, called with the signature of ``lowered``: another size of
        a dynamic program (``ember.frontend.dynamic``). It loads on the driver ``lowered``'s
        own program would (on the CPU: a small size on local-sync, whose calls cost less),
        once per driver."""
        device = get_backend(lowered.backend).runtime_device(
            lowered.device, *program_size(lowered._stage("linalg")))
        key = (device, getattr(device, "driver", None))    # (CPU devices equal by id)

        def load():
            loaded = self.__dict__.setdefault("_loaded", {})
            if key not in loaded:
                loaded.setdefault(key, Executable(self.vmfb, device))
            return loaded[key]
        shared = Compiled(None, lowered, vmfb=self.vmfb, load=load)
        if not shared.donated_leaves:
            shared.__dict__["runner"] = _tiered_runner(shared)
        return shared

    def memory_analysis(self) -> memory.MemoryAnalysis:
        """Bytes of arguments, outputs, aliased (donated) storage, temporaries and the peak:
        ember's plan beside IREE's own ``transient-memory-size`` (compiled once more, with
        IREE's statistics on, the first time this is called).

        Example:
            >>> c = ember.jit(f).lower(x).compile()
            >>> m = c.memory_analysis()
            >>> m.transient_size_in_bytes, m.iree_transient_size_in_bytes
            (5242880, 5242880)
        """
        if self._memory is None:
            self._memory = memory.analysis(self.lowered)
        return self._memory

    def __getattr__(self, name):
        if name == "executable" and self.__dict__.get("_load") is not None:
            self.executable = self._load()
            return self.executable
        raise AttributeError(name)

    def as_text(self, stage: str = "linalg") -> str:
        return self.lowered.as_text(stage)

    @property
    def args_info(self):
        """As :attr:`Lowered.args_info`."""
        return self.lowered.args_info

    @property
    def out_info(self):
        """As :attr:`Lowered.out_info`."""
        return self.lowered.out_info

    @functools.cached_property
    def _branches(self) -> bool:
        """Whether the program has branches (the runner's ``branches``)."""
        text = self.lowered.as_text("linalg")
        return "scf.if" in text or "scf.index_switch" in text

    @functools.cached_property
    def runner(self):
        """``runner(leaves)``: flat Arrays (the executable's runner, loaded on first use)."""
        # A branch may return an argument on some calls only; a loop's result is not one
        # unless on every call (the carries it updates start in copies: protect-arguments).
        if self.donated_leaves:
            return memory.donating_runner(self)
        return self.executable.runner(self.in_avals, self.out_avals, Array,
                                      branches=self._branches,
                                      in_devices=self.lowered.leaf_devices(len(self.in_avals)),
                                      out_devices=self.lowered.leaf_devices(
                                          len(self.out_avals)))

    def run_flat(self, leaves) -> list[Array]:
        """Run on flat argument leaves (already matching ``in_avals``); returns flat Arrays."""
        return self.runner(leaves)

    def __call__(self, *args, **kwargs):
        static = self.lowered.static_positions
        if static:             # as in JAX, a Compiled takes the arguments but the static ones
            args = list(args)
            for i in static:
                args.insert(i, None)
        leaves, tree = tree_util.tree_flatten((tuple(args), kwargs))
        if tree != self.in_tree:
            hint = (f"; leave out the static arguments (positions {list(static)}), they are "
                    "compiled in" if static else "")
            raise ArgumentError(f"{self.lowered.fun_name} was compiled for arguments "
                                f"{self.in_tree}, got {tree}{hint}")
        symbolic = self.lowered.symbolic
        got = [_leaf_aval(leaf, f"#{i}") for i, leaf in enumerate(leaves)]
        for i, (a, aval) in enumerate(zip(got, self.in_avals)):
            if (a.shape != aval.shape and not symbolic) or a.dtype != aval.dtype:
                raise ArgumentError(
                    f"{self.lowered.fun_name} was compiled for argument #{i} of type "
                    f"{aval.str_short()}, got {a.str_short()}")
        if symbolic:
            return tree_util.tree_unflatten(self.out_tree, self._run_symbolic(leaves, got))
        return tree_util.tree_unflatten(self.out_tree, self.run_flat(leaves))

    def _run_symbolic(self, leaves, avals) -> list[Array]:
        """Run a program of symbolic dimensions at the sizes of ``leaves`` (``avals``): its
        runner for those sizes (made once per sizes)."""
        program = self.lowered.symbolic
        try:
            sizes = bind_sizes([a.shape for a in avals], program.in_shapes, program.symbols,
                               [f"argument #{i}" for i in range(len(avals))])
        except ValueError as e:
            raise ArgumentError(f"{self.lowered.fun_name}: {e}") from None
        runners = self.__dict__.setdefault("_runners", {})
        key = tuple(sorted(sizes.items()))
        if key not in runners:
            outs = [a._replace(shape=program.out_shape(k, sizes))
                    for k, a in enumerate(self.out_avals)]
            runners[key] = self.executable.runner(avals, outs, Array, branches=self._branches)
        return runners[key](leaves)


# Calls of one size through a dynamic program after which that size is compiled on its own,
# in the background; its later calls run the static program (benchmarks.dynamic measures
# what that gains, docs/benchmarks.md).
HOT_CALLS = 100


def _tiered_runner(shared: Compiled):
    """``shared``'s runner (a size of a dynamic program), which has the size compiled
    statically in the background once it has run HOT_CALLS times, and then runs that."""
    state = [None, 0]       # the runner calls go to, calls so far

    def upgrade():
        try:
            static = shared.lowered.compile()
            state[0] = static.runner
        except EmberError:
            pass        # (the dynamic program goes on serving the size)

    def run(leaves):
        if state[0] is None:
            state[0] = Compiled.runner.func(shared)
        state[1] += 1
        if state[1] == HOT_CALLS:
            _BACKGROUND.submit(upgrade)
        return state[0](leaves)
    return run


def trace_flat(fun, fun_name: str, in_tree, in_avals, origins, *, module=None, name="main",
               public=True, transform="jit"):
    """Trace ``fun`` on abstract leaves into a new ``func.func`` ``name``; ``transform`` is
    what traces it, for error messages.

    Returns (module, trace, out_tree, out_tracers).
    """
    if module is None:
        module = tracing.new_module()
    trace = Trace(module, name, in_avals, origins, fun_name, public=public,
                  transform=transform)
    with trace:
        args, kwargs = tree_util.tree_unflatten(in_tree, trace.args)
        out = fun(*args, **kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        outs = []
        for i, leaf in enumerate(out_leaves):
            try:
                outs.append(trace.lift(leaf))
            except (UnsupportedDtypeError, TypeError, ValueError):
                raise ArgumentError(
                    f"{fun_name} returned a {type(leaf).__name__} at output leaf {i}; jitted "
                    "functions must return arrays, scalars or pytrees of them") from None
        trace.finish(outs)
    return module, trace, out_tree, outs


class JitFunction:
    """A function compiled on first call per signature. Made by :func:`jit`."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 backend=None, donate_argnames=(), memory_budget=None, fusion=None,
                 dynamic_shapes=None, dynamic_axes=None):
        if not callable(fun):
            raise TypeError(f"ember.jit needs a callable, got {type(fun).__name__}")
        self.fun = fun
        self.fun_name = getattr(fun, "__name__", type(fun).__name__)
        # None: the default backend at call time, or the device the Array arguments are on.
        self.backend = backend
        self.fusion = fusion
        if backend is not None:
            get_backend(backend)
        try:
            self._sig = inspect.signature(fun)
            params = list(self._sig.parameters.values())
        except (TypeError, ValueError):
            self._sig, params = None, []
        self._argnames = [p.name for p in params
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        static_argnums = _argnums(_as_tuple(static_argnums), "static_argnums", self.fun_name,
                                  self._sig, len(self._argnames))
        static_argnames = _as_tuple(static_argnames)
        nums = set(static_argnums)
        for n in static_argnames:
            if self._sig is not None and n not in self._sig.parameters and not any(
                    p.kind == p.VAR_KEYWORD for p in params):
                raise ValueError(f"static_argnames {n!r} is not a parameter of {self.fun_name}")
            if n in self._argnames:
                nums.add(self._argnames.index(n))
        names = set(static_argnames) | {self._argnames[i] for i in nums
                                        if i < len(self._argnames)}
        self.static_argnums = frozenset(nums)
        self.static_argnames = frozenset(names)
        # Static parameters left out of a call take their defaults (passed by name).
        self._static_defaults = {
            i: (self._argnames[i], params[i].default) for i in nums
            if i < len(self._argnames) and params[i].default is not params[i].empty}
        self.donate_argnums, self.donate_argnames = memory.donated_args(
            self.fun_name, self._sig, self._argnames,
            _argnums(_as_tuple(donate_argnums), "donate_argnums", self.fun_name, self._sig,
                     len(self._argnames), DonationError),
            _as_tuple(donate_argnames), self.static_argnums, self.static_argnames)
        self.memory_budget = None if memory_budget is None else \
            memory.parse_size(memory_budget, f"memory_budget of {self.fun_name}")
        # Compiled programs by signature; threads racing on a new one compile it once.
        self._cache = OnceCache()
        # None: ember.config.dynamic_shapes at each compile
        self.dynamic_shapes = dynamic_shapes
        self.dynamic_axes = _dynamic_axes(dynamic_axes, self.fun_name, dynamic_shapes)
        self._shapes = DynamicShapes()
        # The last call's signature when its arguments were Arrays only, positional:
        # (backend, avals, runner, single output, out_tree); such a call skips the key.
        self._last: tuple | None = None
        _ALL_JITS.add(self)
        functools.update_wrapper(self, fun, updated=())
        # IREE's compiler starts in a child process while the program goes on (its data,
        # other functions): the first compile then finds it ready (docs/benchmarks.md).
        start_worker()

    def __repr__(self):
        return f"<ember.jit of {self.fun_name}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    # -- argument handling ------------------------------------------------------------------

    def _split(self, args, kwargs):
        if self.static_argnums:
            static = ()
            for i in sorted(self.static_argnums):
                if i < len(args):
                    static += ((i, args[i]),)
                elif i < len(self._argnames) and self._argnames[i] in kwargs:
                    continue
                elif i in self._static_defaults:
                    static += (self._static_defaults[i],)
                else:
                    raise ArgumentError(f"{self.fun_name}: static argument {i} was not given")
            dyn_args = tuple(None if i in self.static_argnums else a for i, a in enumerate(args))
        else:
            static, dyn_args = (), args
        if kwargs and self.static_argnames:
            static += tuple(sorted((k, v) for k, v in kwargs.items()
                                   if k in self.static_argnames))
            kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return static, dyn_args, kwargs

    def _signature(self, args, kwargs):
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        self._check_static(static)
        avals = tuple(self._aval(x, tree, i) for i, x in enumerate(leaves))
        # Static values of different types may compare equal (1, 1.0, True, np.int32(1)) but
        # trace differently: the key has their types too, as JAX's has.
        types = tuple(type(v) for _, v in static)
        return (tree, avals, static, types), leaves, tree, static

    def _check_static(self, static):
        for k, v in static:
            try:
                hash(v)
            except TypeError:
                name = self._argnames[k] if isinstance(k, int) and k < len(self._argnames) else k
                raise ArgumentError(
                    f"static argument {name!r} of {self.fun_name} has unhashable type "
                    f"{type(v).__name__}; static arguments must be hashable (use a tuple "
                    "instead of a list, or make the argument non-static)") from None

    def _aval(self, leaf, tree, i):
        return _leaf_aval(leaf, lambda: self._leaf_name(tree, i))

    def _leaf_name(self, tree, i):
        return self._leaf_names(tree)[i]

    def _leaf_names(self, tree) -> list[str]:
        """Every leaf's name, from one flattening (naming each leaf by flattening the tree
        again cost the square of the leaf count: 5 s of tracing at 1,000 arguments)."""
        return [_path_str(self.fun_name, self._argnames, p) for p in _leaf_paths(tree)]

    # -- calling ----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if tracing._TRACES.items:     # (.items: this thread's list, without a call)
            return self._call_traced(args, kwargs)
        backend = self.backend or config._values["default_backend"]
        last = self._last
        if last is not None and not kwargs and last[0] == backend and len(args) == len(last[1]):
            for x, aval in zip(args, last[1]):
                if type(x) is not Array or (x.aval is not aval and x.aval != aval):
                    break
            else:   # the same signature as the last call: no flattening, no key
                try:
                    outs = last[2](args)
                except DeviceMismatchError:
                    pass    # the general path compiles for the Arrays' device
                else:
                    return outs[0] if last[3] else tree_util.tree_unflatten(last[4], outs)
        if not kwargs and not self.static_argnums:
            # The hot path: positional array arguments, keyed without the kwargs dict.
            leaves, tree = tree_util.tree_flatten(args)
            key = (tree, *[x.aval if type(x) is Array else _fast_key(x) for x in leaves])
            if backend != "cpu":
                key = (backend, key)
            compiled = self._cache.get(key)
            if compiled is None:
                compiled = self._cache.get_or_build(
                    key, lambda: self._compile(args, kwargs, backend))
        else:
            key, leaves, tree, static = self._signature(args, kwargs)
            compiled = self._cached(key, leaves, tree, static, args, backend)
        # (before the call: a donated Array is not one afterwards)
        arrays = not kwargs and not self.static_argnums and len(leaves) == len(args) and \
            all(type(x) is Array for x in args)
        try:
            outs = compiled.runner(leaves)
        except DeviceMismatchError as e:
            if self.backend is not None:
                raise
            # No backend asked for: run where the Array arguments live.
            compiled = self._compile_on(e.device, leaves, args, kwargs)
            outs = compiled.runner(leaves)
        else:
            if arrays:
                self._last = (backend, tuple(x.aval for x in args), compiled.runner,
                              compiled.single_output, compiled.out_tree)
        return outs[0] if compiled.single_output else \
            tree_util.tree_unflatten(compiled.out_tree, outs)

    def _compile(self, args, kwargs, backend) -> Compiled:
        key, leaves, tree, static = self._signature(args, kwargs)
        return self._cached(key, leaves, tree, static, args, backend)

    def _cached(self, key, leaves, tree, static, args, backend) -> Compiled:
        if backend != "cpu":
            key = (backend, key)
        return self._cache.get_or_build(
            key, lambda: self._build(leaves, tree, static, args, backend))

    def _compile_on(self, device, leaves, args, kwargs) -> Compiled:
        """The program for arguments whose Arrays all live on ``device``."""
        device_of_arrays(leaves, self.fun_name)     # raises for several devices
        key, leaves, tree, static = self._signature(args, kwargs)
        key = ("device", device.space, key)
        return self._cache.get_or_build(key, lambda: self._build(
            leaves, tree, static, args, device.platform, device))

    def _build(self, leaves, tree, static, args, backend, device=None) -> Compiled:
        """The Compiled of a new signature: compiled for it, or, when the function was
        compiled for other sizes of these arguments before, the dynamic program of that
        family of signatures (``ember.frontend.dynamic``)."""
        lowered = self._lower(leaves, tree, static, args, backend, device)
        dynamic = self.dynamic_shapes if self.dynamic_shapes is not None else \
            bool(self.dynamic_axes) or config.dynamic_shapes
        if not dynamic or memory.budget_of(lowered) is not None:
            return lowered.compile()     # (a budget is judged on IREE's figure for one size)
        family = (backend, device and device.space, tree, static,
                  tuple(type(v) for _, v in static),
                  tuple((a.ndim, a.dtype, a.weak_type) for a in lowered.in_avals))
        second = None
        axes = self._leaf_dynamic_axes(tree, lowered.in_avals) if self.dynamic_axes else []
        if any(axes):
            # The named axes at twice their sizes (so that blocks of a tree reduction stay
            # whole): the other program the first call's dynamic one is generalized with.
            wider = [ShapeDtypeStruct(tuple(2 * n if i in ax else n
                                            for i, n in enumerate(a.shape)), a.dtype,
                                      a.weak_type) for a, ax in zip(lowered.in_avals, axes)]
            second = lambda: self._lower(wider, tree, static, args, backend,   # noqa: E731
                                         device)
        return self._shapes.compile(family, lowered, second)

    def _leaf_dynamic_axes(self, tree, avals) -> list[set[int]]:
        """The axes ``dynamic_axes`` names of each argument leaf (its argument's entry)."""
        out = []
        for path, aval in zip(_leaf_paths(tree), avals):
            top = path[1]
            pos = getattr(top, "idx", None)
            name = self._argnames[pos] if pos is not None and pos < len(self._argnames) \
                else getattr(top, "key", None)
            axes = self.dynamic_axes.get(name, self.dynamic_axes.get(pos, ()))
            for ax in axes:
                if not -aval.ndim <= ax < aval.ndim:
                    raise ArgumentError(
                        f"dynamic_axes of {self.fun_name}: argument {name!r} has an array of "
                        f"{aval.ndim} dimensions, which has no axis {ax}")
            out.append({ax % aval.ndim for ax in axes})
        return out

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace for these arguments (arrays or ShapeDtypeStructs) without compiling; the
        Lowered is for the jit's backend (by default ``ember.default_backend()``).

        ShapeDtypeStructs may name dimensions (``ember.symbolic_shape``): the program is
        then one IREE program with those dimensions dynamic, and its Compiled takes every
        size of them (traced at three sizes and checked to be one program:
        ``ember.frontend.dynamic.lower_symbolic``; else SymbolicShapeError).

        Example:
            >>> spec = ember.ShapeDtypeStruct(ember.symbolic_shape("b, 64"), np.float32)
            >>> c = ember.jit(f).lower(spec).compile()
            >>> c(np.ones((3, 64), np.float32)), c(np.ones((500, 64), np.float32))
        """
        if has_symbolic((args, kwargs)):
            from ember.frontend.dynamic import lower_symbolic
            if self.memory_budget is not None or self.donate_argnums or \
                    self.donate_argnames:
                # (IREE's figure is per size; a donated buffer's Array would live on)
                raise ArgumentError(f"ember.jit({self.fun_name}): a memory budget or donation "
                                    "is for fixed sizes: lower it without symbolic "
                                    "dimensions")
            return lower_symbolic(self, args, kwargs,
                                  f"ember.jit({self.fun_name}).lower").lowered
        key, leaves, tree, static = self._signature(args, kwargs)
        return self._lower(leaves, tree, static, args,
                           self.backend or config._values["default_backend"])

    def trace(self, *args, **kwargs) -> Traced:
        """Trace for these arguments (arrays or ShapeDtypeStructs), as ``jax.jit(f).trace``:
        the :class:`Traced` program shows its ember IR and lowers without tracing again.

        Example:
            >>> t = ember.jit(f).trace(x)
            >>> t.out_info, t.lower().compile()(x)
        """
        return Traced(self.lower(*args, **kwargs))

    def warm(self, *args, **kwargs) -> concurrent.futures.Future:
        """Compile this function for these arguments (arrays or ShapeDtypeStructs) in a
        background thread, into the function's own cache: a later call with arguments of the
        same shapes and dtypes runs without compiling (and waits for a compile still in
        flight rather than starting another). Returns a ``concurrent.futures.Future`` of the
        Compiled, so a server can warm the shapes it expects without blocking.

        Example:
            >>> f = ember.jit(model)
            >>> warming = [f.warm(ember.ShapeDtypeStruct((n, 784), "float32"))
            ...            for n in (1, 8, 64)]
            >>> f(batch_of_8)                      # compiled by then, or waits for it
        """
        backend = self.backend or config._values["default_backend"]
        return _BACKGROUND.submit(self._compile, args, kwargs, backend)

    def clear_cache(self) -> None:
        """Forget this function's compiled executables (the on-disk compile cache stays)."""
        self._cache.clear()
        self._shapes.clear()
        self._last = None

    def eval_shape(self, *args, **kwargs):
        """The shapes and dtypes this function returns for these arguments (arrays or
        ShapeDtypeStructs), a pytree of ShapeDtypeStructs: traced, never compiled, as
        ``jax.jit(f).eval_shape``."""
        (_, avals, _, _), leaves, tree, static = self._signature(args, kwargs)
        names = [f"argument {name}" for name in self._leaf_names(tree)]
        _, _, out_tree, outs = trace_flat(self._with_static(static), self.fun_name, tree,
                                          list(avals), names)
        return tree_util.tree_unflatten(out_tree, [
            ShapeDtypeStruct(o.shape, o.dtype, o.aval.weak_type) for o in outs])

    def _lower(self, leaves, tree, static, args, backend, device=None) -> Lowered:
        self._check_static(static)
        if len(args) > len(self._argnames) and self._sig is not None and not any(
                p.kind == p.VAR_POSITIONAL for p in self._sig.parameters.values()):
            raise ArgumentError(f"{self.fun_name} takes {len(self._argnames)} positional "
                                f"arguments but {len(args)} were given")
        avals = [self._aval(x, tree, i) for i, x in enumerate(leaves)]
        names = [f"argument {name}" for name in self._leaf_names(tree)]
        module, _, out_tree, outs = trace_flat(self._with_static(static), self.fun_name, tree,
                                               avals, names)
        lowered = Lowered(module, self.fun_name, tree, avals, out_tree, [o.aval for o in outs],
                          backend, device)
        lowered.fusion = self.fusion
        lowered.static_positions = tuple(sorted(
            k for k, _ in static if isinstance(k, int) and k < len(args)))
        memory.annotate(self, lowered, leaves, tree, names)
        return lowered

    def _with_static(self, static):
        fun = self.fun

        def call(*dyn_args, **dyn_kwargs):
            args = list(dyn_args)
            kwargs = dict(dyn_kwargs)
            for k, v in static:
                if isinstance(k, int):
                    args[k] = v
                else:
                    kwargs[k] = v
            return fun(*args, **kwargs)
        return call

    def _call_traced(self, args, kwargs):
        """A jitted function called while tracing: trace it into its own func, emit a call."""
        outer = tracing.current_trace()
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        self._check_static(static)
        leaves, tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        avals = [x.aval if isinstance(x, Tracer) else self._aval(x, tree, i)
                 for i, x in enumerate(leaves)]
        names = [f"argument {name}" for name in self._leaf_names(tree)]
        name = _unique_symbol(outer.module, self.fun_name)
        _, inner, out_tree, outs = trace_flat(self._with_static(static), self.fun_name, tree,
                                              avals, names, module=outer.module, name=name,
                                              public=False)
        operands = list(leaves) + [o for o, _ in inner.captured]
        results = _emit_call(name, operands, [o.aval for o in outs])
        return tree_util.tree_unflatten(out_tree, results)


# The threads that compile in the background (started by the first submit, not here): one
# more than the compile workers that may compile at once (config.compile_workers), so that
# one traces and runs ember's passes while the others wait for IREE.
_BACKGROUND = concurrent.futures.ThreadPoolExecutor(
    max_workers=config.compile_workers + 1, thread_name_prefix="ember-compile")


def _emit_call(callee: str, operands, out_avals):
    """``ember.call @callee``: its result types come from the traced callee, not a rule."""
    from ember._mlir import tensor_type

    trace = tracing.current_trace()
    args = [trace.lift(x) for x in operands]
    loc = tracing.user_location(trace.module.context)
    with trace.module.context, loc, ir.InsertionPoint(trace.block):
        op = ir.Operation.create(
            "ember.call", results=[tensor_type(a.shape, a.dtype) for a in out_avals],
            operands=[a.value for a in args],
            attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
    origin = frozenset().union(*(a.origin for a in args)) if args else frozenset()
    return [Tracer(trace, r, a, origin) for r, a in zip(op.results, out_avals)]


def _unique_symbol(module: ir.Module, base: str) -> str:
    table = ir.SymbolTable(module.operation)
    name, i = base if base.isidentifier() else "fn", 0
    candidate = name
    while candidate in table:
        i += 1
        candidate = f"{name}_{i}"
    return candidate


def _dynamic_axes(spec, fun_name, dynamic_shapes) -> dict:
    """``jit``'s ``dynamic_axes`` as {argument name or position: tuple of axes}."""
    if spec is None:
        return {}
    if dynamic_shapes is False:
        raise ValueError(f"ember.jit of {fun_name}: dynamic_axes asks for dynamic shapes, "
                         "dynamic_shapes=False for none")
    if not isinstance(spec, dict):
        raise TypeError(f"dynamic_axes of {fun_name} must be a dict from argument names (or "
                        f"positions) to an axis or a tuple of axes, got {spec!r}")
    out = {}
    for k, axes in spec.items():
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            raise TypeError(f"dynamic_axes of {fun_name}: the axes of {k!r} must be ints, got "
                            f"{spec[k]!r}")
        out[k] = axes
    return out


def _fast_key(x):
    """The cache-key entry of an argument leaf; cheap for the common cases."""
    t = type(x)
    if t is Array:
        return x.aval
    if t is np.ndarray:
        dtype = _CANONICAL.get(x.dtype)
        if dtype is not None:
            return ShapedArray(x.shape, dtype, False)
    try:
        return _leaf_aval(x, "?")
    except ArgumentError:
        return None  # a cache miss: the slow path reports it with the argument's name


class _Canonical(dict):
    """dtype -> canonical dtype, filled lazily (cleared with the caches when x64 changes)."""

    def get(self, dtype):
        try:
            return self[dtype]
        except KeyError:
            from ember.dtypes import canonicalize
            try:
                out = self[dtype] = canonicalize(dtype, warn=False)
            except UnsupportedDtypeError:
                return None
            return out


_CANONICAL = _Canonical()


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, int | str):
        return (x,)
    return tuple(x)


def _argnums(nums, what: str, fun_name: str, sig, positional: int, error=ArgumentError):
    """``static_argnums``/``donate_argnums`` checked against the signature, negative ones
    counted from the last positional parameter (as JAX does)."""
    varargs = sig is None or any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
    out = []
    for n in nums:
        if not isinstance(n, int | np.integer) or isinstance(n, bool):
            raise error(f"{what} of {fun_name} must be ints, got {n!r}")
        n = int(n)
        if n < 0 and not varargs:
            n += positional
        if n < 0 or not varargs and n >= positional:
            raise error(f"{fun_name} has {what}={tuple(nums)}, but takes {positional} "
                        f"positional argument{'s' if positional != 1 else ''}")
        out.append(n)
    return tuple(out)


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes ``fun`` returns for these arguments, as a pytree of
    ShapeDtypeStructs, found by tracing ``fun`` without compiling or running it (as
    ``jax.eval_shape``). Arguments are arrays, scalars or ShapeDtypeStructs.

    Example:
        >>> out = eval_shape(lambda x: x @ x.T, ShapeDtypeStruct((3, 5), np.float32))
        >>> out.shape, out.dtype
        ((3, 3), dtype('float32'))
    """
    return JitFunction(fun).eval_shape(*args, **kwargs)


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None,
        donate_argnames=(), memory_budget=None, fusion=None, in_shardings=None,
        out_shardings=None, dynamic_shapes=None, dynamic_axes=None):
    """Compile ``fun`` with IREE on first call for each signature of its arguments.

    Arguments and results are pytrees of arrays. Static arguments are Python values that are
    part of the cache key (and must be hashable). ``fusion=False`` leaves out the
    ``ember-fuse`` pass (default: on, unless the environment sets ``EMBER_NO_FUSION=1``).

    ``donate_argnums``/``donate_argnames``: arguments whose buffers results may reuse (a
    result of the same shape and dtype is written into the donated storage); a donated
    Array is deleted by the call. ``memory_budget`` (bytes, or text like ``"256MiB"``): the
    memory planner recomputes cheap values to keep the peak under it (default:
    ``EMBER_MEMORY_BUDGET``).

    ``in_shardings``/``out_shardings`` (``ember.sharding.NamedSharding``s over a mesh of one
    axis, or pytree prefixes of them, as JAX's): ``fun``, written for the whole arrays, runs
    over the mesh's devices with each argument split as its sharding says (None: whole on
    every device); ember-spmd partitions the program (data parallelism: a batch split along
    its rows, the weights whole), adding the collectives it needs. Results are
    ``ShardedArray``s, split as ``out_shardings`` say (default: whole on every device).

    ``dynamic_shapes``: called with other sizes of the same arguments, the function compiles
    once more, with those sizes dynamic, and that program serves every later size whose
    program is the same (checked by tracing; ``ember.frontend.dynamic``); False compiles
    every size on its own. None (the default): ``ember.config.dynamic_shapes``
    (``EMBER_NO_DYNAMIC_SHAPES=1`` turns it off). ``dynamic_axes`` (``{"x": 0}``: argument
    name or position to an axis or a tuple of axes, for every array in that argument) makes
    the first call compile the dynamic program already, with those axes dynamic (a warning
    says when the program does not generalize, and each size then compiles on its own).

    ``backend`` ("cpu", "vulkan", "cuda") fixes
    the target: Arrays from another device are then an error (DeviceMismatchError). Without
    it the program runs where its Array arguments live, else on ``ember.default_backend()``
    (``EMBER_BACKEND``, else the CPU); NumPy arguments are uploaded to that device.

    Example:
        >>> @ember.jit
        ... def f(x, y):
        ...     return x * 2 + y
        >>> f(np.ones(3, np.float32), 1.0)
        Array([3., 3., 3.], dtype=float32)
        >>> g = ember.jit(lambda x, n: x ** n, static_argnames="n")
        >>> step = ember.jit(lambda p, g: p - 0.1 * g, donate_argnums=0)
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 backend=backend, donate_argnames=donate_argnames,
                                 memory_budget=memory_budget, fusion=fusion,
                                 in_shardings=in_shardings, out_shardings=out_shardings,
                                 dynamic_shapes=dynamic_shapes, dynamic_axes=dynamic_axes)
    if in_shardings is not None or out_shardings is not None:
        if any(_as_tuple(a) for a in (static_argnums, static_argnames, donate_argnums,
                                      donate_argnames)) or memory_budget is not None:
            raise NotImplementedError("ember.jit with in_shardings/out_shardings takes no "
                                      "static, donated arguments or memory budget yet")
        return sharded_jit(fun, in_shardings, out_shardings)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, backend,
                       donate_argnames=donate_argnames, memory_budget=memory_budget,
                       fusion=fusion, dynamic_shapes=dynamic_shapes,
                       dynamic_axes=dynamic_axes)


__all__ = ["jit", "JitFunction", "Traced", "Lowered", "Compiled", "clear_caches", "EmberError"]
