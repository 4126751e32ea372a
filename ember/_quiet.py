"""Keep IREE's nanobind "leaked instances" reports, printed at interpreter exit, from users.

Each binding's report is switched off at its source, and nothing else is hidden: the
runtime binding has a switch (``disable_leak_checker``); the compiler's MLIR bindings share
``libnanobind-mlir``, whose ``nanobind::detail::set_leak_warnings`` is called once they are
loaded (:func:`quiet_compiler_bindings`, from ``ember._mlir``). ember used to point stderr
at /dev/null at exit instead, which silenced every atexit handler registered before
``import ember`` as well.
"""

from __future__ import annotations

import ctypes
import glob
import os


def quiet_runtime_binding() -> None:
    """Turn off the runtime binding's leak report (``import ember`` calls this; the compile
    worker, which never loads the runtime, does not).

    Example:
        >>> quiet_runtime_binding()
    """
    try:
        from iree.runtime import _binding

        _binding.disable_leak_checker()
    except (ImportError, AttributeError):  # pragma: no cover - older runtimes
        pass

# nanobind::detail::set_leak_warnings(bool), as the Itanium C++ ABI (Linux, macOS) names it.
_SET_LEAK_WARNINGS = "_ZN8nanobind6detail17set_leak_warningsEb"


def quiet_compiler_bindings() -> bool:
    """Turn off the leak report of the compiler's MLIR bindings; whether it could be.

    Call only after ``iree.compiler.ir`` is imported (nanobind's state exists from then on).

    Example:
        >>> from iree.compiler import ir
        >>> quiet_compiler_bindings()
        True
    """
    try:
        from iree.compiler import _mlir_libs

        folder = os.path.dirname(_mlir_libs.__file__)
        paths = glob.glob(os.path.join(folder, "libnanobind-mlir.*"))
        setter = getattr(ctypes.CDLL(paths[0]), _SET_LEAK_WARNINGS)
    except (ImportError, OSError, IndexError, AttributeError):
        return False     # another layout or ABI: its report, if any, stays
    setter.argtypes, setter.restype = [ctypes.c_bool], None
    setter(False)
    return True
