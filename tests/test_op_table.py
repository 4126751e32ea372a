"""The op table: every ember op is declared, documented, lowerable and type-checked."""

import pathlib

import numpy as np
import pytest

from ember import dtypes
from ember._mlir import default_session, ir
from ember.core import ShapedArray
from ember.dialects import OPS, OpTypeError, decode_attrs
from ember.dialects.arithmetic import BINARY, COMPARE, UNARY
from ember.dialects.reduction import REDUCE
from ember.rules.lowering import LOWERINGS, SCALAR

pytestmark = pytest.mark.fast


def A(shape, dtype="float32"):
    return ShapedArray(tuple(shape), np.dtype(dtype))


F32, I32, BOOL = "float32", "int32", "bool"

# One (operands, attributes) per op that its result-type rule must reject with OpTypeError.
_BAD: dict[str, list[tuple[list[ShapedArray], dict]]] = {
    "ember.constant": [],   # filled below: a constant has no operands to get wrong
    "ember.iota": [([], {"shape": (3,), "dimension": 1, "dtype": np.dtype(I32)}),
                   ([], {"shape": (3,), "dimension": 0, "dtype": np.dtype(BOOL)})],
    "ember.select": [([A((3,), BOOL), A((3,)), A((3,), I32)], {}),
                     ([A((3,), I32), A((3,)), A((3,))], {}),
                     ([A((2,), BOOL), A((3,)), A((3,))], {})],
    "ember.convert": [([A((3,)), A((3,))], {"new_dtype": np.dtype(I32)})],
    "ember.broadcast_in_dim": [
        ([A((3,))], {"shape": (2, 4), "broadcast_dimensions": (1,)}),
        ([A((3,))], {"shape": (3, 2), "broadcast_dimensions": ()}),
        ([A((2, 3))], {"shape": (3, 2), "broadcast_dimensions": (1, 0)})],
    "ember.reshape": [([A((2, 3))], {"new_sizes": (4,)}),
                      ([A((2, 3))], {"new_sizes": (-1, 6)})],
    "ember.transpose": [([A((2, 3))], {"permutation": (0, 0)}),
                        ([A((2, 3))], {"permutation": (0,)})],
    "ember.rev": [([A((2, 3))], {"dimensions": (2,)}),
                  ([A((2, 3))], {"dimensions": (0, 0)})],
    "ember.slice": [
        ([A((4,))], {"start_indices": (0,), "limit_indices": (5,), "strides": ()}),
        ([A((4,))], {"start_indices": (3,), "limit_indices": (2,), "strides": ()}),
        ([A((4,))], {"start_indices": (0,), "limit_indices": (4,), "strides": (0,)}),
        ([A((4, 2))], {"start_indices": (0,), "limit_indices": (4,), "strides": ()})],
    "ember.concatenate": [([A((2, 3)), A((2, 4))], {"dimension": 0}),
                          ([A((2, 3)), A((2, 3), I32)], {"dimension": 0}),
                          ([A((2, 3))], {"dimension": 2}),
                          ([], {"dimension": 0})],
    "ember.pad": [
        ([A((3,)), A((), I32)], {"low": (0,), "high": (0,), "interior": (0,)}),
        ([A((3,)), A((1,))], {"low": (0,), "high": (0,), "interior": (0,)}),
        ([A((3,)), A(())], {"low": (0,), "high": (0,), "interior": (-1,)}),
        ([A((3,)), A(())], {"low": (-2,), "high": (-2,), "interior": (0,)}),
        ([A((3,)), A(())], {"low": (0, 0), "high": (0,), "interior": (0,)})],
    "ember.argmax": [([A((3, 0))], {"axis": 1, "index_dtype": np.dtype(I32)}),
                     ([A((3,))], {"axis": 1, "index_dtype": np.dtype(I32)}),
                     ([A((3,))], {"axis": 0, "index_dtype": np.dtype(F32)})],
    "ember.dot_general": [
        ([A((2, 3)), A((4, 5))], {"lhs_contracting": (1,), "rhs_contracting": (0,),
                                  "lhs_batch": (), "rhs_batch": ()}),
        ([A((2, 3)), A((3, 5), I32)], {"lhs_contracting": (1,), "rhs_contracting": (0,),
                                       "lhs_batch": (), "rhs_batch": ()}),
        ([A((2, 3), BOOL), A((3, 5), BOOL)], {"lhs_contracting": (1,),
                                              "rhs_contracting": (0,),
                                              "lhs_batch": (), "rhs_batch": ()}),
        ([A((2, 3)), A((3, 5))], {"lhs_contracting": (1,), "rhs_contracting": (),
                                  "lhs_batch": (), "rhs_batch": ()}),
        ([A((2, 3)), A((3, 5))], {"lhs_contracting": (2,), "rhs_contracting": (0,),
                                  "lhs_batch": (), "rhs_batch": ()})],
}
_BAD["ember.argmin"] = _BAD["ember.argmax"]

