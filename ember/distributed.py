"""Several processes, one program: ``ember.distributed`` joins processes started by MPI.

ember does not start processes or move bytes between machines itself: an MPI launcher
(``mpiexec``, ``srun``) starts one Python process per rank, ``initialize()`` joins them
through `mpi4py <https://mpi4py.readthedocs.io>`_, and the collectives below run MPI's own
allreduce, allgather and broadcast on host buffers (device buffers are read back to the host,
the results copied to the leaves' device). ``pip install "ember[distributed]"`` installs
``mpi4py`` and the ``mpich`` wheel (MPI itself, with ``mpiexec``); any other MPI that
``mpi4py`` is built against works too. ``import ember`` does not need ``mpi4py``: it is
imported by :func:`initialize`.

The functions have the names and meaning of JAX's ``jax.distributed`` and
``jax.experimental.multihost_utils``: :func:`initialize`, :func:`shutdown`,
:func:`process_index`, :func:`process_count`, :func:`process_allgather`,
:func:`broadcast_one_to_all`, :func:`sync_global_devices`, :func:`assert_equal`; and
:func:`psum` / :func:`pmean` over the process axis, which JAX writes as a ``psum`` inside a
``pmap``/``shard_map`` over every device of every process. Before :func:`initialize` (or
after :func:`shutdown`) there is one process: ``process_count()`` is 1 and the collectives
return their input (as JAX's do in a single process).

A data-parallel training step, run with ``mpiexec -n 4 python train.py``::

    import ember, ember.numpy as enp
    ember.distributed.initialize()
    n, i = ember.process_count(), ember.process_index()
    x_mine, y_mine = x[i::n], y[i::n]          # this process's share of the batch
    grad = ember.jit(ember.grad(loss))
    for step in range(steps):
        g = ember.distributed.pmean(grad(params, x_mine, y_mine))   # one MPI_Allreduce
        params = ember.tree_util.tree_map(lambda p, g: p - lr * g, params, g)
    ember.distributed.shutdown()

Every process must call each collective, in the same order, with leaves of the same shapes
and dtypes (MPI's rule, and JAX's).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import zlib

import numpy as np

from ember import tree_util
from ember.backends.array import Array, device_put
from ember.dtypes import bfloat16
from ember.errors import DistributedError

_INSTALL = 'pip install "ember[distributed]" (or: pip install mpi4py mpich)'


def mpiexec() -> str | None:
    """The MPI launcher of this Python's environment: the ``mpiexec`` beside the interpreter
    (the mpich wheel's; a fresh environment's scripts need not be on PATH), else the one on
    PATH; None without one.

    Example:
        >>> subprocess.run([ember.distributed.mpiexec(), "-n", "4", sys.executable, "train.py"])
    """
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.access(here, os.X_OK) else shutil.which("mpiexec")


@dataclasses.dataclass
class _State:
    comm: object            # the mpi4py communicator (a duplicate of COMM_WORLD)
    rank: int
    size: int
    coordinator_address: str | None


_state: _State | None = None
# The number of MPI_Allreduce calls made by psum/pmean (tests check one per call).
allreduce_calls = 0


def _mpi():
    """mpi4py's MPI module, imported on first use (MPI_Init runs then)."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise DistributedError(
            f"ember.distributed needs mpi4py and an MPI library, which are not installed here "
            f"({e}); install them with `{_INSTALL}`, then start the processes with "
            "`mpiexec -n N python script.py`") from None
    return MPI


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None) -> None:
    """Join the processes started by an MPI launcher (``mpiexec -n N python script.py``).

    Call it once in every process, before any collective. The process count and each
    process's index come from MPI; ``num_processes`` and ``process_id``, when given, are
    checked against them (a mismatch raises :class:`~ember.errors.DistributedError` naming
    both values). ``coordinator_address`` is accepted for JAX's signature and recorded: the
    MPI launcher has already brought the processes together, so nothing connects to it.
    Started without a launcher, the process is an MPI job of its own (one process).

    Example (each of 4 processes started by ``mpiexec -n 4``):
        >>> ember.distributed.initialize(num_processes=4)
        >>> ember.process_index(), ember.process_count()
        (2, 4)
    """
    global _state
    if _state is not None:
        raise DistributedError(
            "ember.distributed.initialize was called twice: this process is already process "
            f"{_state.rank} of {_state.size}; call ember.distributed.shutdown() first to "
            "initialize again")
    MPI = _mpi()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if num_processes is not None and num_processes != size:
        raise DistributedError(
            f"ember.distributed.initialize: num_processes={num_processes}, but MPI started "
            f"{size} process{'es' if size != 1 else ''} (mpiexec -n {size}); pass "
            f"num_processes={size} or leave it out")
    if process_id is not None and process_id != rank:
        raise DistributedError(
            f"ember.distributed.initialize: process_id={process_id}, but this process is MPI "
            f"rank {rank} of {size}; pass process_id={rank} or leave it out")
    # A communicator of ember's own, so its messages never match the user's on COMM_WORLD.
    _state = _State(world.Dup(), rank, size, coordinator_address)


