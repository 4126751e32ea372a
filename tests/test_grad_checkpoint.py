"""ember.checkpoint under reverse mode, with JAX's policies: gradients equal to JAX's (with
and without checkpointing), and the recomputation visible in the IR: what a policy saves is
read back, everything else is recomputed in the backward pass."""

from collections import Counter

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

# (print_saved_residuals is public; the function it prints is not exported)
from jax._src.ad_checkpoint import saved_residuals

import ember
import ember.numpy as enp
from ember.ad_checkpoint import checkpoint_name

RNG = np.random.default_rng(1)
W1 = [RNG.normal(size=(16, 32)).astype(np.float32) * 0.3 for _ in range(3)]
W2 = [RNG.normal(size=(32, 16)).astype(np.float32) * 0.3 for _ in range(3)]
X = RNG.normal(size=(8, 16)).astype(np.float32)

POLICIES = {
    "nothing_saveable": (ember.checkpoint_policies.nothing_saveable,
                         jax.checkpoint_policies.nothing_saveable),
    "dots_saveable": (ember.checkpoint_policies.dots_saveable,
                      jax.checkpoint_policies.dots_saveable),
    "dots_with_no_batch_dims_saveable": (
        ember.checkpoint_policies.dots_with_no_batch_dims_saveable,
        jax.checkpoint_policies.dots_with_no_batch_dims_saveable),
    "everything_saveable": (ember.checkpoint_policies.everything_saveable,
                            jax.checkpoint_policies.everything_saveable),
    "save_only_these_names": (ember.checkpoint_policies.save_only_these_names("hidden"),
                              jax.checkpoint_policies.save_only_these_names("hidden")),
}


def _loss(m, checkpoint, name, policy):
    def block(a, b, h):
        z = name(h @ a, "hidden")
        return h + m.sin(m.tanh(z)) @ b

    if checkpoint is not None:
        block = checkpoint(block, policy=policy)

    def loss(params, x):
        h = x
        for a, b in zip(*params):
            h = block(a, b, h)
        return (h ** 2).mean()
    return loss


@pytest.mark.parametrize("policy", POLICIES)
def test_gradients_as_jax(policy):
    mine, theirs = POLICIES[policy]
    got = ember.jit(ember.grad(_loss(enp, ember.checkpoint, checkpoint_name, mine)))(
        (W1, W2), X)
    want = jax.grad(_loss(jnp, jax.checkpoint, jax.ad_checkpoint.checkpoint_name, theirs))(
        (W1, W2), X)
    plain = ember.jit(ember.grad(_loss(enp, None, lambda v, n: v, None)))((W1, W2), X)
    for g, w, p in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                       jax.tree_util.tree_leaves(plain)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(np.asarray(g), np.asarray(p), rtol=1e-6, atol=1e-7)


def _recomputed(policy) -> dict:
    """The ops the backward pass recomputes, by name, after ember-differentiate."""
    text = ember.jit(ember.grad(_loss(enp, ember.checkpoint, checkpoint_name, policy))).lower(
        (W1, W2), X).compiler_ir("optimized")
    ops = {}
    from ember._mlir import walk
    for op in walk(text.operation):
        if "ember.rematerialized" in op.attributes:
            ops[op.name] = ops.get(op.name, 0) + 1
    return ops


def test_policies_decide_what_is_recomputed():
    # Three blocks: nothing saved -> the first dot, tanh and sin of each block recomputed
    # (the second dot's result is not read by the backward pass) ...
    nothing = _recomputed(ember.checkpoint_policies.nothing_saveable)
    assert nothing.get("ember.dot_general") == 3 and nothing.get("ember.tanh") == 3
    # ... dots saved -> no dot recomputed, the elementwise ops still are ...
    dots = _recomputed(ember.checkpoint_policies.dots_saveable)
    assert "ember.dot_general" not in dots and dots.get("ember.tanh") == 3
    # ... the named value (the first dot's result) saved: the same ...
    named = _recomputed(ember.checkpoint_policies.save_only_these_names("hidden"))
    assert "ember.dot_general" not in named and named.get("ember.sin") == 3
    # ... a name no value has: as nothing_saveable.
    assert _recomputed(ember.checkpoint_policies.save_only_these_names("other")) == nothing
    # ... everything saved -> nothing recomputed.
    assert _recomputed(ember.checkpoint_policies.everything_saveable) == {}



def _residuals(saved):
    """JAX's or ember's saved residuals as (arguments, named values, other shapes)."""
    args = sorted(src for _, src in saved if src.startswith("from the argument"))
    named = sorted((tuple(a.shape), src.split(" from ")[0]) for a, src in saved
                   if src.startswith("named"))
    other = sorted(tuple(a.shape) for a, src in saved
                   if not src.startswith(("from the argument", "named")))
    return args, named, other


