"""Several processes (``ember.distributed`` over MPI), ``python -m benchmarks.processes``
(issue 39, "Across processes and machines").

Run from the repository root (needs ``pip install -e ".[distributed]"``: mpi4py and the
mpich wheel, which has ``mpiexec``):

    python -m benchmarks.processes            # about a minute
    python -m benchmarks.processes --quick

Each figure comes from its own ``mpiexec -n P`` run, P = 1, 2 and 4:

1. Serving: ``examples/serve_vmfb.py`` (an exported MLP 64-256-256-10 in a ``.vmfb``, loaded
   by every rank with ``ember.load``, 131072 rows in chunks of 2048, gathered on rank 0 and
   checked against NumPy): rows per second, the median of the repeats.
2. A data-parallel training step (``ember.jit(ember.grad(loss))`` on the rank's share of a
   fixed global batch, one ``ember.distributed.pmean`` of the gradients, an SGD update) on
   two MLPs: ``small`` (8-32-4, batch 64: the one tests/test_distributed.py checks) and
   ``mlp`` (784-512-512-10, batch 256, 670k parameters: 2.7 MB of gradients). Medians of
   single steps (all ranks start each step together, after a barrier) of the whole step, of
   the gradient alone, and of the ``pmean`` alone on fresh device arrays (the per-step
   overhead of the collective: read back, pack, ``MPI_Allreduce``, upload), beside a bare
   ``MPI_Allreduce`` of a host buffer of the same size. With one process ``pmean`` returns
   its input (there is nothing to reduce).

On a 2-core machine P processes share two cores (and IREE's CPU device in each starts a worker
per core), so more processes cannot be faster: the point is correctness and the cost of the
collective. The machine's other load moves the serving figures by tens of percent.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.timing import Table, fmt_time, log

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROCESSES = (1, 2, 4)
MODELS = {"small": ((8, 32, 4), 64), "mlp": ((784, 512, 512, 10), 256)}


# --- inside each MPI rank -------------------------------------------------------------------

def _loss(params, x, labels):
    import ember
    import ember.numpy as enp

    h = x
    for w, b in params[:-1]:
        h = enp.tanh(h @ w + b)
    w, b = params[-1]
    logp = ember.nn.log_softmax(h @ w + b, axis=-1)
    return -enp.mean(enp.sum(logp * labels, axis=-1))


def _problem(sizes, batch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    params = [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
               np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    return x, labels, params


def _ms(samples) -> float:
    return statistics.median(samples) * 1e3


def worker(model: str, steps: int) -> None:
    """One rank of the data-parallel benchmark; rank 0 prints the figures as JSON."""
    import ember
    from ember import distributed as dist
    from ember import tree_util

    dist.initialize()
    rank, n = ember.process_index(), ember.process_count()
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    sizes, batch = MODELS[model]
    x, labels, params = _problem(sizes, batch)
    share = batch // n
    mine = slice(rank * share, (rank + 1) * share)
    x_mine, y_mine = ember.device_put(x[mine]), ember.device_put(labels[mine])
    params = ember.device_put(params)
    grad = ember.jit(ember.grad(_loss))
    sgd = ember.jit(lambda p, g: tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g))

    def ready(tree):
        for leaf in tree_util.tree_leaves(tree):
            leaf.block_until_ready()
        return tree

    step_s, grad_s, pmean_s, raw_s = [], [], [], []
    for i in range(steps + 3):                   # 3 warm-up steps (compiles, first calls)
        comm.Barrier()
        t0 = time.perf_counter()
        g = ready(grad(params, x_mine, y_mine))
        t1 = time.perf_counter()
        params = ready(sgd(params, dist.pmean(g)))
        t2 = time.perf_counter()
        if i >= 3:
            step_s.append(t2 - t0)
            grad_s.append(t1 - t0)
    host = [np.asarray(leaf) for leaf in tree_util.tree_leaves(g)]
    treedef = tree_util.tree_structure(g)
    flat = np.concatenate([h.ravel() for h in host])
    for _ in range(steps):
        fresh = tree_util.tree_unflatten(treedef, [ember.device_put(h) for h in host])
        comm.Barrier()
        t0 = time.perf_counter()
        ready(dist.pmean(fresh))
        t1 = time.perf_counter()
        comm.Barrier()
        t2 = time.perf_counter()
        comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
        t3 = time.perf_counter()
        pmean_s.append(t1 - t0)
        raw_s.append(t3 - t2)
    dist.shutdown()
    if rank == 0:
        print(json.dumps(dict(model=model, processes=n, parameters=int(flat.size),
                              step_ms=_ms(step_s), grad_ms=_ms(grad_s),
                              pmean_ms=_ms(pmean_s), allreduce_ms=_ms(raw_s))))


# --- the driver ------------------------------------------------------------------------------

def _mpiexec(n: int, args: list[str], timeout: float = 300) -> dict:
    from ember.distributed import mpiexec as find_mpiexec
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit("mpiexec not found: pip install mpi4py mpich (the distributed extra)")
    proc = subprocess.run([mpiexec, "-n", str(n), sys.executable, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"mpiexec -n {n} {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(quick: bool) -> int:
    steps = 10 if quick else 30
    repeat = 3 if quick else 5
    serving, training = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in PROCESSES:
            log(f"serving, {n} rank(s)")
            serving[n] = _mpiexec(n, [str(ROOT / "examples" / "serve_vmfb.py"), "--json",
                                      "--repeat", str(repeat), "--dir", tmp])
    for model in MODELS:
        for n in PROCESSES:
            log(f"data-parallel step, {model}, {n} process(es)")
            training[model, n] = _mpiexec(n, ["-m", "benchmarks.processes", "--worker", model,
                                              "--steps", str(steps)])

    print(f"ember.distributed over MPI (mpi4py, {_mpi_name()}); {os.cpu_count()} cores; "
          f"medians of {steps} steps, serving of {repeat} repeats")
    table = Table(["", *(f"{n} process{'es' if n > 1 else ''}" for n in PROCESSES)],
                  "<" + ">" * len(PROCESSES))
    rows = serving[1]["rows"]
    table.add(f"serving: {rows} rows, rows/s",
              *(f"{serving[n]['rows_per_s']:,.0f}" for n in PROCESSES))
    table.add("  time", *(fmt_time(serving[n]["seconds"] * 1e9) for n in PROCESSES))
    for model, (sizes, batch) in MODELS.items():
        table.section()
        params = training[model, 1]["parameters"]
        table.add(f"{model} ({'-'.join(map(str, sizes))}, batch {batch}, {params:,} params)",
                  *([""] * len(PROCESSES)))
        for key, what in (("step_ms", "  step (grad + pmean + SGD)"),
                          ("grad_ms", "  grad of the rank's share"),
                          ("pmean_ms", "  pmean alone (the overhead)"),
                          ("allreduce_ms", "  bare MPI_Allreduce, same bytes")):
            table.add(what, *(fmt_time(training[model, n][key] * 1e6) for n in PROCESSES))
    print(table.render())
    return 0


def _mpi_name() -> str:
    try:
        from importlib.metadata import version
        return f"mpich {version('mpich')}"
    except Exception:
        return "MPI"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    parser.add_argument("--worker", choices=sorted(MODELS), help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=30, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.steps)
        return 0
    return run(args.quick)


if __name__ == "__main__":
    sys.exit(main())