def shutdown() -> None:
    """Leave the process group (every process waits for the others first). Does nothing when
    :func:`initialize` was not called; :func:`initialize` may be called again afterwards.
    MPI itself is finalized when the process exits (by ``mpi4py``).

    Example:
        >>> ember.distributed.shutdown()
        >>> ember.distributed.is_initialized()
        False
    """
    global _state
    state, _state = _state, None
    if state is not None:
        state.comm.Barrier()
        state.comm.Free()


def is_initialized() -> bool:
    """Whether :func:`initialize` has joined this process to others (and no
    :func:`shutdown` since).

    Example:
        >>> ember.distributed.is_initialized()
        False
    """
    return _state is not None


def process_index() -> int:
    """This process's index, 0 to ``process_count() - 1`` (its MPI rank); 0 before
    :func:`initialize`.

    Example:
        >>> ember.process_index()
        0
    """
    return 0 if _state is None else _state.rank


def process_count() -> int:
    """The number of processes (MPI's ``COMM_WORLD`` size); 1 before :func:`initialize`.

    Example:
        >>> ember.process_count()
        1
    """
    return 1 if _state is None else _state.size


# --- host buffers --------------------------------------------------------------------------

def _host(x, i: int, name: str) -> np.ndarray:
    """Leaf #i as a host NumPy array (an ember.Array is read back from its device;
    np.asarray caches the copy)."""
    try:
        h = np.asarray(x)
    except Exception as e:
        raise DistributedError(f"ember.distributed.{name}: leaf #{i} is not an array "
                               f"({type(x).__name__}: {e})") from None
    if h.dtype == object:
        raise DistributedError(f"ember.distributed.{name}: leaf #{i} is not an array "
                               f"({type(x).__name__})")
    return h


def _host_leaves(tree, name: str):
    """(leaves as host NumPy arrays, the original leaves, treedef)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    return [_host(x, i, name) for i, x in enumerate(leaves)], leaves, treedef


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype MPI sums ``dtype`` in: 16-bit floats (no MPI type) in float32, booleans as
    int32 counts (as NumPy sums them), every other dtype as itself."""
    if dtype == np.dtype(bfloat16) or dtype == np.float16:
        return np.dtype(np.float32)
    if dtype == np.bool_:
        return np.dtype(np.int32)
    return dtype


def _as_leaf(host: np.ndarray, leaf):
    """An ember.Array on the leaf's device for an Array leaf, else NumPy."""
    if isinstance(leaf, Array):
        return device_put(host, leaf.device)
    return host


def _out_dtype(dtype: np.dtype, mean: bool) -> np.dtype:
    if mean and dtype.kind in "biu":
        return np.dtype(np.float32)          # JAX's pmean of integers
    return np.dtype(np.int32) if dtype == np.bool_ else dtype


