"""IREE compilation, with an on-disk cache keyed by IR, flags, IREE version and (for
``host`` CPU targets) the host's CPU features. Each entry holds its own key and a SHA-256 of
key and module: a truncated or damaged file, or another program's entry in its place, is a
miss and is compiled again.

IREE's compiler runs in a child process of ours (``_compile_worker``, started on the first
compile and kept, about 200-300 MiB resident, until :func:`stop_worker` (``ember.clear_caches``),
``config.compile_worker_idle_timeout`` seconds without a compile, or, with
``config.compile_worker`` False, the end of each compile): a crash in IREE (a segfault, an
LLVM ERROR abort) ends the child, not the user's program, and becomes a CompileError. There
the lowered module is handed to a fresh IREE Session as text. A few IREE options are not a
session's but the process's (``PROCESS_FLAGS``): a program whose flags carry some is compiled
by a worker started with them, one worker per such set.
Every request carries a number and every reply the number and the digest of the request it
answers: a module is used (and cached) only when both match, so a reply left unread by an
interrupt can never be taken for a later program's.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import hashlib
import logging
import os
import pickle
import platform
import signal
import stat
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


def cache_key(mlir_text: str, flags: tuple[str, ...], fallbacks=()) -> str:
    """The compile cache's key of a module: IREE's version, the flags and the ``fallbacks``
    (the flag sets tried when ``flags`` fail: they decide which module a failing program
    gets), the host CPU where a flag names it, the program."""
    h = hashlib.sha256()
    sets = (tuple(flags), *map(tuple, fallbacks))
    host = _host_cpu() if any(f.endswith("=host") for s in sets for f in s) else ""
    for part in (_IREE_VERSION, "\0\0".join("\0".join(s) for s in sets), host, mlir_text):
        h.update(part.encode())
        h.update(b"\1")
    return h.hexdigest()


def _cache_path(key: str) -> str:
    return os.path.join(config.cache_dir, "vmfb", key[:2], key + ".vmfb")


log = logging.getLogger("ember")


def log_level() -> int:
    """The level of ember's compile log: WARNING under ``config.log_compiles`` (shown by
    Python's default logging), DEBUG otherwise."""
    return logging.WARNING if config.log_compiles else logging.DEBUG


def _retry_note(error: CompileError, flags, other) -> str:
    """What IREE said (its first error line) and how ``other`` differs from ``flags``."""
    change = [f"-{f}" for f in flags if f not in other] + \
        [f"+{f}" for f in other if f not in flags]
    return f"{error.reason[:200]}; compiling again with {' '.join(change)}"


def compile_mlir(mlir_text: str, flags: tuple[str, ...], *, stats_file: str | None = None,
                 use_cache: bool | None = None, fallbacks=()) -> bytes:
    """Compile lowered MLIR text to a ``.vmfb`` with the given IREE flags.

    ``fallbacks`` are other whole flag sets to try, in turn, when IREE fails with ``flags``
    (IREE bugs that only some optimizations trigger); a fallback's module is cached under the
    key of ``flags`` and ``fallbacks`` too, so the failure is paid once. Raises CompileError
    with IREE's diagnostics of the first attempt; the IR is saved to a file named in the
    error.

    Example:
        >>> vmfb = compile_mlir(text, cpu_flags())
    """
    use_cache = config.compile_cache if use_cache is None else use_cache
    if stats_file is not None:
        use_cache = False
        stats = ("--iree-scheduling-dump-statistics-format=json",
                 f"--iree-scheduling-dump-statistics-file={stats_file}")
        flags = flags + stats
        fallbacks = tuple(tuple(f) + stats for f in fallbacks)
    key = cache_key(mlir_text, flags, fallbacks)
    if use_cache:
        cached = read_cached(key)
        if cached is not None:
            return cached
    try:
        vmfb = _compile(mlir_text, flags)
    except CompileError as first:
        for other in fallbacks if not _scheduling_failure(first) else ():
            if tuple(other) == tuple(flags):     # (program_flags may have chosen it already)
                continue
            log.log(log_level(), "IREE failed: %s", _retry_note(first, flags, other))
            try:
                vmfb = _compile(mlir_text, tuple(other))
                discard_ir(first)
                break
            except CompileError as e:
                discard_ir(e)
                continue
        else:
            raise first from None
    if use_cache:
        write_cached(key, vmfb)
    return vmfb