@pytest.mark.parametrize("policy", POLICIES)
def test_saved_residuals_as_jax(policy):
    """``ember.ad_checkpoint.saved_residuals`` against JAX's: the same arguments, the same
    named values and values of the same shapes kept for the backward pass. Without a
    checkpoint (everything_saveable) ember keeps fewer: tanh's derivative is computed from
    its output in the forward pass, so the output itself is not kept (JAX keeps both)."""
    mine, theirs = POLICIES[policy]
    args = ((W1[:2], W2[:2]), X)
    got = _residuals(ember.ad_checkpoint.saved_residuals(
        _loss(enp, ember.checkpoint, checkpoint_name, mine), *args))
    want = _residuals(saved_residuals(
        _loss(jnp, jax.checkpoint, jax.ad_checkpoint.checkpoint_name, theirs), *args))
    assert got[:2] == want[:2]
    if policy == "everything_saveable":
        assert not Counter(got[2]) - Counter(want[2]) and len(got[2]) < len(want[2]), (
            got, want)
    else:
        assert got[2] == want[2]


def test_unknown_policy_is_refused():
    with pytest.raises(ember.errors.ArgumentError, match="not supported"):
        ember.checkpoint(lambda x: x, policy="save_nothing_at_all")


def test_checkpointing_lowers_irees_transient_memory():
    """The recomputation survives IREE (its CSE merged it back into the forward pass, and a
    shared constant joined every layer's backward work into one fusion): IREE's own
    transient figure drops with every block checkpointed, and the gradients stay JAX's."""
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics

    rng = np.random.default_rng(3)
    width, batch = 128, 512
    params = ([rng.normal(size=(width, 4 * width)).astype(np.float32) / 12 for _ in range(6)],
              [rng.normal(size=(4 * width, width)).astype(np.float32) / 24 for _ in range(6)])
    x = rng.normal(size=(batch, width)).astype(np.float32)
    policy = POLICIES["nothing_saveable"]
    want = jax.grad(_loss(jnp, jax.checkpoint, lambda v, n: v, policy[1]))(params, x)
    iree = {}
    for checkpoint in (None, ember.checkpoint):
        f = ember.jit(ember.grad(_loss(enp, checkpoint, lambda v, n: v, policy[0])))
        lowered = f.lower(params, x)
        flags, _ = lowered.iree_flags(cpu, {})
        iree[checkpoint] = program_statistics(lowered.as_text("linalg"),
                                              flags).transient_memory_size
        got = lowered.compile()(params, x)
        for g, w in zip(ember.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-6)
    # Each block keeps its 4x-wide hidden activations (a 1 MiB tanh and its sin) without
    # checkpointing; with it, only the block's input (256 KiB).
    assert iree[ember.checkpoint] <= 0.8 * iree[None], iree


def _mlp_loss(m, checkpoint, segment):
    """Eight layers of tanh(h @ w + b), ``segment`` layers at a time checkpointed
    (nothing_saveable), or none."""
    def layers(ps, h):
        for w, b in ps:
            h = m.tanh(h @ w + b)
        return h

    def loss(params, x):
        if checkpoint is None:
            return (layers(params, x) ** 2).mean()
        policy = POLICIES["nothing_saveable"][checkpoint is jax.checkpoint]
        step = checkpoint(layers, policy=policy)
        for i in range(0, len(params), segment):
            x = step(params[i:i + segment], x)
        return (x ** 2).mean()
    return loss


def test_recomputed_products_keep_no_packed_copies():
    """With data tiling IREE packs a product's operands and computes the product in kernels
    of their own; a recomputed layer reads copies of its product's operands (and a recomputed
    call becomes its callee's ops), or IREE's CSE merged the product or its packed weights
    with the forward pass's, live until the backward pass: every layer checkpointed took more
    than none (20.3 against 14.3 MiB here). IREE's own figures, gradients JAX's."""
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics

    rng = np.random.default_rng(4)
    width, batch = 256, 1024            # activations of 1 MiB, weights of 256 KiB
    params = [(rng.normal(size=(width, width)).astype(np.float32) / width ** 0.5,
               rng.normal(size=width).astype(np.float32) / 8) for _ in range(8)]
    x = rng.normal(size=(batch, width)).astype(np.float32)
    want = jax.grad(_mlp_loss(jnp, jax.checkpoint, 4))(params, x)
    iree = {}
    for checkpoint, segment in ((None, 0), (ember.checkpoint, 1), (ember.checkpoint, 4)):
        lowered = ember.jit(ember.grad(_mlp_loss(enp, checkpoint, segment))).lower(params, x)
        flags, _ = lowered.iree_flags(cpu, {})
        assert "--iree-opt-data-tiling=true" in flags
        iree[segment] = program_statistics(lowered.as_text("linalg"),
                                           flags).transient_memory_size
        if segment == 4:
            got = lowered.compile()(params, x)
            for g, w in zip(ember.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-6)
    # Every layer keeps its input, as without checkpoints each its output; segments of four
    # keep two inputs and recompute four layers.
    assert iree[1] <= iree[0], iree
    assert iree[4] <= 0.85 * iree[0], iree


