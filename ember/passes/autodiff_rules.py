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
from ember.dialects import aval_of_type, emit
from ember.errors import PassError
from ember.rules.autodiff import JVP, NOT_DIFFERENTIABLE, jvp, transpose
from ember.rules.batching import batch_elementwise, batching
from ember.rules.lowering import lowering

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
}.items()})


@jvp("abs")
def _abs(ad, op, x, out, t, attrs):
    x, y = x[0], out[0]
    if not dtypes.is_complex(_aval(x).dtype):
        # JAX's select(x >= 0, t, -t), slope 1 at 0.
        return [_scale(ad, t[0], _p(ad, "select", _p(ad, "ge", x, _c(ad, 0, x)),
                                    _c(ad, 1, x), _c(ad, -1, x)))]
    # Complex x (JAX's rule): Re(t conj(x) / |x|), with |x| = 0 read as 1 (slope 0 there).
    safe = _p(ad, "select", _p(ad, "eq", y, _c(ad, 0, y)), _c(ad, 1, y), y)
    d = _p(ad, "div", _p(ad, "conj", x), _p(ad, "convert", safe, new_dtype=_aval(x).dtype))
    return [ad.linear("real", [ad.linear("mul", [t[0], d])])]


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
    if t[0] is not None:     # y * x**(y-1): JAX's rule for a float exponent (nan at 0**0)
        d = _p(ad, "mul", e, _p(ad, "pow", base, _p(ad, "sub", e, _c(ad, 1, e))))
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
    re = t[0] if t[0] is not None else ad.zeros(x[0])
    im = t[1] if t[1] is not None else ad.zeros(x[1])
    return [ad.linear("complex", [re, im])]


@jvp("select")
def _select(ad, op, x, out, t, attrs):
    if t[1] is None and t[2] is None:
        return [None]
    a = t[1] if t[1] is not None else ad.zeros(x[1])
    b = t[2] if t[2] is not None else ad.zeros(x[2])
    return [ad.linear("select", [x[0], a, b])]


# --- shapes, reductions, contractions: linear ops are their own JVP --------------------------

def _same_op(ad, op, x, out, t, attrs):
    return [ad.linear(op.name.split(".")[1], [t[0]], **attrs)]


jvp("broadcast_in_dim", "reshape", "transpose", "slice", "rev", "reduce_sum",
    "cumsum")(_same_op)


@jvp("concatenate")
def _concatenate(ad, op, x, out, t, attrs):
    ts = [ti if ti is not None else ad.zeros(xi) for xi, ti in zip(x, t)]
    return [ad.linear("concatenate", ts, **attrs)]


@jvp("pad")
def _pad(ad, op, x, out, t, attrs):
    a = t[0] if t[0] is not None else ad.zeros(x[0])
    v = t[1] if t[1] is not None else ad.zeros(x[1])
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
    return [None, _dot_transpose_rhs(tc, cts[0], x, _aval(y), lc, rc, lb, rb)]


def _dot_transpose_rhs(tc, ct, x, y_aval, lc, rc, lb, rb):
    """The cotangent of the rhs of a dot_general, as ``dot_general(x, ct)``: its dimensions
    come out as (batch, rhs contracting in lhs order, rhs free), which is the rhs's own
    order for a plain ``x @ w`` (JAX computes ``dot_general(ct, x)`` and transposes: one
    more kernel per product, per step of a scan)."""
    x_ndim = _aval(x).ndim
    x_kept = [d for d in range(x_ndim) if d not in lc and d not in lb]
    y_kept = [d for d in range(y_aval.ndim) if d not in rc and d not in rb]
    ans_batch, ans_x, _ = _ranges_like(lb, x_kept, y_kept)
    out = tc.emit("dot_general", [x, ct], lhs_contracting=tuple(x_kept),
                  rhs_contracting=tuple(ans_x), lhs_batch=tuple(lb),
                  rhs_batch=tuple(ans_batch))
    # ``out``'s dimensions, as rhs dimensions: batch, the contracting ones paired with lc
    # (in lc's increasing order, as dot_general keeps the lhs's free dims), then y_kept.
    pairs = sorted(zip(lc, rc))
    order = list(rb) + [r for _, r in pairs] + y_kept
    perm = tuple(int(i) for i in np.argsort(order))
    if perm != tuple(range(len(perm))):
        out = tc.emit("transpose", [out], permutation=perm)
    return out


