"""Several devices in one process: ``python -m benchmarks.devices``.

Run from the repository root:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.devices          # ~1 min
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.devices --quick

What is measured, in one process and one run (CPU; ``EMBER_CPU_DEVICES`` is set here):

1. A large batched program (an MLP forward, 4096 rows of 512, two 512x512 layers with tanh,
   and a softmax cross-entropy against one-hot labels) as one ``ember.jit`` program on one
   device (IREE's worker threads on all cores), and as ``ember.pmap`` over 1, 2 and 4 CPU
   devices (one program spanning the devices, each device a quarter of the rows for 4),
   against ``jax.jit`` on one device and ``jax.pmap`` over 1, 2 and 4 devices of
   ``--xla_force_host_platform_device_count=4``. Inputs are on the devices beforehand (a
   sharded array for the rows, the weights replicated).
2. The cost of a collective across devices: ``pmap(lambda x: x * 2)`` against
   ``pmap(lambda x: psum(x * 2))`` on 256k floats a device, over 2 and 4 devices: the
   difference is the all-reduce (IREE's cross-device transfers and the adds).
3. A data-parallel training step (the same MLP, ``grad`` then ``pmean`` of the gradients),
   per step, on 1, 2 and 4 devices, against ember.jit of the full-batch step.
4. Across processes (unless ``--no-processes``): ``benchmarks/processes.py``, the data-parallel
   step and the serving example with 1, 2 and 4 MPI processes (``mpiexec``).

Times are medians of single calls after warm-up (``benchmarks/timing.py``). Every result is
checked against NumPy once; a wrong one shows WRONG and the exit status is 1. On a 2-core
machine the point is correctness and the overhead of spreading a program over devices, not a
speed-up: ember's CPU devices share the host's cores (IREE's local-task devices of one
process share its worker pool), as XLA's forced host devices do.
"""

from __future__ import annotations

import argparse
import os
import sys

N_MAX = 4
# Set before JAX or ember is imported: both read their device counts once.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           f" --xla_force_host_platform_device_count={N_MAX}").strip()
os.environ.setdefault("EMBER_CPU_DEVICES", str(N_MAX))

import numpy as np  # noqa: E402

import ember  # noqa: E402
import ember.numpy as enp  # noqa: E402
from benchmarks.timing import Table, fmt_ratio, fmt_time, steady_ns  # noqa: E402

ROWS, WIDTH, CLASSES = 4096, 512, 16


def _loss(params, x, y, np_):
    w1, w2, w3 = params
    h = np_.tanh(x @ w1)
    h = np_.tanh(h @ w2)
    logits = h @ w3
    logp = logits - np_.log(np_.exp(logits).sum(-1, keepdims=True))
    return -(logp * y).sum(-1).mean()


def _data():
    r = np.random.default_rng(0)
    params = [(r.normal(size=s) / np.sqrt(s[0])).astype(np.float32)
              for s in ((WIDTH, WIDTH), (WIDTH, WIDTH), (WIDTH, CLASSES))]
    x = r.normal(size=(ROWS, WIDTH)).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[r.integers(0, CLASSES, ROWS)]
    return params, x, y


def _check(name, got, want, wrong, rtol=2e-4):
    try:
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol)
    except AssertionError as e:
        wrong.append(name)
        print(f"WRONG {name}: {str(e).splitlines()[-1]}", file=sys.stderr)


def _call(fn, *args):
    """``fn(*args)``, waited for, as a closure of its own (for steady_ns in a loop)."""
    def run():
        out = fn(*args)
        ready = getattr(out, "block_until_ready", None)
        return ready() if ready is not None else out
    return run


