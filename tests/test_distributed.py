"""ember.distributed: processes started by ``mpiexec``, joined through mpi4py.

One launcher run (``mpiexec -n 4 python tests/_distributed_worker.py DIR``, about 15 s here)
serves every multi-process test: each rank writes what it saw to DIR, and the tests below
check it. The oracles: NumPy for the collectives' values, ``jax.grad`` on the full batch in
this process for the data-parallel training run.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember import distributed as dist
from ember.errors import DistributedError

N = 4
STEPS = 20
LR = 0.5
WORKER = pathlib.Path(__file__).with_name("_distributed_worker.py")


def _problem():
    rng = np.random.default_rng(39)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    labels = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 64)]
    return dict(x=x, labels=labels,
                w1=(rng.standard_normal((8, 32)) / np.sqrt(8)).astype(np.float32),
                b1=np.zeros(32, np.float32),
                w2=(rng.standard_normal((32, 4)) / np.sqrt(32)).astype(np.float32),
                b2=np.zeros(4, np.float32), lr=np.float32(LR), steps=np.int32(STEPS))


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """[(report dict, results npz)] per rank of one ``mpiexec -n 4`` run."""
    mpiexec = dist.mpiexec()
    if mpiexec is None:
        pytest.skip("mpiexec is not installed (pip install mpi4py mpich, the test extra)")
    out = tmp_path_factory.mktemp("distributed")
    np.savez(out / "problem.npz", **_problem())
    cmd = [mpiexec, "-n", str(N), sys.executable, str(WORKER), str(out)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpiexec -n {N} did not finish in 240 s:\n{e.stdout}\n{e.stderr}")
    assert proc.returncode == 0, f"mpiexec failed ({proc.returncode}):\n{proc.stdout}\n" \
                                 f"{proc.stderr[-4000:]}"
    return [(json.loads((out / f"rank{r}.json").read_text()), dict(np.load(out / f"rank{r}.npz")))
            for r in range(N)]


def _inputs(rank):
    """The worker's rank-dependent collective inputs (tests/_distributed_worker.py)."""
    return {"a": np.arange(6, dtype=np.float32).reshape(3, 2) * (rank + 1),
            "b": np.arange(4, dtype=np.int32) + rank, "c": np.float64(rank) / 3,
            "h": np.full(3, rank + 0.5, np.float16), "t": np.array([rank % 2 == 0, True])}


def test_ranks_join_and_initialize_checks_values_against_mpi(ranks):
    for r, (rep, _) in enumerate(ranks):
        assert (rep["rank"], rep["count"]) == (r, N)
        assert "num_processes=3" in rep["wrong_count"] and "started 4 processes" in \
            rep["wrong_count"]
        assert "process_id=7" in rep["wrong_id"] and f"rank {r} of 4" in rep["wrong_id"]
        assert rep["initialized_after_errors"] is False
        assert "called twice" in rep["twice"] and f"process {r} of 4" in rep["twice"]
        assert rep["after_shutdown"] == [False, 1]
        assert rep["early_psum"] == [2.0 * N] * 3     # a device made before initialize


def test_psum_and_pmean_equal_numpy(ranks):
    inputs = [_inputs(r) for r in range(N)]
    for k in inputs[0]:
        stack = np.stack([np.asarray(i[k]) for i in inputs])
        if stack.dtype == np.float16:
            total = stack.astype(np.float32).sum(0)
            want_sum, want_mean = total.astype(np.float16), (total / N).astype(np.float16)
        elif stack.dtype == np.bool_:
            want_sum = stack.sum(0, dtype=np.int32)
            want_mean = (want_sum / np.float32(N)).astype(np.float32)
        else:
            want_sum = stack.sum(0, dtype=stack.dtype)
            want_mean = want_sum / (np.float32(N) if stack.dtype.kind in "iu" else
                                    np.asarray(N, stack.dtype))
            want_mean = want_mean.astype(np.float32 if stack.dtype.kind in "iu" else
                                         stack.dtype)
        for _, res in ranks:
            got_sum, got_mean = res[f"psum_{k}"], res[f"pmean_{k}"]
            assert got_sum.dtype == want_sum.dtype and got_mean.dtype == want_mean.dtype, k
            # (MPI's order of summation is its own: float sums agree to rounding)
            np.testing.assert_allclose(got_sum, want_sum, rtol=1e-6, err_msg=k)
            np.testing.assert_allclose(got_mean, want_mean, rtol=1e-6, err_msg=k)
            # and every process gets the same bits
            np.testing.assert_array_equal(got_sum, ranks[0][1][f"psum_{k}"], err_msg=k)
    for rep, _ in ranks:
        # float32, int32, float64 and float16 (summed in float32): three buffers; the
        # booleans are counted in int32, with "b".
        assert rep["psum_calls"] == 3
        assert rep["psum_a_is_array"] and rep["psum_b_is_numpy"]


