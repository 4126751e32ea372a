"""Tracing: Python values become ember ops in a ``func.func``.

A :class:`Trace` owns one function being built. :func:`bind` is the only way the frontend
emits an op: it types the op with the dialect's result-type rule, so a wrong shape or dtype is
reported at the user's source line, before any IR exists.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ember import dtypes
from ember._mlir import default_session, ir, tensor_type
from ember._traceback import user_frame, user_where
from ember.core import ShapedArray
from ember.dialects import OPS, OpTypeError
from ember.errors import (
    ArgumentError,
    ConcretizationError,
    TracingError,
    UnexpectedTracerError,
)
from ember.rules.base import encode_attrs
from ember.rules.type_rules import fmt


class _ThreadStack(threading.local):
    """A stack of this thread's own (as JAX's trace state is per thread): a trace begun in
    one thread is invisible to the others, which run compiled programs meanwhile. Behaves as
    the list it holds (``append``, ``pop``, ``in``, ``[-1]``, truth, iteration)."""

    def __init__(self):
        self.items = []

    def append(self, x) -> None:
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def __bool__(self):
        return bool(self.items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, x):
        return x in self.items


# The traces being built in this thread, innermost last.
_TRACES = _ThreadStack()
# The named vmap axes being traced in this thread, innermost last: (axis_name, axis_size).
AXES = _ThreadStack()


def user_location(context) -> ir.Location:
    """The MLIR location of the user's code calling into ember."""
    f = user_frame()
    if f is None:
        return ir.Location.unknown(context)
    return ir.Location.file(f.f_code.co_filename, f.f_lineno, 0, context)


def current_trace() -> Trace | None:
    """The innermost trace this thread is building, or None outside tracing."""
    items = _TRACES.items
    return items[-1] if items else None


class Trace:
    """One ``func.func`` being traced, with its arguments as tracers.

    Tracers of an enclosing trace that the function closes over become extra arguments
    (``captured``), so a nested jit can still be emitted as an ``ember.call``.
    """

    def __init__(self, module: ir.Module, name: str, arg_avals, arg_origins, fun_name: str,
                 public: bool = True, transform: str = "jit"):
        self.module = module
        self.fun_name = fun_name
        self.transform = transform      # what traces the function: "jit" or "vmap"
        self.consts: dict[int, tuple[object, Tracer]] = {}
        self.captured: list[tuple[Tracer, Tracer]] = []   # (outer tracer, our argument)
        for a, o in zip(arg_avals, arg_origins):
            try:
                check_shape(a.shape)
            except OpTypeError as e:
                raise ArgumentError(f"{o} of {fun_name}: {e}") from None
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
            if x._trace is self:
                return x
            if x._trace not in _TRACES:
                raise _escaped(x)
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


def _escaped(x: Tracer) -> UnexpectedTracerError:
    """A tracer of a trace that has ended: only the tracers of the traces being built (the
    current one and those enclosing it) may be used."""
    if isinstance(x._trace, RegionTrace):
        source = ("the cond branch or loop body that computed it (it was stored outside the "
                  "function passed to ember.lax)")
    else:
        source = (f"{x._trace.fun_name}, traced by ember.{x._trace.transform}, which computed it "
                  "(it was stored outside the function, e.g. in a list or a global)")
    return UnexpectedTracerError(
        f"a traced value {x.aval.str_short()} escaped from {source} and was used at "
        f"{user_where()}, after that trace ended; return it from the function instead")