# IREE failures of its stream scheduling, before code generation: its whole-program analysis
# of which timepoints cover which gives up after a fixed number of rounds (32) on long chains
# of awaited values in a loop (a batched expm's squarings, each product behind a barrier).
# The fallback flag sets change code generation, not that: each would be a whole compile.
_SCHEDULING_FAILURES = ("failed to solve for timepoint coverage",)


def _scheduling_failure(error: CompileError) -> bool:
    return any(m in str(error) for m in _SCHEDULING_FAILURES)


# A cache entry: this magic, the key it was written under (64 hex digits), the SHA-256 of
# key and module, the module. Entries of the earlier format (digest and module only) are
# misses: ember versions before the request identities could cache one program's module
# under another's key (an interrupted compile shifted the worker's replies by one).
_MAGIC = b"ember-vmfb-2\n"
# Cache entries are read only when they are regular files of at most this size: a FIFO hung
# the read, a link to /dev/zero filled memory.
MAX_CACHE_ENTRY = 1 << 31


def _entry_digest(key: str, vmfb: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + vmfb).digest()


def read_cached(key: str) -> bytes | None:
    """The module cached under ``key``, or None if there is none, or it is damaged (loading a
    damaged module raised raw IREE errors, or crashed, on every later run), or it was written
    under another key (a swapped entry, or an older ember's mislabelled one), or it is not a
    regular file of bounded size."""
    try:
        fd = os.open(_cache_path(key), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CACHE_ENTRY:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(st.st_size + 1)       # not the maximum: read() reserves what it asks
    except OSError:
        return None
    finally:
        os.close(fd)
    head = len(_MAGIC) + 64
    if not data.startswith(_MAGIC) or data[len(_MAGIC):head] != key.encode():
        return None
    digest, vmfb = data[head:head + 32], data[head + 32:]
    return vmfb if vmfb and _entry_digest(key, vmfb) == digest else None


def write_cached(key: str, vmfb: bytes) -> None:
    """Cache ``vmfb`` under ``key``, with the key and a checksum (see :func:`read_cached`)."""
    _atomic_write(_cache_path(key),
                  _MAGIC + key.encode() + _entry_digest(key, vmfb) + vmfb)


def request_digest(mlir_text: str, flags: tuple[str, ...]) -> str:
    """What identifies a compile request: the worker returns it computed from what it read,
    and the parent compares it with its own."""
    h = hashlib.sha256("\0".join(flags).encode() + b"\1" + mlir_text.encode())
    return h.hexdigest()


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


class _WorkerLost(Exception):
    """The worker's reply cannot be used (it answered another request, or something outside
    ember killed it): the compile is tried again in a new worker (``fresh``: one started for
    it, not another idle one)."""

    def __init__(self, message: str, fresh: bool = False):
        super().__init__(message)
        self.fresh = fresh


class _Worker:
    """The child process that compiles (``python ember/backends/_compile_worker.py``); its
    stderr goes to a file, read after a crash."""

    def __init__(self, idle_timeout: float | None = None, key: tuple[str, ...] = ()):
        fd, self.log = tempfile.mkstemp(prefix="ember-iree-", suffix=".log")
        os.close(fd)
        # The child runs this copy of ember, wherever it was found (an installed package, a
        # checkout put on sys.path by hand).
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compile_worker.py")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, script, self.log,
                 "" if idle_timeout is None else repr(float(idle_timeout)), *key],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        self.key = key          # the process-wide flags it compiles with
        self.request_start = 0
        self.compiles = 0
        self.busy = self.retire = False

    def compile(self, mlir_text: str, flags: tuple[str, ...]) -> bytes:
        self.compiles += 1
        self.request_start = os.path.getsize(self.log)
        request = (self.compiles, request_digest(mlir_text, flags))
        try:
            write_message(self.proc.stdin, (*request, mlir_text, tuple(flags)))
            reply = read_message(self.proc.stdout)
        except OSError:         # the pipe broke: the child is gone
            reply = None
        except (pickle.UnpicklingError, EOFError, ValueError) as e:    # a garbled reply
            self.kill()
            raise _WorkerLost(f"the compile worker's reply does not read ({e})") from None
        except BaseException:
            # An interrupt (KeyboardInterrupt, a timeout's exception) between the request and
            # its reply: the reply would be read as the next request's. The worker goes.
            self.kill()
            raise
        if reply is None:
            self.proc.wait()
            if self.proc.returncode == -signal.SIGKILL:
                raise _WorkerLost("the compile worker was killed (SIGKILL)")
            if self.proc.returncode == IDLE_EXIT:   # its idle timeout ran out as we wrote
                raise _WorkerLost("the compile worker had exited, idle")
            if self.compiles > 1:
                # IREE keeps state from one compile to the next in a process: the full SVD's
                # derivative crashed a worker that had compiled the test's other programs,
                # and compiled in a fresh one (with a fallback's flags, a slower module).
                raise _WorkerLost(f"IREE crashed (exit status {self.proc.returncode}) after "
                                  f"{self.compiles - 1} other compiles", fresh=True)
            raise self._crashed(mlir_text)
        if not isinstance(reply, tuple) or tuple(reply[:2]) != request:
            self.kill()
            raise _WorkerLost(f"the compile worker answered request {reply[:2]}, not {request}")
        if reply[2] == "ok":
            return reply[3]
        raise CompileError(reply[3], ir_path=reply[4])

    def printed(self) -> str:
        """What IREE printed (to stderr) during the last request: LLVM's warnings."""
        with open(self.log, "rb") as log:
            log.seek(self.request_start)
            return log.read().decode(errors="replace").strip()

    def _crashed(self, mlir_text: str) -> CompileError:
        rc = self.proc.wait()
        try:
            how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        except ValueError:
            how = f"exit status {rc}"
        printed = self.printed()                # what IREE printed before it died, if any
        if rc == -signal.SIGXFSZ or "File too large" in printed:
            what = ("IREE's compiler stopped at this process's file-size limit "
                    f"(`ulimit -f`, RLIMIT_FSIZE; {how}): raise the limit")
        else:
            what = (f"IREE crashed ({how}) compiling the program: a bug in IREE, which "
                    "ember reports instead of crashing too")
        return _failure(what, printed[-8000:], mlir_text)

    def kill(self) -> None:
        """End the child now, whatever it was doing (its replies are not to be read)."""
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.close()

    def close(self) -> None:
        """End the child (its loop ends at the end of its input) or reap a dead one."""
        with contextlib.suppress(OSError):      # a dead child's pipe may refuse the flush
            self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()
        with contextlib.suppress(OSError):
            os.remove(self.log)


