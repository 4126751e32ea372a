"""ember.pmap and ember.shard_map over several CPU devices: one IREE program spanning the
devices, checked against NumPy's values (and JAX's gradient for the training step)."""

import numpy as np
import pytest

import ember
import ember.numpy as enp
from ember.sharding import Mesh, NamedSharding, P, ShardedArray, ShardingError

N = 4


@pytest.fixture(autouse=True)
def four_cpu_devices():
    before = ember.config.cpu_devices
    ember.config.update("cpu_devices", N)
    yield
    ember.config.update("cpu_devices", before)


def rng(seed=0):
    return np.random.default_rng(seed)


def _loss(params, x, y, np_=enp):
    """Softmax cross-entropy of a 2-layer MLP, on ember.numpy or jax.numpy."""
    w1, b1, w2 = params
    h = np_.tanh(x @ w1 + b1)
    logits = h @ w2
    logp = logits - np_.log(np_.exp(logits).sum(-1, keepdims=True))
    return -(logp * y).sum(-1).mean()


def test_devices_are_distinct_and_listed():
    devs = ember.devices("cpu")
    assert len(devs) == N and len(set(devs)) == N and [d.id for d in devs] == list(range(N))
    with pytest.raises(ember.errors.BackendUnavailableError, match="4 CPU devices"):
        ember.backends.get_backend("cpu").device(N)


def test_pmap_elementwise_each_device_holds_its_slice():
    x = rng().normal(size=(N, 3, 5)).astype(np.float32)
    y = ember.pmap(lambda v: enp.sin(v) * 2 + 1)(x)
    assert isinstance(y, ShardedArray) and y.shape == x.shape
    np.testing.assert_allclose(np.asarray(y), np.sin(x) * 2 + 1, rtol=1e-6, atol=1e-6)
    assert [s.device for s in y.addressable_shards] == ember.devices("cpu")
    for d, s in enumerate(y.addressable_shards):
        assert s.data.device == ember.devices("cpu")[d] and s.data.shape == (3, 5)
        np.testing.assert_allclose(np.asarray(s.data), np.sin(x[d]) * 2 + 1, rtol=1e-6)


def test_collectives_across_devices_against_numpy():
    x = rng(1).normal(size=(N, 8)).astype(np.float32)

    def f(v):
        lax = ember.lax
        i = lax.axis_index("i")
        return {"sum": lax.psum(v, "i"), "mean": lax.pmean(v, "i"), "max": lax.pmax(v, "i"),
                "min": lax.pmin(v, "i"), "gather": lax.all_gather(v, "i"),
                "tiled": lax.all_gather(v, "i", tiled=True), "index": i,
                "shift": lax.ppermute(v, "i", [(j, (j + 1) % N) for j in range(N)]),
                "scatter": lax.psum_scatter(v.reshape(N, 2), "i")}
    out = ember.pmap(f, "i")(x)
    want = {"sum": np.broadcast_to(x.sum(0), x.shape), "mean": np.broadcast_to(x.mean(0), x.shape),
            "max": np.broadcast_to(x.max(0), x.shape), "min": np.broadcast_to(x.min(0), x.shape),
            "gather": np.broadcast_to(x, (N,) + x.shape),
            "tiled": np.broadcast_to(x.reshape(-1), (N, N * 8)), "index": np.arange(N),
            "shift": np.roll(x, 1, axis=0),
            "scatter": x.reshape(N, N, 2).sum(0)}
    for k, w in want.items():
        np.testing.assert_allclose(np.asarray(out[k]), w, rtol=1e-5, atol=1e-6, err_msg=k)


def test_program_spans_the_devices_with_iree_transfers():
    f = ember.pmap(lambda v: v / ember.lax.psum(v, "i"), "i")
    f(np.ones((N, 2), np.float32))
    (program,) = f._programs.values()
    text = program.lowered.as_text("linalg")
    assert text.count("flow.tensor.transfer") == 2 * (N - 1)
    for d in range(N):
        assert f"iree.abi.affinity = #hal.device.promise<@ember_device_{d}>" in text
    assert "ember-spmd" in program.lowered.pipeline("optimized")


