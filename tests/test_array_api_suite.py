"""The Array API standard's own test suite (data-apis/array-api-tests) against ``ember.numpy``.

It runs a pinned, unmodified copy (data-apis/array-api-tests at 55fcc60, with its
``array-api`` submodule): the folder ``EMBER_ARRAY_API_TESTS`` names, else the copy CI keeps
beside the repository; without either it is skipped, saying how to get one. This test runs
it in a subprocess, as its README says (``ARRAY_API_TESTS_MODULE=ember.numpy``, the 2024.12
standard, 64-bit types on, as JAX's CI runs it), with few hypothesis examples per test so
that it stays a few minutes long, and reads the outcome from its junit XML.

It fails on any failing suite test that ``EXPECTED_FAILURES`` does not list, and on any
listed one that passes (or is no longer collected), so the list stays what ember fails today;
only the failures that depend on the values hypothesis draws (``MAY_PASS``) may pass. Each
entry says why it fails; docs/guide.md gives the pass rates beside NumPy's and JAX's.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUITE = Path(os.environ.get("EMBER_ARRAY_API_TESTS")
             or ROOT.parent / "shared" / "third_party" / "array-api-tests")
EXAMPLES = 2        # hypothesis examples per test (the suite's own default is 100)

# Why each test fails, by test id (file::test[params]), which must fail; or by a pattern of
# ids with "*" (any text), for failures that depend on the values drawn: those may pass.
_FLOORDIV = ("floor division of infinities and by infinities: ember gives NumPy's and "
             "JAX's values (inf // 2 is nan, 1.0 // -inf is -1.0, as Python's //), the "
             "standard asks for the limits of floor(x1 / x2) (inf, -0.0)")
_FLOORDIV_CASES = [
    "x1_i is +infinity and isfinite(x2_i) and x2_i > 0) -> +infinity",
    "x1_i is +infinity and isfinite(x2_i) and x2_i < 0) -> -infinity",
    "x1_i is -infinity and isfinite(x2_i) and x2_i > 0) -> -infinity",
    "x1_i is -infinity and isfinite(x2_i) and x2_i < 0) -> +infinity",
    "isfinite(x1_i) and x1_i > 0 and x2_i is -infinity) -> -0",
    "isfinite(x1_i) and x1_i < 0 and x2_i is +infinity) -> -0",
]
# ember's complex exp, expm1 and tanh miss some of the standard's special cases (C99's Annex
# G) for some of the values a case allows. The suite draws a unary case's value with
# hypothesis's .example(), which is random in every run (derandomize does not reach it), so
# these entries are patterns that may pass; the two cases whose input is fixed (and which
# always fail) are listed exactly.
_COMPLEX_SPECIAL = ("complex special case: ember's formula on the real and imaginary parts "
                    "gives another value (the sign of a zero part; 0 or NaN where the "
                    "standard gives a limit or NaN + NaN j)")
_COMPLEX_LINALG = ("pinv of a complex matrix: ember's linear algebra kernels are real (a "
                   "TracingError says so); fails when the suite draws a complex dtype")
EXPECTED_FAILURES: dict[str, str] = {
    "test_array_object.py::test_setitem":
        "ember arrays are immutable, as JAX's: x[idx] = v raises ImmutableArrayError "
        "(x.at[idx].set(v) returns the updated array)",
    "test_array_object.py::test_setitem_masking":
        "ember arrays are immutable, as JAX's (x.at[mask].set(v))",
    "test_searching_functions.py::test_searchsorted":
        "searchsorted returns JAX's int32 indices for any axis that fits (the standard: the "
        "default indexing dtype, int64 under x64)",
    **{f"test_special_cases.py::test_binary[{op}({case}]": _FLOORDIV
       for op in ("floor_divide", "__floordiv__") for case in _FLOORDIV_CASES},
    **{f"test_special_cases.py::test_iop[__ifloordiv__({case}]": _FLOORDIV
       for case in _FLOORDIV_CASES},
    **{f"test_special_cases.py::test_unary[{case}]": _COMPLEX_SPECIAL for case in (
        "expm1(real(x_i) is -infinity and imag(x_i) is +infinity) -> -1 + 0j",
        "expm1(real(x_i) is -infinity and imag(x_i) is NaN) -> -1 + 0j")},
    **{f"test_special_cases.py::test_unary[{f}(*real(x_i)*": _COMPLEX_SPECIAL
       for f in ("exp", "expm1", "tanh")},
    "test_linalg.py::test_pinv*": _COMPLEX_LINALG,
}


def _test_id(case: ET.Element) -> str:
    """A junit testcase as file::[Class::]test[params], relative to array_api_tests/."""
    parts = case.get("classname", "").split(".")     # array_api_tests.test_x[.TestClass]
    path = "::".join([f"{parts[1]}.py", *parts[2:]]) if len(parts) > 1 else parts[0]
    return f"{path}::{case.get('name')}"


def _outcomes(xml_path: Path) -> dict[str, str]:
    """Each test's outcome: "passed", "failed" (failure or error) or "skipped"."""
    out = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            out[_test_id(case)] = "failed"
        elif case.find("skipped") is not None:
            out[_test_id(case)] = "skipped"
        else:
            out[_test_id(case)] = "passed"
    return out


