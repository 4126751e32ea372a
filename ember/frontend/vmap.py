"""``ember.vmap``: batching recorded in the IR and done by the ``ember-batch`` pass.

The frontend traces ``fun`` at per-example shapes into its own private ``func.func`` and
emits an ``ember.vmap`` op that maps it over the batch axis; ``ember-batch`` later replaces
that op with batched ember ops (see ``ember/passes/batch.py``).
"""

from __future__ import annotations

import functools

import numpy as np

from ember import tree_util
from ember._mlir import ir, tensor_type
from ember.backends.array import Array
from ember.dialects import OPS
from ember.dialects.vmap import with_batch
from ember.errors import ArgumentError, _Located
from ember.frontend import tracing
from ember.frontend.tracing import Tracer
from ember.rules.base import encode_attrs

__all__ = ["vmap"]


class VmapError(_Located, ArgumentError, ValueError):
    """vmap's arguments do not fit its in_axes/out_axes/axis_size (the message ends with the
    user's line)."""


def _prefix_axes(spec, tree, what: str) -> list:
    """One axis (int or None) per leaf of ``tree``, from a prefix-tree ``spec`` (as JAX)."""
    if spec is None or isinstance(spec, int | np.integer):
        return [None if spec is None else int(spec)] * tree_util.tree_structure(tree).num_leaves
    spec_leaves, spec_tree = tree_util.tree_flatten(spec, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except (ValueError, TypeError):
        raise VmapError(f"vmap {what} specification must be a tree prefix of the corresponding "
                        f"value, got specification {spec!r} for value tree "
                        f"{tree_util.tree_structure(tree)}.") from None
    out = []
    for axis, sub in zip(spec_leaves, subtrees):
        if axis is not None and not isinstance(axis, int | np.integer):
            raise VmapError(f"vmap {what} must be ints or None, got {axis!r}")
        out += [None if axis is None else int(axis)] * tree_util.tree_structure(sub).num_leaves
    return out


class VmapFunction:
    """``fun`` mapped over a batch axis. Made by :func:`vmap`."""

    def __init__(self, fun, in_axes, out_axes, axis_size, axis_name=None):
        if not callable(fun):
            raise TypeError(f"vmap needs a callable, got {type(fun).__name__}")
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if axis_name is not None and not (isinstance(axis_name, str) and axis_name):
            raise VmapError(f"vmap axis_name must be a non-empty string, got {axis_name!r}")
        self.fun, self.in_axes, self.out_axes, self.axis_size = fun, in_axes, out_axes, axis_size
        self.axis_name = axis_name
        self.fun_name = getattr(fun, "__name__", type(fun).__name__)
        functools.update_wrapper(self, fun, updated=())

    def __repr__(self):
        return f"<ember.vmap of {self.fun_name}>"

    @functools.cached_property
    def _jitted(self):
        from ember.frontend.api import JitFunction
        return JitFunction(self)

    def __call__(self, *args, **kwargs):
        if tracing._TRACES:
            return self._call_traced(args, kwargs)
        passing = _Passing(args, kwargs, self._axes_of_args(args, kwargs))
        if not passing.values:
            return self._jitted(*args, **kwargs)      # eager: compile the batched program
        # The values passed as they are are compiled in, one program per value (as static
        # arguments of a jit): the jit sees the arguments without them.
        key = (passing.tree, tuple((i, type(v), v) for i, v in passing.values.items()))
        try:
            jitted = self._passing_jits.get(key)
        except TypeError:
            raise VmapError(f"vmap passes {passing.describe()} to {self.fun_name} as it is "
                            "(in_axes None, not an array), so it must be hashable") from None
        if jitted is None:
            from ember.frontend.api import JitFunction
            call = functools.wraps(self.fun)(passing.wrap(self._call_traced_pairs))
            jitted = self._passing_jits[key] = JitFunction(call)
        return jitted(*passing.args, **passing.kwargs)

    @functools.cached_property
    def _passing_jits(self) -> dict:
        return {}

    def _call_traced_pairs(self, *args, **kwargs):
        return self._call_traced(args, kwargs)

    def _axes_of_args(self, args, kwargs) -> list:
        if isinstance(self.in_axes, tuple):
            if len(self.in_axes) != len(args):
                raise VmapError(
                    "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                    f"the positional arguments passed to the function, but got "
                    f"len(in_axes)={len(self.in_axes)}, len(args)={len(args)}")
            axes = []
            for spec, arg in zip(self.in_axes, args):
                axes += _prefix_axes(spec, arg, "in_axes")
        else:
            axes = _prefix_axes(self.in_axes, args, "in_axes")
        return axes + [0] * tree_util.tree_structure(kwargs).num_leaves   # kwargs: axis 0

    def _call_traced(self, args, kwargs):
        from ember.frontend.api import _path_str, _unique_symbol, trace_flat

        outer = tracing.current_trace()
        passing = _Passing(args, kwargs, self._axes_of_args(args, kwargs))
        fun, args, kwargs, axes = passing.wrap(self.fun), passing.args, passing.kwargs, \
            passing.axes
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
            (args, kwargs))[0]]
        tracers = [outer.lift(x) for x in leaves]
        size = self._axis_size(tracers, axes, paths)
        inner_avals, norm_axes = [], []
        for t, axis in zip(tracers, axes):
            if axis is None:
                inner_avals.append(t.aval)
                norm_axes.append(-1)
                continue
            a = axis + t.ndim if axis < 0 else axis
            shape = list(t.shape)
            del shape[a]
            inner_avals.append(t.aval._replace(shape=tuple(shape)))
            norm_axes.append(a)
        name = _unique_symbol(outer.module, f"{self.fun_name}_per_example")
        argnames = self._jitted._argnames      # the parameters' names, from fun's signature
        names = [f"argument {_path_str(self.fun_name, argnames, p)}"
                 for p, _ in tree_util.tree_flatten_with_path((args, kwargs))[0]]
        if self.axis_name is not None:
            tracing.AXES.append((self.axis_name, size))
        try:
            _, inner, out_tree, outs = trace_flat(fun, self.fun_name, tree, inner_avals,
                                                  names, module=outer.module, name=name,
                                                  public=False, transform="vmap")
        finally:
            if self.axis_name is not None:
                tracing.AXES.pop()
        out_axes = self._out_axes(out_tree, outs)
        if -1 in out_axes:
            self._check_unmapped_outputs(outer.module, name, norm_axes, inner, size, out_axes,
                                         out_tree)
        operands = tracers + [o for o, _ in inner.captured]
        in_axes = norm_axes + [-1] * len(inner.captured)
        results = _emit_vmap(name, operands, in_axes, out_axes, size, outs, self.axis_name)
        return tree_util.tree_unflatten(out_tree, results)

    def _check_unmapped_outputs(self, module, callee, norm_axes, inner, size, out_axes,
                                out_tree) -> None:
        """``out_axes=None`` for an output that the vmap maps: JAX's error, at trace time."""
        in_batched = [a >= 0 for a in norm_axes] + [False] * len(inner.captured)
        mapped = mapped_results(module, callee, in_batched, size, self.axis_name)
        placeholder = tree_util.tree_unflatten(out_tree, list(range(len(out_axes))))
        paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
            placeholder)[0]]
        for axis, is_mapped, path in zip(out_axes, mapped, paths):
            if axis < 0 and is_mapped:
                where = f"output{path} of {self.fun_name}" if path else \
                    f"the output of {self.fun_name}"
                raise VmapError(f"vmap has mapped output but out_axes is None: {where} "
                                "depends on a mapped argument; give it an out_axes entry "
                                "(an int) instead of None")

    def _axis_size(self, tracers, axes, paths) -> int:
        sizes = []
        for t, axis, path in zip(tracers, axes, paths):
            if axis is None:
                continue
            if not -t.ndim <= axis < t.ndim:
                raise VmapError(
                    f"vmap was requested to map its argument along axis {axis}, which implies "
                    f"that its rank should be at least {max(axis + 1, -axis)}, but is only "
                    f"{t.ndim} (its shape is {t.shape}) for argument {_describe(path)}")
            sizes.append((t.shape[axis], axis, path, t))
        if self.axis_size is not None:
            if not isinstance(self.axis_size, int | np.integer) or self.axis_size < 0:
                raise VmapError(f"vmap axis_size must be a non-negative int, got "
                                f"{self.axis_size!r}")
            sizes_set = {s for s, *_ in sizes}
            if sizes_set and sizes_set != {int(self.axis_size)}:
                raise VmapError(f"vmap got axis_size={self.axis_size} but the mapped axes "
                                f"have sizes {sorted(sizes_set)}")
            return int(self.axis_size)
        if not sizes:
            raise VmapError("vmap must have at least one non-None value in in_axes (or be "
                            "given axis_size)")
        if len({s for s, *_ in sizes}) > 1:
            lines = "\n".join(f"  * one axis had size {s}: axis {a} of argument {_describe(p)}"
                              f" of type {t.aval.str_short()}" for s, a, p, t in sizes)
            raise VmapError(f"vmap got inconsistent sizes for array axes to be mapped:\n{lines}")
        return sizes[0][0]

    def _out_axes(self, out_tree, outs) -> list[int]:
        placeholder = tree_util.tree_unflatten(out_tree, list(range(len(outs))))
        axes = _prefix_axes(self.out_axes, placeholder, "out_axes")
        norm = []
        for axis, t in zip(axes, outs):
            if axis is None:
                norm.append(-1)
                continue
            a = axis + t.ndim + 1 if axis < 0 else axis
            if not 0 <= a <= t.ndim:
                raise VmapError(f"vmap out_axes {axis} is out of range for an output of rank "
                                f"{t.ndim} (its per-example type is {t.aval.str_short()})")
            norm.append(a)
        return norm


