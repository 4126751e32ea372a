"""Several devices in one program: ``ember.pmap``, ``ember.shard_map``, meshes, shardings and
sharded arrays, with JAX's names and semantics.

Both transformations trace the per-device function once into a private ``func.func`` and
call it with an ``ember.spmd`` op over a mesh of devices; the ``ember-spmd`` pass makes one
copy of it per device, its collectives (``psum``, ``all_gather``, ...) becoming IREE's own
transfers between the devices, and IREE compiles the whole as one program over all of them
(``--iree-hal-target-device`` once per device). The host only splits the arguments into
per-device shards (or takes a :class:`ShardedArray`'s shards as they are) and hands them to
that one program; the results come back as a :class:`ShardedArray`.

On the CPU, ``EMBER_CPU_DEVICES=4`` (or ``ember.config.update("cpu_devices", 4)``) makes four
devices, as XLA's ``--xla_force_host_platform_device_count``.

Example:
    >>> ember.config.update("cpu_devices", 4)
    >>> step = ember.pmap(lambda x: x / ember.lax.psum(x, "i"), axis_name="i")
    >>> step(np.arange(1.0, 5.0))
    ShardedArray([0.1, 0.2, 0.3, 0.4], dtype=float32, devices=4)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ember import tree_util
from ember._mlir import ir, tensor_type
from ember.backends import default_backend, get_backend
from ember.backends.array import Array
from ember.backends.array import device_put as _device_put
from ember.dialects import OPS
from ember.errors import ArgumentError, _Located
from ember.frontend import tracing
from ember.frontend.tracing import Tracer
from ember.rules.base import encode_attrs
from ember.rules.partition import split_aval

__all__ = ["Mesh", "PartitionSpec", "P", "NamedSharding", "ShardedArray", "Shard", "device_put",
           "pmap", "shard_map"]


class ShardingError(_Located, ArgumentError, ValueError):
    """pmap/shard_map arguments that do not fit the devices or the specs (the message ends
    with the user's line)."""


# --- meshes and specs ---------------------------------------------------------------------

class Mesh:
    """Devices arranged in a grid with named axes, as ``jax.sharding.Mesh``.

    Example:
        >>> mesh = ember.sharding.Mesh(ember.devices("cpu")[:4], ("data",))
        >>> mesh.shape
        {'data': 4}
    """

    def __init__(self, devices, axis_names):
        arr = np.asarray(devices, dtype=object)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if arr.ndim != len(names):
            raise ShardingError(f"Mesh: devices of shape {arr.shape} need {arr.ndim} axis "
                                f"names, got {names}")
        if len(set(names)) != len(names) or not all(isinstance(n, str) and n and "," not in n
                                                     for n in names):
            raise ShardingError(f"Mesh: axis names must be distinct non-empty strings without "
                                f"commas, got {names}")
        flat = list(arr.flat)
        if len(set(flat)) != len(flat):
            raise ShardingError(f"Mesh: a device appears twice in {flat}")
        self.devices, self.axis_names = arr, names

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return self.devices.size

    def __repr__(self):
        return f"Mesh({self.shape}, devices={list(self.devices.flat)})"

    def __eq__(self, other):
        return isinstance(other, Mesh) and other.axis_names == self.axis_names and \
            other.devices.shape == self.devices.shape and \
            list(other.devices.flat) == list(self.devices.flat)

    def __hash__(self):
        return hash((self.axis_names, self.devices.shape, tuple(self.devices.flat)))


class PartitionSpec(tuple):
    """Which mesh axes split each dimension of an array (None: not split), as
    ``jax.sharding.PartitionSpec``; a dimension may be split over a tuple of axes.

    Example:
        >>> P("data", None)        # rows split over the mesh axis "data", columns whole
        PartitionSpec('data', None)
    """

    def __new__(cls, *parts):
        return super().__new__(cls, parts)

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}" if len(self) != 1 else \
            f"PartitionSpec({self[0]!r},)"


P = PartitionSpec


