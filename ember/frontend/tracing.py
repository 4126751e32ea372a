"""Tracing: Python values become ember ops in a ``func.func``.

A :class:`Trace` owns one function being built. :func:`bind` is the only way the frontend
emits an op: it types the op with the dialect's result-type rule, so a wrong shape or dtype is
reported at the user's source line, before any IR exists.
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember._mlir import default_session, ir, tensor_type
from ember._traceback import user_frame, user_where
from ember.core import ShapedArray
from ember.dialects import OPS, OpTypeError
from ember.dialects.base import encode_attrs
from ember.dialects.ops import fmt
from ember.errors import ConcretizationError, TracingError

_TRACES: list[Trace] = []


def user_location(context) -> ir.Location:
    """The MLIR location of the user's code calling into ember."""
    f = user_frame()
    if f is None:
        return ir.Location.unknown(context)
    return ir.Location.file(f.f_code.co_filename, f.f_lineno, 0, context)


def current_trace() -> Trace | None:
    return _TRACES[-1] if _TRACES else None


class Trace:
    """One ``func.func`` being traced, with its arguments as tracers.

    Tracers of an enclosing trace that the function closes over become extra arguments
    (``captured``), so a nested jit can still be emitted as an ``ember.call``.
    """

    def __init__(self, module: ir.Module, name: str, arg_avals, arg_origins, fun_name: str,
                 public: bool = True):
        self.module = module
        self.fun_name = fun_name
        self.consts: dict[int, tuple[object, Tracer]] = {}
        self.captured: list[tuple[Tracer, Tracer]] = []   # (outer tracer, our argument)
        with module.context, ir.Location.unknown():
            ftype = ir.FunctionType.get([tensor_type(a.shape, a.dtype) for a in arg_avals], [])
            with ir.InsertionPoint(module.body):
                self.func_op = _func().FuncOp(name, ftype)
            if not public:
                self.func_op.attributes["sym_visibility"] = ir.StringAttr.get("private")
            self.block = self.func_op.add_entry_block()
        self.args = [Tracer(self, v, a, frozenset([o]))
                     for v, a, o in zip(self.block.arguments, arg_avals, arg_origins)]

    def __enter__(self):
        _TRACES.append(self)
        return self

    def __exit__(self, *exc):
        assert _TRACES.pop() is self

    def lift(self, x) -> Tracer:
        """A tracer of this trace for x: a tracer, or a constant for a concrete value."""
        if isinstance(x, Tracer):
            if x.trace is self:
                return x
            return self._capture(x)
        hit = self.consts.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        dtype, weak = dtypes.dtype_and_weak(x)
        value = np.asarray(x, dtype=dtype) if not hasattr(x, "_ember_host") else x._ember_host()
        (t,) = bind("ember.constant", value=np.asarray(value, dtype=dtype), _weak=weak)
        self.consts[id(x)] = (x, t)
        return t

    def _capture(self, outer: Tracer) -> Tracer:
        for o, inner in self.captured:
            if o is outer:
                return inner
        with self.module.context, ir.Location.unknown():
            arg = self.block.add_argument(tensor_type(outer.shape, outer.dtype),
                                          ir.Location.unknown())
        inner = Tracer(self, arg, outer.aval, outer.origin)
        self.captured.append((outer, inner))
        return inner

    def finish(self, outs: list[Tracer]) -> None:
        """Emit ``func.return`` and fix the function type."""
        with self.module.context, ir.Location.unknown(), ir.InsertionPoint(self.block):
            _func().ReturnOp([t.value for t in outs])
            self.func_op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [a.type for a in self.block.arguments], [t.value.type for t in outs]))


def _func():
    from ember._mlir import func
    return func


def bind(name: str, *operands, _weak: bool = False, **attrs) -> list[Tracer]:
    """Emit op ``name`` into the current trace and return its results as tracers.

    Example (inside a traced function):
        >>> (y,) = bind("ember.transpose", x, permutation=(1, 0))
    """
    trace = current_trace()
    if trace is None:
        raise RuntimeError(f"{name} emitted outside a trace; wrap the caller with ember.jit")
    args = [trace.lift(x) for x in operands]
    opdef = OPS[name]
    avals = [a.aval.strong() for a in args]
    try:
        attrs = opdef.check_attrs(attrs)
        outs = opdef.result_avals(avals, attrs)
    except OpTypeError as e:
        raise TracingError(f"{name}: {e} (operands: {fmt(avals) or 'none'})\n  at "
                           f"{user_where()}") from None
    loc = user_location(trace.module.context)
    with trace.module.context, loc, ir.InsertionPoint(trace.block):
        op = ir.Operation.create(
            name, results=[tensor_type(o.shape, o.dtype) for o in outs],
            operands=[a.value for a in args], attributes=encode_attrs(opdef, attrs))
    origin = frozenset().union(*(a.origin for a in args)) if args else frozenset()
    return [Tracer(trace, r, o._replace(weak_type=_weak), origin)
            for r, o in zip(op.results, outs)]


def new_module() -> ir.Module:
    ctx = default_session().context
    with ctx, ir.Location.unknown():
        return ir.Module.create()


class Tracer:
    """An abstract array inside a traced function: shape and dtype known, values not.

    Arithmetic, comparisons, indexing and the array methods build ember ops. Asking for a
    concrete value (``bool(x)``, ``int(x)``, ``np.asarray(x)``) raises ConcretizationError.
    """

    __slots__ = ("trace", "value", "aval", "origin")
    __array_priority__ = 100

    def __init__(self, trace: Trace, value: ir.Value, aval: ShapedArray, origin: frozenset):
        self.trace = trace
        self.value = value
        self.aval = aval
        self.origin = origin

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>"

    def _concrete(self, what: str):
        raise ConcretizationError(concretization_message(self, what))

    def __bool__(self):
        self._concrete("bool()")

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __index__(self):
        self._concrete("an index (__index__)")

    def __array__(self, dtype=None, copy=None):
        self._concrete("a NumPy array (np.asarray)")

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()} (an array "
                        "inside jit cannot be a dict key or a static argument)")


def concretization_message(t: Tracer, what: str) -> str:
    fun = t.trace.fun_name
    if t.origin:
        src = ", ".join(sorted(t.origin))
        came = f"It depends on {src} of {fun}, which jit traces as an abstract value."
        names = sorted(o.split("'")[1] for o in t.origin if o.count("'") >= 2)
        hint = (f" If that argument is a configuration value, mark it static: "
                f"ember.jit({fun}, static_argnames={tuple(names)!r}) (or static_argnums).")
    else:
        came = f"It was computed inside {fun}."
        hint = ""
    where = user_where()
    return (f"Abstract tracer value {t.aval.str_short()} used where a concrete value is "
            f"needed ({what}) at {where}. {came}{hint} For control flow on traced values use "
            "ember.numpy.where / ember.lax.select.")