def test_process_allgather_stacks_or_tiles(ranks):
    a = np.stack([_inputs(r)["a"] for r in range(N)])
    for _, res in ranks:
        np.testing.assert_array_equal(res["gather_a"], a)
        np.testing.assert_array_equal(res["gather_tiled_a"], a.reshape(N * 3, 2))
        # scalars are stacked either way (JAX's rule)
        np.testing.assert_array_equal(res["gather_s"], np.arange(N, dtype=np.float32))
        np.testing.assert_array_equal(res["gather_tiled_s"], np.arange(N, dtype=np.float32))


def test_broadcast_one_to_all_and_barriers(ranks):
    for rep, res in ranks:
        np.testing.assert_array_equal(res["bcast_default"], np.zeros(3, np.int64))
        np.testing.assert_array_equal(res["bcast_2"], np.full(2, 20.0))
        assert "exactly one process" in rep["bcast_two_sources"] and "[0, 1]" in \
            rep["bcast_two_sources"]
        assert "another name" in rep["sync_mismatch"]


def _jax_training():
    """20 SGD steps on the full batch of 64, gradients from jax.grad (the oracle)."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    p = _problem()

    def loss(params, x, labels):
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(x @ w1 + b1)
        logp = jax.nn.log_softmax(h @ w2 + b2, axis=-1)
        return -jnp.mean(jnp.sum(logp * labels, axis=-1))

    params = ((p["w1"], p["b1"]), (p["w2"], p["b2"]))
    grad = jax.jit(jax.grad(loss))
    for _ in range(STEPS):
        g = grad(params, p["x"], p["labels"])
        params = jax.tree.map(lambda a, b: a - LR * b, params, g)
    (w1, b1), (w2, b2) = params
    return dict(w1=w1, b1=b1, w2=w2, b2=b2), float(loss(params, p["x"], p["labels"]))


def test_data_parallel_training_equals_the_single_process_run(ranks):
    want, _ = _jax_training()
    first = ranks[0][1]
    for k, v in want.items():
        # The parameters moved (a run that never applied its gradients would fail here).
        assert np.abs(np.asarray(v) - _problem()[k]).max() > 1e-2, k
        np.testing.assert_allclose(first[k], np.asarray(v), rtol=1e-4, atol=2e-5, err_msg=k)
    for rep, res in ranks:
        assert rep["allreduce_per_step"] == 1.0
        assert rep["assert_equal"] is None
        for k in want:
            np.testing.assert_array_equal(res[k], first[k], err_msg=k)   # every rank alike


# --- in this process: no launcher needed ------------------------------------------------------

@pytest.fixture
def fresh():
    dist._reset()
    yield
    dist._reset()


@pytest.mark.fast
def test_one_process_without_initialize(fresh):
    assert (ember.process_index(), ember.process_count(), dist.is_initialized()) == (0, 1, False)
    a = ember.device_put(np.arange(3, dtype=np.float32))
    s = dist.psum({"a": a, "n": np.int32(2)})
    assert s["a"] is a and s["n"] == 2
    assert dist.pmean(np.arange(3)).dtype == np.float32
    np.testing.assert_array_equal(dist.process_allgather(a), [[0, 1, 2]])
    np.testing.assert_array_equal(dist.process_allgather(a, tiled=True), [0, 1, 2])
    np.testing.assert_array_equal(dist.broadcast_one_to_all(a), [0, 1, 2])
    dist.sync_global_devices("alone")
    dist.shutdown()                       # nothing to leave: does nothing


@pytest.mark.fast
def test_initialize_without_mpi4py_says_what_to_install(fresh, monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)     # `from mpi4py import MPI` fails
    with pytest.raises(DistributedError, match=r"mpi4py.*pip install"):
        dist.initialize()
    assert not dist.is_initialized()


@pytest.mark.fast
def test_a_leaf_that_is_not_an_array_is_named(fresh):
    with pytest.raises(DistributedError, match="leaf #1 is not an array"):
        dist.psum([np.ones(2), object()])
