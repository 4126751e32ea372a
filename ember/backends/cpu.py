"""The CPU backend: IREE's ``llvm-cpu`` target on the ``local-sync`` / ``local-task`` drivers."""

from __future__ import annotations

import functools

import iree.runtime as rt

from ember.backends.runtime import Device
from ember.config import config

NAME = "cpu"
OPTIONS = {"cpu": "cpu_target", "features": "cpu_features"}
INSTALL_HINT = "The CPU drivers are part of iree-base-runtime: reinstall it."
# ember's fusions reach IREE as flow.dispatch.region ops (see ember.dialects.fusion).
DISPATCH_REGIONS = True
# max_bindings: IREE's HAL module refuses to load a dispatch binding more than 32 buffers
# ("binding count 34 > 32", IREE_HAL_MODULE_MAX_DESCRIPTOR_BINDING_COUNT), on every target.
TRAITS = {"float64": True, "exact_division": True, "outer_reductions": True,
          "exact_rounding": True, "loop_chunks": True, "max_bindings": 32}

# Programs whose largest tensor is below this, or whose linalg ops make fewer loop iterations
# than that in all, run on local-sync: waking local-task's worker threads costs tens of
# microseconds, more than such a program computes. (Measured on 2 cores: a 256x512
# distance reduction, 131k iterations, ran in 37 us on local-sync and 60 us on local-task;
# a layernorm of that size, 400k, as fast on either; a 256x512x512 matmul 1.7x slower on
# local-sync.)
SMALL_PROGRAM_BYTES = 256 * 1024
SMALL_PROGRAM_ITERATIONS = 512 * 1024


class CpuDevice(Device):
    """The host CPU. Programs run on ``local-task`` (a thread pool) or, when small,
    ``local-sync`` (the calling thread); both are ``CpuDevice(0)`` and share host memory.

    Example:
        >>> ember.devices("cpu")
        [CpuDevice(0)]
    """

    platform = "cpu"

    def __repr__(self):
        return f"CpuDevice({self.id})"


def compiler_flags(cpu: str = "host", features: str | None = None) -> tuple[str, ...]:
    """IREE flags for the CPU: ``cpu`` is an LLVM CPU name ("host": this machine's),
    ``features`` LLVM's feature string (e.g. "+avx2,+fma"), by default the CPU's own.

    Example:
        >>> compiler_flags(cpu="znver3")[2]
        '--iree-llvmcpu-target-cpu=znver3'
    """
    flags = ("--iree-hal-target-device=local",
             "--iree-hal-local-target-device-backends=llvm-cpu",
             f"--iree-llvmcpu-target-cpu={cpu}",
             # Measured here (benchmarks/): O3 with data tiling ran the MLP benchmark 3x and
             # softmax 1.3x faster than IREE's defaults, at a similar compile time.
             "--iree-opt-level=O3",
             # O3's aggressive fusion mis-compiles sibling column reductions when one feeds
             # the other (sum, mean and var of x along axis 0 together: the sum came out 5x
             # for 5 rows; IREE 3.13); ember's own fusion already forms the dispatches.
             "--iree-dispatch-creation-enable-aggressive-fusion=false",
             "--iree-opt-data-tiling=true",
             # IREE demotes 64-bit types by default; ember's dtypes are already canonical.
             "--iree-input-demote-f64-to-f32=false",
             "--iree-input-demote-i64-to-i32=false")
    if features:
        flags += (f"--iree-llvmcpu-target-cpu-features={features}",)
    if cpu != "host" or features:
        from ember.backends.compiler import check_target
        check_target(flags, f"the CPU {cpu!r}" + (f" with features {features!r}" if features
                                                   else ""))
    return flags