def _allreduce(tree, name: str, mean: bool):
    global allreduce_calls
    if _state is None or _state.size == 1:
        # One process: the sum is the input (an Array stays where it is, unread).
        leaves, treedef = tree_util.tree_flatten(tree)
        out = []
        for i, x in enumerate(leaves):
            if isinstance(x, Array) and _out_dtype(x.dtype, mean) == x.dtype:
                out.append(x)
            else:
                h = _host(x, i, name)
                out.append(_as_leaf(h.astype(_out_dtype(h.dtype, mean)), x))
        return tree_util.tree_unflatten(treedef, out)
    hosts, leaves, treedef = _host_leaves(tree, name)
    out_dtypes = [_out_dtype(h.dtype, mean) for h in hosts]
    # One contiguous buffer per summing dtype, one MPI_Allreduce for each (a tree of float32
    # leaves, such as a model's gradients, is one buffer and one call).
    groups: dict[np.dtype, list[int]] = {}
    for i, h in enumerate(hosts):
        groups.setdefault(_sum_dtype(h.dtype), []).append(i)
    results: list[np.ndarray | None] = [None] * len(hosts)
    MPI = _mpi()
    for dtype, members in groups.items():
        buf = np.concatenate([hosts[i].ravel().astype(dtype, copy=False) for i in members])
        _state.comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
        allreduce_calls += 1
        at = 0
        for i in members:
            n = hosts[i].size
            part = buf[at:at + n].reshape(hosts[i].shape)
            at += n
            if mean:
                if part.dtype.kind not in "fc":
                    part = part.astype(np.float32)
                part = part / np.asarray(_state.size, part.dtype)
            results[i] = part.astype(out_dtypes[i])
    return tree_util.tree_unflatten(
        treedef, [_as_leaf(r, x) for r, x in zip(results, leaves)])


def psum(tree):
    """The elementwise sum over all processes of each leaf of ``tree`` (a pytree of
    ``ember.Array``s, NumPy arrays or scalars, of the same shapes and dtypes in every process).

    The leaves are packed into one contiguous host buffer per dtype and summed by one
    ``MPI_Allreduce`` each (every process gets the same, bitwise, result). An ``ember.Array``
    leaf comes back as an ``ember.Array`` on its device, other leaves as NumPy arrays.
    float16 and bfloat16 are summed in float32 and rounded back; booleans are counted (int32).

    Example (4 processes):
        >>> ember.distributed.psum({"n": np.float32(1), "i": np.full(2, ember.process_index())})
        {'i': array([6, 6]), 'n': array(4., dtype=float32)}
    """
    return _allreduce(tree, "psum", mean=False)


def pmean(tree):
    """The elementwise mean over all processes of each leaf of ``tree``: :func:`psum` divided
    by :func:`process_count` (one ``MPI_Allreduce`` for the float32 leaves of a model's
    gradients). Integer and boolean leaves give float32, as JAX's ``pmean``.

    Example (4 processes; data-parallel gradients):
        >>> grads = ember.distributed.pmean(ember.grad(loss)(params, x_mine, y_mine))
        >>> ember.distributed.pmean(np.float32(ember.process_index()))
        array(1.5, dtype=float32)
    """
    return _allreduce(tree, "pmean", mean=True)


def _pack_bytes(hosts) -> np.ndarray:
    """The leaves' bytes, one after another (a gather or broadcast needs no arithmetic, so
    every dtype travels in one uint8 buffer)."""
    if not hosts:
        return np.zeros(0, np.uint8)
    return np.concatenate([np.ascontiguousarray(h).reshape(-1).view(np.uint8) for h in hosts])


def _unpack_bytes(buf: np.ndarray, hosts, lead=()):
    out, at = [], 0
    for h in hosts:
        n = h.nbytes
        out.append(buf[..., at:at + n].copy().view(h.dtype).reshape(*lead, *h.shape))
        at += n
    return out


def process_allgather(tree, tiled: bool = False):
    """Gather each leaf of ``tree`` from every process, as NumPy arrays (JAX's
    ``multihost_utils.process_allgather``): stacked on a new leading axis of size
    ``process_count()`` (``tiled=False``) or concatenated along axis 0 (``tiled=True``);
    scalars are always stacked. Every leaf must have the same shape in every process. All
    leaves travel in one ``MPI_Allgather``.

    Example (4 processes):
        >>> ember.distributed.process_allgather(np.full(2, ember.process_index()))
        array([[0, 0],
               [1, 1],
               [2, 2],
               [3, 3]])
        >>> ember.distributed.process_allgather(np.arange(2), tiled=True)
        array([0, 1, 0, 1, 0, 1, 0, 1])
    """
    hosts, _, treedef = _host_leaves(tree, "process_allgather")
    n = process_count()
    if n == 1:
        gathered = [h[None] for h in hosts]
    else:
        send = _pack_bytes(hosts)
        recv = np.empty((n, send.size), np.uint8)
        _state.comm.Allgather(send, recv)
        gathered = _unpack_bytes(recv, hosts, lead=(n,))
    if tiled:
        gathered = [g.reshape(-1, *g.shape[2:]) if g.ndim > 1 else g for g in gathered]
    return tree_util.tree_unflatten(treedef, gathered)