# --- helpers of the rules below -------------------------------------------------------------

def _primal_all(ad, name, operands, **attrs):
    """All results of a primal op (``ad.primal`` gives the first)."""
    with ad.primal_ip:
        return emit(f"ember.{name}", list(operands), **attrs)


def _full(em, value, shape, dtype):
    """A constant of ``shape`` (a broadcast scalar), emitted by ``em(name, operands, **a)``."""
    s = em("constant", [], value=np.asarray(value, dtype=dtype))
    if tuple(shape) == ():
        return s
    return em("broadcast_in_dim", [s], shape=tuple(shape), broadcast_dimensions=())


def _pem(ad):
    return lambda name, operands, **a: ad.primal(name, list(operands), **a)


def _bcast_to(em, v, shape):
    """``v`` (of the leading dimensions of ``shape``) broadcast over the trailing ones."""
    nd = _aval(v).ndim
    if tuple(_aval(v).shape) == tuple(shape):
        return v
    return em("broadcast_in_dim", [v], shape=tuple(shape),
              broadcast_dimensions=tuple(range(nd)))


def _in_bounds(em, indices, sizes):
    """Whether each index vector of ``indices`` (batch + (k,)) is inside ``sizes``: the
    updates a scatter applies (it drops the others)."""
    a = _aval(indices)
    hi = em("broadcast_in_dim", [em("constant", [], value=np.asarray(sizes, a.dtype))],
            shape=a.shape, broadcast_dimensions=(a.ndim - 1,))
    ok = em("and", [em("ge", [indices, _full(em, 0, a.shape, a.dtype)]),
                    em("lt", [indices, hi])])
    return em("reduce_and", [ok], axes=(a.ndim - 1,))


def _clamped(em, indices, sizes):
    """``indices`` clamped into ``[0, size - 1]``, as gather reads them."""
    a = _aval(indices)
    hi = em("broadcast_in_dim", [em("constant", [], value=np.asarray(
        [max(s - 1, 0) for s in sizes], a.dtype))], shape=a.shape,
        broadcast_dimensions=(a.ndim - 1,))
    return em("max", [em("min", [indices, hi]), _full(em, 0, a.shape, a.dtype)])


def _along_indices(em, index, axis):
    """Full gather indices (shape + (ndim,)) reading position ``index`` (an int array of the
    result's shape) along ``axis`` and the same position along the others
    (``take_along_axis``)."""
    a = _aval(index)
    cols = []
    for d in range(a.ndim):
        c = index if d == axis else em("iota", [], shape=tuple(a.shape), dimension=d,
                                       dtype=a.dtype)
        cols.append(em("reshape", [c], new_sizes=tuple(a.shape) + (1,)))
    return cols[0] if len(cols) == 1 else em("concatenate", cols, dimension=a.ndim)


def _take_along(ad, t, index, axis):
    """The tangent ``t`` read at ``index`` along ``axis`` (a gather, linear in ``t``)."""
    idx = _along_indices(_pem(ad), index, axis)
    return ad.linear("gather", [t, idx], axes=tuple(range(_aval(t).ndim)))


def _zeros_p(ad, like):
    """Zeros for a tangent that is zero, emitted with the primal ops (not ``linear=True``: a
    constant in the linear block would be transposed, and constants have no transpose)."""
    return ad.zeros(like)


# --- indexing -------------------------------------------------------------------------------

@jvp("gather")
def _gather(ad, op, x, out, t, attrs):
    return [ad.linear("gather", [t[0], x[1]], axes=attrs["axes"])]


@transpose("gather")
def _t_gather(tc, op, cts, lin, attrs):
    operand, indices = op.operands
    a, axes = _aval(operand), attrs["axes"]
    # gather clamps its indices and scatter drops those out of range: clamp them here.
    idx = _clamped(tc.emit, indices, [a.shape[ax] for ax in axes])
    return [tc.emit("scatter", [tc.zeros(a), idx, cts[0]], axes=axes, kind="add"), None]


