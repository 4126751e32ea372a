"""Exported modules: one ``.vmfb`` that carries its own signature, run without the compiler.

``ember.export`` (in :mod:`ember.exported.build`, which needs the compiler) writes the file;
this module reads and runs it with only ``iree.runtime`` and NumPy, so ``ember.load`` works
where ``iree-base-compiler`` is not installed.

The signature travels as IREE reflection metadata: the exported function ``main`` has
``iree.reflection = {ember.signature = "<json>"}``, which the runtime returns as
``VmFunction.reflection``. The JSON holds the format tag, the ember version that wrote it,
the function's name, the argument and result pytree structures, and per leaf its name, shape,
dtype and weak type.

Pytrees are described by their structure only: tuples, lists, ``None``, dicts (keys that are
str, int, float, bool or None) and namedtuples (by class name and field names; a loaded
module rebuilds results as a namedtuple class of the same name and fields, and accepts any
namedtuple with that name and those fields). Custom nodes registered with
``tree_util.register_pytree_node`` cannot be rebuilt without the user's code: exporting a
function that takes or returns one raises :class:`~ember.errors.ExportError`.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import json
import re

import iree.runtime as rt
import numpy as np

from ember import tree_util
from ember.backends.runtime import _HAL_TYPE_BY_NAME, get_device, invoker
from ember.core import ShapedArray, SymbolicDim, bind_sizes, is_symbolic
from ember.dtypes import bfloat16
from ember.errors import ArgumentError, ExportError

FORMAT = "ember.exported/1"
SIGNATURE_KEY = "ember.signature"
FUNCTION = "main"

# The driver each backend runs on; "cpu" picks local-sync for small programs.
DRIVERS = {"cpu": "local-task", "vulkan": "vulkan", "cuda": "cuda"}

_DTYPES = {name: (np.dtype(bfloat16) if name == "bfloat16" else np.dtype(name))
           for name in _HAL_TYPE_BY_NAME}
_SUPPORTED = frozenset(_DTYPES.values())
# Element types in IREE's ABI declaration (unsigned integers are signless there).
_ABI_ELEMENT = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
                "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
                "complex64": "complex<f32>", "complex128": "complex<f64>"}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("ember")
    except PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
        return "0.1.0"


# --- pytree structures as JSON ------------------------------------------------------------

def tree_to_json(treedef: tree_util.PyTreeDef, what: str = "pytree"):
    """A JSON-serialisable description of a treedef (see the module docstring).

    Example:
        >>> tree_to_json(tree_util.tree_structure((1, {"a": 2, "b": None})))
        {'tuple': ['*', {'dict': [['a', '*'], ['b', None]]}]}
    """
    data = treedef.node_data()
    if data is None:
        return "*"
    kind, aux = data
    children = [tree_to_json(c, what) for c in treedef.children()]
    if kind is type(None):
        return None
    if kind is tuple:
        return {"tuple": children}
    if kind is list:
        return {"list": children}
    if kind is dict:
        for k in aux:
            if not (k is None or isinstance(k, str | int | float | bool)):
                raise ExportError(f"{what}: a dict key {k!r} of type {type(k).__name__} cannot "
                                  "be stored in an exported module (use str or int keys)")
        return {"dict": [[k, c] for k, c in zip(aux, children)]}
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return {"namedtuple": kind.__name__, "fields": list(kind._fields),
                "children": children}
    raise ExportError(f"{what}: the custom pytree node type {kind.__module__}."
                      f"{kind.__qualname__} cannot be rebuilt without your code, so it cannot "
                      "be exported; use tuples, lists, dicts or namedtuples at the boundary")


@functools.cache
def _namedtuple(name: str, fields: tuple[str, ...]):
    return collections.namedtuple(name, fields)


def _example(desc):
    """A pytree of this description with ``0`` leaves."""
    if desc == "*":
        return 0
    if desc is None:
        return None
    if not isinstance(desc, dict) or len(desc) not in (1, 3):
        raise ValueError(f"bad pytree description {desc!r}")
    if "tuple" in desc:
        return tuple(_example(c) for c in desc["tuple"])
    if "list" in desc:
        return [_example(c) for c in desc["list"]]
    if "dict" in desc:
        return {k: _example(c) for k, c in desc["dict"]}
    if "namedtuple" in desc:
        cls = _namedtuple(desc["namedtuple"], tuple(desc["fields"]))
        return cls(*(_example(c) for c in desc["children"]))
    raise ValueError(f"bad pytree description {desc!r}")


def tree_from_json(desc) -> tree_util.PyTreeDef:
    """The treedef of a description made by :func:`tree_to_json`.

    Example:
        >>> tree_from_json({"tuple": ["*", None]})
        PyTreeDef((*, None))
    """
    return tree_util.tree_structure(_example(desc))


# --- the signature ------------------------------------------------------------------------

@dataclasses.dataclass
class Signature:
    """What an exported module takes and returns. ``to_json``/``from_json`` round-trip it."""

    function: str
    in_tree: object          # JSON descriptions (tree_to_json)
    out_tree: object
    inputs: list[dict]       # per leaf: name, shape, dtype, weak_type
    outputs: list[dict]
    targets: list[str]
    # the names of symbolic dimensions (``ember.symbolic_shape``) and the sizes each takes:
    # {"b": {"min": 1, "multiple_of": 1}}; empty for fixed shapes
    symbols: dict = dataclasses.field(default_factory=dict)
    ember_version: str = dataclasses.field(default_factory=_version)
    format: str = FORMAT
    # the file ends with the module's checksum (``seal``); files written before seals read
    # as False
    sealed: bool = True

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, where: str) -> Signature:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ExportError(f"{where}: the ember signature metadata is not valid JSON "
                              f"({e})") from None
        if not isinstance(data, dict):
            raise ExportError(f"{where}: the ember signature metadata is not a JSON object")
        fmt = data.get("format")
        if fmt != FORMAT:
            raise ExportError(f"{where}: written by ember {data.get('ember_version', '?')} in "
                              f"format {fmt!r}; this ember ({_version()}) reads {FORMAT!r}. "
                              "Export the function again with this ember")
        try:
            sig = cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)
                         if f.name not in ("sealed", "symbols")},
                      sealed=data.get("sealed", False) is True,
                      symbols=_symbols(data.get("symbols", {})))
            sig.in_avals, sig.out_avals   # noqa: B018  (validates the leaves)
            for desc, leaves in ((sig.in_tree, sig.inputs), (sig.out_tree, sig.outputs)):
                if tree_from_json(desc).num_leaves != len(leaves):
                    raise ValueError("pytree structure and leaf list disagree")
        except (KeyError, TypeError, ValueError) as e:
            raise ExportError(f"{where}: the ember signature metadata (format {FORMAT}) is "
                              f"malformed: {type(e).__name__}: {e}") from None
        return sig

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [_aval(d) for d in self.inputs]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [_aval(d) for d in self.outputs]

    def describe(self) -> str:
        """A readable summary: inputs and outputs in ``main``'s order, with their names.

        Example:
            >>> print(ember.load("model.vmfb").signature.describe())
        """
        lines = [f"function: {self.function} (exported as @{FUNCTION})",
                 f"written by: ember {self.ember_version} ({self.format})",
                 f"targets: {', '.join(self.targets)}",
                 f"arguments: {tree_from_json(self.in_tree)}",
                 f"results: {tree_from_json(self.out_tree)}",
                 *(["symbolic dimensions: " + ", ".join(
                     f"{n} (any size >= {c['min']}" + (f", a multiple of {c['multiple_of']}"
                                                       if c["multiple_of"] > 1 else "") + ")"
                     for n, c in self.symbols.items())] if self.symbols else []),
                 "inputs (in order):"]
        lines += [f"  {i}: {d['name']}: {_aval(d).str_short()}"
                  + (" (weak type)" if d.get("weak_type") else "")
                  for i, d in enumerate(self.inputs)]
        lines.append("outputs (in order):")
        lines += [f"  {i}: {d['name']}: {_aval(d).str_short()}"
                  for i, d in enumerate(self.outputs)]
        return "\n".join(lines) + "\n"


def _symbols(d) -> dict:
    if not isinstance(d, dict) or not all(
            isinstance(v, dict) and all(isinstance(v.get(k), int) and v[k] >= 1
                                        for k in ("min", "multiple_of"))
            for v in d.values()):
        raise ValueError(f"bad symbols {d!r}")
    return d


def _aval(d: dict) -> ShapedArray:
    """A leaf's abstract value; a symbolic dimension is its name (or, of a result, its
    term: ``"2*b+1"``) as a ``SymbolicDim``."""
    shape = tuple(SymbolicDim(n) if isinstance(n, str) and n else n for n in d["shape"])
    if not all(isinstance(n, SymbolicDim) or isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"bad shape {d['shape']!r}")
    if d["dtype"] not in _DTYPES:
        raise ValueError(f"unknown dtype {d['dtype']!r}")
    return ShapedArray(shape, _DTYPES[d["dtype"]], bool(d.get("weak_type", False)))


def leaf_json(aval: ShapedArray, name: str) -> dict:
    return {"name": name, "shape": list(aval.shape), "dtype": aval.dtype.name,
            "weak_type": bool(aval.weak_type)}


def abi_types(avals) -> list[str]:
    """Tensor types of IREE's ABI declaration for these avals, e.g. ``4x3xf32``."""
    return ["x".join([*("?" if isinstance(n, SymbolicDim) else str(n) for n in a.shape),
                      _ABI_ELEMENT[a.dtype.name]]) for a in avals]