for _name, (_cls, _) in UNARY.items():
    _bad = [([A((3,), BOOL)], {})] if _name != "not" else [([A((3,))], {})]
    if _cls == "float":
        _bad.append(([A((3,), I32)], {}))
    if _name == "round":
        _bad = [(a, {"rounding_method": "away_from_zero"}) for a, _ in _bad]
    _BAD[f"ember.{_name}"] = _bad
for _name, _cls in list(BINARY.items()) + [(c, "any") for c in COMPARE]:
    _bad = [([A((3,)), A((4,))], {}), ([A((3,)), A((3,), I32)], {})]
    if _cls in ("numeric", "float"):
        _bad.append(([A((3,), BOOL), A((3,), BOOL)], {}))
    if _cls in ("float",):
        _bad.append(([A((3,), I32), A((3,), I32)], {}))
    if _cls == "integral":
        _bad.append(([A((3,)), A((3,))], {}))
    _BAD[f"ember.{_name}"] = _bad
for _name, _cls in REDUCE.items():
    _bad = [([A((2, 3))], {"axes": (2,)}), ([A((2, 3))], {"axes": (0, 0)})]
    _bad.append(([A((2, 3), BOOL if _cls == "numeric" else F32)], {"axes": (0,)})
                if _cls in ("numeric", "integral") else ([A((2, 3))], {"axes": (-1,)}))
    _BAD[f"ember.{_name}"] = _bad

# Bad inputs of the ops of ember/dialects/{math,indexing,control_flow,bits,sort_scan}.py:
# each family adds its entries in its own block below.
# --- math, trig, special ---
from ember.dialects import math, special, trig  # noqa: E402

for _name in [*math.UNARY, *trig.UNARY, *special.UNARY, "signbit"]:
    _BAD[f"ember.{_name}"] = [([A((3,), I32)], {}), ([A((3,), BOOL)], {})]
for _name in [*math.BINARY, *trig.BINARY, *math.BITWISE]:
    _BAD[f"ember.{_name}"] = [([A((3,)), A((4,))], {}), ([A((3,)), A((3,), "float16")], {}),
                              ([A((3,), I32), A((3,), I32)], {})]
# --- indexing ---
_BAD["ember.gather"] = [
    ([A((3, 4)), A((2, 1), F32)], {"axes": (0,)}),           # float indices
    ([A((3, 4)), A((2, 2), I32)], {"axes": (0,)}),           # index depth != len(axes)
    ([A((3, 4)), A((2, 1), I32)], {"axes": (2,)}),           # axis out of range
    ([A((3, 4)), A((2, 2), I32)], {"axes": (1, 1)}),         # repeated axis
    ([A((0, 4)), A((2, 1), I32)], {"axes": (0,)})]           # gather from an empty dim