def _scatter_add_t(ad, target, indices, updates, axes):
    return ad.linear("scatter", [target, indices, updates], axes=axes, kind="add")


@jvp("scatter")
def _scatter(ad, op, x, out, t, attrs):
    operand, indices, updates = x
    axes, kind = attrs["axes"], attrs["kind"]
    t_op = t[0] if t[0] is not None else _zeros_p(ad, operand)
    t_up = t[2] if t[2] is not None else _zeros_p(ad, updates)
    if kind == "add":
        return [_scatter_add_t(ad, t_op, indices, t_up, axes)]
    return {"set": _scatter_set, "mul": _scatter_mul, "min": _scatter_extremal,
            "max": _scatter_extremal}[kind](ad, op, x, out, t_op, t_up, t, axes)


def _scatter_set(ad, op, x, out, t_op, t_up, t, axes):
    """JAX's ``_scatter_jvp``: scatter an id per update to learn which update landed where
    (one of duplicates wins), then recompute the result as a scatter-add of the operand
    where nothing landed and the winning updates, and its tangent the same way."""
    operand, indices, updates = x
    em = _pem(ad)
    ia, ua = _aval(indices), _aval(updates)
    batch = tuple(ia.shape[:-1])
    n = int(np.prod(batch, dtype=np.int64))
    i32 = np.dtype("int32")
    ids = em("add", [em("reshape", [em("iota", [], shape=(n,), dimension=0, dtype=i32)],
                        new_sizes=batch), _full(em, 1, batch, i32)])
    ids = _bcast_to(em, ids, ua.shape)
    landed = em("scatter", [_full(em, 0, _aval(operand).shape, i32), indices, ids],
                axes=axes, kind="set")
    won = em("eq", [em("gather", [landed, indices], axes=axes), ids])
    kept = em("eq", [landed, _full(em, 0, _aval(operand).shape, i32)])
    value = em("scatter", [em("select", [kept, operand, ad.zeros(operand)]), indices,
                           em("select", [won, updates, ad.zeros(updates)])],
               axes=axes, kind="add")
    ad.replace(out[0], value)
    tangent = _scatter_add_t(ad, ad.linear("select", [kept, t_op, ad.zeros(operand)]),
                             indices, ad.linear("select", [won, t_up, ad.zeros(updates)]),
                             axes)
    op.erase()
    return [tangent]


def _scatter_mul(ad, op, x, out, t_op, t_up, t, axes):
    """out = x * prod(updates landing there): the operand's tangent scaled by that product,
    plus x times the scatter-add of each update's tangent times the product of the other
    updates landing with it (zero-safe: zeros counted, not divided by)."""
    operand, indices, updates = x
    em = _pem(ad)
    oa, ua = _aval(operand), _aval(updates)
    is0 = em("eq", [updates, ad.zeros(updates)])
    nonzero = em("select", [is0, ad.const(1, updates), updates])
    # One scatter-mul of the nonzero updates and one count of the zeros (a second scatter
    # into the same constant made IREE fail: 'stream.yield' op used resource not listed).
    q_op = em("scatter", [ad.const(1, operand), indices, nonzero], axes=axes, kind="mul")
    i32 = np.dtype("int32")
    count_op = em("scatter", [_full(em, 0, oa.shape, i32), indices,
                              em("convert", [is0], new_dtype=i32)], axes=axes, kind="add")
    prod = em("select", [em("eq", [count_op, _full(em, 0, oa.shape, i32)]), q_op,
                         ad.zeros(operand)])
    tangent = None if t[0] is None else ad.linear("mul", [t_op, prod])
    if t[2] is None:
        return [tangent]
    q = em("gather", [q_op, indices], axes=axes)
    count = em("gather", [count_op, indices], axes=axes)
    zero_u = ad.zeros(updates)
    others = em("select", [is0,
                           em("select", [em("eq", [count, _full(em, 1, ua.shape, i32)]), q,
                                         zero_u]),
                           em("select", [em("eq", [count, _full(em, 0, ua.shape, i32)]),
                                         em("div", [q, nonzero]), zero_u])])
    spread = _scatter_add_t(ad, ad.zeros(operand), indices, ad.linear("mul", [t_up, others]),
                            axes)
    return [_add_t(ad, tangent, ad.linear("mul", [spread, operand]))]