def broadcast_one_to_all(tree, is_source: bool | None = None):
    """Every process gets the source process's ``tree`` (JAX's
    ``multihost_utils.broadcast_one_to_all``), as NumPy arrays. The source is process 0, or
    the one process that passes ``is_source=True`` (the others pass False); the others' leaves
    give only the shapes and dtypes, which must match the source's. One ``MPI_Bcast`` carries
    all leaves (plus one small allgather of the flags when ``is_source`` is given).

    Example (4 processes; rank 0 chose the seed):
        >>> seed = np.int64(time.time_ns()) if ember.process_index() == 0 else np.int64(0)
        >>> seed = ember.distributed.broadcast_one_to_all(seed)      # the same in all 4
    """
    hosts, _, treedef = _host_leaves(tree, "broadcast_one_to_all")
    if process_count() == 1:
        return tree_util.tree_unflatten(treedef, [np.array(h) for h in hosts])
    if is_source is None:
        root = 0
    else:
        flags = np.zeros(_state.size, np.uint8)
        _state.comm.Allgather(np.array([bool(is_source)], np.uint8), flags)
        sources = np.flatnonzero(flags).tolist()
        if len(sources) != 1:
            raise DistributedError(
                "ember.distributed.broadcast_one_to_all: exactly one process must pass "
                f"is_source=True, but processes {sources} did")
        root = sources[0]
    buf = _pack_bytes(hosts)
    if _state.rank != root:
        buf = np.empty_like(buf)
    _state.comm.Bcast(buf, root=root)
    return tree_util.tree_unflatten(treedef, _unpack_bytes(buf, hosts))


def assert_equal(tree, fail_message: str = "") -> None:
    """Check that every process holds the same values in ``tree`` (JAX's
    ``multihost_utils.assert_equal``); raises :class:`~ember.errors.DistributedError` naming
    the leaves that differ.

    Example:
        >>> ember.distributed.assert_equal(params, "parameters diverged")
    """
    gathered = tree_util.tree_leaves(process_allgather(tree))
    differ = [i for i, g in enumerate(gathered)
              if not all(np.array_equal(g[0], g[k], equal_nan=g.dtype.kind in "fc")
                         for k in range(1, g.shape[0]))]
    if differ:
        raise DistributedError(f"{fail_message + ': ' if fail_message else ''}leaves {differ} "
                               "of the tree differ between processes")


def sync_global_devices(name: str) -> None:
    """A barrier across all processes (JAX's ``multihost_utils.sync_global_devices``):
    returns when every process has called it. Every process must pass the same ``name``; a
    mismatch (processes at different barriers) raises
    :class:`~ember.errors.DistributedError`.

    Example:
        >>> if ember.process_index() == 0:
        ...     exported.save("model.vmfb")
        >>> ember.distributed.sync_global_devices("model saved")   # now every rank may load
    """
    if process_count() == 1:
        return
    h = np.array([zlib.crc32(name.encode())], np.uint32)
    every = np.empty(_state.size, np.uint32)
    _state.comm.Allgather(h, every)
    if (every != h[0]).any():
        others = sorted({int(r) for r in np.flatnonzero(every != h[0])})
        raise DistributedError(
            f"ember.distributed.sync_global_devices('{name}'): processes {others} are at a "
            "barrier of another name (every process must reach the same barriers in the same "
            "order)")


def _reset() -> None:
    """Forget the process group without any communication (tests: a clean state after a
    test that initialized, whatever happened)."""
    global _state, allreduce_calls
    _state, allreduce_calls = None, 0


__all__ = ["assert_equal", "broadcast_one_to_all", "initialize", "is_initialized", "mpiexec",
           "pmean", "process_allgather", "process_count", "process_index", "psum", "shutdown",
           "sync_global_devices"]