_BAD["ember.scatter"] = [
    ([A((3, 4)), A((2, 1), I32), A((2, 3))], {"axes": (0,), "kind": "add"}),
    ([A((3, 4)), A((2, 1), I32), A((2, 4), I32)], {"axes": (0,), "kind": "set"}),
    ([A((3, 4)), A((2, 1), BOOL), A((2, 4))], {"axes": (0,), "kind": "set"}),
    ([A((3, 4), BOOL), A((2, 1), I32), A((2, 4), BOOL)], {"axes": (0,), "kind": "add"})]
_BAD["ember.dynamic_slice"] = [
    ([A((3, 4)), A((), I32)], {"slice_sizes": (1, 1)}),              # too few starts
    ([A((3, 4)), A((), I32), A((), F32)], {"slice_sizes": (1, 1)}),  # float start
    ([A((3, 4)), A((), I32), A((), I32)], {"slice_sizes": (4, 1)}),  # too big
    ([A((3, 4)), A((1,), I32), A((), I32)], {"slice_sizes": (1, 1)})]
_BAD["ember.dynamic_update_slice"] = [
    ([A((3, 4)), A((4, 1)), A((), I32), A((), I32)], {}),
    ([A((3, 4)), A((1, 1), I32), A((), I32), A((), I32)], {}),
    ([A((3, 4)), A((1, 1)), A((), I32)], {}),
    ([A((3, 4))], {})]
# --- control_flow ---
# Region ops are typed from their operands followed by the values each region yields.
_BAD["ember.yield"] = []   # untyped: checked as the terminator of its parent op
_BAD["ember.cond"] = [([A((3,), BOOL), A((3,)), A((3,))], {}),        # predicate not scalar
                      ([A((), I32), A((3,)), A((3,))], {}),            # predicate not bool
                      ([A((), BOOL), A((3,)), A((3,), I32)], {}),      # branches differ
                      ([A((), BOOL), A((3,)), A((3,)), A((3,))], {})]  # 2 vs 1 results
_BAD["ember.while"] = [([A((3,)), A((), I32), A((3,))], {}),           # cond yields i32
                       ([A((3,)), A((), BOOL), A((2,))], {}),          # body changes the carry
                       ([A((3,)), A((), BOOL)], {})]
_BAD["ember.for"] = [([A(()), A((), I32), A((3,)), A((3,))], {}),      # float lower
                     ([A((), I32), A((), "int64"), A((3,)), A((3,))], {}),
                     ([A((), I32), A((), I32), A((3,)), A((3,), I32)], {})]
_BAD["ember.scan"] = [
    ([A(()), A((4, 2)), A(()), A((2,))], {"num_carry": 1, "num_xs": 1, "length": 5}),
    ([A(()), A((4, 2)), A((), I32), A((2,))], {"num_carry": 1, "num_xs": 1, "length": 4}),
    ([A(()), A(())], {"num_carry": 1, "num_xs": 1, "length": 4})]
_BAD["ember.map"] = []   # typed by its verifier (tests/test_vmap_control_flow.py), no rule
# --- fusion ---
_BAD["ember.fusion"] = []   # typed by its verifier (tests/test_fusion.py), not by a rule
# --- bits ---
for _name in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
    _BAD[f"ember.{_name}"] = [([A((3,), I32), A((4,), I32)], {}),
                              ([A((3,), I32), A((3,), "int8")], {}),
                              ([A((3,)), A((3,))], {}),
                              ([A((3,), BOOL), A((3,), BOOL)], {})]
for _name in ("population_count", "clz"):
    _BAD[f"ember.{_name}"] = [([A((3,))], {}), ([A((3,), BOOL)], {})]
_BAD["ember.bitcast_convert_type"] = [([A((3,))], {"new_dtype": np.dtype("int16")}),
                                      ([A((3,), "int8")], {"new_dtype": np.dtype(BOOL)}),
                                      ([A((3,), BOOL)], {"new_dtype": np.dtype("int8")})]
