"""Keep IREE's nanobind "leaked instances" reports, printed at interpreter exit, from users.

The runtime binding has a switch for it; the compiler's MLIR binding has none, so at exit,
after every other handler has run, stderr is pointed at /dev/null for the finalizer.
"""

from __future__ import annotations

import atexit
import os
import sys

try:
    from iree.runtime import _binding

    _binding.disable_leak_checker()
except (ImportError, AttributeError):  # pragma: no cover - older runtimes
    pass


def _silence_stderr_at_exit() -> None:
    try:
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except (OSError, ValueError):
        pass


# atexit runs handlers last-registered-first: registered at import, this runs late.
atexit.register(_silence_stderr_at_exit)