def mapped_results(module, callee: str, in_batched, size: int, axis_name=None) -> list[bool]:
    """Which results of ``callee`` a vmap of it maps (``batched_results``), after the
    derivatives inside it are expanded as ember-differentiate will (on a copy): batching
    needs them expanded first."""
    from ember.passes import PASSES
    from ember.rules.batching import batched_results
    with module.context, ir.Location.unknown():
        scratch = module.operation.clone()      # the module may be mid-trace: not parsed
        try:
            PASSES["ember-differentiate"]()(scratch)
            return batched_results(scratch, callee, in_batched, size, axis_name)
        finally:
            scratch.erase()


def _passes_as_is(x, axis) -> bool:
    """An unmapped value that is not an array reaches ``fun`` as it is, as in JAX: a Python
    int can size a slice or be a jit's static argument, a string can select a branch."""
    return axis is None and not isinstance(x, Tracer | Array | np.ndarray | np.generic)


class _Passing:
    """The arguments of a vmap split into those it traces and those it passes as they are.

    ``args``/``kwargs`` have the passed values replaced by None (an empty pytree, so the
    trace does not see them), ``axes`` are the remaining leaves' in_axes, and ``wrap(fun)``
    calls ``fun`` with the passed values put back.
    """

    def __init__(self, args, kwargs, axes):
        is_none = lambda x: x is None  # noqa: E731 (None entries of the user's pytrees)
        leaves, self.tree = tree_util.tree_flatten((args, kwargs), is_leaf=is_none)
        self.values, self.axes = {}, []
        axes = iter(axes)
        for i, x in enumerate(leaves):
            if x is None:
                continue
            axis = next(axes)
            if _passes_as_is(x, axis):
                self.values[i] = x
                leaves[i] = None
            else:
                self.axes.append(axis)
        self.args, self.kwargs = tree_util.tree_unflatten(self.tree, leaves) \
            if self.values else (args, kwargs)

    def describe(self) -> str:
        paths = tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(self.tree, list(range(self.tree.num_leaves))))[0]
        return ", ".join(f"argument {_describe(tree_util.keystr(p))} "
                         f"({type(self.values[i]).__name__})"
                         for p, i in paths if i in self.values)

    def wrap(self, fun):
        if not self.values:
            return fun

        def call(*args, **kwargs):
            leaves = tree_util.tree_leaves((args, kwargs), is_leaf=lambda x: x is None)
            for i, x in self.values.items():
                leaves[i] = x
            args, kwargs = tree_util.tree_unflatten(self.tree, leaves)
            return fun(*args, **kwargs)
        return call


