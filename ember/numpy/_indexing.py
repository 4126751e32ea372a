"""NumPy indexing on tracers and Arrays (gather/scatter), and JAX's x.at[...] updates.

``x[idx]`` follows NumPy's whole indexing model: ints, slices (any step), ``None``, ``...``,
integer arrays (advanced indexing, broadcast together), mixed basic and advanced indices
(the advanced dimensions go where the first advanced index is when the advanced indices are
adjacent, else first), and boolean masks whose value is known (outside ``jit``, or NumPy
constants inside it): those become integer indices on the host (a scalar ``True``/``False``
a new axis of length 1/0). A boolean mask that is a
traced value raises :class:`NonConcreteBooleanIndexError`, as in JAX. Basic indices lower to
slices; advanced ones to ``ember.gather``.

Out-of-bounds *dynamic* indices follow JAX's documented semantics: negative indices count
from the end once (``-1`` is the last element), then retrieval clamps an index into range
(``x[idx]``, ``x.at[idx].get()``) and updates drop it (``x.at[idx].set(...)`` and the other
update methods). ``take``/``take_along_axis`` default to JAX's ``mode="fill"``: an
out-of-bounds index reads ``fill_value`` (NaN for floats, the minimum of a signed integer
type, the maximum of an unsigned one, True for bool). Static Python int indices out of range
raise ``IndexError`` in ``x[idx]``, as in NumPy.
"""

from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from ember import dtypes, lax
from ember._traceback import user_stacklevel
from ember.errors import AxisError, IndexingError, TracingError
from ember.frontend.eager import eager
from ember.frontend.tracing import Tracer, current_trace, user_where
from ember.numpy._core import _getitem as _basic_getitem  # ints, slices, None, Ellipsis
from ember.numpy._shape import _enp

__all__ = ["_getitem", "take", "take_along_axis", "put_along_axis",
           "NonConcreteBooleanIndexError", "IndexingError"]


class NonConcreteBooleanIndexError(IndexingError):
    """A boolean mask that is a traced value: its number of True entries, hence the shape of
    the result, is unknown while tracing (JAX's NonConcreteBooleanIndexError)."""


def _error(msg: str, cls=TracingError):
    if cls is IndexError:
        cls = IndexingError
    raise cls(f"{msg}\n  at {user_where()}")


def _lift(x) -> Tracer:
    return current_trace().lift(x)


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _is_array(i) -> bool:
    return isinstance(i, Tracer | np.ndarray) or hasattr(i, "aval")


def _index_dtype():
    return dtypes.default_int()


# --- normalizing an index (on the host) ---------------------------------------------------

class _ScalarBool:
    """A scalar boolean index: as in NumPy, a new axis indexed by ``[0]`` (True) or ``[]``
    (False), an advanced index broadcast with the others."""

    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value

    def index_array(self) -> np.ndarray:
        return np.arange(int(self.value), dtype=_index_dtype())