def _scatter_extremal(ad, op, x, out, t_op, t_up, t, axes):
    """JAX's ``_scatter_extremal_jvp``: the tangents of the values that won, averaged over
    ties (the operand's value counting as one of them)."""
    operand, indices, updates = x
    em = _pem(ad)
    oa, ua = _aval(operand), _aval(updates)
    inb = _bcast_to(em, _in_bounds(em, indices, [oa.shape[a] for a in axes]), ua.shape)
    one_u, zero_u = ad.const(1, updates), ad.zeros(updates)
    initial = em("gather", [operand, indices], axes=axes)
    target = em("gather", [out[0], indices], axes=axes)
    success = em("eq", [updates, target])
    retained = em("eq", [initial, target])
    zeros_o = ad.zeros(operand)
    n_up = em("gather", [em("scatter", [zeros_o, indices, em("select", [success, one_u,
                                                                          zero_u])],
                            axes=axes, kind="add"), indices], axes=axes)
    n_ref = em("gather", [em("scatter", [zeros_o, indices, one_u], axes=axes, kind="add"),
                          indices], axes=axes)
    inv_up1 = em("div", [one_u, em("add", [n_up, one_u])])
    up_coef = em("select", [success, em("select", [retained, inv_up1,
                                                   em("div", [one_u, n_up])]), zero_u])
    op_coef = em("div", [em("sub", [em("select", [retained, inv_up1, zero_u]), one_u]),
                         n_ref])
    # Updates dropped out of range contribute nothing (and their coefficients may be inf).
    up_coef = em("select", [inb, up_coef, zero_u])
    op_coef = em("select", [inb, op_coef, zero_u])
    upd_t = _add_t(ad, ad.linear("mul", [ad.linear("gather", [t_op, indices], axes=axes),
                                         op_coef]),
                   ad.linear("mul", [t_up, up_coef]))
    return [_scatter_add_t(ad, t_op, indices, upd_t, axes)]


@transpose("scatter")
def _t_scatter(tc, op, cts, lin, attrs):
    assert attrs["kind"] == "add", "only scatter-add is linear"
    operand, indices, updates = op.operands
    oa = _aval(operand)
    ct_up = None
    if lin[2]:
        # An update dropped out of range has a zero cotangent (gather would clamp it).
        inb = _bcast_to(tc.emit, _in_bounds(tc.emit, indices,
                                            [oa.shape[a] for a in attrs["axes"]]),
                        _aval(updates).shape)
        ct_up = tc.emit("select", [inb, tc.emit("gather", [cts[0], indices],
                                                axes=attrs["axes"]),
                                   tc.zeros(_aval(updates))])
    return [cts[0] if lin[0] else None, None, ct_up]


@jvp("dynamic_slice")
def _dynamic_slice(ad, op, x, out, t, attrs):
    return [ad.linear("dynamic_slice", [t[0], *x[1:]], **attrs)]


@transpose("dynamic_slice")
def _t_dynamic_slice(tc, op, cts, lin, attrs):
    operand, starts = op.operands[0], list(op.operands)[1:]
    return [tc.emit("dynamic_update_slice", [tc.zeros(_aval(operand)), cts[0], *starts])] + \
        [None] * len(starts)


@jvp("dynamic_update_slice")
def _dynamic_update_slice(ad, op, x, out, t, attrs):
    a = t[0] if t[0] is not None else _zeros_p(ad, x[0])
    b = t[1] if t[1] is not None else _zeros_p(ad, x[1])
    return [ad.linear("dynamic_update_slice", [a, b, *x[2:]])]