# The suite's files in five runs of a few minutes each, which pytest-xdist's workers can run
# side by side (the special cases are 621 small tests, the elementwise ones compile most).
GROUPS = {"special_cases": ["test_special_cases.py"],
          "elementwise": ["test_operators_and_elementwise_functions.py"],
          "linalg": ["test_linalg.py"], "fft": ["test_fft.py"],
          "others": None}       # every other test_*.py


def _files(group: str) -> list[str]:
    files = GROUPS[group]
    if files is None:
        named = {f for fs in GROUPS.values() if fs for f in fs}
        files = sorted(p.name for p in (SUITE / "array_api_tests").glob("test_*.py")
                       if p.name not in named)
    return files


@pytest.mark.skipif(not SUITE.is_dir(), reason=f"the Array API suite is not at {SUITE}: "
                    "git clone --recurse-submodules https://github.com/data-apis/array-api-tests"
                    " (checkout 55fcc60) and set EMBER_ARRAY_API_TESTS to its folder")
# Each group its own xdist group too (tests/conftest.py groups a file's tests in one worker).
@pytest.mark.parametrize("group", [pytest.param(g, marks=pytest.mark.xdist_group(f"suite-{g}"))
                                   for g in GROUPS])
def test_array_api_suite(group, tmp_path):
    for module, package in (("hypothesis", "hypothesis"), ("ndindex", "ndindex"),
                            ("pytest_jsonreport", "pytest-json-report")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the Array API suite needs {package} (pip install -e '.[test]')")
    files = _files(group)
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="ember.numpy",
               ARRAY_API_TESTS_VERSION="2024.12", EMBER_ENABLE_X64="1",
               PYTHONPATH=os.pathsep.join(p for p in [str(ROOT), str(ROOT / "tests"),
                                                      os.environ.get("PYTHONPATH")] if p))
    xml_path = tmp_path / "suite.xml"
    # Run from tmp_path: hypothesis writes .hypothesis/ into the working directory, and the
    # suite's folder is shared (and read-only on some machines).
    cmd = [sys.executable, "-m", "pytest", *(str(SUITE / "array_api_tests" / f) for f in files),
           "-q", "-p", "no:cacheprovider", "-p", "_array_api_suite_plugin",
           "--max-examples", str(EXAMPLES), "--derandomize", "--disable-deadline",
           f"--junitxml={xml_path}"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    took = time.monotonic() - start
    if not xml_path.exists():
        pytest.fail(f"the suite did not run (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                    f"\n{proc.stderr[-3000:]}")
    outcomes = _outcomes(xml_path)
    failed = {t for t, o in outcomes.items() if o == "failed"}
    expected = [t for t in EXPECTED_FAILURES if t.split("::")[0] in files]
    patterns = [re.compile(".*".join(map(re.escape, t.split("*")))) for t in expected
                if "*" in t]
    unexpected = sorted(t for t in failed if t not in expected
                        and not any(p.fullmatch(t) for p in patterns))
    now_passing = sorted(t for t in expected if "*" not in t and outcomes.get(t) != "failed")
    passed = sum(o == "passed" for o in outcomes.values())
    summary = (f"{passed} passed, {len(failed)} failed, {len(outcomes) - passed - len(failed)} "
               f"skipped in {took:.0f} s ({passed / max(1, passed + len(failed)):.1%})")
    lines = [f"Array API suite ({group}): {summary}"]
    print(lines[0])         # shown with -rP / -s: the pass rate and the time it took
    if unexpected:
        lines.append(f"{len(unexpected)} failures not in EXPECTED_FAILURES:")
        lines += [f"  {t}" for t in unexpected]
        lines.append(proc.stdout[-6000:])
    if now_passing:
        lines.append(f"{len(now_passing)} expected failures that did not fail (remove them "
                     "from EXPECTED_FAILURES):")
        lines += [f"  {t}: {outcomes.get(t, 'not collected')}" for t in now_passing]
    assert not unexpected and not now_passing, "\n".join(lines)
