"""Batch inference over a large input with an exported ``.vmfb``, in a pool of MPI ranks.

    mpiexec -n 4 python examples/serve_vmfb.py            # 4 ranks share the rows
    python examples/serve_vmfb.py                         # one process
    mpiexec -n 2 python examples/serve_vmfb.py --rows 65536 --chunk 1024 --json

Rank 0 exports a model (an MLP, 64 -> 256 -> 256 -> 10 with softmax, its weights baked into
the module) with ``ember.export(...).save(path)`` and writes the input rows to an ``.npy``
file; after a barrier every rank loads the module with ``ember.load`` (the IREE runtime
only: the compiler is not needed to serve), runs its contiguous share of the rows in chunks
of the exported batch size, and the results are gathered on rank 0, which checks a sample
against NumPy and prints the throughput. ``--dir`` must be a folder every rank sees (the
same machine, or a shared file system on a cluster).

Needs ``pip install "ember[distributed]"`` (mpi4py and the mpich wheel, which has
``mpiexec``); ``python -m benchmarks.processes`` runs it with 1, 2 and 4 ranks.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import tempfile
import time

import numpy as np

import ember

SIZES = (64, 256, 256, 10)


def make_params(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             (0.1 * rng.standard_normal(n)).astype(np.float32))
            for m, n in zip(SIZES[:-1], SIZES[1:])]


def predict_numpy(params, x):
    """The model in NumPy (the check of the served results)."""
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    z = x @ w + b
    z = np.exp(z - z.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def export_model(path: pathlib.Path, chunk: int) -> float:
    """Export the model for batches of ``chunk`` rows to ``path``; the seconds it took."""
    import ember.numpy as enp

    params = make_params()

    def predict(x):
        for w, b in params[:-1]:
            x = enp.tanh(x @ w + b)
        w, b = params[-1]
        return ember.nn.softmax(x @ w + b, axis=-1)

    t0 = time.perf_counter()
    spec = ember.ShapeDtypeStruct((chunk, SIZES[0]), np.float32)
    ember.export(ember.jit(predict), spec).save(path)
    return time.perf_counter() - t0


def serve(model, rows: np.ndarray, chunk: int) -> np.ndarray:
    """Run ``rows`` through the loaded ``model`` in chunks of its batch size (the last one
    padded with zeros)."""
    out = np.empty((rows.shape[0], SIZES[-1]), np.float32)
    for start in range(0, rows.shape[0], chunk):
        x = np.asarray(rows[start:start + chunk], np.float32)
        n = x.shape[0]
        if n < chunk:
            x = np.concatenate([x, np.zeros((chunk - n, x.shape[1]), np.float32)])
        out[start:start + n] = model(x)[:n]
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=131072, help="input rows (default 131072)")
    ap.add_argument("--chunk", type=int, default=2048, help="rows per call (default 2048)")
    ap.add_argument("--dir", type=pathlib.Path,
                    default=pathlib.Path(tempfile.gettempdir()) / "ember_serve_vmfb",
                    help="a folder every rank sees (model.vmfb and inputs.npy go there)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="serve the rows this many times; the median time is reported")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = ap.parse_args(argv)

    ember.distributed.initialize()              # first: before anything touches a device
    rank, n = ember.process_index(), ember.process_count()
    model_path, inputs_path = args.dir / "model.vmfb", args.dir / "inputs.npy"
    export_s = 0.0
    if rank == 0:
        args.dir.mkdir(parents=True, exist_ok=True)
        export_s = export_model(model_path, args.chunk)
        rng = np.random.default_rng(1)
        np.save(inputs_path, rng.standard_normal((args.rows, SIZES[0])).astype(np.float32))
    ember.distributed.sync_global_devices("model and inputs written")

    t0 = time.perf_counter()
    model = ember.load(model_path)              # no compiler needed from here on
    inputs = np.load(inputs_path, mmap_mode="r")
    # Equal shares (whole chunks) so that the results gather as one array.
    share = -(-args.rows // (n * args.chunk)) * args.chunk
    mine = inputs[rank * share:(rank + 1) * share]
    model(np.zeros((args.chunk, SIZES[0]), np.float32))     # warm-up call
    load_s = time.perf_counter() - t0

    times = []
    for _ in range(args.repeat):
        ember.distributed.sync_global_devices("start")      # all ranks start together
        t0 = time.perf_counter()
        out = serve(model, mine, args.chunk)
        if out.shape[0] < share:                # the last ranks' shares may run short
            out = np.concatenate([out, np.zeros((share - out.shape[0], SIZES[-1]),
                                                np.float32)])
        everything = ember.distributed.process_allgather(out, tiled=True)[:args.rows]
        times.append(time.perf_counter() - t0)
    seconds = float(np.median(times))

    report = {}
    if rank == 0:
        sample = np.r_[0:256, args.rows - 256:args.rows]
        want = predict_numpy(make_params(), np.asarray(inputs[sample]))
        np.testing.assert_allclose(everything[sample], want, rtol=1e-4, atol=1e-6)
        report = dict(ranks=n, rows=args.rows, chunk=args.chunk, seconds=seconds,
                      rows_per_s=args.rows / seconds, export_s=export_s, load_s=load_s)
        if args.json:
            print(json.dumps(report))
        else:
            print(f"{n} rank{'s' if n > 1 else ''}: {args.rows} rows in {seconds:.3f} s "
                  f"({args.rows / seconds:,.0f} rows/s; export {export_s:.2f} s, "
                  f"load + first call {load_s:.3f} s); results checked against NumPy")
    ember.distributed.shutdown()
    return report


if __name__ == "__main__":
    main()
