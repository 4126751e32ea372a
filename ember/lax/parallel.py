"""Collectives over named ``vmap`` axes, as ``jax.lax``'s: ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather``, ``axis_index``, ``axis_size``, and the exchanges ``ppermute``,
``pshuffle``, ``psum_scatter``, ``all_to_all``, ``pswapaxes``.

Called inside ``ember.vmap(fun, axis_name=name)``, they combine the values of all examples
of that axis; the first five are ember ops that ``ember-batch`` resolves when it batches the
vmap, the exchanges are composed from them (gather everything, then index by
``axis_index``: under vmap the gathered value is one shared array). ``axis_name`` may be a
tuple of names (the axes of nested vmaps) for the reductions.

Example:
    >>> normalize = ember.vmap(lambda x: x / ember.lax.psum(x, "i"), axis_name="i")
    >>> normalize(np.array([1.0, 3.0]))
    Array([0.25, 0.75], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ember import dtypes, tree_util
from ember.errors import TracingError, UnboundAxisError
from ember.frontend.tracing import AXES, bind, current_trace, user_where
from ember.lax import _core as lax
from ember.lax import _indexing, convenience

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size", "ppermute",
           "pshuffle", "psum_scatter", "all_to_all", "pswapaxes"]


def _names(axis_name) -> tuple[str, ...]:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def axis_size(axis_name) -> int:
    """The size of the named vmap axis (the product of the sizes, for a tuple of names).

    Example:
        >>> ember.vmap(lambda x: x * ember.lax.axis_size("i"), axis_name="i")(np.ones(3))
        Array([3., 3., 3.], dtype=float32)
    """
    bound = dict(AXES)
    size = 1
    for name in _names(axis_name):
        if name not in bound:
            raise UnboundAxisError(
                f"unbound axis name: {name!r}; the axis names bound by enclosing "
                f"vmap(..., axis_name=...) calls are {sorted(bound) or 'none'}\n"
                f"  at {user_where()}")
        size *= bound[name]
    return size


def _no_groups(fun, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{fun}: axis_index_groups is not supported by ember")


def _reduction(op):
    def reduce(x, axis_name, *, axis_index_groups=None):
        _no_groups(op, axis_index_groups)
        names = _names(axis_name)
        axis_size(names)                          # every name bound

        def leaf(v):
            v = current_trace().lift(v)
            for name in names:
                v = bind(f"ember.{op}", v, axis_name=name, _weak=v.weak_type)[0]
            return v
        return tree_util.tree_map(leaf, x)
    reduce.__name__ = reduce.__qualname__ = op
    return reduce


psum = _reduction("psum")
psum.__doc__ = """The sum of ``x`` (a pytree) over all examples of the named vmap axis (or
axes); the same for every example. ``psum(1, name)`` is the axis size.

    Example:
        >>> ember.vmap(lambda x: ember.lax.psum(x, "i"), axis_name="i")(np.arange(3.0))
        Array([3., 3., 3.], dtype=float32)
    """
pmax = _reduction("pmax")
pmax.__doc__ = """The maximum of ``x`` (a pytree) over the examples of the named vmap axis.

    Example:
        >>> ember.vmap(lambda x: ember.lax.pmax(x, "i"), axis_name="i")(np.arange(3.0))
        Array([2., 2., 2.], dtype=float32)
    """
pmin = _reduction("pmin")
pmin.__doc__ = """The minimum of ``x`` (a pytree) over the examples of the named vmap axis.

    Example:
        >>> ember.vmap(lambda x: ember.lax.pmin(x, "i"), axis_name="i")(np.arange(3.0))
        Array([0., 0., 0.], dtype=float32)
    """


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` (a pytree) over the examples of the named vmap axis (integers give
    floats, as in JAX).

    Example:
        >>> ember.vmap(lambda x: x - ember.lax.pmean(x, "i"), axis_name="i")(np.arange(3.0))
        Array([-1.,  0.,  1.], dtype=float32)
    """
    n = axis_size(_names(axis_name))
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    return tree_util.tree_map(lambda t: _divide(t, n), total)


def _divide(t, n):
    """``t / n`` (a Python int) in ``t``'s inexact dtype, as NumPy's true division."""
    t = current_trace().lift(t)
    dtype, weak = dtypes.result_type(t, n)
    return lax.div(lax.convert_element_type(t, dtypes.to_inexact(dtype), weak), n)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """The values of ``x`` (a pytree) of all examples of the named vmap axis, stacked along a
    new ``axis`` (concatenated along ``axis`` when ``tiled``).

    Example:
        >>> ember.vmap(lambda x: ember.lax.all_gather(x, "i"), axis_name="i")(np.arange(2.0))
        Array([[0., 1.],
               [0., 1.]], dtype=float32)
    """
    _no_groups("all_gather", axis_index_groups)
    if not isinstance(axis_name, str):
        raise NotImplementedError("all_gather: ember gathers over one named axis at a time")
    size = axis_size(axis_name)

    def leaf(v):
        v = current_trace().lift(v)
        rank = v.ndim if tiled else v.ndim + 1
        if not -rank <= axis < rank or (tiled and v.ndim == 0):
            raise TracingError(
                f"all_gather: axis {axis} is out of range for an operand of rank {v.ndim}"
                f"{' (tiled)' if tiled else ''}\n  at {user_where()}")
        return bind("ember.all_gather", v, axis_name=axis_name, axis_size=size,
                    axis=axis % rank, tiled=bool(tiled), _weak=v.weak_type)[0]
    return tree_util.tree_map(leaf, x)