@transpose("dynamic_update_slice")
def _t_dynamic_update_slice(tc, op, cts, lin, attrs):
    update, starts = op.operands[1], list(op.operands)[2:]
    ua = _aval(update)
    ct_op = tc.emit("dynamic_update_slice", [cts[0], tc.zeros(ua), *starts]) if lin[0] \
        else None
    ct_up = tc.emit("dynamic_slice", [cts[0], *starts], slice_sizes=tuple(ua.shape)) \
        if lin[1] else None
    return [ct_op, ct_up] + [None] * len(starts)


# --- sorting and cumulative ops -------------------------------------------------------------

@jvp("sort")
def _sort(ad, op, x, out, t, attrs):
    """As JAX: sort once more with an iota operand, whose result is the permutation that the
    tangents go through; that sort's other results replace the primal ones."""
    dim = attrs["dimension"]
    shape = tuple(_aval(x[0]).shape)
    iota = ad.primal("iota", [], shape=shape, dimension=dim, dtype=np.dtype("int32"))
    res = _primal_all(ad, "sort", list(x) + [iota], **attrs)
    for old, new in zip(out, res):
        ad.replace(old, new)
    tangents = [None if ti is None else _take_along(ad, ti, res[-1], dim) for ti in t]
    op.erase()
    return tangents


def _scan_jvp(ad, x, t, axis, reverse, combine):
    """The tangent of an inclusive scan of ``x`` along ``axis``: JAX's JVP of its
    ``associative_scan`` (pairs combined, the half-size scan recursively, the rest
    interleaved), ``combine(p1, t1, p2, t2) -> (p, t)`` emitting the primal and the linear
    ops of one combination. As JAX differentiates cumprod, cummax and cummin, ties and
    zeros included."""
    prim = _pem(ad)

    def lin(name, ops, **a):
        return ad.linear(name, list(ops), **a)

    def cut(em, v, start, stop, stride=1):
        a = _aval(v)
        lo, hi, st = [0] * a.ndim, list(a.shape), [1] * a.ndim
        lo[axis], hi[axis], st[axis] = start, a.shape[axis] + stop if stop < 0 else stop, stride
        return em("slice", [v], start_indices=tuple(lo), limit_indices=tuple(hi),
                  strides=tuple(st))

    def interleave(em, a, b):
        """a at the even positions, b at the odd ones (JAX's _interleave)."""
        na, nb, nd = _aval(a).shape[axis], _aval(b).shape[axis], _aval(a).ndim
        zero = ad.primal("constant", [], value=np.zeros((), _aval(a).dtype))

        def spread(v, low, high):
            lo, hi, mid = [0] * nd, [0] * nd, [0] * nd
            lo[axis], hi[axis], mid[axis] = low, high, 1
            return em("pad", [v, zero], low=tuple(lo), high=tuple(hi), interior=tuple(mid))
        return em("add", [spread(a, 0, 1 if na == nb else 0),
                          spread(b, 1, 0 if na == nb else 1)])

    def scan(p, tt):
        n = _aval(p).shape[axis]
        if n < 2:
            return p, tt
        rp, rt = combine(cut(prim, p, 0, n - 1, 2), cut(lin, tt, 0, n - 1, 2),
                         cut(prim, p, 1, n, 2), cut(lin, tt, 1, n, 2))
        odd_p, odd_t = scan(rp, rt)
        even_p, even_t = cut(prim, p, 0, 1), cut(lin, tt, 0, 1)
        if n > 2:
            m = _aval(odd_p).shape[axis]
            ep, et = (cut(prim, odd_p, 0, m - 1), cut(lin, odd_t, 0, m - 1)) \
                if n % 2 == 0 else (odd_p, odd_t)
            ep, et = combine(ep, et, cut(prim, p, 2, n, 2), cut(lin, tt, 2, n, 2))
            even_p = prim("concatenate", [even_p, ep], dimension=axis)
            even_t = lin("concatenate", [even_t, et], dimension=axis)
        return interleave(prim, even_p, odd_p), interleave(lin, even_t, odd_t)

    if reverse:
        x, t = prim("rev", [x], dimensions=(axis,)), lin("rev", [t], dimensions=(axis,))
    _, out = scan(x, t)
    return lin("rev", [out], dimensions=(axis,)) if reverse else out


