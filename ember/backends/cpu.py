"""The CPU backend: IREE's ``llvm-cpu`` target on the ``local-sync`` / ``local-task`` drivers."""

from __future__ import annotations

NAME = "cpu"

# Programs whose largest tensor is below this run on local-sync: waking local-task's worker
# threads costs tens of microseconds, more than such a program computes.
SMALL_PROGRAM_BYTES = 256 * 1024


def compiler_flags(cpu: str = "host") -> tuple[str, ...]:
    return ("--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={cpu}",
            # Measured here (benchmarks/): O3 with data tiling ran the MLP benchmark 3x and
            # softmax 1.3x faster than IREE's defaults, at a similar compile time.
            "--iree-opt-level=O3",
            "--iree-opt-data-tiling=true",
            # IREE demotes 64-bit types by default; ember's dtypes are already canonical.
            "--iree-input-demote-f64-to-f32=false",
            "--iree-input-demote-i64-to-i32=false")


def driver_for(largest_tensor_bytes: int) -> str:
    return "local-sync" if largest_tensor_bytes < SMALL_PROGRAM_BYTES else "local-task"



def fallback_flags(cpu: str = "host") -> tuple[tuple[str, ...], ...]:
    """Flag sets to try in turn when IREE fails with compiler_flags(): O3 together with data
    tiling mis-compiles some large fused programs in IREE 3.13 ("linalg.unpack ... restricted
    to workgroup distribution"); data tiling alone, then neither, compile them."""
    full = compiler_flags(cpu)
    return (tuple(f for f in full if f != "--iree-opt-level=O3"),
            tuple(f for f in full if f not in ("--iree-opt-level=O3",
                                               "--iree-opt-data-tiling=true")))