def _normalize(idx, x_shape) -> tuple:
    """The index as a tuple of None, slices, Python ints and integer arrays (NumPy arrays,
    Arrays or tracers) covering every dimension: the ellipsis is expanded, lists become
    arrays and concrete boolean masks become the integer arrays of their nonzero entries."""
    ndim = len(x_shape)
    idx = idx if isinstance(idx, tuple) else (idx,)
    items = []
    for i in idx:
        if isinstance(i, slice):
            items.append(slice(*(_slice_bound(v) for v in (i.start, i.stop, i.step))))
        elif i is None or i is Ellipsis:
            items.append(i)
        elif isinstance(i, bool | np.bool_):
            items.append(_ScalarBool(bool(i)))
        elif isinstance(i, int | np.integer):
            items.append(int(i))
        elif isinstance(i, list):
            a = np.asarray(i)
            if a.size == 0:
                a = a.astype(_index_dtype())
            items.append(_host_index_array(a))
        elif isinstance(i, Tracer):
            if i.dtype == np.bool_:
                _error(f"boolean mask of shape {i.shape} is a traced value: the shape of the "
                       "result would depend on its values. Use a mask known at trace time "
                       "(a NumPy array), enp.where(mask, x, y), or a size= argument",
                       NonConcreteBooleanIndexError)
            if not dtypes.is_int(i.dtype):
                _error(f"arrays used as indices must be of integer (or boolean) type, got "
                       f"{i.dtype}", IndexError)
            items.append(i)
        elif _is_array(i) or isinstance(i, np.generic):
            host = np.asarray(i._ember_host() if hasattr(i, "_ember_host") else i)
            items.append(_ScalarBool(bool(host)) if host.ndim == 0 and host.dtype == np.bool_
                         else _host_index_array(host))
        else:
            try:
                items.append(operator.index(i))
            except TypeError:
                _error(f"invalid index {i!r} of type {type(i).__name__}")
    if builtins.sum(1 for i in items if i is Ellipsis) > 1:
        _error("an index can only have a single ellipsis ('...')")
    used = builtins.sum(_consumed(i) for i in items)
    if used > ndim:
        _error(f"too many indices for array: array is {ndim}-dimensional, but {used} were "
               "indexed", IndexError)
    if Ellipsis in [i for i in items if not _is_array(i)]:
        k = [j for j, i in enumerate(items) if i is Ellipsis and not _is_array(i)][0]
        items[k:k + 1] = [slice(None)] * (ndim - used)
    else:
        items += [slice(None)] * (ndim - used)
    out, dim = [], 0
    for i in items:
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            want = tuple(x_shape[dim:dim + i.ndim])
            if i.shape != want:
                _error(f"boolean index of shape {i.shape} does not match the indexed "
                       f"dimensions {want} of an array of shape {tuple(x_shape)}", IndexError)
            out.extend(_host_index_array(a) for a in np.nonzero(i))
        else:
            out.append(i)
        dim += _consumed(i)
    return tuple(out)


def _slice_bound(v):
    """A slice bound as a Python int (or None): a concrete 0-d integer array is one, as in
    NumPy and JAX; a traced one cannot be (the result's shape would depend on it)."""
    if v is None or not _is_array(v):
        return v
    if isinstance(v, Tracer):
        _error("slice bounds must be static: a traced value cannot be one (the result's shape "
               "would depend on it); use lax.dynamic_slice for dynamic starts")
    host = np.asarray(v._ember_host() if hasattr(v, "_ember_host") else v)
    if host.ndim != 0 or not np.issubdtype(host.dtype, np.integer):
        _error(f"slice bounds must be integers or None, got an array of shape {host.shape} "
               f"and dtype {host.dtype}", TypeError)
    return int(host)


def _consumed(i) -> int:
    if i is None or i is Ellipsis or isinstance(i, _ScalarBool):
        return 0
    if isinstance(i, np.ndarray) and i.dtype == np.bool_:
        return i.ndim
    return 1