def _per_shard(n, *arrays):
    return [a.reshape((n, a.shape[0] // n) + a.shape[1:]) for a in arrays]


def forward(table, repeats, wrong, jax):
    params, x, y = _data()
    want = float(_loss(params, x.astype(np.float64), y, np))
    base = ember.jit(lambda p, x, y: _loss(p, x, y, enp))
    dp = [ember.device_put(p) for p in params]
    dx, dy = ember.device_put(x), ember.device_put(y)
    _check("ember.jit", base(dp, dx, dy), want, wrong)
    ref = steady_ns(_call(base, dp, dx, dy), repeats)
    table.add("forward", "ember.jit, 1 device", fmt_time(ref), "1.00x")
    for n in (1, 2, 4):
        f = ember.pmap(lambda p, x, y: _loss(p, x, y, enp), "d", in_axes=(None, 0, 0))
        xs, ys = (ember.pmap(lambda a: a)(a) for a in _per_shard(n, x, y))
        mesh = ember.sharding.Mesh(ember.devices("cpu")[:n], ("d",))
        ps = ember.device_put(params, ember.sharding.NamedSharding(mesh, ember.sharding.P()))
        _check(f"ember.pmap {n}", np.mean(np.asarray(f(ps, xs, ys))), want, wrong)
        t = steady_ns(_call(f, ps, xs, ys), repeats)
        table.add("forward", f"ember.pmap, {n} devices", fmt_time(t), fmt_ratio(t / ref))
    if jax is None:
        return
    jnp = jax.numpy
    jf = jax.jit(lambda p, x, y: _loss(p, x, y, jnp))
    jp = [jax.device_put(p) for p in params]
    jx, jy = jax.device_put(x), jax.device_put(y)
    _check("jax.jit", jf(jp, jx, jy), want, wrong)
    t = steady_ns(_call(jf, jp, jx, jy), repeats)
    table.add("forward", "jax.jit, 1 device", fmt_time(t), fmt_ratio(t / ref))
    for n in (1, 2, 4):
        f = jax.pmap(lambda p, x, y: _loss(p, x, y, jnp), "d", in_axes=(None, 0, 0))
        xs, ys = (jax.pmap(lambda a: a)(a) for a in _per_shard(n, x, y))
        _check(f"jax.pmap {n}", np.mean(np.asarray(f(jp, xs, ys))), want, wrong)
        t = steady_ns(_call(f, jp, xs, ys), repeats)
        table.add("forward", f"jax.pmap, {n} devices", fmt_time(t), fmt_ratio(t / ref))


def collectives(table, repeats, wrong, jax):
    size = 256 * 1024
    for n in (2, 4):
        x = np.random.default_rng(n).normal(size=(n, size)).astype(np.float32)
        xs = ember.pmap(lambda a: a)(x)
        plain = ember.pmap(lambda a: a * 2)
        reduced = ember.pmap(lambda a: ember.lax.psum(a * 2, "d"), "d")
        _check(f"psum {n}", reduced(xs), np.broadcast_to(2 * x.sum(0), x.shape), wrong)
        t0 = steady_ns(_call(plain, xs), repeats)
        t1 = steady_ns(_call(reduced, xs), repeats)
        table.add("psum 1 MiB/device", f"ember, {n} devices: x*2 -> psum(x*2)",
                  f"{fmt_time(t0)} -> {fmt_time(t1)}", f"+{fmt_time(t1 - t0)}")
        if jax is not None:
            jxs = jax.pmap(lambda a: a)(x)
            jplain = jax.pmap(lambda a: a * 2)
            jred = jax.pmap(lambda a: jax.lax.psum(a * 2, "d"), "d")
            t0 = steady_ns(_call(jplain, jxs), repeats)
            t1 = steady_ns(_call(jred, jxs), repeats)
            table.add("psum 1 MiB/device", f"jax, {n} devices: x*2 -> psum(x*2)",
                      f"{fmt_time(t0)} -> {fmt_time(t1)}", f"+{fmt_time(t1 - t0)}")


def training(table, repeats, wrong):
    params, x, y = _data()

    def step(p, x, y, mean=None):
        g = ember.grad(lambda p: _loss(p, x, y, enp))(p)
        if mean is not None:
            g = ember.lax.pmean(g, mean)
        return [a - 0.1 * b for a, b in zip(p, g)]
    full = ember.jit(step)
    want = [np.asarray(a) for a in full(params, x, y)]
    on_device = [ember.device_put(a) for a in params], ember.device_put(x), ember.device_put(y)
    ref = steady_ns(_call(full, *on_device), repeats)
    table.add("train step", "ember.jit full batch", fmt_time(ref), "1.00x")
    for n in (1, 2, 4):
        f = ember.pmap(lambda p, x, y: step(p, x, y, "d"), "d", in_axes=(None, 0, 0),
                       out_axes=None)
        xs, ys = (ember.pmap(lambda a: a)(a) for a in _per_shard(n, x, y))
        got = f(params, xs, ys)
        for i, (a, b) in enumerate(zip(got, want)):
            _check(f"train {n} param {i}", a, b, wrong, rtol=1e-4)
        t = steady_ns(_call(f, got, xs, ys), repeats)
        table.add("train step", f"ember.pmap, {n} devices, pmean", fmt_time(t),
                  fmt_ratio(t / ref))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-processes", action="store_true",
                        help="leave out the multi-process part (benchmarks.processes)")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 20
    try:
        import jax
    except ImportError:
        jax = None
    print(f"ember CPU devices: {len(ember.devices('cpu'))}; JAX devices: "
          f"{len(jax.devices()) if jax else 'n/a'}; {os.cpu_count()} cores")
    table = Table(["case", "contender", "time", "vs first row"], "<<>>")
    wrong: list[str] = []
    forward(table, repeats, wrong, jax)
    table.section()
    collectives(table, repeats, wrong, jax)
    table.section()
    training(table, repeats, wrong)
    print(table.render())
    status = 1 if wrong else 0
    if not args.no_processes:
        from benchmarks import processes
        print("\nSeveral processes (benchmarks/processes.py):")
        status |= processes.main(["--quick"] if args.quick else [])
    return status


if __name__ == "__main__":
    sys.exit(main())
