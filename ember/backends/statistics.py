"""IREE's own figures for a compiled program: dispatches, executables, transient memory.

IREE writes them with ``--iree-scheduling-dump-statistics-format=json``; fusion and memory
planning are measured by these numbers, read here and nowhere else.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import NamedTuple

from ember.backends.compiler import compile_mlir


class ProgramStatistics(NamedTuple):
    """What IREE's scheduler reports for one compiled program.

    Example:
        >>> s = program_statistics(jitted.lower(x).as_text("linalg"), cpu.compiler_flags())
        >>> s.dispatch_count, s.transient_memory_size
        (1, 0)
    """

    dispatch_count: int
    executable_count: int
    transient_memory_size: int
    raw: dict


def program_statistics(mlir_text: str, flags: tuple[str, ...], fallbacks=()) -> \
        ProgramStatistics:
    """Compile ``mlir_text`` with ``flags`` (uncached) and read IREE's scheduling statistics."""
    fd, path = tempfile.mkstemp(prefix="ember-stats-", suffix=".json")
    os.close(fd)
    try:
        compile_mlir(mlir_text, flags, stats_file=path,
                     fallbacks=tuple(tuple(f) for f in fallbacks))
        with open(path) as f:
            raw = json.load(f)
    finally:
        os.unlink(path)
    return ProgramStatistics(_total(raw, "dispatch-count"), _total(raw, "executable-count"),
                             _total(raw, "transient-memory-size"), raw)


def _total(tree, key) -> int:
    """Sum of ``key`` over the nested dicts/lists IREE writes (one entry per function)."""
    if isinstance(tree, dict):
        return sum(v if k == key and isinstance(v, int) else _total(v, key)
                   for k, v in tree.items())
    if isinstance(tree, list):
        return sum(_total(v, key) for v in tree)
    return 0