class RegionTrace(Trace):
    """A trace filling the block of a region of an ember op (cond branch, loop body).

    ``bind`` emits into the innermost trace, so ops of the function traced for the region land
    in its block. Regions are not isolated from above: tracers of enclosing region traces are
    used directly; tracers of other traces go through the enclosing function's trace (which
    captures them as arguments when it is a nested jit).
    """

    def __init__(self, parent: Trace, block: ir.Block, arg_avals, arg_origins):
        self.module = parent.module
        self.fun_name = parent.fun_name
        self.transform = parent.transform
        self.parent = parent
        self.consts = {}
        self.captured = []
        self.func_op = None
        self.block = block
        self.args = [Tracer(self, v, a, o)
                     for v, a, o in zip(block.arguments, arg_avals, arg_origins)]
        self._outer: dict[int, tuple[Tracer, Tracer]] = {}

    def lift(self, x) -> Tracer:
        if not isinstance(x, Tracer) or x._trace is self:
            return super().lift(x)
        hit = self._outer.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        p = self.parent
        while isinstance(p, RegionTrace) and x._trace is not p:
            p = p.parent
        if x._trace is not p:      # not an enclosing trace: let the function's trace decide
            outer = p.lift(x)
        else:
            outer = x
        inner = Tracer(self, outer.value, outer.aval, outer.origin)
        self._outer[id(x)] = (x, inner)
        return inner

    def finish(self, outs: list[Tracer]) -> None:
        """Emit the region's ``ember.yield``."""
        with self.module.context, ir.Location.unknown(), ir.InsertionPoint(self.block):
            ir.Operation.create("ember.yield", operands=[t.value for t in outs])


class RegionOpBuilder:
    """Builds one region-holding ember op: trace each region, then emit the op.

    Example (inside a traced function):
        >>> with RegionOpBuilder("ember.cond", [pred], 2) as b:
        ...     outs_true = b.trace_region(0, [], [], true_fun)    # tracers yielded
        ...     outs_false = b.trace_region(1, [], [], false_fun)
        ...     results = b.finish()
    """

    def __init__(self, name: str, operands, num_regions: int, **attrs):
        self.name = name
        self.trace = current_trace()
        if self.trace is None:
            raise RuntimeError(f"{name} emitted outside a trace")
        self.operands = [self.trace.lift(x) for x in operands]
        self.opdef = OPS[name]
        try:
            self.attrs = self.opdef.check_attrs(attrs)
        except OpTypeError as e:
            raise TracingError(f"{name}: {e}") from None
        # The regions are traced in a placeholder op at the end of the current block (so the
        # module owns everything they reference); finish() moves their blocks into the real
        # op, whose result types are known only then, and erases the placeholder.
        with self.trace.module.context, ir.Location.unknown(), \
                ir.InsertionPoint(self.trace.block):
            self.holder = ir.Operation.create("ember.region_holder", regions=num_regions)
        self.yields: list[list[Tracer] | None] = [None] * num_regions

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        self.abort()

    def abort(self) -> None:
        """Drop the placeholder and whatever was traced into it (after an error)."""
        if self.holder is not None:
            self.holder.erase()
            self.holder = None

    def trace_region(self, index: int, arg_avals, arg_origins, fun):
        """Trace ``fun(*block_args)`` into region ``index``; ``fun`` returns a list of
        values (tracers or constants), which the region yields (returned as tracers)."""
        with self.trace.module.context, ir.Location.unknown():
            block = self.holder.regions[index].blocks.append(
                *[tensor_type(a.shape, a.dtype) for a in arg_avals])
        rt = RegionTrace(self.trace, block, arg_avals, arg_origins)
        with rt:
            outs = [rt.lift(x) for x in fun(*rt.args)]
            rt.finish(outs)
        self.yields[index] = outs
        return outs

    def finish(self, weak=None) -> list[Tracer]:
        """Type the op with its rule, emit it into the current block, return its results."""
        avals = [a.aval.strong() for a in self.operands]
        yielded = [t.aval.strong() for outs in self.yields for t in outs]
        try:
            outs = self.opdef.result_avals(avals + yielded, self.attrs)
        except OpTypeError as e:
            raise TracingError(f"{self.name}: {e} (operands: {fmt(avals) or 'none'})\n  at "
                               f"{user_where()}") from None
        trace = self.trace
        loc = user_location(trace.module.context)
        with trace.module.context, loc, ir.InsertionPoint(trace.block):
            op = ir.Operation.create(
                self.name, results=[tensor_type(o.shape, o.dtype) for o in outs],
                operands=[a.value for a in self.operands],
                attributes=encode_attrs(self.opdef, self.attrs),
                regions=len(self.holder.regions))
            for src, dst in zip(self.holder.regions, op.regions):
                for block in list(src.blocks):
                    block.append_to(dst)
        self.abort()
        origin = frozenset().union(*(a.origin for a in self.operands)) if self.operands \
            else frozenset()
        for outs_ in self.yields:
            for t in outs_:
                origin |= t.origin
        weak = weak or [False] * len(outs)
        return [Tracer(trace, r, o._replace(weak_type=w), origin)
                for r, o, w in zip(op.results, outs, weak)]


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
        for o in outs:
            check_shape(o.shape)
    except OpTypeError as e:
        raise TracingError(f"{name}: {e} (operands: {fmt(avals) or 'none'})\n  at "
                           f"{user_where()}") from None
    loc = user_location(trace.module.context)
    with trace.module.context, loc, ir.InsertionPoint(trace.block):
        op = ir.Operation.create(
            name, results=[tensor_type(o.shape, o.dtype) for o in outs],
            operands=[a.value for a in args], attributes=encode_attrs(opdef, attrs))
    origin = frozenset().union(*(a.origin for a in args)) if args else frozenset()
    # A bool is never weakly typed (JAX's rule): comparisons of Python scalars give bools.
    return [Tracer(trace, r, o._replace(weak_type=_weak and o.dtype != np.bool_), origin)
            for r, o in zip(op.results, outs)]