# The exit status of a worker whose idle timeout ran out (EX_TEMPFAIL: try again).
IDLE_EXIT = 75

# The workers, by the process-wide flags they were started with (``process_flags``), busy or
# idle. A busy worker belongs to the thread compiling with it; ``_pool`` guards the lists
# and each worker's ``busy`` and ``retire``, and is notified when a worker comes back.
_workers: dict[tuple[str, ...], list[_Worker]] = {}
_pool = threading.Condition()
# IREE's compiler in this process (no child can start) compiles one program at a time.
_in_process = threading.Lock()
# IREE's compiler keeps about 4 MiB per compile (a Session each); past a few hundred compiles
# a process grew by GBs and compiled up to 3x slower (the test suite's slowest program: 78 s
# in its own file, 222 s at the end of the suite). A new worker after this many compiles
# costs under a second.
WORKER_COMPILES = 100
# A worker started because the others were busy (compiles in several threads at once) exits
# after this long without a request: it holds a few hundred MiB.
EXTRA_IDLE_TIMEOUT = 30.0


def _idle_timeout(extra: bool) -> float | None:
    if not config.compile_worker:
        return None         # a worker per compile needs none: it ends after the compile
    idle = config.compile_worker_idle_timeout
    return min(idle or EXTRA_IDLE_TIMEOUT, EXTRA_IDLE_TIMEOUT) if extra else idle


def _acquire(key: tuple[str, ...], fresh: bool = False) -> _Worker:
    """An idle worker of process flags ``key``, marked busy: a new one when none is idle (or
    ``fresh``) and fewer than ``config.compile_workers`` are busy, else the first to come
    back. OSError when no child process can start."""
    with _pool:
        while True:
            workers = _workers.setdefault(key, [])
            for worker in [w for w in workers if not w.busy]:
                if fresh and worker.proc.poll() is None:
                    continue
                if worker.proc.poll() is None and worker.compiles < WORKER_COMPILES:
                    worker.busy = True
                    return worker
                workers.remove(worker)      # worn (WORKER_COMPILES), or ended (idle, killed)
                worker.close()
            busy = sum(w.busy for ws in _workers.values() for w in ws)
            if busy < max(1, config.compile_workers):
                break
            _pool.wait()
        worker = _Worker(_idle_timeout(extra=bool(workers)), key)
        worker.busy = True
        workers.append(worker)
        return worker