def _host_index_array(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a
    if not np.issubdtype(a.dtype, np.integer):
        _error(f"arrays used as indices must be of integer (or boolean) type, got {a.dtype}",
               IndexError)
    dt = _index_dtype()
    info = np.iinfo(dt)
    # Narrow quietly (64-bit indices without x64), keeping out-of-range values out of range.
    return np.asarray(np.clip(a, info.min, info.max).astype(dt)) if a.dtype != dt else a


# --- x[idx] ---------------------------------------------------------------------------------

def _getitem(x, idx):
    """``x[idx]`` with NumPy's indexing model (see the module docstring)."""
    norm = _normalize(idx, _shape(x))
    if not builtins.any(_is_array(i) or isinstance(i, _ScalarBool) for i in norm):
        if not isinstance(x, Tracer) and builtins.any(type(i) is int for i in norm):
            return _eager_int_getitem(x, norm)
        return _basic_getitem(x, norm)
    return _gather_index(x, norm)


def _eager_int_getitem(x, norm: tuple):
    """``x[i, ...]`` outside a trace, its int indices the arguments of one program: a
    program per index value (0.24 s of compiling each) made a loop over ``x[i]`` compile
    once per ``i``. Bounds are checked here, as NumPy does."""
    shape, dim, dims, values, rest = _shape(x), 0, [], [], []
    for i in norm:
        if type(i) is int:
            d = shape[dim]
            if not -d <= i < d:
                raise IndexingError(f"index {i} is out of bounds for axis {dim} with size {d}")
            dims.append(dim)
            values.append(i % d)
        else:
            rest.append(i)
        dim += _consumed(i)
    y = _take_at(x, np.asarray(values, _index_dtype()), dims=tuple(dims))
    if builtins.all(isinstance(i, slice) and i == slice(None) for i in rest):
        return y
    return _basic_getitem(y, tuple(rest))


@eager
def _take_at(x, starts, *, dims: tuple[int, ...]):
    """``x`` at index ``starts[j]`` along ``dims[j]``, those dims dropped."""
    x = _lift(x)
    at = dict(zip(dims, range(len(dims)), strict=True))
    begin = [starts[at[d]] if d in at else 0 for d in range(x.ndim)]
    y = lax.dynamic_slice(x, begin, [1 if d in at else n for d, n in enumerate(x.shape)])
    return lax.reshape(y, tuple(n for d, n in enumerate(x.shape) if d not in at))


def _fill_default(dtype):
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_bool(dtype):
        return True
    info = np.iinfo(dtype)
    return info.max if dtypes.is_unsigned(dtype) else info.min


def _norm_int(i, d: int, normalize_negative: bool = True) -> Tracer:
    """An index array as the index dtype, negative entries counted from the end."""
    dt = _index_dtype()
    t = _lift(i)
    if t.dtype != dt:
        if dtypes.is_unsigned(t.dtype) and t.dtype.itemsize >= dt.itemsize:
            t = lax.min(t, lax.broadcast_in_dim(_lift(np.asarray(np.iinfo(dt).max, t.dtype)),
                                                t.shape, ()))
        t = lax.convert_element_type(t, dt)
    if normalize_negative:
        zero = lax.broadcast_in_dim(_lift(np.asarray(0, dt)), t.shape, ())
        dd = lax.broadcast_in_dim(_lift(np.asarray(d, dt)), t.shape, ())
        t = lax.select(lax.lt(t, zero), lax.add(t, dd), t)
    return t


def _in_bounds(t: Tracer, d: int) -> Tracer:
    dt = t.dtype
    zero = lax.broadcast_in_dim(_lift(np.asarray(0, dt)), t.shape, ())
    dd = lax.broadcast_in_dim(_lift(np.asarray(d, dt)), t.shape, ())
    return lax.bitwise_and(lax.ge(t, zero), lax.lt(t, dd))


@eager
def _gather_index(x, idx, mode=None, fill_value=None, wrap_negative=True):
    """``x[idx]`` for a normalized index holding at least one array; ``mode`` "fill" reads
    ``fill_value`` at out-of-bounds indices, else they are clamped."""
    x = _lift(x)
    # None: a new dimension of size 1, indexed by a full slice.
    shape, entries, d = [], [], 0
    for i in idx:
        if i is None:
            shape.append(1)
            entries.append(slice(None))
        elif isinstance(i, _ScalarBool):
            shape.append(1)
            entries.append(i.index_array())
        else:
            shape.append(x.shape[d])
            entries.append(i)
            d += 1
    x = lax.reshape(x, tuple(shape))
    adv = [p for p, i in enumerate(entries) if not isinstance(i, slice)]
    contiguous = adv == list(range(adv[0], adv[-1] + 1))
    basic = tuple(i if isinstance(i, slice) else slice(None) for i in entries)
    if builtins.any(s != slice(None) for s in basic):
        x = _basic_getitem(x, basic)
    arrs = []
    for p in adv:
        i, n = entries[p], x.shape[p]
        if isinstance(i, int):
            if not -n <= i < n:
                _error(f"index {i} is out of bounds for axis {p} with size {n}", IndexError)
            i = np.asarray(i % n, _index_dtype())
        arrs.append(_norm_int(i, n, wrap_negative))
    try:
        batch = np.broadcast_shapes(*(a.shape for a in arrs))
    except ValueError:
        _error("shape mismatch: indexing arrays could not be broadcast together with shapes "
               + " ".join(str(tuple(a.shape)) for a in arrs), IndexError)
    arrs = [lax.broadcast_in_dim(a, batch, tuple(range(len(batch) - a.ndim, len(batch))))
            for a in arrs]
    for p in adv:
        if x.shape[p] == 0 and 0 not in batch:
            _error(f"index is out of bounds for axis {p} with size 0", IndexError)
    nb = len(batch)
    indices = lax.concatenate([lax.reshape(a, batch + (1,)) for a in arrs], nb)
    out = lax.gather(x, indices, tuple(adv))
    if mode in ("fill", "drop"):
        ok = _in_bounds(arrs[0], x.shape[adv[0]])
        for p, a in zip(adv[1:], arrs[1:]):
            ok = lax.bitwise_and(ok, _in_bounds(a, x.shape[p]))
        ok = lax.broadcast_in_dim(ok, out.shape, tuple(range(nb)))
        fv = _fill_default(out.dtype) if fill_value is None else fill_value
        fill = lax.convert_element_type(_lift(np.asarray(fv).astype(out.dtype)), out.dtype,
                                        out.weak_type)       # keeps x's weak type, as JAX
        fill = lax.broadcast_in_dim(fill, out.shape, ())
        out = lax.select(ok, out, fill)
    p0 = adv[0]
    if contiguous and p0 > 0:
        rest = out.ndim - nb
        perm = [nb + j for j in range(p0)] + list(range(nb)) + \
            [nb + j for j in range(p0, rest)]
        out = lax.transpose(out, perm)
    return out


# --- x.at[idx] ------------------------------------------------------------------------------

def _scatter_index(x_shape, idx):
    """Full-form indices for an update: (indices of shape batch + (m,), m, batch shape).
    The update lands at x[indices[b..., :], r...] where r runs over x.shape[m:]."""
    n_entries = len(idx)
    while n_entries and isinstance(idx[n_entries - 1], slice) and \
            idx[n_entries - 1] == slice(None):
        n_entries -= 1
    prefix = idx[:n_entries]
    m = builtins.sum(1 for i in prefix if i is not None)
    adv = [p for p, i in enumerate(prefix) if i is not None and not isinstance(i, slice)]
    dt = _index_dtype()
    # Advanced entries broadcast together to B.
    advs = []
    d = 0
    for p, i in enumerate(prefix):
        if i is None:
            continue
        if p in adv:
            n = x_shape[d]
            if isinstance(i, int):
                i = np.asarray(i + n if -n <= i < 0 else i, dt)
                advs.append(_lift(i))
            else:
                advs.append(_norm_int(i, n))
        d += 1
    try:
        B = tuple(np.broadcast_shapes(*(a.shape for a in advs))) if advs else ()
    except ValueError:
        _error("shape mismatch: indexing arrays could not be broadcast together with shapes "
               + " ".join(str(tuple(a.shape)) for a in advs), IndexError)
    contiguous = adv == list(range(adv[0], adv[-1] + 1)) if adv else True
    # Output batch layout: basic axes in order, with B inserted at p0.
    p0 = builtins.sum(1 for p in range(adv[0]) if p not in adv) if adv and contiguous else 0
    d, basic_j, ai = 0, 0, 0
    comps, basic_shape = [], []
    pending = []
    for p, i in enumerate(prefix):
        if p in adv:
            pending.append(("adv", advs[ai], d))
            ai += 1
            d += 1
        elif i is None:
            basic_shape.append(1)
            basic_j += 1
        else:
            s, e, st = i.indices(x_shape[d])
            vals = np.arange(s, e, st, dtype=dt)
            pending.append(("basic", vals, basic_j))
            basic_shape.append(len(vals))
            basic_j += 1
            d += 1
    batch = tuple(basic_shape[:p0]) + B + tuple(basic_shape[p0:])
    nb = len(batch)
    for kind, v, j in pending:
        if kind == "adv":
            dims = tuple(range(p0 + len(B) - v.ndim, p0 + len(B)))
            comps.append(lax.broadcast_in_dim(v, batch, dims))
        else:
            pos = j if j < p0 else j + len(B)
            comps.append(lax.broadcast_in_dim(_lift(v), batch, (pos,)))
    if not comps:
        return None, 0, batch
    indices = lax.concatenate([lax.reshape(c, batch + (1,)) for c in comps], nb)
    return indices, m, batch


_KINDS = {"set": "set", "add": "add", "multiply": "mul", "min": "min", "max": "max"}


@eager
def _scatter_update(x, idx, y, kind, mode=None):
    x = _lift(x)
    indices, m, batch = _scatter_index(x.shape, idx)
    target = batch + tuple(x.shape[m:])
    y = _lift(_enp().asarray(y))
    promoted, _ = dtypes.result_type(x, y)
    if promoted != x.dtype:
        warnings.warn(f"scatter inputs have incompatible types: cannot safely cast value from "
                      f"dtype={y.dtype} to dtype={x.dtype}; as in JAX, the update is computed "
                      f"in {promoted} and cast back. In future releases this will be an error.",
                      FutureWarning, stacklevel=user_stacklevel())
        if kind in ("add", "mul"):     # set, min and max commute with the (monotone) cast
            out = _scatter_update(lax.convert_element_type(x, promoted), idx, y, kind, mode)
            return lax.convert_element_type(out, x.dtype, x.weak_type)
    y = lax.convert_element_type(y, x.dtype, x.weak_type)
    try:
        y = _enp().broadcast_to(y, target)
    except TracingError:
        _error(f"cannot update x[idx] of shape {target} with values of shape {y.shape}")
    if indices is None:      # every dimension taken whole: an elementwise update
        if y.shape != x.shape:      # x[None, :] and the like: drop the new unit axes
            y = lax.reshape(y, x.shape)
        if kind == "set":
            return y
        fn = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}[kind]
        if dtypes.is_bool(x.dtype) and kind in ("add", "mul"):
            fn = lax.bitwise_or if kind == "add" else lax.bitwise_and
        return fn(x, y)
    if mode == "clip":
        hi = np.asarray(x.shape[:m], indices.dtype) - 1
        zero = lax.broadcast_in_dim(_lift(np.asarray(0, indices.dtype)), indices.shape, ())
        hi = lax.broadcast_in_dim(_lift(hi), indices.shape, (indices.ndim - 1,))
        indices = lax.min(lax.max(indices, zero), hi)
    if dtypes.is_bool(x.dtype) and kind in ("add", "mul"):
        kind = "max" if kind == "add" else "min"
    return lax.scatter(x, indices, y, tuple(range(m)), kind)


