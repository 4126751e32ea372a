"""How an ember op is declared: name, operands, attributes, result-type rule, verifier.

Each op is declared once, with :func:`define`, into :data:`OPS`. The tracer calls the same
result-type rule to type the ops it emits that the ``ember-verify`` pass calls to check IR read
from a file, so the two cannot drift apart. Transformation rules (lowering, later batching and
differentiation) live in tables of their own, keyed by the op name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from ember._mlir import dtype_of_element, element_type, ir, tensor_type, walk
from ember.core import ShapedArray

REQUIRED = object()


class OpTypeError(Exception):
    """Raised by a result-type rule; the caller adds the op name and the source location."""


@dataclass(frozen=True)
class Attr:
    """One attribute of an op: its name, kind and default.

    Kinds: ``i64`` (an int), ``i64s`` (a tuple of ints), ``str``, ``bool``, ``f64``,
    ``dtype`` (a NumPy dtype stored as an MLIR type), ``dense`` (a NumPy array stored as a
    dense elements attribute), ``symbol`` (a function name).
    """

    name: str
    kind: str
    default: Any = REQUIRED
    choices: tuple = ()


@dataclass
class OpDef:
    """The declaration of one ember op."""

    name: str
    num_operands: int | None          # None: variadic
    attrs: tuple[Attr, ...]
    infer: Callable[[list[ShapedArray], dict], list[ShapedArray]] | None
    family: str
    doc: str
    pure: bool = True
    # Extra checks that need more than types, e.g. a callee's signature: fn(op, attrs) -> None.
    verify_op: Callable[[ir.Operation, dict], None] | None = None
    # Markers read by passes and backends: "regions" (its regions yield its results),
    # "own_body" (a region that is a whole kernel), "terminator", "exact_bf16" (a bfloat16
    # result is an operand's value or an exact conversion: no rounding to add), "f64_math" (a
    # math function that IREE's SPIR-V lowering has for 16/32-bit floats only).
    traits: frozenset = field(default_factory=frozenset)
    # Per-element cost class, for fusion (``rules/cost.op_cost``) and rematerialization
    # (``passes/plan_memory``): "free" (index maps, converts), "cheap" (simple arithmetic),
    # "division" (division, square roots), "transcendental", "never" (reductions and
    # contractions: never recomputed); None: an op neither recomputes (fusion cost 1).
    cost: str | None = None
    # The memory planner may recompute it next to its uses (cost permitting).
    recomputable: bool = False
    # The ember.numpy functions that are this op on operands made inexact (integers and bools
    # become the default float dtype): NumPy's name first, then aliases; ember/numpy/_core.py
    # defines them.
    numpy: tuple[str, ...] = ()

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1]

    def check_attrs(self, attrs: dict) -> dict:
        """Fill defaults and check names and choices; raises OpTypeError."""
        known = {a.name: a for a in self.attrs}
        for name in attrs:
            if name not in known:
                raise OpTypeError(f"unknown attribute {name!r}; expected {sorted(known)}")
        out = {}
        for a in self.attrs:
            value = attrs.get(a.name, a.default)
            if value is REQUIRED:
                raise OpTypeError(f"missing attribute {a.name!r}")
            if a.choices and value not in a.choices:
                raise OpTypeError(f"attribute {a.name}={value!r} is not one of {a.choices}")
            out[a.name] = value
        return out

    def result_avals(self, avals: Sequence[ShapedArray], attrs: dict) -> list[ShapedArray]:
        if self.num_operands is not None and len(avals) != self.num_operands:
            raise OpTypeError(f"expects {self.num_operands} operands, got {len(avals)}")
        return self.infer(list(avals), attrs)


OPS: dict[str, OpDef] = {}


COST_CLASSES = ("free", "cheap", "division", "transcendental", "never")
TRAITS = frozenset({"regions", "own_body", "terminator", "exact_bf16", "f64_math"})
# Defaults by family: elementwise ops are cheap and recomputable, reductions and
# contractions never recomputed; the rest neither.
_FAMILY_COST = {"elementwise": ("cheap", True), "reduce": ("never", False),
                "contraction": ("never", False)}


def define(name: str, num_operands: int | None, infer, *, attrs=(), family: str, doc: str,
           pure: bool = True, verify_op=None, traits=(), cost: str | None = "default",
           recomputable: bool | None = None, numpy: tuple[str, ...] = ()) -> OpDef:
    """Declare the op ``ember.<name>`` with its properties (``cost``, ``recomputable``,
    ``traits``, ``numpy``: see :class:`OpDef`; family defaults where not given); declaring a
    name twice is a bug."""
    full = f"ember.{name}"
    assert full not in OPS, f"{full} declared twice"
    default_cost, default_recompute = _FAMILY_COST.get(family, (None, False))
    cost = default_cost if cost == "default" else cost
    assert cost is None or cost in COST_CLASSES, (full, cost)
    assert set(traits) <= TRAITS, (full, traits)
    op = OpDef(full, num_operands, tuple(attrs), infer, family, doc, pure, verify_op,
               frozenset(traits), cost,
               default_recompute if recomputable is None else recomputable, tuple(numpy))
    OPS[full] = op
    return op


# --- attributes <-> MLIR ------------------------------------------------------------------

def encode_attr(kind: str, value) -> ir.Attribute:
    if kind == "i64":
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if kind == "i64s":
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])
    if kind == "str":
        return ir.StringAttr.get(value)
    if kind == "bool":
        return ir.BoolAttr.get(bool(value))
    if kind == "f64":
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))
    if kind == "dtype":
        return ir.TypeAttr.get(element_type(value))
    if kind == "dense":
        arr = np.asarray(value)
        arr = arr if arr.flags.c_contiguous else arr.copy(order="C")
        return dense_attr(arr, tensor_type(arr.shape, arr.dtype))
    if kind == "symbol":
        return ir.FlatSymbolRefAttr.get(value)
    raise AssertionError(kind)


def decode_attr(kind: str, attr: ir.Attribute):
    """Python value of an attribute; raises OpTypeError if it is of the wrong kind."""
    try:
        if kind == "i64":
            return ir.IntegerAttr(attr).value
        if kind == "i64s":
            return tuple(ir.DenseI64ArrayAttr(attr))
        if kind == "str":
            return ir.StringAttr(attr).value
        if kind == "bool":
            return ir.BoolAttr(attr).value
        if kind == "f64":
            return ir.FloatAttr(attr).value
        if kind == "dtype":
            return dtype_of_element(ir.TypeAttr(attr).value)
        if kind == "dense":
            dense = ir.DenseElementsAttr(attr)
            t = ir.RankedTensorType(dense.type)
            return _dense_to_numpy(dense, tuple(t.shape), dtype_of_element(t.element_type))
        if kind == "symbol":
            return ir.FlatSymbolRefAttr(attr).value
    except (ValueError, TypeError, KeyError) as e:
        raise OpTypeError(f"attribute is not a valid {kind}: {attr} ({e})") from None
    raise AssertionError(kind)


def dense_attr(arr: np.ndarray, type_: ir.Type) -> ir.DenseElementsAttr:
    """A dense elements attribute of ``type_`` holding the (C-contiguous) array ``arr``. The
    bindings' buffer protocol knows no complex numbers: a complex array goes in as pairs of
    floats, which the attribute's complex element type reads as (real, imaginary)."""
    if arr.dtype.kind == "c":
        parts = np.dtype(f"float{arr.dtype.itemsize * 4}")
        arr = np.ascontiguousarray(arr).view(parts).reshape(arr.shape + (2,))
    return ir.DenseElementsAttr.get(arr, type=type_)


