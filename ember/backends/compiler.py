"""IREE compilation, in-process, with an on-disk cache keyed by IR, flags and IREE version.

The lowered module is handed to a fresh IREE Session as text, so the compile does not share
(and cannot mutate) the context the frontend traces into.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

from ember._mlir import Output, ir, new_session
from ember.config import config
from ember.errors import CompileError

try:
    from iree.compiler.version import VERSION as _IREE_VERSION
except ImportError:  # pragma: no cover - older wheels
    _IREE_VERSION = "unknown"


def cache_key(mlir_text: str, flags: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in (_IREE_VERSION, "\0".join(flags), mlir_text):
        h.update(part.encode())
        h.update(b"\1")
    return h.hexdigest()


def _cache_path(key: str) -> str:
    return os.path.join(config.cache_dir, "vmfb", key[:2], key + ".vmfb")


def compile_mlir(mlir_text: str, flags: tuple[str, ...], *, stats_file: str | None = None,
                 use_cache: bool | None = None) -> bytes:
    """Compile lowered MLIR text to a ``.vmfb`` with the given IREE flags.

    Raises CompileError with IREE's diagnostics; the IR is saved to a file named in the error.

    Example:
        >>> vmfb = compile_mlir(text, cpu_flags())
    """
    use_cache = config.compile_cache if use_cache is None else use_cache
    if stats_file is not None:
        use_cache = False
        flags = flags + ("--iree-scheduling-dump-statistics-format=json",
                         f"--iree-scheduling-dump-statistics-file={stats_file}")
    key = cache_key(mlir_text, flags)
    path = _cache_path(key)
    if use_cache and os.path.exists(path):
        with open(path, "rb") as f:
            return f.read()
    vmfb = _compile_uncached(mlir_text, flags)
    if use_cache:
        _atomic_write(path, vmfb)
    return vmfb


def _compile_uncached(mlir_text: str, flags: tuple[str, ...]) -> bytes:
    session = new_session()
    ctx = session.context
    diagnostics: list[str] = []

    def handler(d):
        diagnostics.append(f"{d.location}: {d.severity.name.lower()}: {d.message}")
        for note in d.notes:
            diagnostics.append(f"  {note.location}: note: {note.message}")
        return True

    ctx.attach_diagnostic_handler(handler)
    try:
        session.set_flags(*flags)
    except Exception as e:  # bad flag text from the user
        raise CompileError(f"IREE rejected the compiler flags {flags}: {e}") from None
    try:
        with ctx:
            module = ir.Module.parse(mlir_text)
    except Exception as e:
        raise CompileError(_failure("lowered IR does not parse", str(e), mlir_text)) from None
    inv = session.invocation()
    inv.import_module(module.operation)
    if not inv.execute():
        raise CompileError(_failure("IREE failed to compile the program",
                                    "\n".join(diagnostics[:40]), mlir_text),
                           ir_path=_save_ir(mlir_text))
    out = Output.open_membuffer()
    inv.output_vm_bytecode(out)
    return bytes(out.map_memory())


def _save_ir(mlir_text: str) -> str:
    fd, path = tempfile.mkstemp(prefix="ember-failed-", suffix=".mlir")
    with os.fdopen(fd, "w") as f:
        f.write(mlir_text)
    return path


def _failure(what: str, detail: str, mlir_text: str) -> str:
    path = _save_ir(mlir_text)
    return f"{what}.\n{detail}\nThe IR given to IREE is saved in {path}"


def _atomic_write(path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory only costs compile time