def _apply_times(x, count, func):
    """``func`` applied ``count`` times to each element of ``x`` (``count`` an int array of
    x's shape): the rounds run until the largest count is reached."""
    def body(carry):
        i, v = carry
        applied = _enp().asarray(func(v)).astype(v.dtype)
        return i + 1, _enp().where(count > i, applied, v)

    rounds = _enp().max(count)
    _, out = lax.while_loop(lambda c: c[0] < rounds, body, (_enp().int32(0), _enp().asarray(x)))
    return out


class _IndexUpdateHelper:
    """``x.at``: ``x.at[idx]`` gives the functional updates of JAX."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


_MODES = (None, "clip", "drop", "fill", "promise_in_bounds")


class _IndexUpdateRef:
    """``x.at[idx]``: ``set, add, subtract, multiply, divide, power, min, max, apply, get``;
    each returns a new array. Out-of-bounds indices are dropped by the updates
    (``mode="clip"`` clamps them instead) and clamped by ``get`` (``mode="fill"`` reads
    ``fill_value``)."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def _norm(self):
        norm = _normalize(self.index, _shape(self.array))
        if builtins.any(isinstance(i, _ScalarBool) for i in norm):
            _error("boolean scalar indices are not supported by .at[]; index without them",
                   IndexError)
        return norm

    def _update(self, values, kind, mode):
        if mode not in _MODES:
            _error(f"invalid mode {mode!r}; expected one of {_MODES}")
        return _scatter_update(self.array, self._norm(), values, kind, mode)

    def get(self, *, mode=None, fill_value=None):
        """``x[idx]``; out-of-bounds indices are clamped, or read ``fill_value`` with
        ``mode="fill"``."""
        if mode not in _MODES:
            _error(f"invalid mode {mode!r}; expected one of {_MODES}")
        norm = self._norm()
        gathered = (int, np.integer) if mode in ("fill", "drop") else ()   # may be out of bounds
        if not builtins.any(_is_array(i) or isinstance(i, gathered) for i in norm):
            return _basic_getitem(self.array, norm)
        norm = tuple(np.asarray(i, _index_dtype()) if isinstance(i, int) else i
                     for i in norm)
        return _gather_index(self.array, norm, mode, fill_value)

    def set(self, values, *, mode=None):
        """``x[idx] = values``; with duplicate indices one of the values wins."""
        return self._update(values, "set", mode)

    def add(self, values, *, mode=None):
        """``x[idx] += values``; duplicate indices accumulate (like ``np.add.at``)."""
        return self._update(values, "add", mode)

    def subtract(self, values, *, mode=None):
        """``x[idx] -= values``; duplicate indices accumulate."""
        return self._update(_enp().negative(_enp().asarray(values)), "add", mode)

    def multiply(self, values, *, mode=None):
        """``x[idx] *= values``; duplicate indices accumulate."""
        return self._update(values, "mul", mode)

    mul = multiply

    def divide(self, values, *, mode=None):
        """``x[idx] /= values``: ``x`` divided by the product of the values scattered onto
        ones, as JAX computes it (a true division: an integer ``x`` gives floats)."""
        return _enp().divide(self.array, self._ones_times(values, mode))

    def power(self, values, *, mode=None):
        """``x[idx] **= values``: ``x`` to the power of the product of the values scattered
        onto ones, as JAX computes it."""
        return _enp().power(self.array, self._ones_times(values, mode))

    def _ones_times(self, values, mode):
        return _IndexUpdateRef(_enp().ones_like(self.array), self.index)._update(
            values, "mul", mode)

    def apply(self, func, *, mode=None):
        """``x[idx] = func(x[idx])`` for an elementwise ``func``, applied once per index
        (twice where an index appears twice), as JAX's ``scatter_apply``."""
        norm = self._norm()
        if not builtins.any(_is_array(i) for i in norm):
            # Basic indices name each element once: apply to the slice, put it back.
            return self._update(func(_basic_getitem(self.array, norm)), "set", mode)
        count = _IndexUpdateRef(_enp().zeros(_shape(self.array), _enp().int32),
                                self.index)._update(1, "add", mode)
        return _apply_times(self.array, count, func)

    def min(self, values, *, mode=None):
        """``x[idx] = minimum(x[idx], values)``, duplicates included."""
        return self._update(values, "min", mode)

    def max(self, values, *, mode=None):
        """``x[idx] = maximum(x[idx], values)``, duplicates included."""
        return self._update(values, "max", mode)

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"