class NamedSharding:
    """An array laid over a mesh by a PartitionSpec, as ``jax.sharding.NamedSharding``.

    Example:
        >>> s = ember.sharding.NamedSharding(mesh, P("data"))
        >>> x = ember.device_put(np.arange(8.0), s)      # a ShardedArray, 2 rows a device
    """

    def __init__(self, mesh: Mesh, spec: PartitionSpec):
        self.mesh, self.spec = mesh, PartitionSpec(*spec)

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and other.mesh == self.mesh and \
            _norm_spec(other.spec) == _norm_spec(self.spec)

    def __hash__(self):
        return hash((self.mesh, _norm_spec(self.spec)))

    def index(self, device: int, shape) -> tuple:
        """The part of a global array of ``shape`` that the mesh's ``device`` (row-major
        position) holds: a tuple of slices."""
        coords = dict(zip(self.mesh.axis_names,
                          np.unravel_index(device, self.mesh.devices.shape)))
        out = []
        for dim, part in enumerate(_dims_of(self.spec, len(shape))):
            names = () if part is None else (part,) if isinstance(part, str) else tuple(part)
            count = math.prod(self.mesh.shape[n] for n in names)
            block = 0
            for n in names:
                block = block * self.mesh.shape[n] + int(coords[n])
            size = shape[dim] // count
            out.append(slice(block * size, (block + 1) * size))
        return tuple(out)

    def check(self, shape, what: str) -> None:
        spec = _dims_of(self.spec, len(shape), what)
        used = [n for part in spec if part is not None
                for n in ((part,) if isinstance(part, str) else part)]
        for n in used:
            if n not in self.mesh.axis_names:
                raise ShardingError(f"{what}: the spec {self.spec} names the axis {n!r}, which "
                                    f"the mesh {self.mesh.shape} does not have")
        if len(set(used)) != len(used):
            raise ShardingError(f"{what}: the spec {self.spec} names a mesh axis twice")
        for dim, part in enumerate(spec):
            if part is None:
                continue
            names = (part,) if isinstance(part, str) else tuple(part)
            count = math.prod(self.mesh.shape[n] for n in names)
            if shape[dim] % count:
                raise ShardingError(
                    f"{what}: dimension {dim} of size {shape[dim]} is split over the mesh "
                    f"axes {names} ({count} devices) by {self.spec}, but {count} does not "
                    f"divide {shape[dim]}")

    def shard_shape(self, shape) -> tuple[int, ...]:
        """The shape of each device's part of a global array of ``shape``."""
        return tuple(s.stop - s.start for s in self.index(0, shape))


def _dims_of(spec, ndim: int, what: str = "sharding") -> list:
    if len(spec) > ndim:
        raise ShardingError(f"{what}: the spec {PartitionSpec(*spec)} has {len(spec)} entries "
                            f"for an array of rank {ndim}")
    return list(spec) + [None] * (ndim - len(spec))


def _norm_spec(spec) -> tuple:
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


# --- sharded arrays -----------------------------------------------------------------------

class Shard:
    """One device's part of a ShardedArray, as JAX's ``Shard``: ``device``, ``index`` (where
    it sits in the global array) and ``data`` (an ember.Array on that device)."""

    def __init__(self, device, index, data):
        self.device, self.index, self.data = device, index, data

    def __repr__(self):
        return f"Shard(device={self.device!r}, index={self.index}, data={self.data.aval})"


