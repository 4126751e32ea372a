"""Shared test setup, and the backend parametrization.

The op test modules listed in ``BACKEND_MODULES`` run once per backend in
``EMBER_TEST_BACKENDS`` (comma-separated; default: "cpu", "vulkan" and "cuda-compile";
without a Vulkan device the Vulkan cases are skipped, each with the reason). Each test of
those modules gets an ``ember_backend`` parameter; the fixture makes that backend ember's
default for the test, so ``ember.jit``, eager calls and ``ember.device_put`` all target it
without the tests saying so.

- "cuda" runs the tests on an NVIDIA GPU (``pytest -m cuda`` selects them; skipped with the
  reason when the machine has none).
- "cuda-compile" runs on the CPU but also compiles every program for CUDA (no GPU needed), so
  CI checks that every op compiles for CUDA.
- The Vulkan tests compile for the device's own capabilities (the default target, "host").
- A test whose program uses a dtype or op the backend refuses (BackendUnsupportedError, e.g.
  64-bit integers on Vulkan) is skipped with the refusal as the reason, never passed.
- ``KNOWN_FAILURES`` lists tests that fail on a backend for a documented reason of the
  backend; they are expected failures there.
"""

import copy
import os

import numpy as np
import pytest

import ember
from ember.errors import BackendUnsupportedError, CompileError

# Every ember op and the NumPy-level families, run through jit and eager calls.
# test_ops.py runs every ember op (each dtype, special values, hypothesis) through jit: the
# op suite. Measured cold on the 2-core machine (loaded by other jobs): about 7 minutes on
# Vulkan (lavapipe compiles and runs slower than the CPU), so the NumPy-level modules, which
# build on the same ops, run on the CPU only.
BACKEND_MODULES = frozenset({"test_ops.py"})
KNOWN = ("cpu", "vulkan", "cuda", "cuda-compile")


def _has_devices(name: str) -> bool:
    from ember.backends import get_backend
    return bool(get_backend(name).devices())


def test_backends() -> list[str]:
    """The backends the parametrized modules run on (``EMBER_TEST_BACKENDS``)."""
    env = os.environ.get("EMBER_TEST_BACKENDS", "").strip()
    if env:
        names = [n.strip() for n in env.split(",") if n.strip()]
        unknown = [n for n in names if n not in KNOWN]
        if unknown:
            raise pytest.UsageError(f"EMBER_TEST_BACKENDS: unknown {unknown}; known {KNOWN}")
        return names
    # Vulkan is listed without a device too: its tests are then skipped, each with the
    # reason (left out, 126 cases vanished from the report without a word).
    return ["cpu", "vulkan", "cuda-compile"]


test_backends.__test__ = False   # not a test (pytest collects test_* names)


# Tests that fail on a backend for a documented reason of the backend (not of ember), found
# by running this suite there: "module::test" (every backend parameter) or the full node id
# suffix -> (backend, reason). They are expected failures (xfail, not strict), so a fix shows
# as XPASS.
# (test_ops.py::test_small_values_expm1_log1p was one on Vulkan until ember computed log1p
# without cancellation there.)
KNOWN_FAILURES: dict[str, tuple[str, str]] = {}


def _uses_vulkan(item) -> bool:
    return item.get_closest_marker("vulkan") is not None


@pytest.hookimpl(tryfirst=True)   # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        backend = getattr(item, "callspec", None) and item.callspec.params.get("ember_backend")
        if backend in (None, "cpu"):
            continue
        short = item.nodeid.split("tests/", 1)[-1]
        for key in (short, short.split("[", 1)[0]):
            known = KNOWN_FAILURES.get(key)
            if known is not None and known[0] == backend:
                item.add_marker(pytest.mark.xfail(reason=f"{backend}: {known[1]}",
                                                  strict=False))
                break
    # The tests that use a Vulkan device (marked "vulkan") run last, and in one xdist worker:
    # IREE 3.13's Vulkan device on Mesa's lavapipe keeps two threads spinning from its
    # creation to the end of the process, two cores' worth of CPU time taken from every other
    # test (a CPU-only test file ran 1.5x slower beside one). The others go to the workers a
    # test file at a time, so a file's shared compiled programs are compiled once.
    items[:] = ([i for i in items if not _uses_vulkan(i)] +
                [i for i in items if _uses_vulkan(i)])
    for item in items:
        item.add_marker(pytest.mark.xdist_group("vulkan" if _uses_vulkan(item)
                                                else item.path.name))


def _vulkan_device_created() -> bool:
    from ember.backends import vulkan
    return any("hal" in vars(d) for d in vulkan.devices())


def pytest_runtest_teardown(item):
    """A test that creates the Vulkan device must be marked "vulkan" (see above)."""
    if not _uses_vulkan(item) and _vulkan_device_created() and not item.config.stash.get(
            _VULKAN_REPORTED, False):
        item.config.stash[_VULKAN_REPORTED] = True
        pytest.fail(f"{item.nodeid} created the Vulkan device but is not marked "
                    "pytest.mark.vulkan (Vulkan tests run last: tests/conftest.py)")


_VULKAN_REPORTED = pytest.StashKey[bool]()


def pytest_deselected(items):
    """Remember deselected tests (-k, -m, --deselect): test_ops.py's coverage check needs
    the whole module to have run."""
    for item in items:
        item.config.stash.setdefault(DESELECTED, set()).add(item.nodeid)


