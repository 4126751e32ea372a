"""Shared test setup, and the backend parametrization.

The op test modules listed in ``BACKEND_MODULES`` run once per backend in
``EMBER_TEST_BACKENDS`` (comma-separated; default: "cpu", plus "vulkan" when this machine has
a Vulkan device, plus "cuda-compile"). Each test of those modules gets an ``ember_backend``
parameter; the fixture makes that backend ember's default for the test, so ``ember.jit``,
eager calls and ``ember.device_put`` all target it without the tests saying so.

- "cuda" runs the tests on an NVIDIA GPU (``pytest -m cuda`` selects them; skipped with the
  reason when the machine has none).
- "cuda-compile" runs on the CPU but also compiles every program for CUDA (no GPU needed), so
  CI checks that every op compiles for CUDA.
- On Mesa's lavapipe the Vulkan tests compile for its own capabilities (target "lavapipe").
- A test whose program uses a dtype the backend refuses (BackendUnsupportedError: float16 or
  float64 on Vulkan) is skipped with the error as the reason, never passed.
"""

import copy
import os

import numpy as np
import pytest

from ember.errors import BackendUnsupportedError

# Every ember op and the NumPy-level families, run through jit and eager calls.
BACKEND_MODULES = frozenset({
    "test_ops.py", "test_ufuncs.py", "test_reductions.py", "test_linalg.py", "test_shape.py",
    "test_indexing.py", "test_gather_scatter.py", "test_sorting.py", "test_control_flow.py",
    "test_bits.py", "test_creation.py", "test_nn.py"})
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
    return ["cpu"] + (["vulkan"] if _has_devices("vulkan") else []) + ["cuda-compile"]


test_backends.__test__ = False   # not a test (pytest collects test_* names)


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: runs on an NVIDIA GPU through IREE's CUDA driver")
    config.addinivalue_line("markers", "vulkan: runs on a Vulkan device")


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
                original(for_cuda)   # no GPU: compiles, checks legality, loads lazily
            return original(self, *args, **kwargs)

        monkeypatch.setattr(api.Lowered, "compile", compile_for_cuda_too)
        yield name
        return
    if not _has_devices(name):
        from ember.backends import get_backend
        pytest.skip(f"no {name} device on this machine ({get_backend(name).INSTALL_HINT})")
    monkeypatch.setitem(config._values, "default_backend", name)
    if name == "vulkan" and get_backend_device_name("vulkan").startswith("llvmpipe"):
        # Mesa's lavapipe: its own capabilities (float16, float64) instead of the generic
        # target's, which refuses both (test_backends.py tests the generic target).
        monkeypatch.setitem(config._values, "vulkan_target", "lavapipe")
    yield name


def get_backend_device_name(name: str) -> str:
    from ember.backends import get_backend
    return get_backend(name).device(0).name


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    try:
        return (yield)
    except BackendUnsupportedError as e:
        backend = pyfuncitem.funcargs.get("ember_backend", "cpu")
        if backend in ("cpu", "cuda-compile") or "test_backends" in pyfuncitem.nodeid:
            raise
        pytest.skip(f"not run on {backend}: {str(e).splitlines()[0]}")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