def _release(worker: _Worker) -> None:
    """Give ``worker`` back after a compile; it ends when it died, stop_worker came meanwhile
    or ``config.compile_worker`` is off."""
    with _pool:
        worker.busy = False
        ends = worker.retire or not config.compile_worker or worker.proc.poll() is not None
        if ends:
            workers = _workers.get(worker.key, [])
            if worker in workers:
                workers.remove(worker)
        _pool.notify()
    if ends:
        worker.close()


def stop_worker() -> None:
    """End the compile worker processes and free their memory; the next compile starts a new
    one. A compile in flight in another thread is not disturbed: its worker ends when it is
    done. ``ember.clear_caches()`` calls this.

    Example:
        >>> from ember.backends import compiler
        >>> compiler.stop_worker()
    """
    with _pool:
        idle = []
        for workers in _workers.values():
            for worker in list(workers):
                if worker.busy:
                    worker.retire = True    # _release ends it after its compile
                else:
                    workers.remove(worker)
                    idle.append(worker)
    for worker in idle:
        worker.close()


# A worker started ahead of need waits this long for its first request when no idle timeout
# is configured, so that a program whose compiles all hit the disk cache does not keep it.
PRESTART_IDLE_TIMEOUT = 60.0


def start_worker() -> None:
    """Start the compile worker now, if none runs: its start (a Python child importing IREE's
    compiler) takes most of a second, which a first compile then does not wait for.
    ``ember.jit`` calls this when it makes a jitted function. Nothing happens when
    ``config.compile_worker`` is off or a worker runs.

    Example:
        >>> compiler.start_worker()     # while the program loads its data
    """
    if not config.compile_worker:
        return
    with _pool:
        if _workers.get(()):
            return
        idle = config.compile_worker_idle_timeout
        try:
            _workers[()] = [_Worker(PRESTART_IDLE_TIMEOUT if idle is None else idle)]
        except OSError:     # no way to start a Python child: the compile runs in-process
            pass


atexit.register(stop_worker)
# Workers started under other settings go: the next compile starts one under the new.
config.on_change(("compile_worker", "compile_worker_idle_timeout"),
                 lambda name, value: stop_worker())


def _compile(mlir_text: str, flags: tuple[str, ...], *, printed: list | None = None) -> bytes:
    """``_compile_uncached`` in a compile worker (one started when none is idle, up to
    ``config.compile_workers`` at once; replaced after a crash or WORKER_COMPILES compiles;
    ended after the compile when config.compile_worker is False or stop_worker came
    meanwhile). What IREE printed is appended to ``printed``."""
    if config.compile_verify:
        flags = flags + (VERIFY_EACH_PASS,)
    key = process_flags(flags)
    fresh = False
    for _attempt in range(2):
        try:
            worker = _acquire(key, fresh)
        except OSError:         # no way to start a Python child here: compile in-process
            with _in_process:
                return _compile_uncached(mlir_text, flags)
        try:
            vmfb = worker.compile(mlir_text, flags)
            if printed is not None:
                printed.append(worker.printed())
            return vmfb
        except _WorkerLost as e:
            lost, fresh = e, e.fresh
            worker.retire = True    # the loop's next turn takes another worker
        finally:
            _release(worker)
    raise _failure(f"the compile worker failed twice without an answer ({lost})", "",
                   mlir_text)


# ember's own flag, not IREE's (the worker reads it off the flags of a request): IREE checks
# the IR after each of its passes. Off by default: the check is a large part of a compile
# (docs/benchmarks.md) and changes no module it lets through.
VERIFY_EACH_PASS = "--ember-verify-each-pass"


def _skip_verification(inv) -> None:
    """Turn off IREE's check of the IR after each pass for invocation ``inv`` (the C API's
    ``ireeCompilerInvocationSetVerifyIR``, which the Python API does not wrap)."""
    try:
        from iree.compiler.api import ctypes_dl
        set_verify = ctypes_dl._dylib.ireeCompilerInvocationSetVerifyIR
        set_verify.argtypes = [ctypes.c_void_p, ctypes.c_bool]
        set_verify(inv._inv_p, False)
    except (AttributeError, ImportError):
        pass        # another IREE: it verifies, which only costs time


