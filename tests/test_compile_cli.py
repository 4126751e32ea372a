"""``ember-compile`` and ``ember-run`` on the command line."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.backends import vulkan
from ember.errors import ExportError
from ember.tools import compile as compile_tool
from ember.tools import run as run_tool

REPO = Path(__file__).resolve().parent.parent

MODEL = """\
import ember.numpy as enp

def predict(x, idx):
    return enp.tanh(x).sum(axis=-1) + idx

def pair(a, b):
    return a * b, a - b

not_a_function = 3

def broken(x):
    raise ValueError("boom in user code")
"""

EMBER_MLIR = """\
func.func @scale(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""


def cli(module, *args, stdin=""):
    """Run a tool's ``main`` in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO(stdin)
    try:
        rc = module.main([str(a) for a in args])
    finally:
        sys.stdout, sys.stderr, sys.stdin = old
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "model.py").write_text(MODEL)
    (d / "scale.mlir").write_text(EMBER_MLIR)
    x = np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16)
    idx = np.arange(8, dtype=np.int32)
    np.save(d / "x.npy", x)
    np.save(d / "idx.npy", idx)
    return d, x, idx


@pytest.fixture(scope="module")
def model_vmfb(workdir):
    d, _, _ = workdir
    path = d / "model.vmfb"
    rc, out, err = cli(compile_tool, f"{d}/model.py:predict", "--arg", "f32[8,16]", "--arg",
                       "i32[8]", "-o", path, "--progress", "always")
    assert rc == 0, err
    return path, err


def test_compile_a_python_function_and_run_it(workdir, model_vmfb):
    d, x, idx = workdir
    path, progress = model_vmfb
    want = np.tanh(x).sum(axis=-1) + idx
    np.testing.assert_allclose(ember.load(path)(x, idx), want, rtol=1e-5)
    # ember-run, with .npy files in and out.
    rc, out, err = cli(run_tool, path, "--input", d / "x.npy", "--input", d / "idx.npy",
                       "--output", d / "y.npy")
    assert rc == 0 and out == "", err
    np.testing.assert_allclose(np.load(d / "y.npy"), want, rtol=1e-5)
    # Without --output the results are printed.
    rc, out, err = cli(run_tool, path, "-i", d / "x.npy", "-i", d / "idx.npy")
    assert rc == 0 and out.startswith("result: float32[8]\n"), err


def test_run_warns_of_64_bit_inputs_and_refuses_overflow(workdir, model_vmfb, tmp_path):
    """int64/float64 .npy files for i32/f32 arguments were converted silently: now a
    warning per input (as ember.jit warns), and an int64 value outside int32 an error."""
    d, x, idx = workdir
    path, _ = model_vmfb
    np.save(tmp_path / "x64.npy", x.astype(np.float64))
    np.save(tmp_path / "idx64.npy", idx.astype(np.int64))
    rc, out, err = cli(run_tool, path, "-i", tmp_path / "x64.npy", "-i", tmp_path / "idx64.npy",
                       "-o", tmp_path / "y.npy")
    assert rc == 0 and out == "", err
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith(f"ember-run: warning: input 0 ('{tmp_path / 'x64.npy'}'): ")
    assert lines[0].endswith("argument x is float64; it is converted to float32, the dtype "
                             "the module takes")
    assert lines[1].startswith("ember-run: warning: input 1") and "is int64" in lines[1]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), np.tanh(x).sum(axis=-1) + idx,
                               rtol=1e-5)
    np.save(tmp_path / "big.npy", idx.astype(np.int64) - 2**31 - 1)
    rc, _, err = cli(run_tool, path, "-i", d / "x.npy", "-i", tmp_path / "big.npy")
    assert rc == 1 and "input 1" in err and "outside the range of the module's int32" in err
def test_progress_display(model_vmfb):
    _, progress = model_vmfb
    lines = progress.splitlines()
    stages = [ln.split()[1] for ln in lines]
    assert stages == ["trace", "optimize", "lower", "IREE", "write", "total"], progress
    assert all(ln.startswith("ember-compile: ") and ln.endswith(" s") for ln in lines)
    times = [float(ln.split()[-2]) for ln in lines]
    assert times[-1] >= max(times[:-1])          # the total covers every stage
    # Silent when asked, and below the threshold.
    err = io.StringIO()
    p = compile_tool.Progress(stream=err, mode="never")
    with p.stage("a"):
        pass
    p.finish()
    p = compile_tool.Progress(stream=err, mode="auto", threshold=1e9)
    with p.stage("b"):
        pass
    p.finish()
    assert err.getvalue() == ""


def test_describe(model_vmfb):
    path, _ = model_vmfb
    rc, out, err = cli(run_tool, path, "--describe")
    assert rc == 0, err
    assert "function: predict (exported as @main)" in out
    assert "targets: cpu" in out
    assert "  0: x: f32[8,16]\n  1: idx: i32[8]\n" in out
    assert "outputs (in order):\n  0: result: f32[8]\n" in out


def test_emit_stages(workdir):
    d, _, _ = workdir
    texts = {}
    for stage in ("ember", "optimized", "linalg"):
        rc, out, err = cli(compile_tool, f"{d}/model.py:pair", "--arg", "f32[4]", "--arg",
                           "f32[4]", "--emit", stage)
        assert rc == 0, err
        texts[stage] = out
    assert '"ember.mul"' in texts["ember"] and '"ember.sub"' in texts["ember"]
    assert '"ember.mul"' in texts["optimized"]
    assert '"ember.' not in texts["linalg"] and "linalg.generic" in texts["linalg"]
    assert "iree.reflection" in texts["linalg"] and "func.func @main(" in texts["linalg"]
    # A name for a size is a symbolic dimension: the module takes any size of it.
    rc, out, err = cli(compile_tool, f"{d}/model.py:pair", "--arg", "f32[n]", "--arg",
                       "f32[n]", "--emit", "linalg")
    assert rc == 0, err
    assert "func.func @main(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>)" in out, out
    rc, out, err = cli(compile_tool, f"{d}/model.py:pair", "--arg", "f32[4]", "--arg",
                       "f32[4]", "--emit", "linalg", "-o", d / "pair.mlir")
    assert rc == 0 and out == "" and (d / "pair.mlir").read_text() == texts["linalg"]


def test_compile_a_mlir_file(workdir):
    d, _, _ = workdir
    path = d / "scale.vmfb"
    rc, _, err = cli(compile_tool, d / "scale.mlir", "-o", path, "--progress", "never")
    assert rc == 0 and err == "", err
    loaded = ember.load(path)
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 3, np.float32)
    np.testing.assert_array_equal(loaded(a, b), 2 * a * b)
    assert loaded.signature.function == "scale"
    assert [x["name"] for x in loaded.signature.inputs] == ["arg0", "arg1"]
    rc, out, _ = cli(compile_tool, d / "scale.mlir", "--emit", "optimized")
    assert rc == 0 and out.count('"ember.mul"') == 1      # ember-simplify ran
    rc, from_stdin, err = cli(compile_tool, "-", "--emit", "optimized", stdin=EMBER_MLIR)
    # The same program; only the memory plan's peak_op names its file ("-" for stdin).
    same = re.compile(r'peak_op = "[^"]*"')
    assert rc == 0 and same.sub("", from_stdin) == same.sub("", out), err
    rc, _, err = cli(compile_tool, d / "missing.mlir", "--emit", "ember")
    assert rc == 1 and "cannot read input file" in err and "missing.mlir" in err


@pytest.mark.vulkan
@pytest.mark.skipif(not vulkan.devices(), reason="no Vulkan device (install lavapipe)")
def test_compile_for_cpu_and_vulkan(workdir):
    d, x, idx = workdir
    path = d / "both.vmfb"
    rc, _, err = cli(compile_tool, f"{d}/model.py:predict", "--arg", "f32[8,16]", "--arg",
                     "i32[8]", "--target", "cpu", "--target", "vulkan", "-o", path)
    assert rc == 0, err
    want = np.tanh(x).sum(axis=-1) + idx
    for backend in ("cpu", "vulkan"):
        out = d / f"y_{backend}.npy"
        rc, _, err = cli(run_tool, path, "-i", d / "x.npy", "-i", d / "idx.npy", "-o", out,
                         "--backend", backend)
        assert rc == 0, err
        np.testing.assert_allclose(np.load(out), want, rtol=1e-5)


def test_compile_errors(workdir, tmp_path):
    d, _, _ = workdir
    cases = [
        (["nope.py:f", "-o", tmp_path / "a.vmfb"], "'nope.py': no such file"),
        ([f"{d}/model.py", "-o", tmp_path / "a.vmfb"], "expected path/to/module.py:function"),
        ([f"{d}/model.py:missing", "--arg", "f32[2]", "-o", tmp_path / "a.vmfb"],
         "has no attribute 'missing'"),
        ([f"{d}/model.py:not_a_function", "-o", tmp_path / "a.vmfb"], "is a int, not a"),
        ([f"{d}/model.py:pair", "--arg", "f32[2", "--arg", "f32[2]", "-o", tmp_path / "a"],
         "--arg 'f32[2': expected DTYPE[DIMS]"),
        ([f"{d}/model.py:pair", "--arg", "c64[2]", "--arg", "f32[2]", "-o", tmp_path / "a"],
         "--arg 'c64[2]'"),
        ([f"{d}/model.py:pair", "--arg", "f32[2]", "--arg", "f32[2]"],
         "--emit vmfb writes a binary module: give -o"),
        ([f"{d}/model.py:pair", "--arg", "f32[2]", "--arg", "f32[3]", "--emit", "ember"],
         "shapes"),
        ([d / "scale.mlir", "--arg", "f32[4]", "--emit", "ember"], "--arg is for Python"),
        ([f"{d}/model.py:pair", "--target", "tpu"], "invalid choice: 'tpu'"),
    ]
    for args, message in cases:
        rc, out, err = cli(compile_tool, *args)
        assert rc == 1 and message in err, (args, err)
        assert "Traceback" not in err and out == ""
    bad = tmp_path / "bad.mlir"
    bad.write_text(EMBER_MLIR.replace("tensor<4xf32>) -> tensor<4xf32>\n  %1",
                                      "tensor<4xf32>) -> tensor<4xf32\n  %1"))
    rc, out, err = cli(compile_tool, bad, "--emit", "ember")
    assert rc == 1 and err.startswith(f"{bad}:2:") and "error:" in err, err
    two = tmp_path / "two.mlir"
    two.write_text(EMBER_MLIR + EMBER_MLIR.replace("@scale", "@other"))
    rc, out, err = cli(compile_tool, two, "--emit", "ember")
    assert rc == 1 and "exactly one public func.func" in err
    dynamic = tmp_path / "dynamic.mlir"       # had printed "RuntimeError: std::bad_cast"
    dynamic.write_text("func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
                       "  return %x : tensor<?xf32>\n}\n")
    rc, out, err = cli(compile_tool, dynamic, "-o", tmp_path / "d.vmfb")
    assert rc == 1 and "argument 0 has type tensor<?xf32>" in err, err


def test_run_errors(workdir, model_vmfb, tmp_path):
    d, x, idx = workdir
    path, _ = model_vmfb
    rc, _, err = cli(run_tool, path, "-i", d / "x.npy")
    assert rc == 1 and "takes 2 inputs (x, idx), got 1" in err
    np.save(tmp_path / "wrong.npy", x[:, :4])
    rc, _, err = cli(run_tool, path, "-i", tmp_path / "wrong.npy", "-i", d / "idx.npy")
    assert rc == 1 and "argument x must be f32[8,16], got f32[8,4]" in err
    assert "input 0" in err
    (tmp_path / "junk.npy").write_text("junk")
    rc, _, err = cli(run_tool, path, "-i", tmp_path / "junk.npy", "-i", d / "idx.npy")
    assert rc == 1 and "cannot read" in err and "junk.npy" in err
    rc, _, err = cli(run_tool, path, "-i", d / "x.npy", "-i", d / "idx.npy", "-o", "a.npy",
                     "-o", "b.npy")
    assert rc == 1 and "has 1 outputs" in err
    (tmp_path / "cut.vmfb").write_bytes(path.read_bytes()[:1000])
    rc, _, err = cli(run_tool, tmp_path / "cut.vmfb", "--describe")
    assert rc == 1 and "not a valid IREE module" in err and "Traceback" not in err
    with pytest.raises(ExportError):
        run_tool.main([str(tmp_path / "cut.vmfb"), "--describe", "--debug"])


def test_console_scripts_point_at_mains():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) >= {"ember-opt", "ember-compile", "ember-run"}
    import importlib
    for target in scripts.values():
        module, _, name = target.partition(":")
        assert callable(getattr(importlib.import_module(module), name))


def test_python_dash_m_entry_points(model_vmfb):
    path, _ = model_vmfb
    proc = subprocess.run([sys.executable, "-m", "ember.tools.run", str(path), "--describe"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0 and "function: predict" in proc.stdout, proc.stderr


def test_debug_shows_the_traceback(workdir):
    d, _, _ = workdir
    args = [f"{d}/model.py:broken", "--arg", "f32[2]", "--emit", "ember"]
    rc, out, err = cli(compile_tool, *args)
    assert rc == 1 and out == ""
    assert err.strip() == ("ember-compile: error: ValueError: boom in user code (run with "
                           "--debug for a traceback)")
    with pytest.raises(ValueError, match="boom in user code"):
        compile_tool.main([*args, "--debug"])


def test_compile_refuses_hostile_mlir_files(tmp_path):
    """ember-compile parses a .mlir file as ember-opt does: 10,000 nested attributes (20 KB)
    crashed MLIR's recursive parser (SIGSEGV), a byte that is not UTF-8 was a bare
    UnicodeDecodeError. Both are errors at their place; run in a subprocess, so a crash
    shows as a signal rather than killing the test run."""
    deep = tmp_path / "deep.mlir"
    deep.write_text("func.func @main() attributes {a = " + "[" * 10_000 + "]" * 10_000
                    + "} {\n  return\n}\n")
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(EMBER_MLIR.encode().replace(b"@scale", b"@sc\xe9le"))
    for path, start, message in ((deep, f"{deep}:1:", "brackets nested 501 deep"),
                                 (bad, f"{bad}:1:14: error:", "invalid UTF-8 byte 0xe9")):
        proc = subprocess.run([sys.executable, "-m", "ember.tools.compile", str(path),
                               "-o", str(tmp_path / "out.vmfb")],
                              capture_output=True, text=True, cwd=REPO, timeout=300)
        assert proc.returncode == 1, (proc.returncode, proc.stderr[-500:])
        assert proc.stderr.startswith(start) and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
