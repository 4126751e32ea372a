"""Collectives over named ``vmap`` axes, as ``jax.lax``'s: ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather``, ``axis_index``, ``axis_size``.

Called inside ``ember.vmap(fun, axis_name=name)``, they combine the values of all examples
of that axis; each is an ember op that ``ember-batch`` resolves when it batches the vmap.
``axis_name`` may be a tuple of names (the axes of nested vmaps) for the reductions.

Example:
    >>> normalize = ember.vmap(lambda x: x / ember.lax.psum(x, "i"), axis_name="i")
    >>> normalize(np.array([1.0, 3.0]))
    Array([0.25, 0.75], dtype=float32)
"""

from __future__ import annotations

from ember import tree_util
from ember.errors import TracingError, UnboundAxisError
from ember.frontend.tracing import AXES, bind, current_trace, user_where

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size"]


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
    from ember import numpy as enp
    n = axis_size(_names(axis_name))
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    return tree_util.tree_map(lambda t: enp.true_divide(t, n), total)


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