# IREE options that are LLVM command-line globals (set once per process, with the C API's
# ireeCompilerSetupGlobalCL), not options of a compile session, which refuses them.
PROCESS_FLAGS = ("--iree-stream-emulate-memset", "--iree-hal-link-executables")
_process_flags: tuple[str, ...] | None = None   # this process's, once set


def process_flags(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The flags of ``flags`` that are the process's, not a session's (``PROCESS_FLAGS``)."""
    return tuple(f for f in flags if f.split("=", 1)[0] in PROCESS_FLAGS)


def set_process_flags(flags: tuple[str, ...]) -> None:
    """Set IREE's process-wide options to ``flags``: once per process (a compile worker's
    start), or a CompileError naming both sets."""
    global _process_flags
    if _process_flags is not None or not flags:
        if flags != (_process_flags or ()):
            raise CompileError(
                f"the program needs IREE's process-wide flags {flags}, and this process "
                f"compiles with {_process_flags or ()} (IREE sets them once per process). "
                "ember compiles in a worker process per set of them: that needs "
                "ember.config.compile_worker on and a way to start a Python child process")
        return
    try:
        from iree.compiler.api import ctypes_dl
        setup = ctypes_dl._initializeGlobalCL     # the C API's ireeCompilerSetupGlobalCL
    except (ImportError, AttributeError):
        raise CompileError(f"this IREE's Python API cannot set its process-wide flags "
                           f"{flags} (iree.compiler.api.ctypes_dl._initializeGlobalCL)") \
            from None
    setup("ember", *flags)
    _process_flags = flags


def _compile_uncached(mlir_text: str, flags: tuple[str, ...]) -> bytes:
    verify = VERIFY_EACH_PASS in flags
    process = process_flags(flags)
    set_process_flags(process)
    flags = tuple(f for f in flags if f != VERIFY_EACH_PASS and f not in process)
    session = new_session()
    ctx = session.context
    # IREE crashes (SIGSEGV) on ops of unknown dialects: make them a parse error instead.
    # IREE quirk: see tests/test_iree_quirks.py::test_unknown_dialect_op_crashes
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
    if not verify:
        _skip_verification(inv)
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
    try:
        with os.fdopen(fd, "w") as f:
            f.write(mlir_text)
    except BaseException:
        os.remove(path)
        raise
    return path


def discard_ir(error: CompileError) -> None:
    """Remove the IR ``error`` saved, once a retry compiled the program: nothing is left of
    a failure the user never sees."""
    if error.ir_path:
        with contextlib.suppress(OSError):
            os.remove(error.ir_path)


def _failure(what: str, detail: str, mlir_text: str) -> CompileError:
    detail = f"\n{detail}" if detail else ""
    try:
        path = _save_ir(mlir_text)
    except OSError as e:    # a full disk or a file-size limit: the error must still be told
        return CompileError(f"{what}.{detail}\nThe IR given to IREE could not be saved ({e})")
    return CompileError(f"{what}.{detail}\nThe IR given to IREE is saved in {path}",
                        ir_path=path)


def _atomic_write(path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    except OSError:
        return  # a read-only cache directory only costs compile time
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        # A full disk, a file-size limit or an interrupt: no partial file stays behind.
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if not isinstance(e, OSError):
            raise


_PROBE = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


@functools.cache
def check_target(flags: tuple[str, ...], what: str) -> None:
    """Compile a one-op program with ``flags`` (once per process): a target IREE does not
    know (a CPU or CUDA architecture name, an LLVM CPU feature) fails here with
    TargetOptionError naming ``what``, rather than as an IREE crash in the user's program.
    LLVM only warns of an unknown CPU feature (and ignores it): that warning is an error."""
    from ember.errors import TargetOptionError
    printed = []
    try:
        _compile(_PROBE, flags, printed=printed)
        lines = [ln for ln in "\n".join(printed).splitlines() if "is not a recognized" in ln]
    except CompileError as e:
        lines = [ln for ln in str(e).splitlines()[1:] if not ln.startswith("The IR given")]
    if lines:
        detail = "\n".join(dict.fromkeys(ln.strip() for ln in lines if ln.strip()))
        raise TargetOptionError(f"{what} is not a target IREE {_IREE_VERSION} compiles for: "
                                f"a one-op program failed with it:\n{detail}") from None