# --- take, take_along_axis, put_along_axis --------------------------------------------------

def _axis(axis, ndim, name):
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        _error(f"{name}: axis {a} is out of bounds for an array of dimension {ndim}",
               AxisError)
    return a % ndim


def _mode_args(mode, name):
    if mode is None:
        mode = "fill"
    if mode == "raise":
        _error(f"{name}: mode='raise' cannot check indices on the device; use 'fill', "
               "'clip' or 'wrap'", NotImplementedError)
    if mode not in ("fill", "clip", "wrap"):
        _error(f"{name}: invalid mode {mode!r}; expected 'fill', 'clip' or 'wrap'")
    return mode


def take(a, indices, axis=None, mode=None, fill_value=None):
    """``np.take``: elements of ``a`` at ``indices`` along ``axis`` (the flattened array for
    ``axis=None``). ``mode``: "fill" (default, as in JAX: out-of-bounds indices read
    ``fill_value``; negative ones count from the end), "clip" (clamped into range; negative
    indices clip to 0, as in NumPy) or "wrap" (modulo the size)."""
    mode = _mode_args(mode, "take")
    if axis is None:
        a = _enp().ravel(a)
        axis = 0
    nd = len(_shape(a))
    axis = _axis(axis, nd, "take")
    ind = indices
    if not _is_array(ind):
        ind = _host_index_array(np.asarray(ind))
    elif not isinstance(ind, Tracer):
        ind = _host_index_array(np.asarray(ind._ember_host() if hasattr(ind, "_ember_host")
                                           else ind))
    idx = (slice(None),) * axis + (ind,) + (slice(None),) * (nd - axis - 1)
    return _take_impl(a, idx, axis, mode, fill_value)


