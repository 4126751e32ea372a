"""Global configuration, JAX-style: ``ember.config.update("enable_x64", True)``."""

from __future__ import annotations

import os


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


# The steps of a host loop IREE may record before ember makes the host wait for the device
# (ember/dialects/control_flow.py says why).
DEFAULT_LOOP_RUN_AHEAD = 32
# The most steps of a small-stepped scan one step of its host loop runs
# (ember/passes/unroll_scans.py).
DEFAULT_SCAN_UNROLL = 8


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit():
        raise ValueError(f"{name}={value!r}: expected a whole number of loop steps, e.g. 32")
    return int(value)


def _check_idle_timeout(value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                              or not value > 0 or value == float("inf")):
        raise ValueError(f"compile_worker_idle_timeout must be a number of seconds > 0 (None: "
                         f"the worker stays), got {value!r}")


def _env_seconds(name: str) -> float | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
        _check_idle_timeout(seconds)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a number of seconds > 0, e.g. 60") \
            from None
    return seconds


# The options a traced or compiled program depends on: changing one makes cached executables
# wrong (the frontend clears its caches on their change).
TRACED_OPTIONS = frozenset({"enable_x64", "fusion", "memory_planner", "memory_budget",
                            "loop_run_ahead", "scan_unroll", "loop_kernels", "cpu_target",
                            "cpu_features", "vulkan_target", "cuda_arch"})

# Registered by the layers above (Config.validate_with, Config.on_change).
_VALIDATORS: dict[str, list] = {}
_OBSERVERS: list = []