def _check_against_abi(sig: Signature, declaration: str | None, where: str) -> None:
    """The metadata must describe the compiled function: same count, shapes and types."""
    if not declaration:
        return
    got = {"input": [], "output": []}
    # (an element type may nest one level: complex<f32>)
    for kind, ty in re.findall(r"%(input|output)\d+:\s*tensor<((?:[^<>]|<[^<>]*>)*)>",
                               declaration):
        got[kind].append(ty)
    for kind, avals in (("input", sig.in_avals), ("output", sig.out_avals)):
        want = abi_types(avals)
        if got[kind] != want:
            raise ExportError(f"{where}: the ember signature metadata does not match the "
                              f"compiled function: metadata {kind}s {want}, module {kind}s "
                              f"{got[kind]} (the file was altered or assembled from parts)")


# --- reading and loading --------------------------------------------------------------------

# A file ember writes is IREE's module followed by this marker and the module's SHA-256:
# IREE reads a module from its start and checks neither the bytes after it nor the
# executables in it (a damaged CPU executable crashed the process when called).
_SEAL = b"ember.sha256:"


def seal(vmfb: bytes) -> bytes:
    """``vmfb`` with its checksum appended, as ``.vmfb`` files are written."""
    return vmfb + _SEAL + hashlib.sha256(vmfb).digest()


