"""Programs that read many arrays: a dict of 40 parameters, a stack of 40 arrays, sums of 32
to 1,000 arguments.

IREE's runtime loads no dispatch that binds more buffers than its target allows (32 in the HAL
module of every backend and on lavapipe, 16 on CUDA) and its compiler fuses past that limit:
such programs compiled, then failed when loaded ("binding count 34 > 32"). ember-fuse keeps its
fusions within the target's limit and ember-limit-bindings keeps IREE's own fusion within it
(tests/mlir/limit_bindings.mlir). Values are checked against NumPy in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import HAS_VULKAN
from iree.compiler import tools

import ember
import ember.numpy as enp
from ember.backends import get_backend, vulkan
from ember.errors import RuntimeFailure
from ember.passes import pipelines

BACKENDS = ["cpu", pytest.param("vulkan", marks=[
    pytest.mark.vulkan,
    pytest.mark.skipif(not HAS_VULKAN,
                       reason=f"no Vulkan device on this machine ({vulkan.INSTALL_HINT})")])]


def _arrays(n, shape=(5,), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def _sum(*args):
    total = args[0]
    for a in args[1:]:
        total = total + a
    return total


def _sum64(args):
    return np.sum(np.stack([a.astype(np.float64) for a in args]), axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_of_40_parameters(backend):
    params = dict(zip([f"layer{i}" for i in range(40)], _arrays(40, (3, 4))))
    x = _arrays(1, (3, 4), seed=1)[0]

    def step(params, x):
        total = sum(w * x for w in params.values())          # reads all 40 leaves at once
        return total, {k: w - 0.5 * total for k, w in params.items()}

    total, new = ember.jit(step, backend=backend)(params, x)
    want = sum(w.astype(np.float64) * x for w in params.values())
    np.testing.assert_allclose(np.asarray(total), want, rtol=1e-5, atol=1e-5)
    assert sorted(new) == sorted(params)
    for k, w in params.items():
        np.testing.assert_allclose(np.asarray(new[k]), w - 0.5 * want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stack_of_40(backend):
    xs = _arrays(40, (2, 3))

    def f(xs):
        return enp.stack(xs), enp.stack(xs, axis=-1).sum(axis=-1) * 2 + 1

    stacked, summed = ember.jit(f, backend=backend)(xs)
    np.testing.assert_array_equal(np.asarray(stacked), np.stack(xs))
    np.testing.assert_allclose(np.asarray(summed), _sum64(xs) * 2 + 1, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [32, 33, 64])
@pytest.mark.parametrize("backend", BACKENDS)
def test_sum_of_arguments(backend, n):
    xs = _arrays(n)
    got = ember.jit(_sum, backend=backend)(*xs)
    np.testing.assert_allclose(np.asarray(got), _sum64(xs), rtol=1e-5, atol=1e-5)


def test_thousand_arguments():
    """1,000 arguments (5 s of the test's 25 are tracing, 7 IREE's compile). Integers in
    float32 sum exactly, in any order."""
    xs = [np.full(3, i % 17, np.float32) + np.arange(3, dtype=np.float32) for i in range(1000)]
    got = ember.jit(lambda *a: _sum(*a) * 0.5)(*xs)
    np.testing.assert_array_equal(np.asarray(got), _sum64(xs) * 0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_export_and_load_40_arguments(backend, tmp_path):
    xs = _arrays(40)
    exported = ember.export(ember.jit(_sum), *xs, targets=(backend,))
    path = tmp_path / "sum40.vmfb"
    exported.save(path)
    got = ember.load(path, backend=backend)(*xs)
    np.testing.assert_allclose(np.asarray(got), _sum64(xs), rtol=1e-5, atol=1e-5)


def _bindings_per_dispatch(lowered, backend) -> list[int]:
    """The buffers each dispatch of IREE's executables binds, from the layouts IREE gives them
    (``#hal.pipeline.binding``s of each ``hal.executable.export``)."""
    text = tools.compile_str(
        lowered.as_text("linalg"), input_type="auto",
        extra_args=[*get_backend(backend).compiler_flags(), "--compile-to=executable-sources"])
    return [line.count("#hal.pipeline.binding<") for line in text.decode().splitlines()
            if "hal.executable.export" in line]


@pytest.mark.parametrize("backend, limit", [("cpu", 32), ("vulkan", 32), ("cuda", 16)])
def test_dispatches_bind_within_the_target_limit(backend, limit):
    """No dispatch binds more than the target loads (IREE's own count; CUDA's driver loads at
    most 16, which a machine without a GPU cannot check by running). The CUDA program
    compiles for a GPU with ``.lower().compile()``."""
    xs = _arrays(40)
    for f in (_sum, lambda *a: enp.stack(a) * 2, lambda *a: sum(enp.exp(x) for x in a)):
        lowered = ember.jit(f, backend=backend).lower(*xs)
        counts = _bindings_per_dispatch(lowered, backend)
        assert counts and max(counts) <= limit, counts
        if backend == "cuda":
            lowered.compile()


def test_load_failure_is_an_ember_error(monkeypatch):
    """Without ember's limits IREE fuses the 33 adds into one dispatch of 34 bindings, which
    its runtime refuses when it loads the module: an ember RuntimeFailure naming the limit,
    not IREE's raw IndexError."""
    monkeypatch.setattr(pipelines, "LOWER",
                        [n for n in pipelines.LOWER if n != "ember-limit-bindings"])
    monkeypatch.setattr(pipelines, "OPTIMIZE", [
        "ember-fuse{max-bindings=0}" if n == "ember-fuse" else n for n in pipelines.OPTIMIZE])
    with pytest.raises(RuntimeFailure, match=r"binds more buffers than the device allows "
                                             r"\(.*binding count 34 > 32"):
        ember.jit(_sum)(*_arrays(33))