# --- sort_scan ---
_BAD["ember.sort"] = [([A((3,)), A((4,), I32)], {"dimension": 0, "num_keys": 1}),
                      ([A((3,))], {"dimension": 1, "num_keys": 1}),
                      ([A((3,))], {"dimension": 0, "num_keys": 2}),
                      ([A(())], {"dimension": 0, "num_keys": 1}),
                      ([], {"dimension": 0, "num_keys": 1})]
for _name in ("cumsum", "cumprod", "cummax", "cummin"):
    _BAD[f"ember.{_name}"] = [([A((2, 3))], {"axis": 2, "reverse": False}),
                              ([A(())], {"axis": 0, "reverse": False})]
    if _name in ("cumsum", "cumprod"):
        _BAD[f"ember.{_name}"].append(([A((3,), BOOL)], {"axis": 0, "reverse": False}))

# --- conv ---
_CONV = {"window_strides": (1,), "rhs_dilation": (1,)}
_BAD["ember.conv"] = [
    ([A((1, 5, 2)), A((3, 2, 4), I32)], _CONV),                         # dtypes differ
    ([A((1, 5, 2), BOOL), A((3, 2, 4), BOOL)], _CONV),                  # bool
    ([A((1, 5, 2)), A((3, 3, 4))], _CONV),                              # features differ
    ([A((1, 5, 4)), A((3, 2, 3))], dict(_CONV, feature_group_count=2)),  # 3 outputs, 2 groups
    ([A((1, 5, 2)), A((3, 2, 4))], {"window_strides": (0,), "rhs_dilation": (1,)}),
    ([A((5, 2)), A((2, 4))], {"window_strides": (), "rhs_dilation": ()})]  # no spatial dim
# --- collectives ---
for _name in ("psum", "pmax", "pmin"):
    _BAD[f"ember.{_name}"] = [([A((3,))], {"axis_name": ""})]
_BAD["ember.psum"].append(([A((3,), BOOL)], {"axis_name": "i"}))
_BAD["ember.all_gather"] = [([A((3,))], {"axis_name": "i", "axis_size": 0}),
                            ([A((3,))], {"axis_name": "i", "axis_size": 2, "axis": 2}),
                            ([A(())], {"axis_name": "i", "axis_size": 2, "tiled": True})]
_BAD["ember.axis_index"] = [([], {"axis_name": ""})]
_BAD["ember.transfer"] = [([A((3,))], {"device": -1})]
# --- complex numbers ---
C64 = "complex64"
for _name in ("real", "imag", "conj"):
    _BAD[f"ember.{_name}"] = [([A((3,))], {}), ([A((3,), I32)], {})]
_BAD["ember.complex"] = [([A((3,)), A((4,))], {}), ([A((3,)), A((3,), "float64")], {}),
                         ([A((3,), I32), A((3,), I32)], {}),
                         ([A((3,), "float16"), A((3,), "float16")], {}),
                         ([A((3,), C64), A((3,), C64)], {})]
# Complex numbers have no order: the ordered ops refuse them.
for _name in ("max", "min", "lt", "le", "gt", "ge", "rem", "atan2"):
    _BAD[f"ember.{_name}"].append(([A((3,), C64), A((3,), C64)], {}))
for _name in ("reduce_max", "reduce_min"):
    _BAD[f"ember.{_name}"].append(([A((3,), C64)], {"axes": (0,)}))
for _name in ("floor", "ceil", "logistic", "erf", "is_finite", "cbrt", "lgamma"):
    _BAD[f"ember.{_name}"].append(([A((3,), C64)], {"rounding_method": "away_from_zero"}
                                   if _name == "round" else {}))