def _read(path) -> tuple[bytes, bool]:
    """The module in the file at ``path``, its checksum checked when it has one (files
    written by other tools, or by ember before seals, have none), and whether it had one."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ExportError(f"cannot read exported module '{path}': "
                          f"{e.strerror or e}") from None
    n = len(_SEAL) + 32
    if len(data) >= n and data[-n:-32] == _SEAL:
        data, digest = data[:-n], data[-32:]
        if hashlib.sha256(data).digest() != digest:
            raise ExportError(f"{path}: the module does not match its checksum: the file was "
                              "changed or damaged after ember wrote it; export it again")
        return data, True
    return data, False


def _module_signature(instance, path) -> tuple[bytes, Signature]:
    """The file's module bytes and signature; a module whose signature says it was sealed
    must still have its seal (without one, its tail was cut off)."""
    where = str(path)
    data, had_seal = _read(path)
    sig, _ = _signature_of(_vm_module(instance, data, where), where)
    if sig.sealed and not had_seal:
        raise ExportError(f"{where}: the file's checksum is missing: it was truncated after "
                          "ember wrote it; export it again")
    return data, sig


def _vm_module(instance, data: bytes, where: str):
    try:
        return rt.VmModule.copy_buffer(instance, data)
    except (ValueError, RuntimeError, IndexError) as e:
        detail = str(e).split("; ")[-1]
        raise ExportError(f"{where}: not a valid IREE module (corrupt or truncated file?): "
                          f"{detail}") from None


def _signature_of(vm_module, where: str) -> tuple[Signature, object]:
    function = vm_module.lookup_function(FUNCTION)
    if function is None:
        raise ExportError(f"{where}: the module has no function '{FUNCTION}'; it was not "
                          "exported by ember")
    try:
        reflection = function.reflection or {}
    except (ValueError, RuntimeError) as e:     # undecodable metadata strings
        raise ExportError(f"{where}: the module's metadata cannot be read (corrupt file?): "
                          f"{e}") from None
    text = reflection.get(SIGNATURE_KEY)
    if text is None:
        raise ExportError(f"{where}: the module has no ember signature metadata "
                          f"(iree.reflection '{SIGNATURE_KEY}' on @{FUNCTION}); it was not "
                          "exported by ember.export or ember-compile")
    sig = Signature.from_json(text, where)
    _check_against_abi(sig, reflection.get("iree.abi.declaration"), where)
    return sig, function


def read_signature(path) -> Signature:
    """The signature stored in an exported ``.vmfb``, without loading it on a device.

    Example:
        >>> print(read_signature("model.vmfb").describe())
    """
    return _module_signature(get_device("local-sync").config.vm_instance, path)[1]


class Loaded:
    """An exported module loaded on a device: call it with the original pytrees.

    Arguments are checked against the stored signature (pytree structure, shapes, dtypes)
    before IREE sees them; results come back as NumPy arrays in the original structure.
    """

    def __init__(self, path, sig: Signature, device, vm_module, function, backend: str):
        self.path = str(path)
        self.signature = sig
        self.backend = backend
        self.device = device
        self.in_tree = tree_from_json(sig.in_tree)
        self.out_tree = tree_from_json(sig.out_tree)
        self.in_avals = sig.in_avals
        self.out_avals = sig.out_avals
        self._names = [d["name"] for d in sig.inputs]
        self._warned: set = set()       # (argument, dtype) converted to 32 bits, warned of
        try:
            self._context = rt.SystemContext(vm_modules=[vm_module], config=device.config)
        except (ValueError, RuntimeError, IndexError) as e:
            raise ExportError(f"{self.path}: cannot load the module on backend '{backend}' "
                              f"(compiled for {', '.join(sig.targets)}): "
                              f"{str(e).splitlines()[0][:300]}") from None
        self._function = function
        self._invoke = invoker(self._context.vm_context, function, device)

    def __repr__(self):
        return f"<ember exported {self.signature.function} from {self.path} on {self.backend}>"

    def __call__(self, *args, **kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        try:
            got = tree_to_json(tree)
        except ExportError:
            got = None
        if got != self.signature.in_tree:
            raise ArgumentError(f"{self.signature.function} (from {self.path}) takes arguments "
                                f"structured as {self.in_tree}, got {tree}")
        hosts = [self._host(x, aval, name)
                 for x, aval, name in zip(leaves, self.in_avals, self._names)]
        self.check_sizes(hosts)
        return tree_util.tree_unflatten(self.out_tree, self.run_flat(hosts))

    def check_sizes(self, hosts) -> None:
        """The arguments' symbolic dimensions (``ember.symbolic_shape``) take one size per
        name, one the module holds for: else ArgumentError."""
        if self.signature.symbols:
            try:
                bind_sizes([h.shape for h in hosts], [a.shape for a in self.in_avals],
                           self.signature.symbols, [f"argument {n}" for n in self._names])
            except ValueError as e:
                raise ArgumentError(f"{self.signature.function}: {e}") from None

    @staticmethod
    def _fits(shape, aval: ShapedArray) -> bool:
        """Whether ``shape`` is ``aval``'s, any size standing for a symbolic dimension."""
        return len(shape) == len(aval.shape) and all(
            isinstance(d, SymbolicDim) or n == d for n, d in zip(shape, aval.shape))

    def _host(self, x, aval: ShapedArray, name: str) -> np.ndarray:
        fun = self.signature.function
        if type(x) in (bool, int, float, complex):
            ok = (aval.dtype.kind == "b") == (type(x) is bool) and not (
                type(x) is float and aval.dtype.kind in "iu") and \
                (type(x) is not complex or aval.dtype.kind == "c")
            if aval.shape != () or not ok:
                raise ArgumentError(f"{fun}: argument {name} must be {aval.str_short()}, got "
                                    f"the Python {type(x).__name__} {x!r}")
            return np.asarray(x, aval.dtype)
        try:
            arr = np.asarray(x)
        except Exception:
            arr = None
        if arr is None or arr.dtype not in _SUPPORTED:
            raise ArgumentError(f"{fun}: argument {name} must be an array "
                                f"{aval.str_short()}, got a {type(x).__name__}")
        fits = self._fits(arr.shape, aval)
        if fits and arr.dtype.kind == aval.dtype.kind and \
                (arr.dtype.itemsize, aval.dtype.itemsize) in ((8, 4), (16, 8)):
            # NumPy's default 64-bit types where the module takes 32 bits (np.arange(5),
            # np.ones(3), complex128 for complex64): converted with a warning, as jit does
            # with 64-bit types off.
            arr = self._narrow(arr, aval, name)
        if not fits or arr.dtype != aval.dtype:
            from ember.core import short_dtype
            got = f"{short_dtype(arr.dtype)}[{','.join(map(str, arr.shape))}]"
            raise ArgumentError(f"{fun}: argument {name} must be {aval.str_short()}, got {got}")
        return arr

    def _narrow(self, arr: np.ndarray, aval: ShapedArray, name: str) -> np.ndarray:
        """A 64-bit array as the 32-bit dtype the module takes: a UserWarning once per
        argument and dtype (ember.jit's warning for the same case); integers that do not
        fit are an ArgumentError rather than wrapped around."""
        fun = self.signature.function
        if arr.dtype.kind in "iu" and arr.size:
            info = np.iinfo(aval.dtype)
            lo, hi = arr.min(), arr.max()
            if lo < info.min or hi > info.max:
                bad = lo if lo < info.min else hi
                raise ArgumentError(
                    f"{fun}: argument {name} is {arr.dtype} with value {bad}, outside the "
                    f"range of the module's {aval.dtype} ({info.min} to {info.max})")
        key = (name, arr.dtype)
        if key not in self._warned:
            self._warned.add(key)
            import warnings

            from ember._traceback import user_stacklevel
            warnings.warn(
                f"{fun} (from {self.path}): argument {name} is {arr.dtype}; it is converted "
                f"to {aval.dtype}, the dtype the module takes", UserWarning,
                stacklevel=user_stacklevel())
        return arr.astype(aval.dtype)

    def run_flat(self, hosts: list[np.ndarray]) -> list[np.ndarray]:
        """Run on NumPy arrays already matching ``in_avals``; returns NumPy arrays."""
        from ember.backends.runtime import argument_memory_error, call_failure
        from ember.errors import DeviceMemoryError

        args = rt.VmVariantList(len(hosts))
        for h, name in zip(hosts, self._names):
            try:
                args.push_ref(self.device.upload(h))
            except DeviceMemoryError as e:
                raise argument_memory_error(e, f"{self.path}: argument {name}") from None
        results = rt.VmVariantList(len(self.out_avals))
        try:
            self._invoke(self._function, args, results)
        except Exception as e:
            raise call_failure(e, self.device, () if self.signature.symbols else
                               self.out_avals, f"{self.path}: ") from None
        out = []
        for i, aval in enumerate(self.out_avals):
            bv = results.get_as_object(i, rt.HalBufferView)
            if is_symbolic(aval.shape):     # (the size the module computed)
                aval = aval._replace(shape=tuple(bv.shape))
            out.append(self._read_back(bv, aval))
        return out

    def _read_back(self, bv, aval: ShapedArray) -> np.ndarray:
        own = getattr(self.device, "to_host", None)     # a backend's own readback, if any
        if own is not None:
            return own(bv, aval)
        return read_back(self.device, bv, aval)


