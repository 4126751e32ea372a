"""Compilation targets and their devices. Each backend is one module with the same interface:

- ``NAME``; ``OPTIONS`` (target option -> the ``ember.config`` key of its default);
  ``INSTALL_HINT`` (what to install when its runtime driver is missing);
  ``DISPATCH_REGIONS`` (whether its codegen takes ember's fusions as IREE dispatch regions);
  ``TRAITS`` (its arithmetic: ``float64``, whether every target of it computes in float64,
  which the lowering then uses for precision in some float32 functions; ``exact_division``,
  whether its signed integer division is exact at the type's minimum; ``outer_reductions``,
  whether a reduction along leading axes may be fused with its consumers;
  ``exact_rounding``, whether float arithmetic is rounded as written, not reassociated;
  ``max_bindings``, the most buffers one dispatch may bind, which IREE's runtime checks when
  it loads a module and its compiler does not);
- ``compiler_flags(**options) -> tuple[str, ...]`` (IREE flags for the target; target
  options are validated there, before IREE sees them) and ``fallback_flags(**options)``
  (whole flag sets to retry with when IREE fails); ``program_flags(flags, linalg_module)``
  (the flags as one program asks, e.g. the CPU's data tiling for captured weights);
- ``unsupported(**options)`` (dtype name -> why the target cannot run it),
  ``unsupported_ops(**options)`` ((ember op, operand dtype) -> why) and, optionally,
  ``unsupported_values(**options)`` (None, or a rule ``(itemsize, nbytes) -> why or None``
  for arrays the target cannot hold in a buffer), read by :mod:`ember.backends.legality`
  before IREE sees the program;
- ``devices()`` (this machine's devices, ``[]`` without a driver), ``device(id)`` (one, or a
  BackendUnavailableError saying what to install) and ``runtime_device(device,
  largest_tensor_bytes, iterations)`` (which HAL device loads a program);
- ``fenced_calls(largest_tensor_bytes, iterations)`` (whether ``ember.jit`` compiles such a
  program for IREE's asynchronous calls, ``runtime.FENCED_CALLS_FLAG``, which ember waits
  for asleep rather than in IREE's spinning wait);
- a :class:`~ember.backends.runtime.Device` subclass with the backend's readback.

Adding a target (ROCm, Metal) is one new module listed in ``BACKENDS``.
"""

from __future__ import annotations

import importlib

from ember.config import config as _config
from ember.errors import TargetOptionError

BACKENDS = ("cpu", "vulkan", "cuda")


def get_backend(name: str):
    """The backend module for ``name`` ("cpu", "vulkan", "cuda").

    Example:
        >>> get_backend("cpu").compiler_flags()[0]
        '--iree-hal-target-device=local'
    """
    if name not in BACKENDS:
        raise TargetOptionError(f"unknown backend {name!r}; backends are {', '.join(BACKENDS)}")
    return importlib.import_module(f"ember.backends.{name}")


# ember.config.update("default_backend", name) fails at once on an unknown name (the config,
# below this layer, cannot import the backends itself).
_config.validate_with("default_backend", get_backend)


def dispatch_regions(names) -> bool:
    """Whether a program for all backends ``names`` hands IREE ember's fusions as
    ``flow.dispatch.region`` ops (``ember-to-linalg{dispatch-regions=...}``).

    Example:
        >>> dispatch_regions(["cpu", "vulkan"])
        False
    """
    return all(get_backend(n).DISPATCH_REGIONS for n in names)


def traits(names) -> dict[str, bool | int]:
    """What the arithmetic of all backends ``names`` offers (``ember-to-linalg``'s options),
    whether their host loops may run in chunks (``loop_chunks``), and the most buffers a
    dispatch may bind on all of them (``max_bindings``).

    Example:
        >>> sorted(k for k, on in traits(["cpu", "vulkan"]).items() if not on)
        ['exact_division', 'exact_rounding', 'float64', 'loop_chunks', 'outer_reductions']
        >>> traits(["cpu", "cuda"])["max_bindings"]
        16
    """
    backends = [get_backend(n) for n in names]
    # The least of each: for a flag, every backend has it (min of bools is all()).
    return {k: min(b.TRAITS[k] for b in backends) for k in backends[0].TRAITS}


# IREE quirk: a constant expression used on several devices is hoisted into one global that
# has no device; IREE then places the ops that read it on no device (their device-local
# operands are moved off their device), and with 4 devices a psum's result sent back to each
# failed to compile ("... is not compatible with the partition affinity", or with data tiling
# "'stream.tensor.sizeof' op illegal for this phase"). Unhoisted, each device computes the
# constant itself. Where it compiled (2 devices), those ops were on no device of their own.
# tests/test_iree_quirks.py::test_constant_used_on_several_devices_fails_with_four
NO_HOISTING = "--iree-opt-const-expr-hoisting=false"


def device_flags(flags, count: int) -> tuple[str, ...]:
    """``flags`` for a program of ``count`` devices of the backend: its target device made
    ``count`` devices, ``ember_device_<d>``, the d-th of the backend's (the names
    ``ember.transfer`` and ``iree.abi.affinity`` refer to). A program of several devices is
    compiled without IREE's hoisting of constant expressions (NO_HOISTING).

    Example:
        >>> device_flags(("--iree-hal-target-device=local",), 2)[1]
        '--iree-hal-target-device=ember_device_1=local[1]'
    """
    from ember.dialects.spmd import DEVICE_SYMBOL
    key = "--iree-hal-target-device="
    out: list[str] = []
    for f in flags:
        if f.startswith(key):
            out += [f"{key}{DEVICE_SYMBOL}{d}={f[len(key):]}[{d}]" for d in range(count)]
        else:
            out.append(f)
    if count > 1:
        out.append(NO_HOISTING)
    return tuple(out)


def default_backend() -> str:
    """The backend ``ember.jit`` compiles for when given none: ``ember.config.default_backend``
    (set from the ``EMBER_BACKEND`` environment variable), else "cpu".

    Example:
        >>> ember.default_backend()
        'cpu'
    """
    from ember.config import config
    return config.default_backend


def target_options(name: str, overrides: dict | None = None) -> dict:
    """The target options of backend ``name``: its ``OPTIONS`` read from ``ember.config``
    (e.g. ``cuda_arch``), updated with ``overrides``.

    Example:
        >>> target_options("cuda", {"arch": "sm_89"})
        {'arch': 'sm_89'}
    """
    from ember.config import config
    backend = get_backend(name)
    options = {param: getattr(config, key) for param, key in backend.OPTIONS.items()
               if getattr(config, key) is not None}
    for k in overrides or {}:
        if k not in backend.OPTIONS:
            raise TargetOptionError(f"unknown {name} target option {k!r}; options are "
                                    f"{', '.join(backend.OPTIONS) or 'none'}")
    options.update(overrides or {})
    return options


def devices(backend: str | None = None) -> list:
    """The devices of ``backend`` on this machine (every backend's when None); a backend whose
    driver is missing has none.

    Example:
        >>> ember.devices()
        [CpuDevice(0), VulkanDevice(0, 'llvmpipe (LLVM 15.0.6, 256 bits) ...')]
        >>> x = ember.device_put(np.ones(3, np.float32), ember.devices("cpu")[0])
    """
    names = BACKENDS if backend is None else (backend,)
    return [d for name in names for d in get_backend(name).devices()]