_BAD["ember.argmax"].append(([A((3,), C64)], {"axis": 0, "index_dtype": np.dtype(I32)}))
_BAD["ember.sort"].append(([A((3,), C64)], {"dimension": 0, "num_keys": 1}))
_BAD["ember.cummax"].append(([A((3,), C64)], {"axis": 0, "reverse": False}))
_BAD["ember.iota"].append(([], {"shape": (3,), "dimension": 0, "dtype": np.dtype(C64)}))

# Any one array is a good operand: the entries serve the operand-count test only.
_BAD["ember.stop_gradient"] = [([A((3,))], {})]
_BAD["ember.checkpoint_name"] = [([A((3,))], {"tag": "h"})]
# Ops without a result-type rule: their results are typed by their callees.
_UNTYPED = {"ember.call", "ember.vmap", "ember.spmd", "ember.jvp", "ember.vjp",
            "ember.custom_jvp_call", "ember.custom_vjp_call", "ember.custom_vjp_bwd",
            "ember.checkpoint_linear"}

ALL = sorted(OPS)
TYPED = sorted(n for n in OPS if OPS[n].infer is not None)


def test_every_op_has_bad_inputs_listed():
    assert set(_BAD) | _UNTYPED >= set(OPS), \
        "add bad inputs for new ops to _BAD"


@pytest.mark.parametrize("name", ALL)
def test_op_has_lowering(name):
    assert name in LOWERINGS, f"{name} has no lowering rule"
    assert callable(LOWERINGS[name])


@pytest.mark.parametrize("name", ALL)
def test_op_is_documented(name):
    op = OPS[name]
    assert op.doc and len(op.doc.strip()) > 10, f"{name} has no docstring"
    assert op.name == name and name.startswith("ember.")


@pytest.mark.parametrize("name", [n for n in ALL if OPS[n].family == "elementwise"])
def test_elementwise_op_has_scalar_emitter(name):
    assert OPS[name].short_name in SCALAR, f"{name} has no scalar emitter"


# Every rule table of ember/rules, by module and name: checked against the op set below, and
# test_every_rule_table_is_checked finds any table not listed here.
RULE_TABLES = {"lowering": ("LOWERINGS", "SCALAR", "COMPLEX_SCALAR"),
               "complex": ("LOWERINGS", "SCALAR", "COMPLEX_SCALAR"),
               "batching": ("BATCHING",), "autodiff": ("JVP", "TRANSPOSE"),
               "partition": ("PARTITION",), "spmd": ("SPMD",), "ranges": ("BOUNDS",)}


def _op_name(key) -> bool:
    return isinstance(key, str) and (key in OPS or f"ember.{key}" in OPS)


def _rule_tables(listed: bool):
    """(module.name, table) of ember/rules: the listed ones, or every module-level dict
    keyed by op names alone (bar OPS itself)."""
    import importlib
    import pkgutil

    import ember.passes  # noqa: F401  (every family's rules registered)
    import ember.rules
    for info in pkgutil.iter_modules(ember.rules.__path__):
        module = importlib.import_module(f"ember.rules.{info.name}")
        for name, value in vars(module).items():
            if listed and name in RULE_TABLES.get(info.name, ()):
                yield f"{info.name}.{name}", value
            elif not listed and isinstance(value, dict) and value and value is not OPS \
                    and all(_op_name(k) for k in value):
                yield f"{info.name}.{name}", value


def test_no_stray_rules():
    """Every rule of every rule table belongs to a declared op."""
    for where, table in _rule_tables(listed=True):
        stray = [k for k in table if not _op_name(k)]
        assert not stray, f"{where} has rules for undeclared ops {stray}"


def test_every_rule_table_is_checked():
    """A rule table added to ember/rules joins RULE_TABLES (so test_no_stray_rules checks it)."""
    listed = {where for where, _ in _rule_tables(listed=True)}
    found = {where for where, _ in _rule_tables(listed=False)}
    assert found <= listed, f"rule tables not in RULE_TABLES: {sorted(found - listed)}"
    assert len(listed) == sum(map(len, RULE_TABLES.values())), "RULE_TABLES names a table " \
        "that does not exist"