def _dense_to_numpy(dense: ir.DenseElementsAttr, shape, dtype) -> np.ndarray:
    if dense.is_splat:
        return np.full(shape, _scalar_of(dense.get_splat_value()), dtype=dtype)
    if dtype == np.dtype("bfloat16"):
        return _bf16_from_text(str(dense), shape)
    if dtype.kind == "c":
        return _complex_from_text(str(dense), shape, dtype)
    return np.array(dense).astype(dtype, copy=False).reshape(shape)


_BF16_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _bf16_from_text(text: str, shape) -> np.ndarray:
    """Values of a bf16 dense attribute, read from its text: the bindings have no buffer
    protocol for bf16. Elements print as decimals (exact for bf16) or as 0x bit patterns."""
    body = text[text.index("<") + 1:text.rindex(">", 0, text.rindex(":"))]
    if body.startswith('"0x'):      # the whole payload as hex bytes, little-endian
        raw = np.frombuffer(bytes.fromhex(body[3:-1]), dtype=np.uint16)
    else:
        raw = np.array([int(t, 16) if t.startswith("0x") else
                        np.array(float(t), dtype=np.float32).astype(ml_dtypes.bfloat16).view(
                            np.uint16) for t in _BF16_TOKEN.findall(body)], dtype=np.uint16)
    return raw.view(ml_dtypes.bfloat16).reshape(shape)