DESELECTED = pytest.StashKey[set]()


@pytest.fixture
def deselected_tests(request) -> set[str]:
    """The node ids of the tests deselected in this session."""
    return request.config.stash.get(DESELECTED, set())


def pytest_addoption(parser):
    parser.addoption("--compile-census", metavar="FILE",
                     help="append each IREE compile that fails, with the test that made it, "
                          "to FILE: the programs ember compiled again (docs/design.md)")


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: runs on an NVIDIA GPU through IREE's CUDA driver")
    config.addinivalue_line("markers", "vulkan: runs on a Vulkan device (after the other tests)")
    if config.getoption("compile_census"):
        _record_failed_compiles(config.getoption("compile_census"))


def _record_failed_compiles(path: str) -> None:
    """Wrap IREE's compile so that each failure appends a line (test, IREE's first error) to
    ``path``. Tests that fail compiles on purpose (the error tests) are in it too."""
    from ember.backends import compiler
    real = compiler._compile

    def compile_(text, flags, **kw):
        try:
            return real(text, flags, **kw)
        except CompileError as e:
            with open(path, "a") as f:
                f.write(f"{os.environ.get('PYTEST_CURRENT_TEST', '?')}\t{e.reason[:300]}\n")
            raise
    compiler._compile = compile_


def pytest_generate_tests(metafunc):
    if os.path.basename(str(metafunc.definition.fspath)) not in BACKEND_MODULES:
        return
    params = []
    for name in test_backends():
        marks = [getattr(pytest.mark, name.split("-")[0])] if name != "cpu" else []
        params.append(pytest.param(name, id=name, marks=marks))
    metafunc.parametrize("ember_backend", params, indirect=True, scope="function")


@pytest.fixture(autouse=True)
def ember_backend(request, monkeypatch):
    """The backend a parametrized test runs on, made ember's default for the test."""
    name = getattr(request, "param", None)
    if name is None or name == "cpu":
        yield "cpu"
        return
    from ember.config import config
    from ember.frontend import api

    if name == "cuda-compile":
        original = api.Lowered.compile

        def compile_for_cuda_too(self, *args, **kwargs):
            if self.backend == "cpu":
                for_cuda = copy.copy(self)
                for_cuda.backend, for_cuda.device = "cuda", None
                # Its own stages: the CUDA lowering is not the CPU's (shared, the CPU ran
                # whichever was made first).
                for_cuda._modules = {"ember": self._modules["ember"]}
                for_cuda._text = {"ember": self._text["ember"]}
                for_cuda._steps = {}
                original(for_cuda)   # no GPU: compiles, checks legality, loads lazily
            return original(self, *args, **kwargs)

        # Programs the CPU run of the test compiled are in the jit caches, under the CPU's
        # key: forgotten, so that this run compiles them (for CUDA too) instead of reusing
        # them (it compiled nothing for CUDA then). The on-disk cache keeps the CPU compiles.
        api.clear_caches()
        monkeypatch.setattr(api.Lowered, "compile", compile_for_cuda_too)
        yield name
        return
    if not _has_devices(name):
        from ember.backends import get_backend
        pytest.skip(f"no {name} device on this machine ({get_backend(name).INSTALL_HINT})")
    from ember.backends import legality
    check = legality.check

    def check_or_skip(*args, **kwargs):
        # A skip, raised where the refusal happens: hypothesis re-raises skips at once instead
        # of shrinking (re-compiling) a "failure" that is no failure.
        try:
            return check(*args, **kwargs)
        except BackendUnsupportedError as e:
            pytest.skip(f"not run on {name}: {str(e).splitlines()[0]}")

    monkeypatch.setattr(legality, "check", check_or_skip)
    monkeypatch.setitem(config._values, "default_backend", name)
    yield name


@pytest.fixture
def config_value():
    """Set ember.config options for one test, restoring them (and the caches) after."""
    saved = dict(ember.config._values)
    yield ember.config.update
    for k, v in saved.items():
        if ember.config._values[k] != v:
            ember.config.update(k, v)


@pytest.fixture
def both_x64():
    """x64 on in ember and in JAX (the oracle) for the test."""
    jax = pytest.importorskip("jax")
    ember.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        ember.config.update("enable_x64", False)
        jax.config.update("jax_enable_x64", False)


@pytest.fixture
def jax():
    """JAX, the oracle of the tests that take it: they are skipped, with the reason, where it
    is missing, and the rest of their module still runs."""
    return pytest.importorskip("jax", reason="JAX is this test's oracle")


@pytest.fixture
def jnp(jax):
    """jax.numpy, as the ``jax`` fixture."""
    return jax.numpy


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def verify():
    """``verify(text, message=None)``: run ember-verify on MLIR text; with ``message``, expect
    it to fail with a PassError matching it."""
    def run(text: str, message: str | None = None) -> None:
        from ember._mlir import default_session, ir
        from ember.passes import make_pass
        from ember.passes.registry import PassError
        with default_session().context:
            module = ir.Module.parse(text)
            if message is None:
                make_pass("ember-verify").run(module)
                return
            with pytest.raises(PassError, match=message):
                make_pass("ember-verify").run(module)
    return run
