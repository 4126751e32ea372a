"""One MPI rank of tests/test_distributed.py: ``mpiexec -n 4 python _distributed_worker.py DIR``.

Reads DIR/problem.npz (written by the test), and writes DIR/rank<i>.npz and
DIR/rank<i>.json: the errors of initialize's checks, the collectives' results on
rank-dependent inputs, and the parameters after 20 data-parallel SGD steps (each rank takes
its quarter of the batch, one ember.distributed.pmean of the gradients per step).
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

import ember
import ember.numpy as enp
from ember import distributed as dist
from ember.errors import DistributedError


def _error(fn) -> str | None:
    try:
        fn()
    except DistributedError as e:
        return str(e)
    return None


def loss(params, x, labels):
    (w1, b1), (w2, b2) = params
    h = enp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = ember.nn.log_softmax(logits, axis=-1)
    return -enp.mean(enp.sum(logp * labels, axis=-1))


def main(out: pathlib.Path) -> None:
    report: dict = {}
    # A device used before initialize: IREE must not take the launcher's MPI for its own
    # (ember/backends/runtime.py hides the launcher's variables from device creation).
    early = ember.jit(lambda v: v * 2)(np.ones(3, np.float32))
    # initialize's checks run before it joins anything, so a refused call leaves no state.
    report["wrong_count"] = _error(lambda: dist.initialize(num_processes=3))
    report["wrong_id"] = _error(lambda: dist.initialize(process_id=7))
    report["initialized_after_errors"] = dist.is_initialized()
    dist.initialize(coordinator_address="localhost:1234", num_processes=4)
    report["twice"] = _error(dist.initialize)
    rank, n = ember.process_index(), ember.process_count()
    report["rank"], report["count"] = rank, n
    report["early_psum"] = np.asarray(dist.psum(early)).tolist()
    results: dict[str, np.ndarray] = {}

    # Collectives on rank-dependent values (the test recomputes them with NumPy).
    a = ember.device_put(np.arange(6, dtype=np.float32).reshape(3, 2) * (rank + 1))
    tree = {"a": a, "b": np.arange(4, dtype=np.int32) + rank, "c": np.float64(rank) / 3,
            "h": np.full(3, rank + 0.5, np.float16), "t": np.array([rank % 2 == 0, True])}
    calls = dist.allreduce_calls
    s = dist.psum(tree)
    report["psum_calls"] = dist.allreduce_calls - calls      # one per summing dtype
    report["psum_a_is_array"] = isinstance(s["a"], ember.Array) and s["a"].device == a.device
    report["psum_b_is_numpy"] = type(s["b"]) is np.ndarray
    m = dist.pmean(tree)
    for k in tree:
        results[f"psum_{k}"] = np.asarray(s[k])
        results[f"pmean_{k}"] = np.asarray(m[k])
    g = dist.process_allgather({"a": a, "s": np.float32(rank)})
    gt = dist.process_allgather({"a": a, "s": np.float32(rank)}, tiled=True)
    results["gather_a"], results["gather_s"] = g["a"], g["s"]
    results["gather_tiled_a"], results["gather_tiled_s"] = gt["a"], gt["s"]
    results["bcast_default"] = dist.broadcast_one_to_all(
        {"x": np.full(3, rank, np.int64), "y": a})["x"]
    results["bcast_2"] = dist.broadcast_one_to_all(np.full(2, 10.0 * rank), is_source=rank == 2)
    report["bcast_two_sources"] = _error(
        lambda: dist.broadcast_one_to_all(np.zeros(1), is_source=rank < 2))
    dist.sync_global_devices("collectives done")
    report["sync_mismatch"] = _error(lambda: dist.sync_global_devices(f"barrier {rank % 2}"))

    # Data-parallel training: this rank's quarter of the batch, gradients averaged by one
    # allreduce per step, plain SGD.
    problem = np.load(out / "problem.npz")
    x, labels = problem["x"], problem["labels"]
    share = x.shape[0] // n
    mine = slice(rank * share, (rank + 1) * share)
    x_mine, y_mine = ember.device_put(x[mine]), ember.device_put(labels[mine])
    params = ember.device_put(((problem["w1"], problem["b1"]), (problem["w2"], problem["b2"])))
    lr = float(problem["lr"])
    grad = ember.jit(ember.grad(loss))
    sgd = ember.jit(lambda p, g: ember.tree_util.tree_map(lambda a, b: a - lr * b, p, g))
    calls = dist.allreduce_calls
    steps = int(problem["steps"])
    for _ in range(steps):
        params = sgd(params, dist.pmean(grad(params, x_mine, y_mine)))
    report["allreduce_per_step"] = (dist.allreduce_calls - calls) / steps
    (w1, b1), (w2, b2) = params
    results.update(w1=np.asarray(w1), b1=np.asarray(b1), w2=np.asarray(w2), b2=np.asarray(b2))
    report["assert_equal"] = _error(lambda: dist.assert_equal(params, "parameters"))

    dist.shutdown()
    report["after_shutdown"] = [dist.is_initialized(), ember.process_count()]
    np.savez(out / f"rank{rank}.npz", **results)
    (out / f"rank{rank}.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