def _attention_loss(m, nn, checkpoint, policy):
    """Blocks of single-head attention with a residual, each checkpointed with
    ``policy`` (or not)."""
    def block(p, x):
        q, k, v = x @ p[0], x @ p[1], x @ p[2]
        att = nn.softmax(q @ k.T / 8.0, axis=-1)
        return x + m.tanh(att @ v)

    if checkpoint is not None:
        block = checkpoint(block, policy=policy)

    def loss(params, x):
        for p in params:
            x = block(p, x)
        return (x ** 2).mean()
    return loss


def test_dots_saveable_recomputes_the_softmax():
    """With dots_saveable a block keeps its products' outputs (the 512x512 scores among them)
    and the backward pass recomputes the rest (the softmax, its exponentials and masks).
    ember-fuse had fused that recomputation with the forward pass's ops, which kept its
    results until the backward pass: each block then added 2.5 MiB to IREE's figure, not
    the 1.6 MiB that the saved values take. IREE's own figures, gradients JAX's."""
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics

    rng = np.random.default_rng(5)
    params = [[rng.normal(size=(64, 64)).astype(np.float32) / 8 for _ in range(3)]
              for _ in range(4)]
    x = rng.normal(size=(512, 64)).astype(np.float32)
    policy = POLICIES["dots_saveable"]
    iree = {}
    for blocks in (2, 4):
        loss = _attention_loss(enp, ember.nn, ember.checkpoint, policy[0])
        lowered = ember.jit(ember.grad(loss)).lower(params[:blocks], x)
        flags, _ = lowered.iree_flags(cpu, {})
        iree[blocks] = program_statistics(lowered.as_text("linalg"),
                                          flags).transient_memory_size
    want = jax.grad(_attention_loss(jnp, jax.nn, jax.checkpoint, policy[1]))(params, x)
    got = lowered.compile()(params, x)
    for g, w in zip(ember.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-6)
    saved = 512 * 512 * 4 + 5 * 512 * 64 * 4       # scores; q, k, v, att @ v and the input
    per_block = (iree[4] - iree[2]) / 2
    assert per_block <= 1.05 * saved, (per_block, saved)


def _transformer_loss(m, nn):
    """Blocks of single-head attention and a GELU MLP, each with a residual."""
    def loss(params, x):
        for wq, wk, wv, w1, w2 in params:
            att = nn.softmax((x @ wq) @ (x @ wk).T / 8.0, axis=-1)
            x = x + att @ (x @ wv)
            x = x + nn.gelu(x @ w1) @ w2
        return (x ** 2).mean()
    return loss


def test_softmax_and_gelu_keep_what_jax_keeps():
    """Reverse mode through ``nn.softmax`` keeps its result alone (JAX's custom JVP) and
    through ``nn.gelu`` its derivative alone: differentiating their ops kept five arrays of
    the scores' size per softmax (the exponentials, the max's tie masks, the normalizer) and
    six of the hidden layer's per GELU. IREE's figure grows per block by no more than XLA's
    (2.3 against 1.4 MiB before); gradients JAX's."""
    from ember.backends import cpu
    from ember.backends.statistics import program_statistics

    rng = np.random.default_rng(6)
    d, s = 64, 512
    params = [[rng.normal(size=shape).astype(np.float32) / shape[0] ** 0.5
               for shape in ((d, d), (d, d), (d, d), (d, 4 * d), (4 * d, d))]
              for _ in range(4)]
    x = rng.normal(size=(s, d)).astype(np.float32)
    iree, xla = {}, {}
    for blocks in (2, 4):
        lowered = ember.jit(ember.grad(_transformer_loss(enp, ember.nn))).lower(
            params[:blocks], x)
        flags, _ = lowered.iree_flags(cpu, {})
        iree[blocks] = program_statistics(lowered.as_text("linalg"),
                                          flags).transient_memory_size
        ma = jax.jit(jax.grad(_transformer_loss(jnp, jax.nn))).lower(
            params[:blocks], x).compile().memory_analysis()
        xla[blocks] = ma.temp_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes
    want = jax.grad(_transformer_loss(jnp, jax.nn))(params, x)
    got = lowered.compile()(params, x)
    # (four blocks of float32 attention over 512 keys: JAX's own gradients are 7e-6 from
    # float64's, ember's 1.2e-5, on values up to 0.6)
    for g, w in zip(ember.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-5)
    assert iree[4] - iree[2] <= xla[4] - xla[2], (iree, xla)