def _combine_mul(ad):
    def combine(p1, t1, p2, t2):
        return _p(ad, "mul", p1, p2), ad.linear("add", [ad.linear("mul", [t1, p2]),
                                                        ad.linear("mul", [p1, t2])])
    return combine


def _combine_chooser(ad, name):
    """max/min's JVP: the tangent of the chosen operand, halves at a tie (as JAX)."""
    def combine(p1, t1, p2, t2):
        out = _p(ad, name, p1, p2)
        return out, ad.linear("add", [
            ad.linear("mul", [t1, _balanced_eq(ad, p1, out, p2)]),
            ad.linear("mul", [t2, _balanced_eq(ad, p2, out, p1)])])
    return combine


@jvp("cumprod", "cummax", "cummin")
def _cumulative(ad, op, x, out, t, attrs):
    name = op.name.split(".")[1]
    combine = _combine_mul(ad) if name == "cumprod" else _combine_chooser(ad, name[3:])
    return [_scan_jvp(ad, x[0], t[0], attrs["axis"], attrs["reverse"], combine)]


@jvp("reduce_prod")
def _reduce_prod(ad, op, x, out, t, attrs):
    """JAX's ``_reduce_prod_jvp_rule``: the JVP of a tree of pairwise products over the
    reduced elements (exact with zeros, no division)."""
    x0, axes = x[0], tuple(attrs["axes"])
    shape = tuple(_aval(x0).shape)
    rest = [d for d in range(len(shape)) if d not in axes]
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return [None]
    perm = axes + tuple(rest)
    flat = (n,) + tuple(shape[d] for d in rest)

    def arrange(v, em):
        if perm != tuple(range(len(shape))):
            v = em("transpose", [v], permutation=perm)
        return em("reshape", [v], new_sizes=flat) if tuple(_aval(v).shape) != flat else v

    p = arrange(x0, _pem(ad))
    tt = arrange(t[0], lambda name, ops, **a: ad.linear(name, list(ops), **a))
    while n > 1:
        n1 = (n + 1) // 2
        halves = []
        for v, lin in ((p, False), (tt, True)):
            emit_ = (lambda name, ops, **a: ad.linear(name, list(ops), **a)) if lin \
                else _pem(ad)
            va = _aval(v)
            lo = emit_("slice", [v], start_indices=(0,) * va.ndim,
                       limit_indices=(n1,) + tuple(va.shape[1:]), strides=(1,) * va.ndim)
            hi = emit_("slice", [v], start_indices=(n1,) + (0,) * (va.ndim - 1),
                       limit_indices=tuple(va.shape), strides=(1,) * va.ndim)
            if n - n1 != n1:
                fill = ad.primal("constant", [], value=np.asarray(0 if lin else 1, va.dtype))
                hi = emit_("pad", [hi, fill], low=(0,) * va.ndim,
                           high=(1,) + (0,) * (va.ndim - 1), interior=(0,) * va.ndim)
            halves.append((lo, hi))
        (p1, p2), (t1, t2) = halves
        tt = ad.linear("add", [ad.linear("mul", [t1, p2]), ad.linear("mul", [p1, t2])])
        p = _p(ad, "mul", p1, p2)
        n = n1
    return [ad.linear("reshape", [tt], new_sizes=tuple(shape[d] for d in rest))]


# --- special functions ----------------------------------------------------------------------

