"""IREE compilation, with an on-disk cache keyed by IR, flags, IREE version and (for
``host`` CPU targets) the host's CPU features; each entry starts with the SHA-256 of its
module, and one that does not match (a truncated or damaged file) is compiled again.

IREE's compiler runs in a child process of ours (``_compile_worker``, started once and kept):
a crash in IREE (a segfault, an LLVM ERROR abort) ends the child, not the user's program, and
becomes a CompileError. There the lowered module is handed to a fresh IREE Session as text.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import pickle
import platform
import signal
import struct
import subprocess
import sys
import tempfile
import threading

from ember._mlir import Output, ir, new_session
from ember.config import config
from ember.errors import CompileError

try:
    from iree.compiler.version import VERSION as _IREE_VERSION
except ImportError:  # pragma: no cover - older wheels
    _IREE_VERSION = "unknown"


@functools.cache
def _host_cpu() -> str:
    """What ``--iree-llvmcpu-target-cpu=host`` compiles for: a cache shared between machines
    (a network home) must not hand one CPU's code to another."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor() or platform.machine()


def cache_key(mlir_text: str, flags: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    host = _host_cpu() if any(f.endswith("=host") for f in flags) else ""
    for part in (_IREE_VERSION, "\0".join(flags), host, mlir_text):
        h.update(part.encode())
        h.update(b"\1")
    return h.hexdigest()


def _cache_path(key: str) -> str:
    return os.path.join(config.cache_dir, "vmfb", key[:2], key + ".vmfb")


def compile_mlir(mlir_text: str, flags: tuple[str, ...], *, stats_file: str | None = None,
                 use_cache: bool | None = None, fallbacks=()) -> bytes:
    """Compile lowered MLIR text to a ``.vmfb`` with the given IREE flags.

    ``fallbacks`` are other whole flag sets to try, in turn, when IREE fails with ``flags``
    (IREE bugs that only some optimizations trigger); a fallback's module is cached under the
    key of ``flags`` too, so the failure is paid once. Raises CompileError with IREE's
    diagnostics of the first attempt; the IR is saved to a file named in the error.

    Example:
        >>> vmfb = compile_mlir(text, cpu_flags())
    """
    use_cache = config.compile_cache if use_cache is None else use_cache
    if stats_file is not None:
        use_cache = False
        flags = flags + ("--iree-scheduling-dump-statistics-format=json",
                         f"--iree-scheduling-dump-statistics-file={stats_file}")
    key = cache_key(mlir_text, flags)
    if use_cache:
        cached = read_cached(key)
        if cached is not None:
            return cached
    try:
        vmfb = _compile(mlir_text, flags)
    except CompileError as first:
        for other in fallbacks:
            try:
                vmfb = _compile(mlir_text, tuple(other))
                break
            except CompileError:
                continue
        else:
            raise first from None
    if use_cache:
        write_cached(key, vmfb)
    return vmfb


def read_cached(key: str) -> bytes | None:
    """The module cached under ``key``, or None if there is none or it is damaged (loading a
    damaged module raised raw IREE errors, or crashed, on every later run)."""
    try:
        with open(_cache_path(key), "rb") as f:
            data = f.read()
    except OSError:
        return None
    digest, vmfb = data[:32], data[32:]
    return vmfb if vmfb and hashlib.sha256(vmfb).digest() == digest else None


def write_cached(key: str, vmfb: bytes) -> None:
    """Cache ``vmfb`` under ``key``, after its SHA-256 (see :func:`read_cached`)."""
    _atomic_write(_cache_path(key), hashlib.sha256(vmfb).digest() + vmfb)


# The compile worker's protocol (``_compile_worker``): length-prefixed pickles.
_HEADER = struct.Struct("<Q")


def read_message(f):
    """One length-prefixed pickle from binary file ``f``, or None at its end."""
    head = f.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    data = f.read(n)
    if len(data) < n:
        return None
    return pickle.loads(data)


def write_message(f, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(_HEADER.pack(len(data)) + data)
    f.flush()


class _Worker:
    """The child process that compiles (``python -m ember.backends._compile_worker``); its
    stderr goes to a file, read after a crash."""

    def __init__(self):
        fd, self.log = tempfile.mkstemp(prefix="ember-iree-", suffix=".log")
        os.close(fd)
        # The child imports this copy of ember, wherever it was found (an installed
        # package, a checkout put on sys.path by hand).
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ember.backends._compile_worker", self.log],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                env=dict(os.environ, PYTHONPATH=path))
        self.request_start = 0
        self.compiles = 0

    def compile(self, mlir_text: str, flags: tuple[str, ...]) -> bytes:
        self.compiles += 1
        self.request_start = os.path.getsize(self.log)
        try:
            write_message(self.proc.stdin, (mlir_text, tuple(flags)))
            reply = read_message(self.proc.stdout)
        except OSError:         # the pipe broke: the child is gone
            reply = None
        if reply is None:
            raise self._crashed(mlir_text)
        if reply[0] == "ok":
            return reply[1]
        raise CompileError(reply[1], ir_path=reply[2])

    def _crashed(self, mlir_text: str) -> CompileError:
        rc = self.proc.wait()
        try:
            how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        except ValueError:
            how = f"exit status {rc}"
        with open(self.log, "rb") as log:     # what IREE printed before it died, if any
            log.seek(self.request_start)
            printed = log.read().decode(errors="replace").strip()
        return _failure(f"IREE crashed ({how}) compiling the program: a bug in IREE, which "
                        "ember reports instead of crashing too", printed[-8000:], mlir_text)

    def close(self) -> None:
        """End the child (its loop ends at the end of its input) or reap a dead one."""
        with contextlib.suppress(OSError):      # a dead child's pipe may refuse the flush
            self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()
        with contextlib.suppress(OSError):
            os.remove(self.log)


_worker: _Worker | None = None
_worker_lock = threading.Lock()
# IREE's compiler keeps about 4 MiB per compile (a Session each); past a few hundred compiles
# a process grew by GBs and compiled up to 3x slower (the test suite's slowest program: 78 s
# in its own file, 222 s at the end of the suite). A new worker after this many compiles
# costs under a second.
WORKER_COMPILES = 100


@atexit.register
def _stop_worker() -> None:
    if _worker is not None:
        _worker.close()


def _compile(mlir_text: str, flags: tuple[str, ...]) -> bytes:
    """``_compile_uncached`` in the compile worker (started on first use, and again after
    a crash or WORKER_COMPILES compiles)."""
    global _worker
    with _worker_lock:
        if _worker is not None and (_worker.proc.poll() is not None or
                                    _worker.compiles >= WORKER_COMPILES):
            _worker.close()         # worn (see WORKER_COMPILES), or ended (interrupted, say)
            _worker = None
        if _worker is None:
            try:
                _worker = _Worker()
            except OSError:         # no way to start a Python child here: compile in-process
                return _compile_uncached(mlir_text, flags)
        return _worker.compile(mlir_text, flags)


def _compile_uncached(mlir_text: str, flags: tuple[str, ...]) -> bytes:
    session = new_session()
    ctx = session.context
    # IREE crashes (SIGSEGV) on ops of unknown dialects: make them a parse error instead.
    ctx.allow_unregistered_dialects = False
    try:
        session.set_flags(*flags)
    except Exception as e:  # bad flag text from the user
        raise CompileError(f"IREE rejected the compiler flags {flags}: {e}") from None
    try:
        with ctx:
            module = ir.Module.parse(mlir_text)
    except Exception as e:
        raise _failure("the lowered IR does not parse", str(e), mlir_text) from None
    inv = session.invocation()
    inv.import_module(module.operation)
    # A Python diagnostic handler must not run inside execute(): IREE calls it without the
    # GIL and the interpreter aborts. IREE prints to fd 2 instead, which we capture.
    inv.enable_console_diagnostics()
    with _captured_stderr() as captured:
        ok = inv.execute()
    if not ok:
        raise _failure("IREE failed to compile the program", captured.text[-8000:],
                       mlir_text)
    out = Output.open_membuffer()
    with _captured_stderr() as captured:
        try:
            inv.output_vm_bytecode(out)
        except ValueError as e:     # e.g. a module without functions: no VM module to write
            raise _failure(f"IREE could not write the compiled module ({e})",
                           captured.text[-8000:], mlir_text) from None
    return bytes(out.map_memory())


class _Captured:
    text = ""


# In the compile worker: the file its fd 2 appends to, which the parent reads after a crash.
STDERR_LOG: str | None = None


@contextlib.contextmanager
def _captured_stderr():
    """Send what C code writes to fd 2 into ``captured.text`` for the duration."""
    sys.stderr.flush()
    captured = _Captured()
    if STDERR_LOG is not None:      # fd 2 is a file already: read what was added to it
        start = os.lseek(2, 0, os.SEEK_END)
        try:
            yield captured
        finally:
            with open(STDERR_LOG, "rb") as f:
                f.seek(start)
                captured.text = f.read().decode(errors="replace").strip()
        return
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            captured.text = tmp.read().decode(errors="replace").strip()


def _save_ir(mlir_text: str) -> str:
    fd, path = tempfile.mkstemp(prefix="ember-failed-", suffix=".mlir")
    with os.fdopen(fd, "w") as f:
        f.write(mlir_text)
    return path


def _failure(what: str, detail: str, mlir_text: str) -> CompileError:
    path = _save_ir(mlir_text)
    detail = f"\n{detail}" if detail else ""
    return CompileError(f"{what}.{detail}\nThe IR given to IREE is saved in {path}",
                        ir_path=path)


def _atomic_write(path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory only costs compile time


_PROBE = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


@functools.cache
def check_target(flags: tuple[str, ...], what: str) -> None:
    """Compile a one-op program with ``flags`` (once per process): a target IREE does not
    know (a CPU or CUDA architecture name) fails here with TargetOptionError naming ``what``,
    rather than as an IREE crash in the user's program."""
    from ember.errors import TargetOptionError
    try:
        compile_mlir(_PROBE, flags)
    except CompileError as e:
        lines = [ln for ln in str(e).splitlines()[1:] if not ln.startswith("The IR given")]
        detail = "\n".join(ln[:300] for ln in lines[:4])
        raise TargetOptionError(f"{what} is not a target IREE {_IREE_VERSION} compiles for: "
                                f"a one-op program failed with it:\n{detail}") from None
