"""The compile worker's lifetime (ember issue 37): ``ember.clear_caches()`` ends it, with a
compile in flight in another thread too; ``compile_worker`` False leaves none behind; an idle
timeout ends it. Whether a process is there is read from /proc (a process that has exited but
is not reaped is a zombie: its memory is freed, and it counts as gone), not from ember."""

import os
import threading
import time

import numpy as np
import pytest
from helpers import run_threads

import ember
import ember.numpy as enp
from ember.backends import compiler, cpu
from ember.config import Config

X = np.linspace(-2.0, 2.0, 7, dtype=np.float32)
TIMEOUT = 60

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"),
                                reason="reads processes' states from /proc (Linux)")


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def worker_children() -> list[int]:
    """This process's children that run the compile worker, exited ones included."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError):
            continue            # gone meanwhile
        if ppid == os.getpid() and b"_compile_worker.py" in cmdline:
            pids.append(int(entry))
    return pids


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"not within {TIMEOUT} s: {what}"
        time.sleep(0.02)


@pytest.fixture(autouse=True)
def settings():
    """Compiles that reach IREE (no disk cache), and the worker options restored after."""
    saved = {name: getattr(ember.config, name) for name in
             ("compile_cache", "compile_worker", "compile_worker_idle_timeout",
              "compile_workers")}
    ember.config.update("compile_cache", False)
    yield
    for name, value in saved.items():
        ember.config.update(name, value)
    ember.clear_caches()


def check(k: float, f=enp.sin, ref=np.sin) -> None:
    got = np.asarray(ember.jit(lambda x: f(x) + k)(X))
    np.testing.assert_allclose(got, ref(X) + k, rtol=2e-6, atol=2e-6)


def test_clear_caches_ends_the_worker():
    check(1.0)
    pid = compiler._workers[()][0].proc.pid
    assert running(pid)
    ember.clear_caches()
    with pytest.raises(ProcessLookupError):     # ended and reaped
        os.kill(pid, 0)
    assert worker_children() == []
    check(2.0, enp.cos, np.cos)                 # a new worker, started by the compile
    new = compiler._workers[()][0].proc.pid
    assert running(new) and new != pid


def test_clear_caches_during_a_compile_in_another_thread(monkeypatch):
    """clear_caches returns at once while another thread waits for the worker's reply; that
    compile gets its own module, and the worker ends after it."""
    real_read = compiler.read_message
    in_flight, go_on = threading.Event(), threading.Event()

    def read(f):
        in_flight.set()
        assert go_on.wait(TIMEOUT)
        return real_read(f)

    monkeypatch.setattr(compiler, "read_message", read)
    failures = []

    def compile_in_thread():
        try:
            check(3.0, enp.tanh, np.tanh)
        except BaseException as e:      # reported below, from the main thread
            failures.append(e)

    thread = threading.Thread(target=compile_in_thread)
    thread.start()
    assert in_flight.wait(TIMEOUT)
    pid = compiler._workers[()][0].proc.pid
    clearing = threading.Thread(target=ember.clear_caches)
    clearing.start()
    clearing.join(TIMEOUT)
    assert not clearing.is_alive(), "clear_caches waited for the compile in flight"
    assert running(pid)                 # the compile in flight keeps its worker
    go_on.set()
    thread.join(TIMEOUT)
    assert not failures, failures
    monkeypatch.undo()
    assert not running(pid)
    assert not compiler._workers.get(())
    check(4.0, enp.exp, np.exp)


def test_compiles_in_threads_beside_repeated_clear_caches():
    """Two threads compile while a third clears the caches every 50 ms: every program gives
    NumPy's values."""
    programs = [(enp.sin, np.sin), (enp.cos, np.cos)]
    failures, done = [], threading.Event()

    def compile_all(k):
        try:
            for i, (f, ref) in enumerate(programs):
                check(k + i, f, ref)
        except BaseException as e:      # reported below, from the main thread
            failures.append(e)

    def clear_repeatedly():
        while not done.wait(0.05):
            ember.clear_caches()

    clearing = threading.Thread(target=clear_repeatedly)
    clearing.start()
    threads = [threading.Thread(target=compile_all, args=(k,)) for k in (10.0, 20.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    done.set()
    clearing.join(TIMEOUT)
    assert not failures, failures
    ember.clear_caches()
    assert worker_children() == []


def test_no_resident_worker_when_compile_worker_is_off(monkeypatch):
    check(5.0)
    kept = compiler._workers[()][0].proc.pid
    ember.config.update("compile_worker", False)
    assert not running(kept)            # the kept worker ends with the change
    started = []
    real_init = compiler._Worker.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        started.append(self.proc.pid)

    monkeypatch.setattr(compiler._Worker, "__init__", init)
    check(6.0, enp.cos, np.cos)
    check(7.0, enp.tanh, np.tanh)
    assert len(started) == 2            # a child per compile (not in this process)
    assert worker_children() == []
    assert not any(running(pid) for pid in started)


def test_making_a_jitted_function_starts_the_worker_ahead_of_its_compile(monkeypatch):
    """ember.jit starts the worker when it makes the function (IREE's compiler imports while
    the program goes on); a started worker that gets no request leaves after
    PRESTART_IDLE_TIMEOUT; with compile_worker off nothing starts before a compile."""
    ember.clear_caches()
    assert worker_children() == []
    monkeypatch.setattr(compiler, "PRESTART_IDLE_TIMEOUT", 0.5)
    ember.jit(lambda x: x + 10.0)
    assert [compiler._workers[()][0].proc.pid] == worker_children()     # before any call
    worker = compiler._workers[()][0]
    wait_until(lambda: not running(worker.proc.pid), "the unused worker exits")
    check(10.0)                         # a new worker compiles it
    ember.clear_caches()
    ember.config.update("compile_worker", False)
    ember.jit(lambda x: x + 11.0)
    assert not compiler._workers.get(()) and worker_children() == []


def test_an_idle_worker_exits_after_its_timeout():
    ember.config.update("compile_worker_idle_timeout", 0.5)
    check(8.0)
    worker = compiler._workers[()][0]
    wait_until(lambda: not running(worker.proc.pid), "the idle worker exits")
    assert worker.proc.wait() == compiler.IDLE_EXIT
    check(9.0, enp.cos, np.cos)         # a new worker
    assert compiler._workers[()][0] is not worker


def test_a_request_to_a_worker_that_exits_idle_goes_to_a_new_one(monkeypatch):
    """The worker's timeout runs out as a request is written (the parent saw it running):
    the request is sent again to a new worker."""
    ember.config.update("compile_worker_idle_timeout", 0.5)
    check(11.0)
    worker = compiler._workers[()][0]
    wait_until(lambda: not running(worker.proc.pid), "the idle worker exits")
    monkeypatch.setattr(worker.proc, "poll", lambda: None)     # not seen to have exited
    check(12.0, enp.exp, np.exp)
    assert compiler._workers[()][0] is not worker
    assert worker.proc.returncode == compiler.IDLE_EXIT


@pytest.mark.parametrize("name, value", [
    ("compile_worker", 0), ("compile_worker", "no"), ("compile_worker_idle_timeout", 0),
    ("compile_worker_idle_timeout", -1.0), ("compile_worker_idle_timeout", float("nan")),
    ("compile_worker_idle_timeout", float("inf")), ("compile_worker_idle_timeout", True),
    ("compile_worker_idle_timeout", "60")])
def test_bad_worker_options_are_refused(name, value):
    before = getattr(ember.config, name)
    with pytest.raises(ValueError, match=name):
        ember.config.update(name, value)
    assert getattr(ember.config, name) == before


def test_worker_options_from_the_environment(monkeypatch):
    monkeypatch.delenv("EMBER_NO_COMPILE_WORKER", raising=False)
    monkeypatch.delenv("EMBER_COMPILE_WORKER_IDLE_TIMEOUT", raising=False)
    assert Config().compile_worker is True
    assert Config().compile_worker_idle_timeout is None
    monkeypatch.setenv("EMBER_NO_COMPILE_WORKER", "1")
    monkeypatch.setenv("EMBER_COMPILE_WORKER_IDLE_TIMEOUT", "2.5")
    assert Config().compile_worker is False
    assert Config().compile_worker_idle_timeout == 2.5
    for bad in ("0", "soon", "-3", "nan"):
        monkeypatch.setenv("EMBER_COMPILE_WORKER_IDLE_TIMEOUT", bad)
        with pytest.raises(ValueError, match="EMBER_COMPILE_WORKER_IDLE_TIMEOUT"):
            Config()


def test_verifying_each_pass_changes_no_module(monkeypatch):
    """IREE's check of the IR after each pass is off unless asked for (it only costs time):
    the same module either way, and the worker is asked through ember's own flag."""
    text = ember.jit(lambda x: enp.tanh(x * 3).sum(-1)).lower(
        np.ones((4, 8), np.float32)).as_text("linalg")
    flags = cpu.compiler_flags()
    plain = compiler._compile_uncached(text, flags)
    assert compiler._compile_uncached(text, flags + (compiler.VERIFY_EACH_PASS,)) == plain
    sent = []
    real = compiler._Worker.compile
    monkeypatch.setattr(compiler._Worker, "compile",
                        lambda w, t, f: sent.append(f) or real(w, t, f))
    monkeypatch.setitem(ember.config._values, "compile_verify", True)
    assert compiler._compile(text, flags) == plain
    monkeypatch.setitem(ember.config._values, "compile_verify", False)
    assert compiler._compile(text, flags) == plain
    assert [compiler.VERIFY_EACH_PASS in f for f in sent] == [True, False]
    monkeypatch.setenv("EMBER_COMPILE_VERIFY", "1")
    assert Config().compile_verify is True


def test_the_worker_imports_only_what_it_uses(tmp_path):
    """The worker starts without ember's package __init__ (the whole library), ml_dtypes or
    IREE's runtime: their imports took most of its start, while a worker started ahead of
    need slowed the program running beside it. It reads an end of file and exits 0."""
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(compiler.__file__), "_compile_worker.py")
    done = subprocess.run([sys.executable, "-X", "importtime", script,
                           str(tmp_path / "log"), ""], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert {"ember.backends.compiler", "iree.compiler"} <= imported
    assert not imported & {"ml_dtypes", "iree.runtime", "ember.numpy", "ember.lax",
                           "ember.frontend"}, sorted(imported)


SPLAT_IR = """
func.func @main(%a: tensor<f32>) -> tensor<64xf32> {
  %v = tensor.extract %a[] : tensor<f32>
  %e = tensor.empty() : tensor<64xf32>
  %s = linalg.fill ins(%v : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %s : tensor<64xf32>
}
"""


def test_process_wide_flags_get_a_worker_of_their_own(monkeypatch):
    """IREE options that are the process's, not a session's (compiler.PROCESS_FLAGS), are set
    in a worker started with them; the default worker stays as it was. The flag (fills as
    dispatches) changes the module, and both modules fill correctly."""
    import iree.runtime as rt
    flags = cpu.compiler_flags()
    emulated = flags + ("--iree-stream-emulate-memset",)
    plain_module = compiler.compile_mlir(SPLAT_IR, flags, use_cache=False)
    emulated_module = compiler.compile_mlir(SPLAT_IR, emulated, use_cache=False)
    assert plain_module != emulated_module
    assert {(), ("--iree-stream-emulate-memset",)} <= set(compiler._workers)
    assert compiler._workers[("--iree-stream-emulate-memset",)][0].proc.args[-1] == \
        "--iree-stream-emulate-memset"
    assert compiler.compile_mlir(SPLAT_IR, flags, use_cache=False) == plain_module
    for module in (plain_module, emulated_module):
        config = rt.Config("local-sync")
        ctx = rt.SystemContext(config=config)
        ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, module))
        got = np.asarray(ctx.modules.module["main"](np.array(2.5, np.float32)))
        np.testing.assert_array_equal(got, np.full(64, 2.5, np.float32))
    # In a process whose flags are set, other flags are refused, naming both sets.
    monkeypatch.setattr(compiler, "_process_flags", ("--iree-stream-emulate-memset",))
    with pytest.raises(ember.errors.CompileError, match="process-wide flags"):
        compiler.set_process_flags(())