def _trigamma(ad, x):
    """polygamma(1, x) (the derivative of digamma), with ember ops: the reflection
    pi^2 / sin^2(pi x) - psi1(1 - x) below 1/2, the recurrence psi1(z) = psi1(z + 1) + 1/z^2
    up to z + 8, then the asymptotic series (relative error below 1e-13 from 8.5 up)."""
    c = lambda v: ad.const(v, x)      # noqa: E731
    reflect = _p(ad, "lt", x, c(0.5))
    z = _p(ad, "select", reflect, _p(ad, "sub", c(1), x), x)
    acc = ad.zeros(x)
    for k in range(8):
        zk = _p(ad, "add", z, c(k))
        acc = _p(ad, "add", acc, _p(ad, "div", c(1), _p(ad, "mul", zk, zk)))
    w = _p(ad, "add", z, c(8))
    r = _p(ad, "div", c(1), w)
    r2 = _p(ad, "mul", r, r)
    # 1/w + 1/(2w^2) + sum B_2k / w^(2k+1), by Horner in 1/w^2.
    series = c(7 / 6)
    for b in (-691 / 2730, 5 / 66, -1 / 30, 1 / 42, -1 / 30, 1 / 6):
        series = _p(ad, "add", _p(ad, "mul", series, r2), c(b))
    tail = _p(ad, "mul", _p(ad, "mul", series, r2), r)
    psi1 = _p(ad, "add", acc, _p(ad, "add", _p(ad, "add", r, _p(ad, "mul", c(0.5), r2)),
                                 tail))
    s = _p(ad, "sin", _p(ad, "mul", c(math.pi), x))
    mirror = _p(ad, "sub", _p(ad, "div", c(math.pi ** 2), _p(ad, "mul", s, s)), psi1)
    return _p(ad, "select", reflect, mirror, psi1)


JVP["ember.digamma"] = _unary(lambda ad, x, y: _trigamma(ad, x))


# --- convolution ----------------------------------------------------------------------------

@jvp("conv")
def _conv(ad, op, x, out, t, attrs):
    a = None if t[0] is None else ad.linear("conv", [t[0], x[1]], **attrs)
    b = None if t[1] is None else ad.linear("conv", [x[0], t[1]], **attrs)
    return [_add_t(ad, a, b)]


