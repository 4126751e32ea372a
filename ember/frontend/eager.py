"""Eager use: ember functions called on concrete arrays, outside ``jit``.

A function decorated with :func:`eager` runs as written while tracing. Called on concrete
values it is traced and compiled on its own (array leaves dynamic, everything else static),
once per signature, and the compiled program is cached.
"""

from __future__ import annotations

import functools
import importlib
import inspect

import numpy as np

from ember import tree_util
from ember._traceback import user_where
from ember.errors import ArgumentError, ConcretizationError, EmberError
from ember.frontend import tracing
from ember.frontend.once import OnceCache

# Compiled programs (or _StaticLeaves) by signature; racing threads compile each once.
_CACHE = OnceCache()


def clear_cache() -> None:
    _CACHE.clear()


def _is_array_leaf(x) -> bool:
    from ember.backends.array import Array
    return isinstance(x, Array | np.ndarray | np.generic)


def _hashable(x):
    """A cache-key stand-in for a static leaf: NumPy arrays by value, slices (Python 3.11
    cannot hash them), and scalars with their type (1, 1.0 and True are equal keys but trace
    differently) and, for floats, their repr (-0.0 == 0.0; NaN equals nothing, so it would
    never hit)."""
    if isinstance(x, slice):
        return ("slice", x.start, x.stop, x.step)
    if isinstance(x, float | complex | np.floating | np.complexfloating):
        return (type(x), repr(x))
    if isinstance(x, bool | int | np.generic):
        return (type(x), x)
    if isinstance(x, np.ndarray):     # a static NumPy array (a shape, an axis): its value
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    if type(x) is tuple:
        return tuple(_hashable(v) for v in x)
    return x


def eager(fun):
    """Make ``fun`` (written with tracers in mind) callable on concrete arrays too.

    Example:
        >>> @eager
        ... def double(x):
        ...     return ember.lax.add(x, x)
        >>> double(np.ones(2, np.float32))
        Array([2., 2.], dtype=float32)
    """

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        try:
            if tracing._TRACES.items:
                return fun(*args, **kwargs)
            return _call_eagerly(fun, args, kwargs)
        except TypeError as e:
            if not isinstance(e, EmberError):
                _check_binding(fun, args, kwargs)
            raise

    wrapper.__wrapped_eager__ = fun
    return wrapper


def _check_binding(fun, args, kwargs) -> None:
    """Raise :class:`ArgumentError` if ``fun`` cannot take these arguments at all, in Python's
    words, naming a keyword that NumPy's function of the same name takes and ember lacks."""
    sig = inspect.signature(fun)
    try:
        sig.bind(*args, **kwargs)
        return
    except TypeError as e:
        why = str(e)
    module = ".".join(p for p in fun.__module__.split(".") if not p.startswith("_"))
    msg = f"{module}.{fun.__name__}: {why}"
    if module.startswith("ember.numpy"):
        twin = getattr(importlib.import_module(module.replace("ember.", "", 1)),
                       fun.__name__, None)
        try:
            known = inspect.signature(twin).parameters if twin is not None else {}
        except (TypeError, ValueError):   # a ufunc or builtin without a signature
            known = {}
        missing = [k for k in kwargs if k in known and k not in sig.parameters]
        if missing:
            msg += (f"; NumPy's {fun.__name__} takes {', '.join(map(repr, missing))}, which "
                    "ember does not support yet")
    raise ArgumentError(f"{msg}\n  at {user_where()}") from None


def _device_of(dyn, name):
    """Where an eager call runs: the device of its Array arguments, else the default
    backend's first device. Arrays on two devices are an error, never a silent copy."""
    from ember.backends import default_backend, get_backend
    from ember.backends.array import device_of_arrays

    device = device_of_arrays(dyn, name)
    if device is not None:
        return device
    return get_backend(default_backend()).device(0)


class _StaticLeaves(frozenset):
    """Cached for a signature some of whose array leaves must be static (see _call_eagerly):
    the indices of those leaves."""


def _static_culprits(err, names, dyn_idx, leaves) -> frozenset:
    """The dynamic leaves a ConcretizationError came from: those its tracer's origin names,
    or every NumPy scalar when the error names none (raised without a tracer at hand; not
    every array, which would compile once per value and key the cache by its bytes)."""
    origin = getattr(err, "origin", None)
    if origin is None:
        return frozenset(i for i in dyn_idx if isinstance(leaves[i], np.ndarray | np.generic)
                         and np.ndim(leaves[i]) == 0)
    return frozenset(i for n, i in zip(names, dyn_idx) if n in origin)


def _call_eagerly(fun, args, kwargs, static_leaves=frozenset()):
    """Compile (once per signature) and run ``fun``. Array leaves are arguments, unless
    tracing them so fails because ``fun`` needs their values (``enp.sum(a,
    axis=np.int64(0))``, ``enp.reshape(a, np.array([2, 3]))``): then the leaves the error came
    from are static host values, as Python scalars are (JAX takes concrete arrays there)."""
    from ember.frontend.api import Lowered, _leaf_aval, call_with_leaves, trace_flat

    leaves, tree = tree_util.tree_flatten((args, kwargs))
    leaves = [np.asarray(x) if i in static_leaves and not isinstance(x, np.ndarray | np.generic)
              else x for i, x in enumerate(leaves)]
    dyn_idx = tuple(i for i, x in enumerate(leaves) if _is_array_leaf(x)
                    and i not in static_leaves)
    dyn = [leaves[i] for i in dyn_idx]
    static = tuple(_hashable(x) if i not in dyn_idx else None for i, x in enumerate(leaves))
    avals = tuple(_leaf_aval(x, f"#{i}") for i, x in enumerate(dyn))
    device = _device_of(dyn, getattr(fun, "__name__", "op"))
    key = (fun, tree, dyn_idx, avals, static, device.space)

    def build():
        """The compiled program, or the _StaticLeaves this signature needs."""
        flat_fun = call_with_leaves(fun, leaves, tree, dyn_idx)
        name = getattr(fun, "__name__", "op")
        in_tree = tree_util.tree_structure((tuple(range(len(dyn))), {}))
        names = [f"argument #{i}" for i in range(len(dyn))]
        try:
            module, _, out_tree, outs = trace_flat(flat_fun, name, in_tree, list(avals), names)
        except ConcretizationError as e:
            more = _static_culprits(e, names, dyn_idx, leaves)
            if not more:
                raise
            return _StaticLeaves(static_leaves | more)
        return Lowered(module, name, in_tree, list(avals), out_tree,
                       [o.aval for o in outs], device.platform, device).compile()

    try:
        compiled = _CACHE.get(key)
    except TypeError:  # an unhashable static leaf: trace every time
        compiled = build()
    else:
        if compiled is None:    # threads asking for it meanwhile wait for this one compile
            compiled = _CACHE.get_or_build(key, build)
    if isinstance(compiled, _StaticLeaves):
        return _call_eagerly(fun, args, kwargs, compiled)
    return tree_util.tree_unflatten(compiled.out_tree, compiled.run_flat(dyn))
