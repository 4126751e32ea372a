"""Differentiation rules: a JVP rule per differentiable op, a transpose rule per linear op.

A JVP rule ``rule(ad, op, x, out, t, attrs)`` gets the primal copy of the op, its operands
``x`` and results ``out``, the operands' tangents ``t`` (None: zero) and the attributes; it
returns one tangent per result (None: zero). Values computed from primals only go through
``ad.primal``; ops on tangents through ``ad.linear``, and only linear ones (each a linear
op of this table with a tangent in its linear position), so that reverse mode can transpose
them. The derivatives follow JAX's rules (``jax/_src/lax/lax.py``), including its choices
at kinks: ``abs`` at 0 has slope 1, ``max`` at a tie splits the tangent in halves.

A transpose rule ``rule(tc, op, cts, is_linear, attrs)`` gets the cotangents of the op's
results and which operands are linear, and returns a cotangent per operand (None for the
non-linear ones).
"""

from __future__ import annotations

import math

import numpy as np

from ember import dtypes
from ember.dialects import OPS, aval_of_type
from ember.passes.batching import batch_elementwise, batching
from ember.passes.differentiate import JVP, NOT_DIFFERENTIABLE, TRANSPOSE
from ember.passes.lowering import lowering
from ember.passes.registry import PassError


def jvp(*names):
    def deco(fn):
        for n in names:
            assert f"ember.{n}" in OPS, n
            JVP[f"ember.{n}"] = fn
        return fn
    return deco


def transpose(*names):
    def deco(fn):
        for n in names:
            assert f"ember.{n}" in OPS, n
            TRANSPOSE[f"ember.{n}"] = fn
        return fn
    return deco


NOT_DIFFERENTIABLE.update(f"ember.{n}" for n in (
    "sign", "floor", "ceil", "round", "not", "is_finite", "and", "or", "xor", "eq", "ne", "lt",
    "le", "gt", "ge", "shift_left", "shift_right_logical", "shift_right_arithmetic",
    "population_count", "clz", "bitcast_convert_type", "signbit", "nextafter", "iota",
    "constant", "argmax", "argmin", "reduce_and", "reduce_or", "axis_index"))


def _aval(v):
    return aval_of_type(v.type)


def _scale(ad, t, d):
    """``t * d`` with ``d`` a primal value: the linear op of most unary rules."""
    return ad.linear("mul", [t, d])