def _describe(path: str) -> str:
    """'[0][1]' (a path into (args, kwargs)) as ``args[1]`` / ``kwargs['k']``."""
    if path.startswith("[0]"):
        return "args" + path[3:]
    if path.startswith("[1]"):
        return "kwargs" + path[3:]
    return path


def _emit_vmap(callee, operands, in_axes, out_axes, size, outs, axis_name=None):
    trace = tracing.current_trace()
    args = [trace.lift(x) for x in operands]
    out_avals = [with_batch(o.aval, a, size) for o, a in zip(outs, out_axes)]
    attrs = {"callee": callee, "in_axes": tuple(in_axes), "out_axes": tuple(out_axes),
             "axis_size": size, "axis_name": axis_name}
    loc = tracing.user_location(trace.module.context)
    with trace.module.context, loc, ir.InsertionPoint(trace.block):
        op = ir.Operation.create(
            "ember.vmap", results=[tensor_type(a.shape, a.dtype) for a in out_avals],
            operands=[a.value for a in args], attributes=encode_attrs(OPS["ember.vmap"], attrs))
    origin = frozenset().union(*(a.origin for a in args)) if args else frozenset()
    return [Tracer(trace, r, a, origin) for r, a in zip(op.results, out_avals)]


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None):
    """Map ``fun`` over an array axis, with JAX's semantics.

    The batching is done by the ``ember-batch`` compiler pass, not by tracing tricks.
    ``axis_name`` names the mapped axis for the collectives ``fun`` calls
    (``ember.lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index``).
    As in JAX, an unmapped argument (``in_axes`` None) that is not an array (a Python int,
    float or string, any other object) reaches ``fun`` as it is; called outside ``jit``, the
    batched program is compiled once per such value.

    Example:
        >>> per_example = lambda w, x: enp.tanh(w @ x)
        >>> ys = ember.vmap(per_example, in_axes=(None, 0))(w, xs)
        >>> centered = ember.vmap(lambda x: x - ember.lax.pmean(x, "i"), axis_name="i")(xs)
        >>> heads = ember.vmap(lambda x, n: x[:n], in_axes=(0, None))(xs, 2)   # n is an int
    """
    return VmapFunction(fun, in_axes, out_axes, axis_size, axis_name)