def _complex_from_text(text: str, shape, dtype) -> np.ndarray:
    """Values of a complex dense attribute, read from its text (the bindings have no buffer
    protocol for complex numbers): ``(re,im)`` pairs of decimals (printed to round-trip) or
    0x bit patterns, or the whole payload as hex bytes."""
    parts = np.dtype(f"float{dtype.itemsize * 4}")
    body = text[text.index("<") + 1:text.rindex(">", 0, text.rindex(":"))]
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:-1]), dtype=dtype).reshape(shape).copy()
    bits = np.dtype(f"uint{parts.itemsize * 8}")
    values = [np.array(int(t, 16), bits).view(parts) if t.startswith("0x") else
              np.array(float(t), parts) for t in _BF16_TOKEN.findall(body)]
    return np.array(values, parts).view(dtype).reshape(shape)


def _scalar_of(attr: ir.Attribute):
    if isinstance(attr, ir.ArrayAttr):      # a complex number: [re, im]
        re_, im_ = (ir.FloatAttr(a).value for a in ir.ArrayAttr(attr))
        return complex(re_, im_)
    if isinstance(attr, ir.BoolAttr):
        return attr.value
    if isinstance(attr, ir.IntegerAttr):
        return bool(attr.value) if attr.type.width == 1 else attr.value
    return ir.FloatAttr(attr).value


def encode_attrs(opdef: OpDef, attrs: dict) -> dict[str, ir.Attribute]:
    """The attributes as MLIR attributes; an optional one (default None) is left out when
    None."""
    return {a.name: encode_attr(a.kind, attrs[a.name]) for a in opdef.attrs
            if not (a.default is None and attrs.get(a.name) is None)}


def decode_attrs(opdef: OpDef, op: ir.Operation) -> dict:
    """Attributes of an op in the IR as Python values, with defaults filled; raises OpTypeError."""
    present = op.attributes
    out = {}
    for a in opdef.attrs:
        if a.name in present:
            out[a.name] = decode_attr(a.kind, present[a.name])
        elif a.default is not REQUIRED:
            out[a.name] = a.default
        else:
            raise OpTypeError(f"missing attribute {a.name!r}")
    return opdef.check_attrs(out)


def emit(name: str, operands, **attrs) -> list[ir.Value]:
    """Create the ember op ``name`` (no regions) at the current insertion point, its result
    types given by the op's own rule: how passes write ember ops.

    Example:
        >>> with ir.InsertionPoint(op), op.location:
        ...     (total,) = emit("ember.reduce_sum", [x], axes=(0,))
    """
    opdef = OPS[name]
    attrs = opdef.check_attrs(attrs)
    outs = opdef.result_avals([aval_of_type(v.type) for v in operands], attrs)
    op = ir.Operation.create(name, results=[tensor_type(o.shape, o.dtype) for o in outs],
                             operands=list(operands), attributes=encode_attrs(opdef, attrs))
    return list(op.results)


def is_splat_constant(op) -> bool:
    """Whether ``op`` is an ``ember.constant`` whose elements are all one value."""
    return op.name == "ember.constant" and \
        ir.DenseElementsAttr(op.attributes["value"]).is_splat


def rule_registrar(table: dict, *, declared: bool = False):
    """The decorator that registers a rule in ``table`` (op name -> rule) under
    ``ember.<name>`` for each name it is given; with ``declared``, each op must be declared
    already.

    Example:
        >>> lowering = rule_registrar(LOWERINGS)
        >>> @lowering("reshape")
        ... def _lower_reshape(c): ...
    """
    def register(*names):
        def deco(fn):
            for n in names:
                assert not declared or f"ember.{n}" in OPS, n
                table[f"ember.{n}"] = fn
            return fn
        return deco
    return register


