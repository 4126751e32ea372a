"""IREE's own figures for a compiled program: dispatches, executables, transient memory.

IREE writes them with ``--iree-scheduling-dump-statistics-format=json``; fusion and memory
planning are measured by these numbers, read here and nowhere else.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import NamedTuple

from ember.backends.compiler import cache_key, compile_mlir, read_cached, write_cached
from ember.config import config


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
    """Compile ``mlir_text`` with ``flags`` and read IREE's scheduling statistics (see
    :func:`compile_with_statistics`)."""
    return compile_with_statistics(mlir_text, flags, fallbacks)[1]


_FORMAT = "--iree-scheduling-dump-statistics-format=json"


def compile_with_statistics(mlir_text: str, flags: tuple[str, ...], fallbacks=()) -> \
        tuple[bytes, ProgramStatistics]:
    """The module ``compile_mlir`` makes of ``mlir_text`` and IREE's statistics of it, from
    one compile. Both are kept in the compile cache (under keys of their own: the statistics
    flags do not change the module), so a program checked against a memory budget compiles
    once, not twice.

    Example:
        >>> vmfb, s = compile_with_statistics(text, cpu.compiler_flags())
        >>> s.transient_memory_size
        1048576
    """
    flags, fallbacks = tuple(flags), tuple(tuple(f) for f in fallbacks)
    key = cache_key(mlir_text, flags + (_FORMAT,), fallbacks)
    stats_key = cache_key(mlir_text, flags + (_FORMAT, "statistics"), fallbacks)
    if config.compile_cache:
        vmfb, raw = read_cached(key), read_cached(stats_key)
        if vmfb is not None and raw is not None:
            return vmfb, _statistics(json.loads(raw))
    fd, path = tempfile.mkstemp(prefix="ember-stats-", suffix=".json")
    os.close(fd)
    try:
        vmfb = compile_mlir(mlir_text, flags, stats_file=path, fallbacks=fallbacks)
        with open(path, "rb") as f:
            raw = f.read()
    finally:
        os.unlink(path)
    stats = _statistics(json.loads(raw))
    if config.compile_cache:
        write_cached(key, vmfb)
        write_cached(stats_key, raw)
    return vmfb, stats


def _statistics(raw) -> ProgramStatistics:
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