def fallback_flags(cpu: str = "host", features: str | None = None
                   ) -> tuple[tuple[str, ...], ...]:
    """Flag sets to try in turn when IREE fails with compiler_flags(). IREE 3.13 fails some
    programs with O3 and data tiling that starts at dispatch creation: a reduction's
    elementwise epilogue with two results packed for two matmuls ("large vector sizes", a
    layer norm's backward pass recomputed under dots_saveable), and some large fused
    programs ("linalg.unpack ... restricted to workgroup distribution"). Data tiling from
    global optimization compiles the first (at about half the time of a module without
    data tiling, docs/benchmarks.md); data tiling without O3, then neither, the others."""
    full = compiler_flags(cpu, features)
    return (tuple("--iree-global-opt-data-tiling=true" if f == "--iree-opt-data-tiling=true"
                  else f for f in full),
            tuple(f for f in full if f != "--iree-opt-level=O3"),
            tuple(f for f in full if f not in ("--iree-opt-level=O3",
                                               "--iree-opt-data-tiling=true")))


_CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat",
                 "linalg.generic")


def program_flags(flags, module) -> tuple[str, ...]:
    """``flags`` for this program (a linalg module): a program whose contractions read large
    constants (``CONSTANT_PACKED_AT_LOAD_BYTES``, which ember's memory model knows) gets data
    tiling from IREE's global-optimization phase, which packs those constants once, when the
    module loads (IREE's hoisting of constant expressions), where the default path (dispatch
    creation) packs them on every call; programs without such constants keep the default
    path, whose packed copies of arguments were smaller (the figures: docs/benchmarks.md,
    ``benchmarks/memory.py``'s captured_weights); so does a program with complex or boolean
    values beside a product, which the default path fails (``_unpackable_beside_product``).
    A program with a loop kernel (a loop in a dispatch region: ``ember-loop-kernels``) gets
    LLVM's loop vectorizer, which IREE leaves off: the kernel's step is scalar loops over
    its values' elements, which IREE's own vectorization does not see
    (``benchmarks/small_loops.py``).

    Example:
        >>> program_flags(compiler_flags(), ember.jit(lambda x: x @ W).lower(x).compiler_ir())
        (..., '--iree-global-opt-data-tiling=true', ...)
    """
    flags = tuple(flags)
    if loop_kernels(module):
        flags += tuple(f for f in LOOP_KERNEL_FLAGS if f not in flags)
    if "--iree-opt-data-tiling=true" not in flags or not (
            _reads_large_constants(module) or _unpackable_beside_product(module)):
        return flags
    return tuple("--iree-global-opt-data-tiling=true" if f == "--iree-opt-data-tiling=true"
                 else f for f in flags)


LOOP_KERNEL_FLAGS = ("--iree-llvmcpu-loop-vectorization",)


def loop_kernels(module) -> int:
    """How many loops of the linalg ``module`` run inside a dispatch region (kernels)."""
    from ember._mlir import walk
    return sum(op.name == "flow.dispatch.region" and any(
        inner.name in ("scf.for", "scf.while") for inner in walk(op))
        for op in walk(module.operation))


def _contraction(op) -> bool:
    return op.name in _CONTRACTIONS and (
        op.name != "linalg.generic" or "reduction" in str(op.attributes["iterator_types"]))


def _reads_large_constants(module) -> bool:
    """Whether a contraction of the linalg ``module`` reads a large constant, or a value
    computed from constants alone (a transposed weight), which IREE hoists likewise."""
    # (imported here: the runtime alone, without the compiler, imports this module)
    from ember._mlir import ir, walk
    from ember.passes.liveness import tensor_bytes
    from ember.passes.plan_memory import CONSTANT_PACKED_AT_LOAD_BYTES

    def constant(v, depth=0) -> bool:
        if not isinstance(v, ir.OpResult) or depth > 8:
            return False
        owner = v.owner.operation
        if owner.name == "arith.constant":
            return True
        return owner.name.startswith(("linalg.", "tensor.")) and all(
            constant(x, depth + 1) or not isinstance(x.type, ir.RankedTensorType)
            for x in owner.operands)

    for op in walk(module.operation):
        if not _contraction(op):
            continue
        if any(tensor_bytes(v.type) >= CONSTANT_PACKED_AT_LOAD_BYTES and constant(v)
               for v in op.operands[:-1]):
            return True
    return False