def _conv_transpose_lhs(tc, ct, lhs_aval, rhs, attrs):
    """JAX's ``_conv_general_dilated_transpose_lhs`` for ember's conv: the cotangent dilated
    by the strides and padded by the kernel's span, convolved with the kernel flipped and
    its I/O swapped (per feature group)."""
    strides, dil, g = attrs["window_strides"], attrs["rhs_dilation"], \
        attrs["feature_group_count"]
    ra, ca = _aval(rhs), _aval(ct)
    nd = len(strides)
    window, i_, o = ra.shape[:nd], ra.shape[-2], ra.shape[-1]
    lo, hi = [0], [0]
    for d in range(nd):
        span = (window[d] - 1) * dil[d] + 1
        reach = (ca.shape[1 + d] - 1) * strides[d] + span
        lo.append(span - 1)
        hi.append(span - 1 + lhs_aval.shape[1 + d] - reach)
    zero = tc.zeros(ca._replace(shape=()))
    padded = tc.emit("pad", [ct, zero], low=tuple(lo) + (0,), high=tuple(hi) + (0,),
                     interior=(0,) + tuple(s - 1 for s in strides) + (0,))
    k = tc.emit("rev", [rhs], dimensions=tuple(range(nd)))
    k = tc.emit("reshape", [k], new_sizes=tuple(window) + (i_, g, o // g))
    k = tc.emit("transpose", [k], permutation=tuple(range(nd)) + (nd + 2, nd + 1, nd))
    k = tc.emit("reshape", [k], new_sizes=tuple(window) + (o // g, g * i_))
    return tc.emit("conv", [padded, k], window_strides=(1,) * nd, rhs_dilation=tuple(dil),
                   feature_group_count=g)


def _conv_transpose_rhs(tc, ct, lhs, rhs_aval, attrs):
    """JAX's ``_conv_general_dilated_transpose_rhs`` for ember's conv: the lhs, its features
    as the batch, correlated with the cotangent as the kernel (strides and dilation swap
    roles; feature groups stay groups of the batch), cut to the window."""
    strides, dil, g = attrs["window_strides"], attrs["rhs_dilation"], \
        attrs["feature_group_count"]
    la = _aval(lhs)
    nd = len(strides)
    n, spatial, c = la.shape[0], la.shape[1:1 + nd], la.shape[-1]
    window, i_ = rhs_aval.shape[:nd], rhs_aval.shape[-2]
    x = tc.emit("reshape", [lhs], new_sizes=(n,) + tuple(spatial) + (g, i_))
    x = tc.emit("transpose", [x], permutation=(nd + 2,) + tuple(range(1, nd + 1)) +
                (nd + 1, 0))
    x = tc.emit("reshape", [x], new_sizes=(i_,) + tuple(spatial) + (g * n,))
    k = tc.emit("transpose", [ct], permutation=tuple(range(1, nd + 1)) + (0, nd + 1))
    r = tc.emit("conv", [x, k], window_strides=tuple(dil), rhs_dilation=tuple(strides),
                feature_group_count=g)       # (I, *out2, O), out2 >= window
    ra = _aval(r)
    if tuple(ra.shape[1:1 + nd]) != tuple(window):
        r = tc.emit("slice", [r], start_indices=(0,) * ra.ndim,
                    limit_indices=(ra.shape[0],) + tuple(window) + (ra.shape[-1],),
                    strides=(1,) * ra.ndim)
    del c
    return tc.emit("transpose", [r], permutation=tuple(range(1, nd + 1)) + (0, nd + 1))


@transpose("conv")
def _t_conv(tc, op, cts, lin, attrs):
    lhs, rhs = op.operands
    if lin[0] and lin[1]:
        raise AssertionError("a convolution of two tangents is not linear")
    if lin[0]:
        return [_conv_transpose_lhs(tc, cts[0], _aval(lhs), rhs, attrs), None]
    return [None, _conv_transpose_rhs(tc, cts[0], lhs, _aval(rhs), attrs)]


# --- collectives over a named vmap axis -----------------------------------------------------

@jvp("psum")
def _psum(ad, op, x, out, t, attrs):
    return [ad.linear("psum", [t[0]], **attrs)]


@transpose("psum")
def _t_psum(tc, op, cts, lin, attrs):
    # Each example's result is the sum over all examples: an example's operand reaches every
    # example's result, so its cotangent is the sum of theirs (JAX's psum transpose).
    return [tc.emit("psum", [cts[0]], **attrs)]


@jvp("pmax", "pmin")
def _pmax_pmin(ad, op, x, out, t, attrs):
    """As reduce_max over the examples: the tangent of the extremal examples, averaged over
    ties (JAX has no rule; this is what its reduce_max does)."""
    x0, y = x[0], out[0]
    where = _p(ad, "convert", _p(ad, "eq", x0, y), new_dtype=_aval(x0).dtype)
    counts = _p(ad, "psum", where, axis_name=attrs["axis_name"])
    picked = ad.linear("psum", [ad.linear("mul", [t[0], where])],
                       axis_name=attrs["axis_name"])
    return [ad.linear("div", [picked, counts])]


@jvp("all_gather")
def _all_gather(ad, op, x, out, t, attrs):
    return [ad.linear("all_gather", [t[0]], **attrs)]


@transpose("all_gather")
def _t_all_gather(tc, op, cts, lin, attrs):
    """JAX's psum_scatter: sum the cotangents over the examples and keep this example's
    part."""
    a = _aval(op.operands[0])
    axis, tiled = attrs["axis"], attrs["tiled"]
    total = tc.emit("psum", [cts[0]], axis_name=attrs["axis_name"])
    me = tc.emit("axis_index", [], axis_name=attrs["axis_name"])
    zero = tc.emit("constant", [], value=np.zeros((), np.int32))
    ta = _aval(total)
    if tiled:
        start = tc.emit("mul", [me, tc.emit("constant", [], value=np.asarray(
            a.shape[axis], np.int32))])
        starts = [start if d == axis else zero for d in range(ta.ndim)]
        return [tc.emit("dynamic_slice", [total, *starts], slice_sizes=tuple(a.shape))]
    starts = [me if d == axis else zero for d in range(ta.ndim)]
    sizes = tuple(1 if d == axis else s for d, s in enumerate(ta.shape))
    part = tc.emit("dynamic_slice", [total, *starts], slice_sizes=sizes)
    return [tc.emit("reshape", [part], new_sizes=tuple(a.shape))]