class ShardedArray:
    """A global array held as one ember.Array per device (results of ``pmap`` and
    ``shard_map``, and of ``device_put(x, sharding)``). ``np.asarray`` gathers it to the host;
    passed to a pmap or shard_map that splits it the same way, its shards are used where
    they are, with no host copy.

    Example:
        >>> y = ember.pmap(lambda x: x * 2)(np.arange(4.0))
        >>> [s.device for s in y.addressable_shards]
        [CpuDevice(0), CpuDevice(1), CpuDevice(2), CpuDevice(3)]
        >>> np.asarray(y)
        array([0., 2., 4., 6.], dtype=float32)
    """

    __array_priority__ = 100

    def __init__(self, shards: list[Shard], shape, dtype, sharding=None, layout_key=None):
        self.addressable_shards = shards
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.sharding = sharding
        self._layout_key = layout_key   # equal to a program's: its shards are used as they are
        self._host = None

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    weak_type = False

    def devices(self) -> set:
        return {s.device for s in self.addressable_shards}

    def block_until_ready(self):
        return self

    def __array__(self, dtype=None, copy=None):
        if self._host is None:
            host = np.empty(self.shape, self.dtype)
            seen = set()
            for s in self.addressable_shards:       # a replicated part is read once
                key = repr(s.index)
                if key not in seen:
                    seen.add(key)
                    host[s.index] = np.asarray(s.data)
            host.flags.writeable = False
            self._host = host
        return self._host if dtype is None else self._host.astype(dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        body = np.array2string(np.asarray(self), separator=", ", prefix="ShardedArray(")
        return (f"ShardedArray({body}, dtype={self.dtype.name}, "
                f"devices={len(self.addressable_shards)})")

    def tolist(self):
        return np.asarray(self).tolist()


def device_put(x, device=None):
    """Copy ``x`` (an array, scalar or pytree of them) to ``device``, as ``jax.device_put``:
    a Device or backend name (see :func:`ember.backends.array.device_put`), or a
    :class:`NamedSharding`, which splits each leaf over the sharding's mesh into a
    :class:`ShardedArray`, each device holding its part.

    Example:
        >>> mesh = Mesh(ember.devices("cpu")[:2], ("data",))
        >>> x = ember.device_put(np.arange(8.0), NamedSharding(mesh, P("data")))
        >>> [s.data.shape for s in x.addressable_shards]
        [(4,), (4,)]
    """
    if isinstance(device, NamedSharding):
        return tree_util.tree_map(lambda leaf: _put_sharded(leaf, device), x)
    return _device_put(x, device)


def _put_sharded(x, sharding: NamedSharding) -> ShardedArray:
    """``x`` (array-like) split over ``sharding``'s mesh: each device gets its part."""
    host = np.asarray(x)
    from ember.backends import runtime
    aval = runtime.canonical_aval(host)
    host = runtime.host_array(host, aval)
    sharding.check(host.shape, "device_put")
    layout = _named_layout(host.shape, sharding)
    local = aval._replace(shape=layout.local_shape, weak_type=False)
    devices = list(sharding.mesh.devices.flat)
    parts = [Array(dev.upload(np.array(host[i])), dev, local)
             for dev, i in zip(devices, layout.indices)]
    return _sharded(parts, devices, host.shape, aval.dtype, layout, sharding)


# --- the one program over a mesh ----------------------------------------------------------

class _Layout:
    """How one argument leaf lies over the mesh: ``indices[d]`` is device ``d``'s part of the
    global array (a tuple of slices, or an int for the dimension a device does not see:
    pmap's mapped axis), ``local_shape`` the per-device shape."""

    def __init__(self, indices, local_shape, key):
        self.indices, self.local_shape = indices, local_shape
        self.key = key     # equal keys: equal layouts (a ShardedArray's shards are reused)


def _pmap_layout(shape, axis, n) -> _Layout:
    if axis is None:
        full = tuple(slice(None) for _ in shape)
        return _Layout([full] * n, tuple(shape), ("replicated", tuple(shape), n))
    local = shape[:axis] + shape[axis + 1:]
    indices = [tuple(slice(None) for _ in range(axis)) + (d,) for d in range(n)]
    return _Layout(indices, local, ("pmap", tuple(shape), axis, n))


def _named_layout(shape, sharding: NamedSharding) -> _Layout:
    n = sharding.mesh.size
    indices = [sharding.index(d, shape) for d in range(n)]
    # Every device holds all of it: the same layout as a pmap's unmapped argument.
    key = ("named", tuple(shape), sharding) if any(_names(p) for p in sharding.spec) else \
        _pmap_layout(shape, None, n).key
    return _Layout(indices, sharding.shard_shape(shape), key)


def _named_output(local, sharding: NamedSharding):
    """(whole shape, layout, sharding) of a result whose per-device part is ``local``."""
    spec = _dims_of(sharding.spec, local.ndim, "out_specs")
    shape = tuple(n * math.prod(sharding.mesh.shape[a] for a in _names(part))
                  for n, part in zip(local.shape, spec))
    return shape, _named_layout(shape, sharding), sharding


def _sharded(per_device, devices, shape, dtype, layout: _Layout, sharding=None):
    """The ShardedArray of device ``d``'s part ``per_device[d]``, laid out as ``layout``."""
    shards = [Shard(dev, index, part)
              for dev, index, part in zip(devices, layout.indices, per_device)]
    return ShardedArray(shards, shape, dtype, sharding, layout.key)


def _output_tree(out_tree, count: int):
    """A pytree of the outputs' positions, for expanding per-output prefix trees."""
    return tree_util.tree_unflatten(out_tree, list(range(count)))


class _Program:
    """One compiled ember.spmd program over ``devices`` (a mesh of ``mesh_shape`` with
    ``axis_names``) for per-device avals, and how to run it on global arguments."""

    def __init__(self, fun, fun_name, in_tree, in_layouts, in_avals, devices, mesh_shape,
                 axis_names, backend, outputs, check_out=None, partition=None):
        """``outputs(out_tree, per-device avals)``: each result's (whole shape, layout,
        sharding or None); ``partition``: None (``fun`` is the per-device function), or
        ``(global avals, in_splits, out_splits(out_tree, outs))`` for ``fun`` on the whole
        arrays, which ember-spmd partitions (``jit`` with shardings)."""
        from ember.frontend.api import Lowered, trace_flat
        self.devices, self.in_layouts, self.in_avals = devices, in_layouts, in_avals
        n, k = len(devices), len(in_avals)
        flat_tree = tree_util.tree_structure((tuple(range(n * k)), {}))
        info = {}

        def main(*flat):
            info["out_tree"], info["outs"] = _emit_spmd(fun, fun_name, in_tree, list(flat),
                                                        n, k, mesh_shape, axis_names, info,
                                                        partition)
            return info["outs"]

        names = [f"device {d} argument {i}" for d in range(n) for i in range(k)]
        every_avals = [a for _ in range(n) for a in in_avals]
        module, _, out_tree, outs = trace_flat(main, fun_name, flat_tree, every_avals, names,
                                               transform="pmap")
        self.out_tree = info["out_tree"]
        m = len(outs) // n
        self.out_avals = [o.aval for o in outs[:m]]
        if check_out is not None:
            check_out(module, info)
        self.outputs = outputs(self.out_tree, self.out_avals)
        lowered = Lowered(module, fun_name, flat_tree, every_avals, out_tree,
                          [o.aval for o in outs], backend, devices[0])
        lowered.devices = list(devices)
        self.lowered = lowered
        self.compiled = lowered.compile()

    def run(self, leaves) -> list[ShardedArray]:
        """The program's result leaves for its global argument leaves."""
        n = len(self.devices)
        per_leaf = [_shards_of(x, layout, aval, self.devices)
                    for x, layout, aval in zip(leaves, self.in_layouts, self.in_avals)]
        flat = [per_leaf[i][d] for d in range(n) for i in range(len(leaves))]
        outs = self.compiled.run_flat(flat)
        m = len(self.out_avals)
        return [_sharded(outs[j::m], self.devices, shape, aval.dtype, layout, sharding)
                for j, (aval, (shape, layout, sharding)) in enumerate(zip(self.out_avals,
                                                                          self.outputs))]


def _shards_of(x, layout: _Layout, aval, devices) -> list:
    """Device ``d``'s part of argument ``x``: a ShardedArray's own shard where it lies the
    same way, else the host array's part (uploaded by the program's runner)."""
    if isinstance(x, ShardedArray) and x._layout_key == layout.key and \
            [s.device for s in x.addressable_shards] == list(devices):
        return [s.data for s in x.addressable_shards]
    host = np.asarray(x)
    if host.dtype != aval.dtype:
        host = host.astype(aval.dtype)
    return [np.array(host[i]) for i in layout.indices]


def _emit_spmd(fun, fun_name, in_tree, flat, n, k, mesh_shape, axis_names, info,
               partition=None):
    """Inside the trace of the program's entry function: trace ``fun`` on device 0's
    arguments (on the whole arrays, for ``partition``) into a private function, and call it
    on every device with an ember.spmd."""
    from ember.frontend.api import _unique_symbol, trace_flat
    outer = tracing.current_trace()
    name = _unique_symbol(outer.module, f"{fun_name}_per_device")
    avals = [t.aval for t in flat[:k]] if partition is None else partition[0]
    for axis, size in zip(axis_names, mesh_shape):
        tracing.AXES.append((axis, size))
    try:
        _, inner, out_tree, outs = trace_flat(fun, fun_name, in_tree, avals,
                                              [f"argument {i}" for i in range(k)],
                                              module=outer.module, name=name, public=False,
                                              transform="pmap")
    finally:
        for _ in axis_names:
            tracing.AXES.pop()
    info["callee"], info["captured"] = name, len(inner.captured)
    captured = [o for o, _ in inner.captured]
    operands = [v for d in range(n) for v in flat[d * k:(d + 1) * k] + captured]
    args = [outer.lift(x) for x in operands]
    attrs = {"callee": name, "mesh_shape": tuple(mesh_shape), "axis_names": ",".join(axis_names)}
    out_avals = [o.aval for o in outs]
    if partition is not None:
        in_splits = tuple(partition[1]) + (-1,) * len(captured)
        out_splits = tuple(partition[2](out_tree, outs))
        attrs.update(in_splits=in_splits, out_splits=out_splits)
        out_avals = [split_aval(a, sp, n) for a, sp in zip(out_avals, out_splits)]
    loc = tracing.user_location(outer.module.context)
    with outer.module.context, loc, ir.InsertionPoint(outer.block):
        op = ir.Operation.create(
            "ember.spmd", results=[tensor_type(a.shape, a.dtype) for _ in range(n)
                                   for a in out_avals],
            operands=[a.value for a in args], attributes=encode_attrs(OPS["ember.spmd"], attrs))
    origin = frozenset().union(*(a.origin for a in args)) if args else frozenset()
    m = len(outs)
    return out_tree, [Tracer(outer, r, out_avals[j % m], origin)
                      for j, r in enumerate(op.results)]


# --- pmap ---------------------------------------------------------------------------------

class PmapFunction:
    """``fun`` run on several devices, one slice of the mapped axis each. Made by
    :func:`pmap`."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_broadcasted_argnums,
                 devices, backend, axis_size):
        if not callable(fun):
            raise TypeError(f"pmap needs a callable, got {type(fun).__name__}")
        if axis_name is not None and not (isinstance(axis_name, str) and axis_name
                                          and "," not in axis_name):
            raise ShardingError(f"pmap axis_name must be a non-empty string, got "
                                f"{axis_name!r}")
        self.fun, self.axis_name = fun, axis_name
        self.in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self.out_axes = out_axes
        nums = static_broadcasted_argnums
        self.static = (nums,) if isinstance(nums, int) else tuple(nums)
        self.devices = None if devices is None else list(devices)
        self.backend, self.axis_size = backend, axis_size
        self.fun_name = getattr(fun, "__name__", type(fun).__name__)
        self._programs: dict = {}
        functools.update_wrapper(self, fun, updated=())

    def __repr__(self):
        return f"<ember.pmap of {self.fun_name}>"

    def __call__(self, *args, **kwargs):
        from ember.frontend.vmap import _prefix_axes
        _outside_traces("ember.pmap", "or use vmap inside")
        static = tuple((i, args[i]) for i in self.static if i < len(args))
        dyn = tuple(a for i, a in enumerate(args) if i not in self.static)
        in_axes = self.in_axes
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ShardingError(f"pmap in_axes must be an int, None, or a tuple with one "
                                    f"entry per positional argument: got {len(in_axes)} "
                                    f"entries for {len(args)} arguments")
            in_axes = tuple(a for i, a in enumerate(in_axes) if i not in self.static)
        leaves, tree = tree_util.tree_flatten((dyn, kwargs))
        if isinstance(in_axes, tuple):
            axes = [a for spec, arg in zip(in_axes, dyn) for a in
                    _prefix_axes(spec, arg, "in_axes")]
        else:
            axes = _prefix_axes(in_axes, dyn, "in_axes")
        axes += [0] * tree_util.tree_structure(kwargs).num_leaves    # kwargs: axis 0, as JAX
        avals = [_aval(x, i) for i, x in enumerate(leaves)]
        axes = [None if a is None else a % max(v.ndim, 1) for a, v in zip(axes, avals)]
        n = self._size(avals, axes)
        devices = self.devices or self._available(n)
        if len(devices) != n:
            raise ShardingError(f"pmap got {len(devices)} devices for a mapped axis of size {n}")
        key = (tree, tuple((a.shape, a.dtype, a.weak_type) for a in avals), tuple(axes),
               tuple((i, type(v), v) for i, v in static), tuple(devices))
        program = self._programs.get(key)
        if program is None:
            layouts = [_pmap_layout(a.shape, ax, n) for a, ax in zip(avals, axes)]
            local = [a._replace(shape=lay.local_shape) for a, lay in zip(avals, layouts)]
            program = self._programs[key] = _Program(
                self._with_static(static), self.fun_name, tree, layouts, local, devices,
                (n,), (self.axis_name or "_pmap",), devices[0].platform,
                outputs=lambda out_tree, local: self._outputs(out_tree, local, n),
                check_out=lambda module, info: self._check_out(module, info, axes, n))
        return tree_util.tree_unflatten(program.out_tree, program.run(leaves))

    def _outputs(self, out_tree, local, n: int) -> list:
        """Each result's whole shape and layout: stacked along its out_axes entry, or, for
        None, the same value on every device, each keeping its copy (passed to the pmap
        again as an unmapped argument, nothing is copied)."""
        out = []
        for aval, axis in zip(local, self._out_axes(out_tree, len(local))):
            axis = None if axis is None else axis % (aval.ndim + 1)
            shape = aval.shape if axis is None else aval.shape[:axis] + (n,) + aval.shape[axis:]
            out.append((shape, _pmap_layout(shape, axis, n), None))
        return out

    def _with_static(self, static):
        if not static:
            return self.fun

        def call(*dyn_args, **kwargs):
            args = list(dyn_args)
            for i, v in static:
                args.insert(i, v)
            return self.fun(*args, **kwargs)
        return call

    def _size(self, avals, axes) -> int:
        sizes = {a.shape[ax] for a, ax in zip(avals, axes) if ax is not None}
        if self.axis_size is not None:
            sizes.add(int(self.axis_size))
        if not sizes:
            raise ShardingError("pmap must have at least one non-None value in in_axes")
        if len(sizes) > 1:
            raise ShardingError(f"pmap got inconsistent sizes for array axes to be mapped: "
                                f"{sorted(sizes)}")
        return sizes.pop()

    def _available(self, n: int) -> list:
        backend = self.backend or default_backend()
        found = get_backend(backend).devices()
        if n > len(found):
            raise ShardingError(
                f"compiling computation that requires {n} logical devices, but only "
                f"{len(found)} {backend} devices are available (num_replicas={n}); on the "
                "CPU, set EMBER_CPU_DEVICES (or ember.config.update('cpu_devices', n))")
        return found[:n]

    def _out_axes(self, out_tree, count: int) -> list:
        from ember.frontend.vmap import _prefix_axes
        return _prefix_axes(self.out_axes, _output_tree(out_tree, count), "out_axes")

    def _check_out(self, module, info, axes, n) -> None:
        """out_axes None for an output that differs between devices: JAX's error."""
        from ember.frontend.vmap import mapped_results
        out_axes = self._out_axes(info["out_tree"], len(info["outs"]) // n)
        if None not in out_axes:
            return
        mapped = mapped_results(module, info["callee"], [a is not None for a in axes]
                                 + [False] * info["captured"], n, self.axis_name)
        for i, (axis, is_mapped) in enumerate(zip(out_axes, mapped)):
            if axis is None and is_mapped:
                raise ShardingError(f"pmap has mapped output but out_axes is None: output {i} "
                                    f"of {self.fun_name} differs between devices; give it an "
                                    "out_axes entry, or make it the same everywhere (psum)")


def _outside_traces(what: str, hint: str = "") -> None:
    if tracing._TRACES:
        raise ShardingError(f"{what} is called inside a traced function (jit, vmap, grad, "
                            f"...); ember runs it as a program of its own: call it outside"
                            f"{', ' + hint if hint else ''}")


def _aval(x, i):
    """Argument ``i``'s abstract value (api imports this module: imported when called)."""
    from ember.frontend.api import _leaf_aval
    return _leaf_aval(x, f"#{i}")


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None):
    """Run ``fun`` on several devices at once, device ``d`` taking slice ``d`` of the mapped
    axis of each argument, as ``jax.pmap``: one compiled program over the devices, whose
    collectives (``ember.lax.psum``, ``pmean``, ``all_gather``, ``ppermute``, ...) over
    ``axis_name`` move values between them. The result is a :class:`ShardedArray` (each
    device's slice stays on that device; passed to the pmap again, it is not copied).

    ``devices`` (default: the first ones of ``backend``) must number the mapped axis' size.

    Example:
        >>> ember.config.update("cpu_devices", 2)
        >>> def step(w, x, y):
        ...     g = ember.grad(loss)(w, x, y)
        ...     return w - 0.1 * ember.lax.pmean(g, "batch")
        >>> w = ember.pmap(step, "batch", in_axes=(None, 0, 0), out_axes=None)(w, xs, ys)
    """
    return PmapFunction(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices,
                        backend, axis_size)


# --- shard_map ------------------------------------------------------------------------------

def shard_map(f, mesh: Mesh, in_specs, out_specs, check_rep: bool = True):
    """``f`` run on every device of ``mesh`` on its blocks of the arguments, as
    ``jax.experimental.shard_map.shard_map``: ``in_specs``/``out_specs`` (PartitionSpecs, or
    pytree prefixes of them) say how each argument is split over the mesh axes and how the
    per-device results are put together (a mesh axis a result's spec does not name: the
    result must be the same on those devices, e.g. after a ``psum``). Collectives name the
    mesh axes.

    Example:
        >>> mesh = Mesh(ember.devices("cpu")[:2], ("i",))
        >>> total = shard_map(lambda x: ember.lax.psum(x.sum(), "i"), mesh,
        ...                   in_specs=P("i"), out_specs=P())
        >>> total(np.arange(8.0))
        ShardedArray(28., dtype=float32, devices=2)
    """
    return ShardMapFunction(f, mesh, in_specs, out_specs, check_rep)


class ShardMapFunction:
    """``f`` over the devices of a mesh. Made by :func:`shard_map`."""

    def __init__(self, f, mesh, in_specs, out_specs, check_rep):
        if not isinstance(mesh, Mesh):
            raise ShardingError(f"shard_map needs an ember.sharding.Mesh, got "
                                f"{type(mesh).__name__}")
        self.fun, self.mesh, self.check_rep = f, mesh, check_rep
        self.in_specs, self.out_specs = in_specs, out_specs
        self.fun_name = getattr(f, "__name__", type(f).__name__)
        self._programs: dict = {}
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args):
        _outside_traces("ember.shard_map")
        leaves, tree = tree_util.tree_flatten((args, {}))
        specs = _spec_leaves(self.in_specs, args, "in_specs")
        avals = [_aval(x, i) for i, x in enumerate(leaves)]
        shardings = [NamedSharding(self.mesh, s) for s in specs]
        for i, (sh, a) in enumerate(zip(shardings, avals)):
            sh.check(a.shape, f"shard_map argument #{i}")
        devices = list(self.mesh.devices.flat)
        key = (tree, tuple((a.shape, a.dtype, a.weak_type) for a in avals),
               tuple(_norm_spec(s) for s in specs))
        program = self._programs.get(key)
        if program is None:
            layouts = [_named_layout(a.shape, sh) for a, sh in zip(avals, shardings)]
            local = [a._replace(shape=lay.local_shape) for a, lay in zip(avals, layouts)]
            program = self._programs[key] = _Program(
                self.fun, self.fun_name, tree, layouts, local, devices,
                self.mesh.devices.shape, self.mesh.axis_names, devices[0].platform,
                outputs=lambda out_tree, local: [
                    _named_output(a, NamedSharding(self.mesh, spec))
                    for a, spec in zip(local, self._out_spec_leaves(out_tree, len(local)))],
                check_out=(lambda module, info: self._check_out(module, info, specs))
                if self.check_rep else None)
        return tree_util.tree_unflatten(program.out_tree, program.run(leaves))

    def _out_spec_leaves(self, out_tree, count: int) -> list:
        return _spec_leaves(self.out_specs, _output_tree(out_tree, count), "out_specs")

    def _check_out(self, module, info, in_specs) -> None:
        """An output whose spec leaves out a mesh axis must not vary along it (JAX's
        check_rep): found by batching the per-device function along that axis."""
        from ember.frontend.vmap import mapped_results
        out_specs = self._out_spec_leaves(info["out_tree"], len(info["outs"]) // self.mesh.size)
        for axis, size in self.mesh.shape.items():
            split = [axis in [m for part in spec if part is not None for m in _names(part)]
                     for spec in in_specs] + [False] * info["captured"]
            mapped = mapped_results(module, info["callee"], split, size, axis)
            for i, (spec, is_mapped) in enumerate(zip(out_specs, mapped)):
                named = [m for part in spec if part is not None for m in _names(part)]
                if is_mapped and axis not in named:
                    raise ShardingError(
                        f"shard_map out_specs {spec} of output {i} of {self.fun_name} leave "
                        f"out the mesh axis {axis!r}, but the output varies along it; name "
                        f"{axis!r} in its spec or make it the same on those devices (psum)")


def _names(part) -> tuple:
    return () if part is None else (part,) if isinstance(part, str) else tuple(part)


def _prefix_leaves(prefix, tree, is_leaf, what: str) -> list:
    """One entry of ``prefix`` (a pytree prefix of ``tree``, its leaves those ``is_leaf``
    accepts) per leaf of ``tree``, as JAX expands in_axes, specs and shardings."""
    if is_leaf(prefix):
        return [prefix] * len(tree_util.tree_leaves(tree))
    if isinstance(prefix, list):
        prefix = tuple(prefix)
    entries, prefix_tree = tree_util.tree_flatten(prefix, is_leaf=is_leaf)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except (ValueError, TypeError):
        raise ShardingError(f"{what} {prefix!r} must be a tree prefix of "
                            f"{tree_util.tree_structure(tree)}") from None
    for e in entries:
        if not is_leaf(e):
            raise ShardingError(f"{what}: unexpected entry {e!r}")
    return [e for e, sub in zip(entries, subtrees) for _ in tree_util.tree_leaves(sub)]


def _spec_leaves(specs, tree, what: str) -> list:
    """One PartitionSpec per leaf of ``tree``, from a prefix tree of specs (None: P())."""
    found = _prefix_leaves(specs, tree, lambda x: isinstance(x, PartitionSpec) or x is None,
                           f"shard_map {what}")
    return [PartitionSpec() if s is None else s for s in found]


# --- jit with shardings ---------------------------------------------------------------------

class ShardedJitFunction:
    """``fun`` written for whole arrays, run over the devices of a one-axis mesh with its
    arguments split as ``in_shardings`` say. Made by ``ember.jit(fun, in_shardings=...)``."""

    def __init__(self, fun, in_shardings, out_shardings):
        self.fun, self.in_shardings, self.out_shardings = fun, in_shardings, out_shardings
        self.fun_name = getattr(fun, "__name__", type(fun).__name__)
        self._programs: dict = {}
        functools.update_wrapper(self, fun, updated=())

    def __repr__(self):
        return f"<ember.jit of {self.fun_name} with shardings>"

    def __call__(self, *args):
        _outside_traces("ember.jit with in_shardings/out_shardings")
        leaves, tree = tree_util.tree_flatten((args, {}))
        given = _sharding_leaves(self.in_shardings, args, "in_shardings")
        shardings = [g if g is not None else
                     x.sharding if isinstance(x, ShardedArray) and
                     isinstance(x.sharding, NamedSharding) else None
                     for g, x in zip(given, leaves)]
        mesh = _one_axis_mesh([s for s in shardings if s is not None] +
                              [s for s in tree_util.tree_leaves(
                                  self.out_shardings, is_leaf=lambda x: x is None)
                               if isinstance(s, NamedSharding)], self.fun_name)
        axis = mesh.axis_names[0]
        avals = [_aval(x, i) for i, x in enumerate(leaves)]
        splits = []
        for i, (s, a) in enumerate(zip(shardings, avals)):
            if s is not None:
                s.check(a.shape, f"{self.fun_name}: argument #{i}")
            splits.append(-1 if s is None else _split_of(s.spec, axis))
        key = (tree, tuple((a.shape, a.dtype, a.weak_type) for a in avals), tuple(splits),
               mesh)
        program = self._programs.get(key)
        if program is None:
            whole = [NamedSharding(mesh, PartitionSpec()) if s is None else s
                     for s in shardings]
            layouts = [_named_layout(a.shape, s) for a, s in zip(avals, whole)]
            local = [a._replace(shape=lay.local_shape) for a, lay in zip(avals, layouts)]
            found: dict = {}

            def out_splits(out_tree, outs):
                specs = _sharding_leaves(self.out_shardings, _output_tree(out_tree, len(outs)),
                                         "out_shardings")
                found["splits"] = [-1 if s is None else _split_of(s.spec, axis)
                                   for s in specs]
                for s, o in zip(specs, outs):
                    if s is not None:
                        s.check(o.shape, f"{self.fun_name}: out_shardings")
                return found["splits"]

            def outputs(out_tree, local):
                return [_named_output(a, NamedSharding(mesh, PartitionSpec(
                    *([] if split < 0 else [None] * split + [axis]))))
                    for a, split in zip(local, found["splits"])]
            program = self._programs[key] = _Program(
                self.fun, self.fun_name, tree, layouts, local, list(mesh.devices.flat),
                (mesh.size,), (axis,), mesh.devices.flat[0].platform, outputs=outputs,
                partition=(avals, splits, out_splits))
        return tree_util.tree_unflatten(program.out_tree, program.run(leaves))


def _sharding_leaves(shardings, tree, what: str) -> list:
    """One NamedSharding (or None: unspecified) per leaf of ``tree``, from a prefix tree."""
    if what == "in_shardings" and isinstance(shardings, tuple | list) and \
            len(shardings) != len(tree):
        raise ShardingError(f"jit in_shardings has {len(shardings)} entries for "
                            f"{len(tree)} positional arguments")
    return _prefix_leaves(shardings, tree, lambda x: x is None or isinstance(x, NamedSharding),
                          f"jit {what}")


def _one_axis_mesh(shardings, fun_name: str) -> Mesh:
    if not shardings:
        raise ShardingError(f"ember.jit({fun_name}) was given no NamedSharding: "
                            "in_shardings/out_shardings name the mesh to run on")
    mesh = shardings[0].mesh
    if any(s.mesh != mesh for s in shardings):
        raise ShardingError(f"ember.jit({fun_name}): the shardings are over different meshes")
    if len(mesh.axis_names) != 1:
        raise ShardingError(
            f"ember.jit({fun_name}): ember partitions over a mesh of one axis (data "
            f"parallelism), got {mesh.shape}; use shard_map for a mesh of more axes")
    return mesh


def _split_of(spec, axis: str) -> int:
    """The dimension a spec splits over the mesh axis (-1: none)."""
    dims = [d for d, part in enumerate(spec) if axis in _names(part)]
    return dims[0] if dims else -1


def sharded_jit(fun, in_shardings, out_shardings):
    """``ember.jit`` with shardings (see :func:`ember.jit`)."""
    return ShardedJitFunction(fun, in_shardings, out_shardings)