def _in_flight_together(monkeypatch, threads: int) -> tuple[list, int]:
    """Compile ``threads`` programs in as many threads, each worker's reply read only once
    every compile is in flight (or after 5 s): the most that were in flight at once, and the
    worker processes that compiled them."""
    real_read = compiler.read_message
    lock, arrived, most = threading.Lock(), [], [0]
    everyone = threading.Event()

    def read(f):
        with lock:
            arrived.append(f)
            most[0] = max(most[0], len(arrived))
            if len(arrived) == threads:
                everyone.set()
        everyone.wait(5)
        try:
            return real_read(f)
        finally:
            with lock:
                arrived.remove(f)

    monkeypatch.setattr(compiler, "read_message", read)
    pids = set()
    real_compile = compiler._Worker.compile
    monkeypatch.setattr(compiler._Worker, "compile",
                        lambda w, t, fl: pids.add(w.proc.pid) or real_compile(w, t, fl))
    run_threads(threads, lambda k: check(10.0 + k), TIMEOUT)
    monkeypatch.undo()
    return sorted(pids), most[0]


def test_compiles_in_two_threads_run_in_two_workers_at_once(monkeypatch):
    """compile_workers=2: a compile that finds the worker busy starts a second one, and both
    compile at once; the second, started for the rush, exits after EXTRA_IDLE_TIMEOUT idle.
    compile_workers=1: the second compile waits for the first."""
    ember.config.update("compile_workers", 2)
    monkeypatch.setattr(compiler, "EXTRA_IDLE_TIMEOUT", 1.0)
    check(9.0)                          # the first worker runs
    first = compiler._workers[()][0].proc.pid
    pids, most = _in_flight_together(monkeypatch, 2)
    assert most == 2 and len(pids) == 2 and first in pids
    (extra,) = set(pids) - {first}
    wait_until(lambda: not running(extra), "the extra worker exits, idle")
    assert running(first)
    ember.clear_caches()
    ember.config.update("compile_workers", 1)
    pids, most = _in_flight_together(monkeypatch, 2)
    assert most == 1 and len(pids) == 1


def test_bad_compile_workers_is_refused():
    with pytest.raises(ValueError, match="compile_workers"):
        ember.config.update("compile_workers", 0)