@eager
def _take_impl(a, idx, axis, mode, fill_value):
    a = _lift(a)
    ind = _lift(idx[axis])
    if ind.dtype == np.bool_ or not dtypes.is_int(ind.dtype):
        _error(f"take: indices must be integers, got {ind.dtype}")
    n = a.shape[axis]
    if mode == "wrap":
        ind = _norm_int(ind, n, False)
        if n:
            ind = _enp().remainder(ind, n)
        mode = "clip"
    elif mode == "clip":
        ind = _norm_int(ind, n, False)
        ind = _enp().clip(ind, 0, builtins.max(n - 1, 0))
    idx = idx[:axis] + (ind,) + idx[axis + 1:]
    return _gather_index(a, idx, mode, fill_value)


def _along_axis_index(arr_shape, ind_shape, axis, name):
    if len(ind_shape) != len(arr_shape):
        _error(f"{name}: indices and arr must have the same number of dimensions, got "
               f"{tuple(ind_shape)} and {tuple(arr_shape)}")
    try:
        np.broadcast_shapes(tuple(1 if i == axis else d for i, d in enumerate(arr_shape)),
                            tuple(1 if i == axis else d for i, d in enumerate(ind_shape)))
    except ValueError:
        _error(f"{name}: shapes {tuple(arr_shape)} and {tuple(ind_shape)} do not broadcast "
               f"outside axis {axis}")
    out = []
    dt = _index_dtype()
    for i, d in enumerate(arr_shape):
        if i == axis:
            out.append(None)
        else:
            shape = [1] * len(arr_shape)
            shape[i] = d
            out.append(np.arange(d, dtype=dt).reshape(shape))
    return out


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """``np.take_along_axis``; out-of-bounds indices as in :func:`take` (default "fill",
    "clip" clamps after counting negative indices from the end)."""
    mode = _mode_args(mode, "take_along_axis")
    if axis is None:
        arr = _enp().ravel(arr)
        axis = 0
    nd = len(_shape(arr))
    axis = _axis(axis, nd, "take_along_axis")
    if not _is_array(indices):
        indices = _host_index_array(np.asarray(indices))
    idx = _along_axis_index(_shape(arr), _shape(indices), axis, "take_along_axis")
    idx[axis] = indices
    return _take_along_impl(arr, tuple(idx), axis, mode, fill_value)