# The most elements an array may have: IREE's sizes are int64 byte counts.
MAX_ELEMENTS = 2**60


def check_shape(shape) -> None:
    """OpTypeError for a shape no array can have: a negative dimension, or more elements
    than an int64 byte count holds (IREE compiled such a program for ever)."""
    if any(d < 0 for d in shape):
        raise OpTypeError(f"shape {tuple(shape)} has a negative dimension")
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise OpTypeError(f"shape {tuple(shape)} has {n} elements, more than any array can "
                          f"hold (at most 2**60)")


def new_module() -> ir.Module:
    ctx = default_session().context
    with ctx, ir.Location.unknown():
        return ir.Module.create()


class Tracer:
    """An abstract array inside a traced function: shape and dtype known, values not.

    Arithmetic, comparisons, indexing and the array methods build ember ops. Asking for a
    concrete value (``bool(x)``, ``int(x)``, ``np.asarray(x)``) raises ConcretizationError.
    """

    __slots__ = ("_trace", "value", "aval", "origin")
    __array_priority__ = 100

    def __init__(self, trace: Trace, value: ir.Value, aval: ShapedArray, origin: frozenset):
        self._trace = trace
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
        if self._trace not in _TRACES:     # leaked from a trace that has ended
            raise _escaped(self)
        err = ConcretizationError(concretization_message(self, what))
        err.origin = self.origin    # an eager call makes the arguments it names static
        raise err

    def __bool__(self):
        self._concrete("bool()")

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __complex__(self):
        self._concrete("complex()")

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
    fun = t._trace.fun_name
    if t.origin:
        src = ", ".join(sorted(t.origin))
        came = f"It depends on {src} of {fun}, which {t._trace.transform} traces as an " \
            "abstract value."
        names = tuple(sorted(o.split("'")[1] for o in t.origin if o.count("'") >= 2))
        if t._trace.transform == "vmap":
            hint = (" ember.vmap traces every array argument (its value differs per example "
                    "when batched); pass a configuration value as a Python value with in_axes "
                    "None (it reaches the function as it is), or by closure.")
        else:
            hint = (f" If that argument is a configuration value, mark it static: "
                    f"ember.jit({fun}, static_argnames={names!r}) (or static_argnums)."
                    if names else " If it is a configuration value, mark it static "
                    f"(ember.jit({fun}, static_argnums=...)).")
    else:
        came = f"It was computed inside {fun}."
        hint = ""
    where = user_where()
    return (f"Abstract tracer value {t.aval.str_short()} used where a concrete value is "
            f"needed ({what}) at {where}. {came}{hint} For control flow on traced values use "
            "ember.lax.cond / ember.lax.switch (branches), ember.lax.while_loop / "
            "ember.lax.fori_loop / ember.lax.scan (loops), or ember.numpy.where / "
            "ember.lax.select (elementwise choice).")
