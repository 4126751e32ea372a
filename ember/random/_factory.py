"""The table the distributions' public functions are made from.

A distribution is a traced sampler, ``sampler(key, *params, shape, dtype)``, and its row of
the table, which says how the public function reads its arguments: the parameters (JAX's
names and defaults), what ``shape`` means (default ``()``: the sample shape, the parameters
not checked against it; default ``None``: the parameters' broadcast shape, or a shape they
broadcast to), the dtype rule, and how host parameters become data. ``@distribution(...)``
on the sampler adds the row; ``ember.random`` publishes :func:`public` of each row: a function
with JAX's signature ``(key, *params, shape, dtype)`` and the sampler's docstring, which
checks the key first, then the dtype, the shape and the parameters, and calls the sampler.

The distributions whose arguments do not fit (``uniform``'s bounds after ``dtype``,
``bernoulli``'s ``mode``, ``randint``'s, ``choice``'s, ``categorical``'s ...) are written
out in their modules.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
from collections.abc import Callable

import numpy as np

from ember import dtypes
from ember.errors import ConcretizationError, RandomArgumentError
from ember.random._prng import _arg_error, _is_concrete, _shape, _takes_key

# --- dtype rules: (dtype, name) -> the result dtype -------------------------------------------


def _float_dtype(dtype, name) -> np.dtype:
    dt = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_float(dt):
        raise RandomArgumentError(f"ember.random.{name}: dtype must be a floating-point dtype, "
                                  f"got {dt}")
    return np.dtype(dt)


def _sample_dtype(dtype, name, integer=False) -> np.dtype:
    """The checked result dtype: a float (default float32) or, with ``integer``, an int."""
    if integer:
        dt = np.dtype(dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype))
        if not dtypes.is_int(dt):
            raise _arg_error(name, f"dtype must be an integer dtype, got {dt}")
        return dt
    try:
        return _float_dtype(dtype, name)
    except ValueError as e:
        raise _arg_error(name, f"{str(e).split(': ', 1)[1]}; pass a float dtype such as "
                               "float32") from None


def _sample_int(dtype, name) -> np.dtype:
    return _sample_dtype(dtype, name, integer=True)


def _int_default(dtype, name) -> np.dtype:
    """The default integer dtype, else ``dtype`` unchecked (JAX's ``rademacher`` takes any)."""
    return np.dtype(dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype))


# --- shapes and parameters ---------------------------------------------------------------------

def _sample_shape(name, shape, *params) -> tuple[int, ...]:
    """JAX's ``_check_broadcast_shapes``: ``shape`` (checked against the parameters' shapes) or,
    for None, the parameters' broadcast shape."""
    pshapes = [tuple(np.shape(p)) for p in params]
    try:
        if shape is None:
            return tuple(np.broadcast_shapes(*pshapes)) if pshapes else ()
        shape = _shape(shape, name)
        if tuple(np.broadcast_shapes(shape, *pshapes)) == shape:
            return shape
    except ValueError:
        pass
    raise _arg_error(name, f"parameter shapes {pshapes} must broadcast to the sample shape "
                           f"{shape}; pass a shape they broadcast to, or shape=None")


def _static_int(x, name, what):
    """A size argument: a concrete int (it sets the result's shape)."""
    if not _is_concrete(x):
        raise ConcretizationError(f"ember.random.{name}: {what} sets the result's shape, so "
                                  "it must be a concrete int, got a traced value; pass it as "
                                  "a static argument")
    try:
        return operator.index(x)
    except TypeError:
        raise _arg_error(name, f"{what} must be an int, got {x!r}") from None


def _host_float(x):
    """Host data as an array of a float dtype: Python scalars and ints take the default float
    dtype (without the 64-bit narrowing warning NumPy float64 data gets)."""
    arr = np.asarray(x)
    if isinstance(x, bool | int | float) or not dtypes.is_float(arr.dtype):
        return arr.astype(dtypes.default_float())
    return arr.astype(dtypes.canonicalize(arr.dtype))


def _param(value, dtype):
    """A distribution parameter: host values become NumPy data of ``dtype``."""
    if _is_concrete(value):
        return np.asarray(value, dtype=dtype)
    return value


# Casts: (name, dtype, *params) -> the parameters the sampler takes.

def _safe_params(name, dtype, *params):
    """JAX's ``_check_all_safe_to_cast``: a non-weak float parameter must not narrow to
    ``dtype``. Host values become NumPy data of ``dtype``; tracers are returned as they are."""
    for p in params:
        dt, weak = dtypes.dtype_and_weak(p)
        if not weak and dtypes.is_float(dt) and dtypes.promote_types(dt, dtype) != dtype:
            raise _arg_error(name, f"cannot safely cast a parameter of dtype {dt} to {dtype}; "
                                   f"pass dtype={dt} or cast the parameter")
    return [_param(p, dtype) for p in params]


def _of_dtype(name, dtype, *params):
    """Host parameters as data of the result dtype, unchecked."""
    return [_param(p, dtype) for p in params]


def _host_floats(name, dtype, *params):
    """Host parameters as data of their own float dtype (the default float for ints)."""
    return [_host_float(p) if _is_concrete(p) else p for p in params]


def _as_given(name, dtype, *params):
    return list(params)


# --- the table ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Distribution:
    """A row of the table: ``name(key, *params, shape=shape, dtype=None)`` calls
    ``sampler(key, *cast(params), sample shape, dtype rule(dtype))``."""
    name: str
    sampler: Callable
    params: tuple         # names, or (name, default) pairs, in JAX's order
    shape: tuple | None   # the default shape: () or None (see the module's docstring)
    dtype: Callable       # (dtype, name) -> the result dtype
    cast: Callable        # (name, dtype, *params) -> the sampler's parameters

    def signature(self) -> inspect.Signature:
        arg = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(p, arg) if isinstance(p, str)
                  else inspect.Parameter(p[0], arg, default=p[1]) for p in self.params]
        return inspect.Signature([inspect.Parameter("key", arg), *params,
                                  inspect.Parameter("shape", arg, default=self.shape),
                                  inspect.Parameter("dtype", arg, default=None)])


DISTRIBUTIONS: dict[str, Distribution] = {}


def distribution(*params, shape=None, dtype=_sample_dtype, cast=_as_given):
    """Adds the decorated sampler ``_name`` to the table as ``name`` (see the module's
    docstring); the sampler is returned as it is, for the other samplers to call."""
    def add(sampler):
        name = sampler.__name__.lstrip("_")
        DISTRIBUTIONS[name] = Distribution(name, sampler, params, shape, dtype, cast)
        return sampler
    return add


def public(row: Distribution) -> Callable:
    """The public function of a row."""
    signature = row.signature()
    fixed_shape = row.shape is not None

    def sample(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:     # Python's own message names the function
            raise TypeError(f"{row.name}(): {e}") from None
        bound.apply_defaults()
        key, *params, shape, dtype = bound.args
        dt = row.dtype(dtype, row.name)
        shape = _shape(shape, row.name) if fixed_shape else \
            _sample_shape(row.name, shape, *params)
        return row.sampler(key, *row.cast(row.name, dt, *params), shape, dt)

    sample.__name__ = sample.__qualname__ = row.name
    sample.__module__ = "ember.random"
    sample.__doc__ = row.sampler.__doc__
    sample.__signature__ = signature
    return _takes_key(sample)