def module_of(op) -> ir.Operation | None:
    """The ``builtin.module`` that holds ``op`` (None for an op in no module)."""
    module = op.operation
    while module is not None and module.name != "builtin.module":
        module = module.parent
    return module


def callee_of(op) -> ir.Operation:
    """The ``func.func`` that ``op`` names in its ``callee`` attribute."""
    return ir.SymbolTable(module_of(op))[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]


def remap_nested(op, env: dict, pick=None) -> None:
    """Point uses inside a copied op's regions at the copies of the values they read:
    ``env`` maps a value to its copy (or to what ``pick`` takes the copy from)."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for nested in walk(inner):
                    for i, v in enumerate(nested.operands):
                        if v in env:
                            nested.operands[i] = env[v] if pick is None else pick(env[v])


def clone_mapped(op, operands, env: dict, pick=None) -> ir.Operation:
    """A copy of ``op`` at the current insertion point reading ``operands``, the ops in its
    regions reading the copies ``env`` maps outer values to (see :func:`remap_nested`)."""
    new = op.clone()
    for i, v in enumerate(operands):
        new.operands[i] = v
    remap_nested(new, env, pick)
    return new


def clone_block(body: ir.Block, operands) -> tuple[list, list]:
    """Copies of the ops of ``body`` at the current insertion point, its arguments reading
    ``operands`` (values from outside the block read as they are): (the copies, the values
    its terminator returns, as copied)."""
    env = dict(zip(body.arguments, operands))
    ops = [op.operation for op in body.operations]
    copies = []
    for op in ops[:-1]:
        new = clone_mapped(op, [env.get(v, v) for v in op.operands], env)
        env.update(zip(op.results, new.results))
        copies.append(new)
    return copies, [env.get(v, v) for v in ops[-1].operands]


def inline_call(call: ir.Operation, body: ir.Block, operands, remat: bool = False) -> list:
    """Replace ``call`` by copies of the ops of ``body`` (a function's block, its arguments
    reading ``operands``), before it; with ``remat`` every copied op, nested ones too
    (terminators aside), is marked ``REMAT_ATTR`` (a checkpoint's recomputation stays one).
    Returns the copies."""
    with ir.InsertionPoint(call):
        copies, returned = clone_block(body, operands)
    if remat:
        for new in copies:
            for inner in walk(new):
                if inner.name in OPS and "terminator" not in OPS[inner.name].traits:
                    inner.attributes[REMAT_ATTR] = ir.UnitAttr.get()
    for old, new in zip(call.results, returned):
        old.replace_all_uses_with(new)
    call.erase()
    return copies


def callee_type(op: ir.Operation, name: str, verb: str) -> ir.FunctionType:
    """The type of the func.func ``name`` that ``op`` refers to; raises OpTypeError (``op
    <verb> @name, which is not defined``) when the enclosing module has none."""
    module = module_of(op.parent) if op.parent is not None else None
    table = ir.SymbolTable(module.opview) if module is not None else None
    if table is None or name not in table:
        raise OpTypeError(f"{verb} @{name}, which is not defined")
    return ir.TypeAttr(table[name].attributes["function_type"]).value


def aval_of_type(t: ir.Type) -> ShapedArray:
    """The ShapedArray of a ranked tensor type; raises OpTypeError for anything else."""
    if not isinstance(t, ir.RankedTensorType):
        raise OpTypeError(f"expected a ranked tensor type, got {t}")
    rt = ir.RankedTensorType(t)
    try:
        dtype = dtype_of_element(rt.element_type)
    except KeyError:
        raise OpTypeError(f"element type {rt.element_type} is not an ember dtype") from None
    return ShapedArray(tuple(rt.shape), dtype)


# The attribute of an ember.call that ember.checkpoint made (its policy's choice rides on it).
CHECKPOINT_ATTR = "ember.checkpoint"
# Marks a recomputed op: ember-to-linalg reads one of its operands through distinct_copy,
# or MLIR's and IREE's CSE would merge it back into the op it copies.
REMAT_ATTR = "ember.rematerialized"
# Marks a loop whose step computes little (ember-loop-kernels): ember-to-linalg runs it as one
# kernel (ember.rules.scalarize) where it can.
KERNEL_ATTR = "ember.kernel"