def test_every_op_has_batching_rule():
    """ember-batch can batch every op (issue 4): all but ember.vmap itself (replaced by the
    pass), ember.yield (a terminator, batched by its region op's rule) and ember.spmd (a
    program's top level only: pmap and shard_map refuse to be traced inside a vmap)."""
    import ember.passes.batch  # noqa: F401  (registers every family's rules)
    from ember.rules.batching import BATCHING

    missing = sorted(set(OPS) - set(BATCHING) - {"ember.vmap", "ember.yield", "ember.spmd"})
    assert not missing, f"no batching rule for {missing}"
    assert set(BATCHING) <= set(OPS), "batching rules for undeclared ops"


@pytest.mark.parametrize("name", [n for n in TYPED
                                  if n not in ("ember.constant", "ember.stop_gradient",
                                               "ember.checkpoint_name")])
def test_result_rule_rejects_bad_inputs(name):
    op = OPS[name]
    cases = _BAD[name]
    assert cases, f"no bad inputs listed for {name}"
    for avals, attrs in cases:
        with pytest.raises(OpTypeError):
            op.result_avals(avals, op.check_attrs(attrs))


@pytest.mark.parametrize("name", [n for n in TYPED if OPS[n].num_operands is not None
                                  and OPS[n].num_operands > 0])
def test_result_rule_rejects_wrong_operand_count(name):
    op = OPS[name]
    good_avals, attrs = _BAD[name][0]
    with pytest.raises(OpTypeError):
        op.result_avals(list(good_avals) + [A((3,))], op.check_attrs(attrs))


def test_constant_rule():
    op = OPS["ember.constant"]
    (out,) = op.result_avals([], {"value": np.zeros((2, 3), dtypes.bfloat16)})
    assert out.shape == (2, 3) and out.dtype == dtypes.bfloat16
    with pytest.raises(OpTypeError):
        op.result_avals([A(())], {"value": np.zeros(3, np.float32)})
    with pytest.raises(OpTypeError):
        op.check_attrs({})


def test_attrs_rejected():
    with pytest.raises(OpTypeError):
        OPS["ember.round"].check_attrs({"rounding_method": "up"})
    with pytest.raises(OpTypeError):
        OPS["ember.add"].check_attrs({"axes": (0,)})
    with pytest.raises(OpTypeError):
        OPS["ember.reduce_sum"].check_attrs({})


def test_good_inputs_accepted():
    """The rules are not simply rejecting everything."""
    f32 = np.dtype(F32)
    assert OPS["ember.add"].result_avals([A((3,)), A((3,))], {}) == [A((3,))]
    assert OPS["ember.lt"].result_avals([A((3,)), A((3,))], {}) == [A((3,), BOOL)]
    assert OPS["ember.pad"].result_avals(
        [A((3,)), A(())], {"low": (-1,), "high": (2,), "interior": (1,)}) == [A((6,))]
    assert OPS["ember.slice"].result_avals(
        [A((7,))], {"start_indices": (1,), "limit_indices": (7,), "strides": (2,)}) == [A((3,))]
    assert OPS["ember.dot_general"].result_avals(
        [A((5, 2, 3)), A((5, 3, 4))],
        {"lhs_contracting": (2,), "rhs_contracting": (1,), "lhs_batch": (0,),
         "rhs_batch": (0,)}) == [A((5, 2, 4))]
    assert OPS["ember.broadcast_in_dim"].result_avals(
        [A((1, 3))], {"shape": (2, 4, 3), "broadcast_dimensions": (1, 2)}) == [A((2, 4, 3))]
    assert OPS["ember.convert"].result_avals([A((3,))], {"new_dtype": np.dtype(I32)}) == \
        [A((3,), I32)]
    assert OPS["ember.iota"].result_avals(
        [], {"shape": (2, 3), "dimension": 1, "dtype": f32}) == [A((2, 3))]
    conv = OPS["ember.conv"]
    assert conv.result_avals([A((2, 9, 8, 4)), A((3, 2, 2, 6))], conv.check_attrs(
        {"window_strides": (2, 1), "rhs_dilation": (1, 3), "feature_group_count": 2})) == \
        [A((2, 4, 5, 6))]
    gather = OPS["ember.all_gather"]
    assert gather.result_avals([A((3, 2))], gather.check_attrs(
        {"axis_name": "i", "axis_size": 4, "axis": 1})) == [A((3, 4, 2))]
    assert gather.result_avals([A((3, 2))], gather.check_attrs(
        {"axis_name": "i", "axis_size": 4, "axis": 1, "tiled": True})) == [A((3, 8))]