def _unpackable_beside_product(module) -> bool:
    """Whether an op of the linalg ``module`` that reads a contraction's result also reads or
    makes values of a type IREE 3.13's data tiling cannot pack: complex (a complex product
    is real products combined by an elementwise op) or boolean (a mask, as the constant
    off-diagonal one of eigh's derivative). Data tiling from dispatch creation carries the
    product's packed layout into that op and fails on those ("requires valid padding vector
    elemental type", a crash with IREE's verifier off; "failed to legalize unresolved target
    materialization" of an i8 tensor); data tiling from global optimization compiles it."""
    from ember._mlir import ir, walk

    def unpackable(v) -> bool:
        if not isinstance(v.type, ir.RankedTensorType):
            return False
        t = ir.RankedTensorType(v.type).element_type
        return isinstance(t, ir.ComplexType) or (isinstance(t, ir.IntegerType) and t.width == 1)

    for op in walk(module.operation):
        if op.name.startswith("linalg.") and not _contraction(op) and any(
                isinstance(v, ir.OpResult) and _contraction(v.owner) for v in op.operands) \
                and any(unpackable(v) for v in [*op.operands, *op.results]):
            return True
    return False


def driver_for(largest_tensor_bytes: int, iterations: int | None = None) -> str:
    """"local-sync" for a small program (see SMALL_PROGRAM_BYTES), else "local-task";
    ``iterations``: the loop iterations of its linalg ops in all, when known."""
    small = largest_tensor_bytes < SMALL_PROGRAM_BYTES or (
        iterations is not None and iterations < SMALL_PROGRAM_ITERATIONS)
    return "local-sync" if small else "local-task"


@functools.cache
def device_for_driver(driver: str) -> CpuDevice:
    return CpuDevice(driver, 0)


@functools.cache
def _more(index: int) -> CpuDevice:
    """CPU device ``index`` > 0 (``ember.config.cpu_devices``): another local-task HAL device,
    with buffers of its own, on the host's worker threads."""
    return CpuDevice("local-task", index,
                     create=lambda: rt.get_driver("local-task").create_device(0))


def devices() -> list[CpuDevice]:
    return [device_for_driver("local-task")] + [_more(i) for i in range(1, config.cpu_devices)]


def device(index: int = 0) -> CpuDevice:
    if not 0 <= index < config.cpu_devices:
        from ember.backends._drivers import unavailable
        raise unavailable(NAME, f"there are {config.cpu_devices} CPU devices (set "
                          "EMBER_CPU_DEVICES or ember.config.update('cpu_devices', n) for "
                          "more)", "", index)
    return devices()[index]


def fenced_calls(largest_tensor_bytes: int, iterations: int | None = None) -> bool:
    """Whether such a program is compiled for IREE's asynchronous calls
    (``runtime.FENCED_CALLS_FLAG``): on local-task, whose workers a synchronous call's
    spinning wait slows; local-sync runs a call on the calling thread, which a fence would
    only cost (0.4 us of a 2.5 us call)."""
    return driver_for(largest_tensor_bytes, iterations) == "local-task"


def runtime_device(dev: CpuDevice | None, largest_tensor_bytes: int,
                   iterations: int | None = None) -> CpuDevice:
    """Small programs load on local-sync, others on local-task (the same CpuDevice(0));
    a program for another CPU device on that device."""
    if dev is not None and dev.id != 0:
        return dev
    return device_for_driver(driver_for(largest_tensor_bytes, iterations))


def unsupported(**options) -> dict[str, str]:
    """dtype name -> why it is refused: the CPU runs every ember dtype."""
    return {}


UNSUPPORTED_OPS: dict[tuple[str, str], str] = {}


def unsupported_ops(**options) -> dict[tuple[str, str], str]:
    """(ember op, operand dtype name) -> why it is refused."""
    return UNSUPPORTED_OPS