@eager
def _take_along_impl(arr, idx, axis, mode, fill_value):
    arr = _lift(arr)
    n = arr.shape[axis]
    ind = _norm_int(idx[axis], n)
    if mode == "wrap":
        ind = _enp().remainder(ind, n) if n else ind
    elif mode == "clip":
        ind = _enp().clip(ind, 0, builtins.max(n - 1, 0))
    idx = idx[:axis] + (ind,) + idx[axis + 1:]
    return _gather_index(arr, idx, "fill" if mode == "fill" else None, fill_value, False)


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """``np.put_along_axis`` as a functional update (JAX: pass ``inplace=False``).
    Out-of-bounds indices are dropped (``mode="clip"`` clamps them)."""
    if inplace:
        _error("put_along_axis: ember arrays are immutable; pass inplace=False and use the "
               "returned array")
    if axis is None:
        _error("put_along_axis: axis=None is not supported")
    nd = len(_shape(arr))
    axis = _axis(axis, nd, "put_along_axis")
    if not _is_array(indices):
        indices = _host_index_array(np.asarray(indices))
    idx = _along_axis_index(_shape(arr), _shape(indices), axis, "put_along_axis")
    idx[axis] = indices
    return _IndexUpdateRef(arr, tuple(idx)).set(values, mode=mode)