class Config:
    """Options read by the tracer and the compiler.

    Example:
        >>> import ember
        >>> ember.config.update("enable_x64", True)
        >>> ember.config.enable_x64
        True
    """

    def __init__(self):
        self._values = {
            "enable_x64": _env_flag("EMBER_ENABLE_X64"),
            "compile_cache": not _env_flag("EMBER_NO_COMPILE_CACHE"),
            # IREE's compiler runs in a child process kept between compiles (False: a child
            # per compile, which exits after it; EMBER_NO_COMPILE_WORKER=1).
            "compile_worker": not _env_flag("EMBER_NO_COMPILE_WORKER"),
            # IREE checks the IR after each of its passes (EMBER_COMPILE_VERIFY=1): slower
            # compiles, the same modules; for reporting an IREE bug.
            "compile_verify": _env_flag("EMBER_COMPILE_VERIFY"),
            # Each compile, its time and any compile IREE failed and ember retried, logged at
            # WARNING level to the "ember" logger (DEBUG otherwise; EMBER_LOG_COMPILES=1), as
            # JAX's jax_log_compiles.
            "log_compiles": _env_flag("EMBER_LOG_COMPILES"),
            # How many compile workers may compile at once (threads, compile_async): one
            # starts when a compile finds the others busy (EMBER_COMPILE_WORKERS; default: up
            # to two, one per core).
            "compile_workers": _env_int("EMBER_COMPILE_WORKERS", min(2, os.cpu_count() or 1)),
            # Seconds after which an idle kept worker exits (None: it stays until exit).
            "compile_worker_idle_timeout": _env_seconds("EMBER_COMPILE_WORKER_IDLE_TIMEOUT"),
            # A jitted function called with other sizes of its arguments compiles once more
            # with those sizes dynamic (ember.frontend.dynamic; EMBER_NO_DYNAMIC_SHAPES=1: off).
            "dynamic_shapes": not _env_flag("EMBER_NO_DYNAMIC_SHAPES"),
            # A donated argument that no result can reuse: an error (True) or a warning.
            "donation_strict": _env_flag("EMBER_DONATION_STRICT"),
            # ember.jit runs the ember-fuse pass (EMBER_NO_FUSION=1: off).
            "fusion": not _env_flag("EMBER_NO_FUSION"),
            # The ember-plan-memory pass reorders and rematerializes (off: analysis only).
            "memory_planner": not _env_flag("EMBER_NO_MEMORY_PLANNER"),
            # The steps of a host loop (scan, fori_loop) IREE may record before the host waits
            # for the device: each step in flight holds memory IREE keeps (0: no limit).
            "loop_run_ahead": _env_int("EMBER_LOOP_RUN_AHEAD", DEFAULT_LOOP_RUN_AHEAD),
            # The most steps of a scan with a small step that one step of its host loop runs
            # (ember-unroll-scans; EMBER_SCAN_UNROLL=1: none).
            "scan_unroll": _env_int("EMBER_SCAN_UNROLL", DEFAULT_SCAN_UNROLL),
            # A loop whose step computes little runs as one kernel (ember-loop-kernels;
            # EMBER_NO_LOOP_KERNELS=1: every loop runs from the host).
            "loop_kernels": not _env_flag("EMBER_NO_LOOP_KERNELS"),
            # A memory budget given to ember.jit that IREE's compiled program exceeds: an
            # error (True) or a warning.
            "memory_budget_strict": _env_flag("EMBER_MEMORY_BUDGET_STRICT"),
            # Default memory budget of every jitted function (a size: "12 GB", 12e9, ...).
            "memory_budget": os.environ.get("EMBER_MEMORY_BUDGET", "").strip() or None,
            # How many CPU devices ember.devices("cpu") lists (as XLA's
            # --xla_force_host_platform_device_count): ember.pmap and shard_map spread over
            # them. Device 0 is the one jit uses.
            "cpu_devices": _env_int("EMBER_CPU_DEVICES", 1),
            # The backend ember.jit compiles for when given none ("cpu", "vulkan", "cuda").
            "default_backend": os.environ.get("EMBER_BACKEND", "").strip() or "cpu",
            # Target options (see ember/backends/*.py compiler_flags); None: the backend's.
            "cpu_target": os.environ.get("EMBER_CPU_TARGET") or None,
            "cpu_features": os.environ.get("EMBER_CPU_FEATURES") or None,
            "vulkan_target": os.environ.get("EMBER_VULKAN_TARGET") or None,
            "cuda_arch": os.environ.get("EMBER_CUDA_ARCH") or None,
            "cache_dir": os.environ.get("EMBER_CACHE_DIR")
            or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                            "ember"),
        }

    def update(self, name: str, value) -> None:
        """Set option ``name``: its validators (see :meth:`validate_with`) run first, then,
        once it is set, the observers watching it (see :meth:`on_change`)."""
        if name not in self._values:
            raise KeyError(f"unknown ember config option {name!r}; known: {sorted(self._values)}")
        if name == "loop_run_ahead" and (isinstance(value, bool) or not isinstance(value, int)
                                         or value < 0):
            raise ValueError(f"loop_run_ahead must be a number of loop steps >= 0 (0: no "
                             f"limit), got {value!r}")
        if name in ("cpu_devices", "compile_workers", "scan_unroll") and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        if name in ("compile_worker", "compile_verify", "log_compiles", "dynamic_shapes",
                    "loop_kernels") and not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        if name == "compile_worker_idle_timeout":
            _check_idle_timeout(value)
        for check in _VALIDATORS.get(name, ()):
            check(value)    # a bad value fails here, not at the next call that reads it
        self._values[name] = value
        for names, observer in list(_OBSERVERS):
            if name in names:
                observer(name, value)

    @staticmethod
    def validate_with(name: str, check) -> None:
        """Run ``check(value)`` on every later ``update(name, value)`` before the value is set;
        it raises to refuse the value. Layers above the config register their checks so that
        the config imports none of them (``ember.backends`` checks ``default_backend``).

        Example:
            >>> ember.config.validate_with("cache_dir", lambda v: None)
        """
        if name not in config._values:
            raise KeyError(f"unknown ember config option {name!r}")
        _VALIDATORS.setdefault(name, []).append(check)

    @staticmethod
    def on_change(names, observer) -> None:
        """Call ``observer(name, value)`` after every ``update`` of one of ``names`` (the
        frontend clears its caches on a change of a :data:`TRACED_OPTIONS` option).

        Example:
            >>> ember.config.on_change(("fusion",), lambda name, value: None)
        """
        _OBSERVERS.append((frozenset(names), observer))

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None


config = Config()