def _add_t(ad, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return ad.linear("add", [a, b])


# --- elementwise, unary ---------------------------------------------------------------------

def _unary(derivative):
    """A JVP rule ``t * derivative(ad, x, out)``."""
    def rule(ad, op, x, out, t, attrs):
        return [_scale(ad, t[0], derivative(ad, x[0], out[0]))]
    return rule


def _c(ad, value, like):
    return ad.const(value, like)


def _p(ad, name, *xs, **attrs):
    return ad.primal(name, list(xs), **attrs)


JVP.update({f"ember.{name}": _unary(d) for name, d in {
    "exp": lambda ad, x, y: y,
    "expm1": lambda ad, x, y: _p(ad, "add", y, _c(ad, 1, y)),
    "exp2": lambda ad, x, y: _p(ad, "mul", y, _c(ad, math.log(2), y)),
    "log": lambda ad, x, y: _p(ad, "div", _c(ad, 1, x), x),
    "log1p": lambda ad, x, y: _p(ad, "div", _c(ad, 1, x), _p(ad, "add", x, _c(ad, 1, x))),
    "log2": lambda ad, x, y: _p(ad, "div", _c(ad, 1 / math.log(2), x), x),
    "sqrt": lambda ad, x, y: _p(ad, "div", _c(ad, 0.5, y), y),
    "rsqrt": lambda ad, x, y: _p(ad, "mul", _p(ad, "div", y, x), _c(ad, -0.5, y)),
    "cbrt": lambda ad, x, y: _p(ad, "div", _c(ad, 1 / 3, y), _p(ad, "mul", y, y)),
    "sin": lambda ad, x, y: _p(ad, "cos", x),
    "cos": lambda ad, x, y: _p(ad, "neg", _p(ad, "sin", x)),
    "tan": lambda ad, x, y: _p(ad, "add", _c(ad, 1, y), _p(ad, "mul", y, y)),
    "tanh": lambda ad, x, y: _p(ad, "sub", _c(ad, 1, y), _p(ad, "mul", y, y)),
    "logistic": lambda ad, x, y: _p(ad, "mul", y, _p(ad, "sub", _c(ad, 1, y), y)),
    "asin": lambda ad, x, y: _p(ad, "rsqrt", _p(ad, "sub", _c(ad, 1, x), _p(ad, "mul", x, x))),
    "acos": lambda ad, x, y: _p(ad, "neg", _p(ad, "rsqrt", _p(ad, "sub", _c(ad, 1, x),
                                                              _p(ad, "mul", x, x)))),
    "atan": lambda ad, x, y: _p(ad, "div", _c(ad, 1, x),
                                _p(ad, "add", _c(ad, 1, x), _p(ad, "mul", x, x))),
    "sinh": lambda ad, x, y: _p(ad, "cosh", x),
    "cosh": lambda ad, x, y: _p(ad, "sinh", x),
    "asinh": lambda ad, x, y: _p(ad, "rsqrt", _p(ad, "add", _p(ad, "mul", x, x),
                                                 _c(ad, 1, x))),
    "acosh": lambda ad, x, y: _p(ad, "rsqrt", _p(ad, "mul", _p(ad, "sub", x, _c(ad, 1, x)),
                                                 _p(ad, "add", x, _c(ad, 1, x)))),
    "atanh": lambda ad, x, y: _p(ad, "div", _c(ad, 1, x),
                                 _p(ad, "sub", _c(ad, 1, x), _p(ad, "mul", x, x))),
    "erf": lambda ad, x, y: _p(ad, "mul", _c(ad, 2 / math.sqrt(math.pi), x),
                               _p(ad, "exp", _p(ad, "neg", _p(ad, "mul", x, x)))),
    "erfc": lambda ad, x, y: _p(ad, "mul", _c(ad, -2 / math.sqrt(math.pi), x),
                                _p(ad, "exp", _p(ad, "neg", _p(ad, "mul", x, x)))),
    "erf_inv": lambda ad, x, y: _p(ad, "mul", _c(ad, math.sqrt(math.pi) / 2, y),
                                   _p(ad, "exp", _p(ad, "mul", y, y))),
    "lgamma": lambda ad, x, y: _p(ad, "digamma", x),
    # abs: JAX's select(x >= 0, t, -t), slope 1 at 0.
    "abs": lambda ad, x, y: _p(ad, "select", _p(ad, "ge", x, _c(ad, 0, x)), _c(ad, 1, x),
                               _c(ad, -1, x)),
}.items()})


@jvp("neg")
def _neg(ad, op, x, out, t, attrs):
    return [ad.linear("neg", [t[0]])]


@jvp("convert")
def _convert(ad, op, x, out, t, attrs):
    if not (dtypes.is_float(attrs["new_dtype"]) or dtypes.is_complex(attrs["new_dtype"])):
        return [None]
    return [ad.linear("convert", [t[0]], new_dtype=attrs["new_dtype"])]


@jvp("real", "imag", "conj")
def _linear_unary(ad, op, x, out, t, attrs):
    return [ad.linear(op.name.split(".")[1], [t[0]])]


@jvp("stop_gradient")
def _stop_gradient(ad, op, x, out, t, attrs):
    return [None]


# ember-differentiate removes stop_gradient; a pipeline without it batches and lowers it as
# the identity it is.
batching("stop_gradient")(batch_elementwise)


@lowering("stop_gradient")
def _lower_stop_gradient(c):
    return [c.operands[0]]


@lowering("jvp", "vjp")
def _lower_underived(c):
    raise PassError(f"{c.op.location}: error: '{c.op.name}' reached ember-to-linalg; run "
                    "ember-differentiate first")


@batching("jvp", "vjp")
def _batch_underived(ctx, op, inputs, attrs):
    raise PassError(f"{op.location}: error: '{op.name}' inside a vmap reached ember-batch; "
                    "run ember-differentiate first")


# --- elementwise, binary --------------------------------------------------------------------

@jvp("add")
def _add(ad, op, x, out, t, attrs):
    return [_add_t(ad, t[0], t[1])]


@jvp("sub")
def _sub(ad, op, x, out, t, attrs):
    neg = None if t[1] is None else ad.linear("neg", [t[1]])
    return [_add_t(ad, t[0], neg)]


@jvp("mul")
def _mul(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("mul", [t[0], x[1]])
    b = None if t[1] is None else ad.linear("mul", [x[0], t[1]])
    return [_add_t(ad, a, b)]


@jvp("div")
def _div(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("div", [t[0], x[1]])
    b = None
    if t[1] is not None:     # -t_y * out / y
        b = ad.linear("mul", [t[1], _p(ad, "neg", _p(ad, "div", out[0], x[1]))])
    return [_add_t(ad, a, b)]


@jvp("pow")
def _pow(ad, op, x, out, t, attrs):
    base, e = x
    a = b = None
    if t[0] is not None:     # y * x**(y-1), 0 where y == 0 (as JAX)
        d = _p(ad, "mul", e, _p(ad, "pow", base, _p(ad, "sub", e, _c(ad, 1, e))))
        d = _p(ad, "select", _p(ad, "eq", e, _c(ad, 0, e)), _c(ad, 0, d), d)
        b = _scale(ad, t[0], d)
    if t[1] is not None:     # log(x) * out, with log(1) at x == 0 (as JAX)
        safe = _p(ad, "select", _p(ad, "eq", base, _c(ad, 0, base)), _c(ad, 1, base), base)
        a = _scale(ad, t[1], _p(ad, "mul", _p(ad, "log", safe), out[0]))
    return [_add_t(ad, b, a)]


def _balanced_eq(ad, x, z, y):
    """1 where x == z != y, 1/2 where x == z == y, 0 elsewhere: JAX's tie rule."""
    one, half, zero = _c(ad, 1, z), _c(ad, 0.5, z), _c(ad, 0, z)
    return _p(ad, "select", _p(ad, "eq", x, z),
              _p(ad, "select", _p(ad, "eq", y, z), half, one), zero)


@jvp("max", "min")
def _max_min(ad, op, x, out, t, attrs):
    a = None if t[0] is None else _scale(ad, t[0], _balanced_eq(ad, x[0], out[0], x[1]))
    b = None if t[1] is None else _scale(ad, t[1], _balanced_eq(ad, x[1], out[0], x[0]))
    return [_add_t(ad, a, b)]


@jvp("atan2")
def _atan2(ad, op, x, out, t, attrs):
    y_, x_ = x     # atan2(y, x)
    denom = _p(ad, "add", _p(ad, "mul", x_, x_), _p(ad, "mul", y_, y_))
    a = None if t[0] is None else _scale(ad, t[0], _p(ad, "div", x_, denom))
    b = None if t[1] is None else _scale(ad, t[1], _p(ad, "div", _p(ad, "neg", y_), denom))
    return [_add_t(ad, a, b)]


@jvp("rem")
def _rem(ad, op, x, out, t, attrs):
    a = t[0]
    b = None
    if t[1] is not None:     # -trunc(x / y)
        q = _p(ad, "div", x[0], x[1])
        trunc = _p(ad, "mul", _p(ad, "sign", q), _p(ad, "floor", _p(ad, "abs", q)))
        b = _scale(ad, t[1], _p(ad, "neg", trunc))
    return [_add_t(ad, a, b)]


@jvp("copysign")
def _copysign(ad, op, x, out, t, attrs):
    if t[0] is None:
        return [None]
    same = _p(ad, "eq", _p(ad, "signbit", x[0]), _p(ad, "signbit", x[1]))
    return [_scale(ad, t[0], _p(ad, "select", same, _c(ad, 1, x[0]), _c(ad, -1, x[0])))]


@jvp("complex")
def _complex(ad, op, x, out, t, attrs):
    re = t[0] if t[0] is not None else ad.zeros(x[0], linear=True)
    im = t[1] if t[1] is not None else ad.zeros(x[1], linear=True)
    return [ad.linear("complex", [re, im])]


@jvp("select")
def _select(ad, op, x, out, t, attrs):
    if t[1] is None and t[2] is None:
        return [None]
    a = t[1] if t[1] is not None else ad.zeros(x[1], linear=True)
    b = t[2] if t[2] is not None else ad.zeros(x[2], linear=True)
    return [ad.linear("select", [x[0], a, b])]


# --- shapes, reductions, contractions: linear ops are their own JVP --------------------------

def _same_op(ad, op, x, out, t, attrs):
    return [ad.linear(op.name.split(".")[1], [t[0]], **attrs)]


jvp("broadcast_in_dim", "reshape", "transpose", "slice", "rev", "reduce_sum",
    "cumsum")(_same_op)


@jvp("concatenate")
def _concatenate(ad, op, x, out, t, attrs):
    ts = [ti if ti is not None else ad.zeros(xi, linear=True) for xi, ti in zip(x, t)]
    return [ad.linear("concatenate", ts, **attrs)]


@jvp("pad")
def _pad(ad, op, x, out, t, attrs):
    a = t[0] if t[0] is not None else ad.zeros(x[0], linear=True)
    v = t[1] if t[1] is not None else ad.zeros(x[1], linear=True)
    return [ad.linear("pad", [a, v], **attrs)]


@jvp("reduce_max", "reduce_min")
def _reduce_chooser(ad, op, x, out, t, attrs):
    """The tangent of the maximal elements, averaged over ties (as JAX)."""
    operand, axes = x[0], attrs["axes"]
    shape = _aval(operand).shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    back = _p(ad, "broadcast_in_dim", out[0], shape=shape, broadcast_dimensions=kept)
    where = _p(ad, "convert", _p(ad, "eq", operand, back), new_dtype=_aval(operand).dtype)
    counts = _p(ad, "reduce_sum", where, axes=axes)
    picked = ad.linear("reduce_sum", [ad.linear("mul", [t[0], where])], axes=axes)
    return [ad.linear("div", [picked, counts])]


@jvp("dot_general")
def _dot_general(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("dot_general", [t[0], x[1]], **attrs)
    b = None if t[1] is None else ad.linear("dot_general", [x[0], t[1]], **attrs)
    return [_add_t(ad, a, b)]


# --- transposes -----------------------------------------------------------------------------

@transpose("add")
def _t_add(tc, op, cts, lin, attrs):
    return [cts[0], cts[0]]


@transpose("sub")
def _t_sub(tc, op, cts, lin, attrs):
    return [cts[0], tc.emit("neg", [cts[0]]) if lin[1] else None]


@transpose("neg", "rev")
def _t_self(tc, op, cts, lin, attrs):
    return [tc.emit(op.name.split(".")[1], [cts[0]], **attrs)]


@transpose("mul")
def _t_mul(tc, op, cts, lin, attrs):
    if lin[0] and lin[1]:
        raise AssertionError("a product of two tangents is not linear")
    if lin[0]:
        return [tc.emit("mul", [cts[0], op.operands[1]]), None]
    return [None, tc.emit("mul", [op.operands[0], cts[0]])]


@transpose("div")
def _t_div(tc, op, cts, lin, attrs):
    assert not lin[1], "a tangent in a denominator is not linear"
    return [tc.emit("div", [cts[0], op.operands[1]]), None]


@transpose("convert")
def _t_convert(tc, op, cts, lin, attrs):
    return [tc.emit("convert", [cts[0]], new_dtype=_aval(op.operands[0]).dtype)]


@transpose("real")
def _t_real(tc, op, cts, lin, attrs):
    return [tc.emit("complex", [cts[0], tc.zeros(_aval(cts[0]))])]


@transpose("imag")
def _t_imag(tc, op, cts, lin, attrs):
    return [tc.emit("complex", [tc.zeros(_aval(cts[0])), tc.emit("neg", [cts[0]])])]


@transpose("complex")
def _t_complex(tc, op, cts, lin, attrs):
    return [tc.emit("real", [cts[0]]), tc.emit("imag", [tc.emit("neg", [cts[0]])])]


@transpose("conj")
def _t_conj(tc, op, cts, lin, attrs):
    return [tc.emit("conj", [cts[0]])]


@transpose("select")
def _t_select(tc, op, cts, lin, attrs):
    pred = op.operands[0]
    zeros = tc.zeros(_aval(cts[0]))
    return [None, tc.emit("select", [pred, cts[0], zeros]) if lin[1] else None,
            tc.emit("select", [pred, zeros, cts[0]]) if lin[2] else None]


@transpose("reshape")
def _t_reshape(tc, op, cts, lin, attrs):
    return [tc.emit("reshape", [cts[0]], new_sizes=tuple(_aval(op.operands[0]).shape))]


@transpose("transpose")
def _t_transpose(tc, op, cts, lin, attrs):
    inverse = tuple(int(i) for i in np.argsort(attrs["permutation"]))
    return [tc.emit("transpose", [cts[0]], permutation=inverse)]


@transpose("broadcast_in_dim")
def _t_broadcast(tc, op, cts, lin, attrs):
    in_shape = _aval(op.operands[0]).shape
    shape, dims = attrs["shape"], attrs["broadcast_dimensions"]
    expanded = {d for i, d in enumerate(dims) if in_shape[i] == 1 and shape[d] != 1}
    axes = tuple(d for d in range(len(shape)) if d not in dims or d in expanded)
    ct = tc.emit("reduce_sum", [cts[0]], axes=axes) if axes else cts[0]
    if tuple(_aval(ct).shape) != tuple(in_shape):
        ct = tc.emit("reshape", [ct], new_sizes=tuple(in_shape))
    return [ct]


@transpose("reduce_sum")
def _t_reduce_sum(tc, op, cts, lin, attrs):
    shape = _aval(op.operands[0]).shape
    kept = tuple(d for d in range(len(shape)) if d not in attrs["axes"])
    return [tc.emit("broadcast_in_dim", [cts[0]], shape=tuple(shape),
                    broadcast_dimensions=kept)]


@transpose("slice")
def _t_slice(tc, op, cts, lin, attrs):
    shape = _aval(op.operands[0]).shape
    out = _aval(cts[0]).shape
    start, strides = attrs["start_indices"], attrs["strides"] or (1,) * len(shape)
    real_limit = [s + (0 if n == 0 else 1 + (n - 1) * st)
                  for s, n, st in zip(start, out, strides)]
    zero = tc.zeros(_aval(cts[0])._replace(shape=()))
    return [tc.emit("pad", [cts[0], zero], low=tuple(start),
                    high=tuple(d - r for d, r in zip(shape, real_limit)),
                    interior=tuple(st - 1 for st in strides))]


@transpose("pad")
def _t_pad(tc, op, cts, lin, attrs):
    ct = cts[0]
    zero = tc.zeros(_aval(ct)._replace(shape=()))
    unpadded = tc.emit("pad", [ct, zero], low=tuple(-v for v in attrs["low"]),
                       high=tuple(-v for v in attrs["high"]),
                       interior=(0,) * len(attrs["low"]))
    shape = _aval(unpadded).shape
    operand = tc.emit("slice", [unpadded], start_indices=(0,) * len(shape),
                      limit_indices=tuple(shape),
                      strides=tuple(i + 1 for i in attrs["interior"]))
    value = None
    if lin[1]:
        everything = tuple(range(len(shape)))
        value = tc.emit("sub", [tc.emit("reduce_sum", [ct], axes=everything),
                                tc.emit("reduce_sum", [operand], axes=everything)])
    return [operand if lin[0] else None, value]


@transpose("concatenate")
def _t_concatenate(tc, op, cts, lin, attrs):
    dim = attrs["dimension"]
    shape = _aval(cts[0]).shape
    out, at = [], 0
    for v, is_lin in zip(op.operands, lin):
        n = _aval(v).shape[dim]
        if is_lin:
            start = [0] * len(shape)
            limit = list(shape)
            start[dim], limit[dim] = at, at + n
            out.append(tc.emit("slice", [cts[0]], start_indices=tuple(start),
                               limit_indices=tuple(limit), strides=(1,) * len(shape)))
        else:
            out.append(None)
        at += n
    return out


@transpose("cumsum")
def _t_cumsum(tc, op, cts, lin, attrs):
    return [tc.emit("cumsum", [cts[0]], axis=attrs["axis"], reverse=not attrs["reverse"])]


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield list(range(start, start + len(x)))
        start += len(x)


def _dot_transpose_lhs(tc, ct, x_aval, y, lc, rc, lb, rb, swap=False):
    """JAX's ``_dot_general_transpose_lhs``: the cotangent of the lhs of a dot_general."""
    y_ndim = _aval(y).ndim
    x_kept = [d for d in range(x_aval.ndim) if d not in lc and d not in lb]
    y_kept = [d for d in range(y_ndim) if d not in rc and d not in rb]
    if swap:
        ans_batch, ans_y, _ = _ranges_like(lb, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(lb, x_kept, y_kept)
    out = tc.emit("dot_general", [ct, y], lhs_contracting=tuple(ans_y),
                  rhs_contracting=tuple(y_kept), lhs_batch=tuple(ans_batch),
                  rhs_batch=tuple(rb))
    x_contract_sorted_by_y = [lc[i] for i in np.argsort(rc)]
    unsorted = list(lb) + x_kept + x_contract_sorted_by_y
    perm = tuple(int(i) for i in np.argsort(unsorted))
    if perm != tuple(range(len(perm))):
        out = tc.emit("transpose", [out], permutation=perm)
    return out


@transpose("dot_general")
def _t_dot_general(tc, op, cts, lin, attrs):
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    x, y = op.operands
    if lin[0] and lin[1]:
        raise AssertionError("a product of two tangents is not linear")
    if lin[0]:
        return [_dot_transpose_lhs(tc, cts[0], _aval(x), y, lc, rc, lb, rb), None]
    return [None, _dot_transpose_lhs(tc, cts[0], _aval(y), x, rc, lc, rb, lb, swap=True)]