_CALL_MODULE = """
module {
  func.func @g(%a: tensor<3xf32>) -> tensor<3xf32> { return %a : tensor<3xf32> }
  func.func @main(%x: tensor<3xf32>, %y: tensor<3xi32>) -> tensor<3xf32> {
    %0 = "ember.call"(%x) {callee = @g} : (tensor<3xf32>) -> tensor<3xf32>
    %1 = "ember.call"(%y) {callee = @g} : (tensor<3xi32>) -> tensor<3xf32>
    %2 = "ember.call"(%x) {callee = @nope} : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""


def test_call_verifier_rejects_bad_calls():
    op = OPS["ember.call"]
    with default_session().context:
        module = ir.Module.parse(_CALL_MODULE)
        main = list(module.body.operations)[1]
        calls = [o for o in main.regions[0].blocks[0].operations
                 if o.operation.name == "ember.call"]
        assert len(calls) == 3
        good, wrong_types, undefined = (c.operation for c in calls)
        op.verify_op(good, decode_attrs(op, good))
        for bad in (wrong_types, undefined):
            with pytest.raises(OpTypeError):
                op.verify_op(bad, decode_attrs(op, bad))


# Ops ember-differentiate cannot differentiate yet (it names the op and the user's line).
# The test below keeps this list exact, so it shrinks as rules are added.
NOT_YET_DIFFERENTIABLE: set[str] = set()
# Replaced by their passes before ember-differentiate reads a callee, or inlined by it;
# ember.fusion is made by ember-fuse, which runs after ember-differentiate; ember.yield ends
# a region, whose op's rule differentiates it (ember/dialects/control_flow.py);
# custom_vjp_bwd and checkpoint_linear exist only inside the pass, which transposes them.
_TRANSFORMS = {"ember.vmap", "ember.spmd", "ember.jvp", "ember.vjp", "ember.call", "ember.fusion",
               "ember.yield", "ember.custom_vjp_bwd", "ember.checkpoint_linear"}


def test_every_op_has_a_derivative_rule_or_mark():
    """Every op has a JVP rule or is marked not differentiable (zero derivative); every linear
    op a JVP rule emits has a transpose rule; no rule names an undeclared op."""
    from ember.rules.autodiff import JVP, NOT_DIFFERENTIABLE, TRANSPOSE
    covered = set(JVP) | NOT_DIFFERENTIABLE
    assert not covered & NOT_YET_DIFFERENTIABLE, covered & NOT_YET_DIFFERENTIABLE
    missing = set(OPS) - covered - NOT_YET_DIFFERENTIABLE - _TRANSFORMS
    assert not missing, f"no JVP rule or not-differentiable mark for {sorted(missing)}"
    assert covered | set(TRANSPOSE) <= set(OPS), "rules for undeclared ops"
    assert not set(JVP) & NOT_DIFFERENTIABLE
    assert NOT_YET_DIFFERENTIABLE <= set(OPS)


def test_properties_are_declared_with_the_op():
    """Cost classes, recomputability and traits live on the declarations; the passes' and
    backends' tables are derived from them (no second name list to keep in step)."""
    from ember.backends import vulkan
    from ember.passes.plan_memory import RECOMPUTE_COST, REMAT_WEIGHT
    from ember.rules.base import COST_CLASSES, TRAITS
    from ember.rules.cost import FUSION_COST, op_cost
    for name, op in OPS.items():
        assert op.cost is None or op.cost in COST_CLASSES, name
        assert op.traits <= TRAITS, name
        if op.family == "elementwise":
            assert op.cost is not None and op.recomputable, name
        assert op_cost(name) == FUSION_COST.get(op.cost, 1)
        assert (name in RECOMPUTE_COST) == op.recomputable
        if op.recomputable:
            assert RECOMPUTE_COST[name] == REMAT_WEIGHT[op.cost]
    f64 = {n for (n, dt) in vulkan.unsupported_ops("generic") if dt == "float64"}
    assert {n for n, op in OPS.items() if "f64_math" in op.traits} <= f64
    assert set(COST_CLASSES) == set(FUSION_COST)