def test_data_parallel_training_step_matches_jax_full_batch():
    jax = pytest.importorskip("jax", reason="JAX's gradient is the oracle")
    jnp = jax.numpy

    def step(params, x, y):
        g = ember.grad(_loss)(params, x, y)
        g = ember.lax.pmean(g, "batch")
        return [p - 0.5 * d for p, d in zip(params, g)]

    r = rng(2)
    params = [r.normal(size=(5, 8)).astype(np.float32) * 0.5,
              np.zeros(8, np.float32), r.normal(size=(8, 3)).astype(np.float32) * 0.5]
    x = r.normal(size=(N * 8, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[r.integers(0, 3, N * 8)]
    pstep = ember.pmap(step, "batch", in_axes=(None, 0, 0), out_axes=None)
    want = [jnp.asarray(p) for p in params]
    got = params
    for _ in range(5):
        got = pstep(got, x.reshape(N, 8, 5), y.reshape(N, 8, 3))
        g = jax.grad(lambda p: _loss(p, x, y, jnp))(want)
        want = [p - 0.5 * d for p, d in zip(want, g)]
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-6)


def test_sharded_result_feeds_the_next_call_where_it_lies():
    f = ember.pmap(lambda v: v * 2)
    y = f(np.arange(N * 3, dtype=np.float32).reshape(N, 3))
    (program,) = f._programs.values()
    from ember.frontend.sharding import _shards_of
    shards = _shards_of(y, program.in_layouts[0], program.in_avals[0], program.devices)
    assert all(a is s.data for a, s in zip(shards, y.addressable_shards))
    np.testing.assert_array_equal(np.asarray(f(y)), np.arange(N * 3).reshape(N, 3) * 4)
    assert len(f._programs) == 1


def test_out_axes_none_of_a_mapped_output_is_an_error():
    with pytest.raises(ShardingError, match="out_axes is None"):
        ember.pmap(lambda v: v * 2, "i", out_axes=None)(np.ones((N, 2), np.float32))


def test_errors_name_what_is_wrong():
    with pytest.raises(ShardingError, match="requires 8 logical devices"):
        ember.pmap(lambda v: v)(np.ones((8, 2), np.float32))
    with pytest.raises(ShardingError, match="inconsistent sizes"):
        ember.pmap(lambda a, b: a + b)(np.ones((N, 2), np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(ShardingError, match="inside a traced function"):
        ember.jit(lambda v: ember.pmap(lambda u: u)(v))(np.ones((N, 2), np.float32))
    mesh = Mesh(ember.devices("cpu"), ("i",))
    with pytest.raises(ShardingError, match="does not divide 6"):
        ember.shard_map(lambda v: v, mesh, P("i"), P("i"))(np.ones(6, np.float32))
    with pytest.raises(ShardingError, match="does not have"):
        ember.shard_map(lambda v: v, mesh, P("j"), P("j"))(np.ones(8, np.float32))


def test_shard_map_blocks_and_replicated_results():
    mesh = Mesh(ember.devices("cpu"), ("i",))
    x = rng(3).normal(size=(N * 2, 3)).astype(np.float32)

    def f(block):
        return block - block.mean(0), ember.lax.psum(block.sum(0), "i")
    centered, total = ember.shard_map(f, mesh, in_specs=P("i"), out_specs=(P("i"), P()))(x)
    blocks = x.reshape(N, 2, 3)
    np.testing.assert_allclose(np.asarray(centered),
                               (blocks - blocks.mean(1, keepdims=True)).reshape(x.shape),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(total), x.sum(0), rtol=1e-5)
    with pytest.raises(ShardingError, match="varies along it"):
        ember.shard_map(lambda b: b.sum(0), mesh, in_specs=P("i"), out_specs=P())(x)


def test_shard_map_on_a_two_dimensional_mesh():
    devs = np.array(ember.devices("cpu")).reshape(2, 2)
    mesh = Mesh(devs, ("rows", "cols"))
    x = rng(4).normal(size=(4, 6)).astype(np.float32)

    def f(block):       # each device: a (2, 3) block; sum over the column devices
        return ember.lax.psum(block, "cols") * (ember.lax.axis_index("rows") + 1)
    out = ember.shard_map(f, mesh, in_specs=P("rows", "cols"), out_specs=P("rows"))(x)
    want = np.concatenate([(x[:2, :3] + x[:2, 3:]) * 1, (x[2:, :3] + x[2:, 3:]) * 2])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)


def test_device_put_with_a_named_sharding():
    mesh = Mesh(ember.devices("cpu"), ("data",))
    x = np.arange(N * 2 * 3, dtype=np.float32).reshape(N * 2, 3)
    s = ember.device_put(x, NamedSharding(mesh, P("data")))
    assert [sh.data.shape for sh in s.addressable_shards] == [(2, 3)] * N
    assert [sh.index for sh in s.addressable_shards][1] == (slice(2, 4), slice(0, 3))
    np.testing.assert_array_equal(np.asarray(s), x)
    # a plain jit takes it too (gathered to the host)
    np.testing.assert_array_equal(np.asarray(ember.jit(lambda v: v + 1)(s)), x + 1)


def test_replicated_result_is_on_every_device_and_feeds_an_unmapped_argument():
    f = ember.pmap(lambda w, x: w + ember.lax.psum(x, "i"), "i", in_axes=(None, 0),
                   out_axes=None)
    x = np.arange(N * 2, dtype=np.float32).reshape(N, 2)
    w = f(np.zeros(2, np.float32), x)
    assert [s.device for s in w.addressable_shards] == ember.devices("cpu")
    np.testing.assert_array_equal(np.asarray(w), x.sum(0))
    w2 = f(w, x)
    (program,) = f._programs.values()
    from ember.frontend.sharding import _shards_of
    shards = _shards_of(w, program.in_layouts[0], program.in_avals[0], program.devices)
    assert all(a is s.data for a, s in zip(shards, w.addressable_shards))
    np.testing.assert_array_equal(np.asarray(w2), 2 * x.sum(0))



def test_jit_with_shardings_partitions_a_training_step_as_jax_computes_it():
    jax = pytest.importorskip("jax", reason="JAX's value and gradient are the oracle")
    mesh = Mesh(ember.devices("cpu"), ("data",))
    rows, whole = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    r = rng(5)
    params = [r.normal(size=(5, 8)).astype(np.float32), np.zeros(8, np.float32),
              r.normal(size=(8, 3)).astype(np.float32)]
    x = r.normal(size=(N * 8, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[r.integers(0, 3, N * 8)]
    f = ember.jit(ember.value_and_grad(_loss), in_shardings=(whole, rows, rows))
    loss, grads = f(params, x, y)
    want_loss, want_grads = jax.value_and_grad(
        lambda p: _loss(p, x, y, jax.numpy))(params)
    np.testing.assert_allclose(np.asarray(loss), want_loss, rtol=1e-5)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-6)
    # Partitioned, not gathered: the batch's sums are psums (transfers), nothing all_gathers.
    (program,) = f._programs.values()
    text = program.lowered.as_text("optimized")
    assert "ember.all_gather" not in text and "ember.transfer" in text


def test_jit_with_shardings_keeps_rows_split_and_gathers_what_has_no_rule():
    mesh = Mesh(ember.devices("cpu"), ("data",))
    rows = NamedSharding(mesh, P("data"))
    x = rng(6).normal(size=(N * 3, 5)).astype(np.float32)
    w = rng(7).normal(size=(5, 2)).astype(np.float32)

    def f(x, w):
        h = enp.tanh(x @ w)                     # rows stay split
        return h, enp.sort(h, axis=0), enp.cumsum(x, axis=0).T
    h, s, c = ember.jit(f, in_shardings=(rows, None), out_shardings=(rows, None, None))(x, w)
    want = np.tanh(x @ w)
    assert h.sharding.spec == P("data") and [sh.data.shape for sh in h.addressable_shards] \
        == [(3, 2)] * N
    np.testing.assert_allclose(np.asarray(h), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(s), np.sort(want, axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(c), np.cumsum(x, axis=0).T, rtol=1e-5, atol=1e-5)


def test_jit_with_shardings_errors():
    mesh2 = Mesh(np.array(ember.devices("cpu")).reshape(2, 2), ("a", "b"))
    with pytest.raises(ShardingError, match="mesh of one axis"):
        ember.jit(lambda v: v, in_shardings=NamedSharding(mesh2, P("a")))(np.ones(4))
    mesh = Mesh(ember.devices("cpu"), ("data",))
    with pytest.raises(ShardingError, match="does not divide 6"):
        ember.jit(lambda v: v, in_shardings=NamedSharding(mesh, P("data")))(
            np.ones(6, np.float32))
    with pytest.raises(NotImplementedError, match="static"):
        ember.jit(lambda v: v, in_shardings=NamedSharding(mesh, P()), static_argnums=0)