def read_back(device, bv, aval: ShapedArray) -> np.ndarray:
    """A result buffer's contents as a new NumPy array of the aval's dtype."""
    raw = np.dtype(f"u{aval.dtype.itemsize}")   # bytes as they are; bfloat16 included
    if aval.size == 0:
        return np.zeros(aval.shape, aval.dtype)
    if device.platform == "cpu":
        return np.array(bv.map().asarray(aval.shape, raw)).view(aval.dtype)
    # GPU drivers cannot map device memory into the host: copy into a host buffer first.
    hal = device.hal
    staging = device.allocator.allocate_buffer(
        memory_type=rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE,
        allowed_usage=rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED,
        allocation_size=bv.byte_length)
    sem = hal.create_semaphore(0)
    hal.queue_copy(bv.get_buffer(), staging, [], [(sem, 1)])
    sem.wait(1)
    return np.array(staging.map().asarray(aval.shape, raw)).view(aval.dtype)


def load(path, backend: str | None = None) -> Loaded:
    """Load an exported ``.vmfb`` (from :func:`ember.export` or ``ember-compile``).

    ``backend`` is "cpu", "vulkan" or "cuda"; by default the first target the module was
    compiled for whose device is present. Needs only ``iree-base-runtime`` and NumPy.

    Example:
        >>> f = ember.load("model.vmfb")
        >>> y = f(params, x)            # NumPy results, in the exported function's structure
    """
    where = str(path)
    data, sig = _module_signature(get_device("local-sync").config.vm_instance, path)
    if backend is not None:
        if backend not in DRIVERS:
            raise ExportError(f"unknown backend {backend!r}; backends are "
                              f"{', '.join(DRIVERS)}")
        if backend not in sig.targets:
            raise ExportError(f"{where} was compiled for {', '.join(sig.targets)}, not for "
                              f"backend '{backend}'")
        candidates = [backend]
    else:
        candidates = [t for t in sig.targets if t in DRIVERS]
    problems = []
    for name in candidates:
        driver = DRIVERS[name]
        if name == "cpu":
            from ember.backends.cpu import driver_for
            # (symbolic sizes are the caller's: sized as large, as ember.jit does)
            driver = driver_for(1 << 62 if sig.symbols else max(
                (a.nbytes for a in sig.in_avals + sig.out_avals), default=0))
        try:
            device = get_device(driver)
            instance = device.config.vm_instance     # creates the device
        except Exception as e:  # no such device on this machine
            # ember's own errors are whole sentences (with what to install); of IREE's text
            # the first line, whole: cut at 200 characters it had ended mid-sentence.
            from ember.errors import EmberError
            text = str(e) if isinstance(e, EmberError) else str(e).strip().splitlines()[0]
            problems.append(f"  {name}: {text}")
            continue
        vm_module = _vm_module(instance, data, where)
        sig, function = _signature_of(vm_module, where)
        return Loaded(path, sig, device, vm_module, function, name)
    raise ExportError(f"{where}: no device for any of its targets "
                      f"({', '.join(candidates)}) is available here:\n" + "\n".join(problems))


__all__ = ["FORMAT", "Loaded", "Signature", "load", "read_signature", "seal", "tree_from_json",
           "tree_to_json"]
