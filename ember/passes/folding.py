"""Constant-folding rules for ``ember-simplify``: op name -> NumPy evaluation.

Only ops whose NumPy result is bit-identical to what IREE computes are folded (integer
arithmetic, comparisons, data movement, IEEE add/sub/mul); transcendental functions and
integer division, whose edge cases differ, are left to run.
"""

from __future__ import annotations

import numpy as np

from ember.rules.base import rule_registrar

FOLDERS: dict = {}


folder = rule_registrar(FOLDERS)


def _elementwise(np_fn):
    def fold(values, attrs, out):
        with np.errstate(all="ignore"):
            return np_fn(*values)
    return fold


for _name, _fn in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                   "max": np.maximum, "min": np.minimum, "neg": np.negative,
                   "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
                   "not": np.invert, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
                   "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                   "select": np.where}.items():
    FOLDERS[f"ember.{_name}"] = _elementwise(_fn)


@folder("convert")
def _convert(values, attrs, out):
    (x,) = values
    if x.dtype.kind == "c" and out.dtype.kind != "c":
        if out.dtype == np.bool_:
            return x != 0
        x = x.real      # complex -> real keeps the real part (without NumPy's warning)
    if np.issubdtype(x.dtype, np.floating) and not np.issubdtype(out.dtype, np.floating) \
            and out.dtype != np.bool_:
        return None  # float -> int of NaN/out-of-range values is target-defined
    return x.astype(out.dtype)


@folder("broadcast_in_dim")
def _broadcast(values, attrs, out):
    (x,) = values
    shape = [1] * len(out.shape)
    for i, d in enumerate(attrs["broadcast_dimensions"]):
        shape[d] = x.shape[i]
    return np.broadcast_to(x.reshape(shape), out.shape)


@folder("reshape")
def _reshape(values, attrs, out):
    return values[0].reshape(out.shape)


@folder("transpose")
def _transpose(values, attrs, out):
    return np.transpose(values[0], attrs["permutation"])


@folder("slice")
def _slice(values, attrs, out):
    strides = attrs["strides"] or (1,) * values[0].ndim
    idx = tuple(slice(s, e, st) for s, e, st in zip(attrs["start_indices"],
                                                     attrs["limit_indices"], strides))
    return values[0][idx]


@folder("concatenate")
def _concatenate(values, attrs, out):
    return np.concatenate(values, axis=attrs["dimension"])


@folder("rev")
def _rev(values, attrs, out):
    return np.flip(values[0], axis=attrs["dimensions"]) if attrs["dimensions"] else values[0]