# Elementwise ops whose lax function has a name of its own (JAX's names).
_LAX_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
              "not": "bitwise_not", "convert": "convert_element_type"}


def _accepts(op, dtype) -> bool:
    try:
        op.result_avals([ShapedArray((3,), np.dtype(dtype))] * op.num_operands, {})
        return True
    except OpTypeError:
        return False


def test_every_elementwise_op_is_a_lax_function():
    """Each elementwise op is a ``lax`` function (named as the op unless JAX names it
    otherwise) whose trace emits that op; and each family module is listed in FAMILIES."""
    import ember
    from ember import dialects, lax
    for full, op in OPS.items():
        if op.family != "elementwise":
            continue
        name = full.split(".", 1)[1]
        fn = getattr(lax, _LAX_NAMES.get(name, name), None)
        assert callable(fn), f"ember.lax has no function for {full}"
        if name in ("convert", "round", "bitcast_convert_type", "select", "complex", "real",
                    "imag", "conj"):
            continue      # arguments of their own; each is tested in its family's tests
        dtype = next(dt for dt in ("float32", "int32", "bool") if _accepts(op, dt))
        args = [np.ones(3, dtype)] * op.num_operands
        text = ember.jit(fn).lower(*args).as_text()
        assert full in text, (full, text)
    modules = {m.__name__ for m in dialects.FAMILIES}
    declared = {p.stem for p in pathlib.Path(dialects.__file__).parent.glob("*.py")}
    assert modules == {f"ember.dialects.{m}" for m in declared - {"__init__"}}


def test_ops_declared_with_numpy_names_are_numpy_functions():
    """Each op declared with NumPy names (``define(..., numpy=...)``) is the function of
    ``ember.numpy`` of each name: its trace emits the op, integers become floats, and its
    values are NumPy's function of the same name (one program for all of them)."""
    import ember
    import ember.numpy as enp
    names = {name: op.name for op in OPS.values() for name in op.numpy}
    assert {"exp", "cbrt", "arcsin", "asin"} <= set(names)
    ints, floats = np.arange(1, 4, dtype=np.int32), np.float32([0.25, -0.5, 0.75])
    program = ember.jit(lambda a, b: {n: (getattr(enp, n)(a), getattr(enp, n)(b))
                                      for n in names})
    text = program.lower(ints, floats).as_text()
    for name, (got_ints, got_floats) in program(ints, floats).items():
        assert names[name] in text, name
        for x, got in ((ints, got_ints), (floats, got_floats)):
            assert got.dtype == np.float32, (name, x.dtype, got.dtype)
            with np.errstate(invalid="ignore", divide="ignore"):
                want = getattr(np, name)(x.astype(np.float64))
            np.testing.assert_allclose(np.asarray(got), want, rtol=3e-6, err_msg=name)