def axis_index(axis_name):
    """The int32 position of the current example along the named vmap axis.

    Example:
        >>> ember.vmap(lambda x: x + ember.lax.axis_index("i"), axis_name="i")(np.zeros(3))
        Array([0., 1., 2.], dtype=float32)
    """
    if not isinstance(axis_name, str):
        raise NotImplementedError("axis_index: ember takes one axis name")
    axis_size(axis_name)
    return bind("ember.axis_index", axis_name=axis_name)[0]



def _take(x, index, axis):
    """``x`` at the traced ``index`` along ``axis`` (that axis removed)."""
    return _indexing.dynamic_index_in_dim(x, index, axis, keepdims=False)


def ppermute(x, axis_name, perm):
    """Send each example's ``x`` (a pytree) to another: ``perm`` lists (source, destination)
    positions along the named axis, as many as the axis has (JAX's rule under vmap); a
    destination no pair names gets zeros.

    Example:
        >>> shift = lambda v: ember.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
        >>> ember.vmap(shift, axis_name="i")(np.array([1.0, 2.0, 3.0]))
        Array([3., 1., 2.], dtype=float32)
    """
    n = axis_size(axis_name)
    pairs = [(int(s), int(d)) for s, d in perm]
    sources, dests = [s for s, _ in pairs], [d for _, d in pairs]
    if len(pairs) != n or len(set(sources)) != n or len(set(dests)) != n or \
            not all(0 <= i < n for i in sources + dests):
        raise TracingError(f"ppermute: perm {pairs} must pair each of the {n} positions of "
                           f"axis {axis_name!r} once as a source and once as a destination"
                           f"\n  at {user_where()}")
    source_of = np.zeros(n, np.int32)
    for s, d in pairs:
        source_of[d] = s
    src = _take(current_trace().lift(source_of), axis_index(axis_name), 0)
    return tree_util.tree_map(lambda v: _take(all_gather(v, axis_name), src, 0), x)


def pshuffle(x, axis_name, perm):
    """Each example gets the ``x`` of example ``perm[i]`` (a permutation of the positions).

    Example:
        >>> ember.vmap(lambda v: ember.lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(
        ...     np.array([1.0, 2.0, 3.0]))
        Array([3., 1., 2.], dtype=float32)
    """
    return ppermute(x, axis_name, [(int(p), i) for i, p in enumerate(perm)])


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum over the named axis, scattered: example ``i`` gets block ``i`` of it along
    ``scatter_dimension`` (whose size is the axis size, and which is removed, unless
    ``tiled``: then blocks of size / axis size).

    Example:
        >>> ember.vmap(lambda v: ember.lax.psum_scatter(v, "i"), axis_name="i")(np.eye(2))
        Array([1., 1.], dtype=float32)
    """
    n = axis_size(axis_name)
    index = axis_index(axis_name)

    def leaf(v):
        v = current_trace().lift(v)
        total = psum(v, axis_name, axis_index_groups=axis_index_groups)
        dim = scatter_dimension % max(v.ndim, 1)
        size = v.shape[dim] if v.ndim else 0
        if (size % n if tiled else size != n):
            raise TracingError(
                f"psum_scatter: dimension {scatter_dimension} of size {size} must "
                f"{'be a multiple of' if tiled else 'equal'} the size {n} of axis "
                f"{axis_name!r}\n  at {user_where()}")
        if not tiled:
            return _take(total, index, dim)
        return convenience.dynamic_slice_in_dim(total, index * (size // n), size // n, dim)
    return tree_util.tree_map(leaf, x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Example ``i`` sends block ``j`` of its ``x`` along ``split_axis`` to example ``j`` and
    gets the blocks the others send it, stacked along a new ``concat_axis`` (the split axis,
    of the axis size, removed) or, when ``tiled``, concatenated along ``concat_axis``.

    Example:
        >>> swap = lambda v: ember.lax.all_to_all(v, "i", 0, 0)
        >>> ember.vmap(swap, axis_name="i")(np.arange(4.0).reshape(2, 2))
        Array([[0., 2.],
               [1., 3.]], dtype=float32)
    """
    _no_groups("all_to_all", axis_index_groups)
    n = axis_size(axis_name)
    index = axis_index(axis_name)

    def leaf(v):
        v = current_trace().lift(v)
        split = split_axis % v.ndim
        size = v.shape[split]
        if (size % n if tiled else size != n):
            raise TracingError(
                f"all_to_all: split_axis {split_axis} of size {size} must "
                f"{'be a multiple of' if tiled else 'equal'} the size {n} of axis "
                f"{axis_name!r}\n  at {user_where()}")
        gathered = all_gather(v, axis_name)              # (sources, *v.shape)
        if not tiled:
            mine = _take(gathered, index, split + 1)        # (sources, v without split)
            return _axis0_to(mine, concat_axis % v.ndim)
        block = size // n
        mine = convenience.dynamic_slice_in_dim(gathered, index * block, block, split + 1)
        concat = concat_axis % v.ndim
        mine = _axis0_to(mine, concat)                  # sources just before concat_axis
        return convenience.collapse(mine, concat, concat + 2)
    return tree_util.tree_map(leaf, x)


def _axis0_to(x, dest):
    """``x`` with its axis 0 moved to ``dest``."""
    order = list(range(1, x.ndim))
    order.insert(dest, 0)
    return lax.transpose(x, order)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with positional ``axis`` (of the axis size): ``all_to_all`` with
    ``split_axis = concat_axis = axis``.

    Example:
        >>> ember.vmap(lambda v: ember.lax.pswapaxes(v, "i", 0), axis_name="i")(
        ...     np.arange(4.0).reshape(2, 2))
        Array([[0., 2.],
               [1., 3.]], dtype=float32)
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
