"""The ``ember-opt`` command line, run as ``python -m ember.tools.opt`` in a subprocess."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ember.passes import PASSES
from ember.tools import opt

REPO = Path(__file__).resolve().parent.parent

ADD = """\
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.mul"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""


def ember_opt(*args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ember.tools.opt", *map(str, args)],
                          input=stdin, capture_output=True, text=True, cwd=REPO, timeout=120)


def opt_main(*args, stdin: str = "") -> subprocess.CompletedProcess:
    """``ember-opt`` in this process (cheaper; for the cases beyond the basic ones)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = opt.main([str(a) for a in args])
    finally:
        sys.stdin = old_stdin
    return subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue())


def no_traceback(proc):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout


@pytest.fixture
def add_file(tmp_path):
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    return path


def test_file_in_stdout_out_and_flags_in_order(add_file):
    proc = ember_opt(add_file, "--ember-simplify")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('"ember.add"') == 1          # the duplicate add is gone
    assert '"ember.mul"' in proc.stdout
    proc = opt_main(add_file, "--ember-simplify", "--ember-to-linalg", "--cse")
    assert proc.returncode == 0, proc.stderr
    assert "ember." not in proc.stdout
    assert proc.stdout.count("arith.addf") == 1 and proc.stdout.count("arith.mulf") == 1


def test_output_file(add_file, tmp_path):
    out = tmp_path / "out.mlir"
    proc = ember_opt(add_file, "--ember-to-linalg", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    text = out.read_text()
    assert "linalg.generic" in text and "ember." not in text
    # The written module reads back.
    again = opt_main(out, "--cse")
    assert again.returncode == 0 and "linalg.generic" in again.stdout


def test_stdin_input():
    for run in (ember_opt, opt_main):     # with "-", and with no path at all
        args = ["-"] if run is ember_opt else []
        proc = run(*args, "--ember-simplify", stdin=ADD)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count('"ember.add"') == 1
    bad = ('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
           '  %0 = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>\n'
           '  return %a : tensor<4xf32>\n}\n')
    proc = ember_opt("--ember-verify", stdin=bad)
    assert proc.returncode == 1
    assert proc.stderr.startswith("<stdin>:2:8: error: 'ember.exp' has result types f16[4]")
    no_traceback(proc)


def test_split_input_file(tmp_path):
    chunks = [ADD, ADD.replace("@f", "@g"), ADD.replace("@f", "@h")]
    path = tmp_path / "split.mlir"
    path.write_text("// -----\n".join(chunks))
    proc = ember_opt(path, "--split-input-file", "--ember-simplify")
    assert proc.returncode == 0, proc.stderr
    parts = proc.stdout.split("// -----\n")
    assert len(parts) == 3
    for name, part in zip("fgh", parts):
        assert f"func.func @{name}(" in part and part.count("func.func") == 1
        assert part.count('"ember.add"') == 1
    # Without the flag the file is one module (the markers are comments).
    whole = opt_main(path, "--ember-simplify")
    assert whole.returncode == 0 and "// -----" not in whole.stdout
    assert whole.stdout.count("func.func") == 3
    # Line numbers stay those of the file: an error in the third chunk (line 2 of it).
    bad = ADD.replace("@f", "@h").replace('"ember.mul"', '"ember.nope"')
    path.write_text("// -----\n".join(chunks[:2] + [bad]))
    proc = ember_opt(path, "--split-input-file", "--ember-verify")
    assert proc.returncode == 1
    line = 2 * (ADD.count("\n") + 1) + 4
    assert proc.stderr.strip() == (f"{path}:{line}:8: error: 'ember.nope' is not an ember op "
                                   f"(known: {len(__import__('ember').dialects.OPS)} ops, "
                                   f"e.g. ember.add)")
    # The two good chunks are still printed.
    assert proc.stdout.count("func.func") == 2


def test_list_passes():
    proc = ember_opt("--list-passes")
    assert proc.returncode == 0, proc.stderr
    assert len(PASSES) >= 3
    for name, cls in PASSES.items():
        assert f"  {name}\n" in proc.stdout
        assert cls.summary in proc.stdout
        for field in cls.options():
            assert f"{field.name.replace('_', '-')}=<" in proc.stdout
    assert "fold-limit=<int> (default: 1024)" in proc.stdout


def test_unknown_pass_is_an_error(add_file):
    proc = ember_opt(add_file, "--ember-simplfy")
    assert proc.returncode == 1
    assert "unknown option or pass '--ember-simplfy'" in proc.stderr
    assert proc.stdout == ""
    no_traceback(proc)
    pipeline = "builtin.module(ember-verify,no-such-pass)"
    proc = ember_opt(add_file, f"--pass-pipeline={pipeline}")
    assert proc.returncode == 1
    col = pipeline.index("no-such-pass") + 1
    assert proc.stderr.startswith(f"<pass-pipeline>:1:{col}: error: unknown pass 'no-such-pass'")
    no_traceback(proc)


def test_bad_pass_options_and_nesting(add_file):
    proc = opt_main(add_file, "--pass-pipeline=builtin.module(ember-simplify{fold-limit=x})")
    assert proc.returncode == 1 and "fold_limit" in proc.stderr and "got 'x'" in proc.stderr
    for bad in ("ember-fuse{max-ops=-5}", "ember-plan-memory{max-recompute=nan}"):
        proc = opt_main(add_file, f"--pass-pipeline=builtin.module({bad})")
        assert proc.returncode == 1 and "needs a non-negative" in proc.stderr, bad
    proc = opt_main(add_file, "--pass-pipeline=builtin.module(ember-simplify{limit=3})")
    assert proc.returncode == 1 and "has no option 'limit'" in proc.stderr
    proc = opt_main(add_file, "--pass-pipeline=builtin.module(func.func(ember-simplify))")
    assert proc.returncode == 1 and "runs on the whole module" in proc.stderr
    proc = opt_main(add_file, "--canonicalize=no-such-option=1")
    assert proc.returncode == 1 and "no such option" in proc.stderr


def test_pass_options_as_flag_and_in_pipeline(tmp_path):
    path = tmp_path / "fold.mlir"
    path.write_text("""\
func.func @f() -> tensor<8xi32> {
  %a = "ember.constant"() {value = dense<1> : tensor<8xi32>} : () -> tensor<8xi32>
  %0 = "ember.add"(%a, %a) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
""")
    folded = opt_main(path, "--ember-simplify")
    assert folded.returncode == 0 and '"ember.add"' not in folded.stdout
    assert "dense<2> : tensor<8xi32>" in folded.stdout
    for args in (["--ember-simplify=fold-limit=4"], ["--ember-simplify={fold-limit=4}"],
                 ["--pass-pipeline=builtin.module(ember-simplify{fold-limit=4})"]):
        proc = opt_main(path, *args)
        assert proc.returncode == 0, proc.stderr
        assert '"ember.add"' in proc.stdout, args


def test_parse_error_has_file_line_col(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
                    '  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32\n'
                    '  return %0 : tensor<4xf32>\n}\n')
    proc = ember_opt(path, "--ember-verify")
    assert proc.returncode == 1
    col = len('  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32') + 1   # line's end
    assert proc.stderr.splitlines()[0] == f"{path}:2:{col}: error: expected '>' in tensor type"
    assert proc.stdout == ""
    no_traceback(proc)
    # An undefined value: the error points at its use.
    path.write_text('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
                    '  %0 = "ember.neg"(%b) : (tensor<4xf32>) -> tensor<4xf32>\n'
                    '  return %0 : tensor<4xf32>\n}\n')
    proc = opt_main(path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{path}:2:20: error: use of undeclared SSA value name")


def test_missing_input_file(tmp_path):
    proc = opt_main(tmp_path / "nope.mlir")
    assert proc.returncode == 1 and "cannot read input file" in proc.stderr


VERIFY = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{EXPECTED}}
  %0 = "ember.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_verify_diagnostics(tmp_path):
    path = tmp_path / "v.mlir"
    path.write_text(VERIFY.replace("EXPECTED", "expects 2 operands, got 1"))
    proc = ember_opt(path, "--ember-verify", "--verify-diagnostics")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # A wrong message: the expectation is unmet and the real error unexpected.
    path.write_text(VERIFY.replace("EXPECTED", "expects 3 operands"))
    proc = ember_opt(path, "--ember-verify", "--verify-diagnostics")
    assert proc.returncode == 1
    assert f"{path}:3:8: error: unexpected error: 'ember.add' op expects 2 operands" \
        in proc.stderr
    assert f"{path}:2:6: error: expected error \"expects 3 operands\" was not produced" \
        in proc.stderr
    no_traceback(proc)
    # Right message, wrong line.
    path.write_text(VERIFY.replace("EXPECTED", "expects 2 operands").replace("@+1", "@+2"))
    proc = opt_main(path, "--ember-verify", "--verify-diagnostics")
    assert proc.returncode == 1
    # An expected error that nothing produces.
    ok = ADD.replace("return", "// expected-error @+1 {{never}}\n  return")
    path.write_text(ok)
    proc = opt_main(path, "--ember-verify", "--verify-diagnostics")
    assert proc.returncode == 1 and 'expected error "never" was not produced' in proc.stderr


def test_print_flags(add_file):
    proc = opt_main(add_file, "--mlir-print-op-generic")
    assert proc.returncode == 0
    assert '"func.func"()' in proc.stdout and '"func.return"' in proc.stdout
    proc = opt_main(add_file, "--mlir-print-debuginfo")
    assert proc.returncode == 0
    assert f'loc("{add_file}":2:8)' in proc.stdout     # the first ember.add


def test_usage_errors(add_file):
    proc = opt_main(add_file, add_file)
    assert proc.returncode == 1 and "expected one input file" in proc.stderr
    proc = opt_main(add_file, "--pass-pipeline=builtin.module(cse)", "--cse")
    assert proc.returncode == 1 and "not both" in proc.stderr
    proc = opt_main(add_file, "-o")
    assert proc.returncode == 1 and "needs a value" in proc.stderr
    proc = opt_main("--help")
    assert proc.returncode == 0 and "--pass-pipeline" in proc.stdout


@pytest.mark.skipif(shutil.which("ember-opt") is None, reason="console script not installed")
def test_console_script(add_file):
    proc = subprocess.run(["ember-opt", str(add_file), "--ember-simplify"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('"ember.add"') == 1


# --- in-process pieces --------------------------------------------------------------------

def test_parse_args_order_and_forms():
    o = opt.parse_args(["-cse", "x.mlir", "--ember-simplify=fold-limit=4", "-o", "y",
                        "--canonicalize", "--split-input-file"])
    assert o.input == "x.mlir" and o.output == "y" and o.split_input_file
    assert o.pass_flags == ["-cse", "--ember-simplify=fold-limit=4", "--canonicalize"]
    assert opt.parse_args([]).input == "-"
    assert opt.parse_args(["--", "-weird.mlir"]).input == "-weird.mlir"


def test_split_chunks_keep_line_numbers():
    text = "a\n// -----\nb\nc\n  // ----- trailing\nd"
    chunks = opt.split_chunks(text, True)
    assert [c.split("\n") for c in chunks] == [["a"], ["", "", "b", "c"],
                                               ["", "", "", "", "", "d"]]
    assert opt.split_chunks(text, False) == [text]


def test_wrap_in_module_keeps_positions():
    text = "#m = affine_map<(d0) -> (d0)>\n// c\nfunc.func @a()\nfunc.func @b()"
    wrapped, shifted = opt._wrap_in_module(text)
    assert wrapped.split("\n") == ["#m = affine_map<(d0) -> (d0)>", "module {",
                                    "func.func @a()", "func.func @b()", "}"]
    assert shifted is None
    wrapped, shifted = opt._wrap_in_module("func.func @a()\nfunc.func @b()")
    assert wrapped == "module {func.func @a()\nfunc.func @b()\n}" and shifted == 1


def test_columns_right_without_module_on_first_line():
    # Two top-level functions, the first on line 1: wrapped in a module by ember-opt.
    text = ('func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> { %0 = "ember.nope"(%x) : '
            '(tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32> }\n'
            'func.func @b() { return }\n')
    proc = opt_main("--ember-verify", stdin=text)
    assert proc.returncode == 1
    col = text.index('"ember.nope"') + 1    # an op's location is its name's
    assert proc.stderr.startswith(f"<stdin>:1:{col}: error: 'ember.nope' is not an ember op")
    ok = opt_main("--ember-verify", stdin=text.replace("ember.nope", "ember.neg"))
    assert ok.returncode == 0 and "func.func @b()" in ok.stdout


# --- instrumentation flags ----------------------------------------------------------------

def _dumps(stderr: str) -> list[tuple[str, str, str]]:
    """(when, pass, module text) of each IR dump in ``stderr``."""
    import re
    parts = re.split(r"^// -----// IR Dump (Before|After) (.*?) //----- //\n", stderr,
                     flags=re.M)
    return [(parts[i], parts[i + 1], parts[i + 2]) for i in range(1, len(parts), 3)]


def test_print_ir_after_all(add_file):
    proc = opt_main(add_file, "--ember-simplify", "--ember-to-linalg", "--cse",
                    "--mlir-print-ir-after-all")
    assert proc.returncode == 0, proc.stderr
    dumps = _dumps(proc.stderr)
    assert [(w, p) for w, p, _ in dumps] == [("After", "ember-simplify"),
                                              ("After", "ember-to-linalg"), ("After", "cse")]
    # Each dump is the IR at that point: one add after simplify, no ember op after lowering.
    assert dumps[0][2].count('"ember.add"') == 1 and "linalg" not in dumps[0][2]
    assert "ember." not in dumps[1][2] and dumps[1][2].count("tensor.empty") == 2
    assert dumps[2][2].count("tensor.empty") == 1           # cse merged the two
    assert dumps[2][2].strip() == proc.stdout.strip()       # the last dump is the output
    assert "IR Dump" not in proc.stdout


def test_print_ir_before_and_after_named(add_file):
    proc = opt_main(add_file, "--pass-pipeline=builtin.module(ember-simplify,ember-to-linalg,"
                    "func.func(cse),canonicalize)", "--mlir-print-ir-before=ember-to-linalg,cse",
                    "--mlir-print-ir-after", "canonicalize")
    assert proc.returncode == 0, proc.stderr
    dumps = _dumps(proc.stderr)
    assert [(w, p) for w, p, _ in dumps] == [("Before", "ember-to-linalg"),
                                              ("Before", "func.func(cse)"),
                                              ("After", "canonicalize")]
    assert '"ember.mul"' in dumps[0][2] and "ember." not in dumps[1][2]
    # Not a pass of this run: nothing printed.
    proc = opt_main(add_file, "--ember-simplify", "--mlir-print-ir-before=cse")
    assert proc.returncode == 0 and proc.stderr == ""
    proc = opt_main(add_file, "--ember-simplify", "--mlir-print-ir-before=")
    assert proc.returncode == 1 and "needs pass names" in proc.stderr


def test_timing(add_file):
    proc = opt_main(add_file, "--ember-simplify", "--ember-to-linalg", "--cse", "--mlir-timing")
    assert proc.returncode == 0, proc.stderr
    assert "execution time report" in proc.stderr
    rows = {}
    import re
    for m in re.finditer(r"^\s+([\d.]+) \(\s*([\d.]+)%\)  (\S+)$", proc.stderr, re.M):
        rows[m.group(3)] = (float(m.group(1)), float(m.group(2)))
    assert list(rows) == ["Parse", "ember-simplify", "ember-to-linalg", "cse", "Output",
                          "Total"]
    total = sum(t for name, (t, _) in rows.items() if name != "Total")
    assert abs(total - rows["Total"][0]) < 1e-3 * len(rows)
    assert abs(sum(p for name, (_, p) in rows.items() if name != "Total") - 100) < 0.5
    assert proc.stdout.count("linalg.generic") == 2


def test_debug_shows_tracebacks_of_internal_errors(add_file, monkeypatch):
    from ember.passes.registry import Pass

    class Broken(Pass):
        name = "ember-broken-for-test"
        summary = "raises"

        def run(self, module):
            raise RuntimeError("boom")

    monkeypatch.setitem(PASSES, Broken.name, Broken)
    proc = opt_main(add_file, f"--{Broken.name}")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"{add_file}: error: pass '{Broken.name}' failed: "
                                   "RuntimeError: boom (run with --debug for a traceback)")
    with pytest.raises(RuntimeError, match="boom"):
        opt_main(add_file, f"--{Broken.name}", "--debug")
    # --debug changes nothing for errors in the input: they stay diagnostics.
    proc = opt_main("--ember-verify", "--debug", stdin="func.func @f( {")
    assert proc.returncode == 1 and proc.stderr.startswith("<stdin>:1:")


def test_malformed_pipelines_point_at_the_column(add_file):
    cases = [("builtin.module(ember-verify", "unbalanced '(' or '{'"),
             ("builtin.module(ember-verify,,cse)", "empty pass name"),
             ("builtin.module(ember-simplify{fold-limit=4)", "unbalanced"),
             ("builtin.module(cse))", "unbalanced ')'")]
    for pipeline, message in cases:
        proc = opt_main(add_file, f"--pass-pipeline={pipeline}")
        assert proc.returncode == 1 and proc.stdout == "", pipeline
        first = proc.stderr.splitlines()[0]
        assert first.startswith("<pass-pipeline>:1:") and message in first, first
        col = int(first.split(":")[2])
        assert 1 <= col <= len(pipeline) + 1
    proc = opt_main(add_file, "--pass-pipeline=builtin.module(ember-verify,,cse)")
    assert proc.stderr.startswith(f"<pass-pipeline>:1:{len('builtin.module(ember-verify,') + 1}:")


def test_every_pass_has_a_filecheck_file():
    """Each registered ember pass runs, piped into filecheck, in some ``tests/mlir`` file."""
    import re

    from test_mlir_files import FILES

    checked = set()
    for path in FILES:
        runs = re.findall(r"^\s*//\s*RUN:(.*)$", path.read_text(), re.M)
        for command in re.sub(r"\\\n", " ", "\n".join(runs)).splitlines():
            if "filecheck" not in command and "--verify-diagnostics" not in command:
                continue
            checked |= set(re.findall(r"--(ember-[\w-]+)", command))
            for pipeline in re.findall(r"--pass-pipeline='([^']*)'", command):
                checked |= set(re.findall(r"ember-[\w-]+", pipeline))
    assert set(PASSES) <= checked, f"no FileCheck test runs {sorted(set(PASSES) - checked)}"


# --- hostile input: deep nesting, bytes that are not UTF-8 ---------------------------------

def _deep(kind: str, n: int) -> str:
    if kind == "attribute":
        return ("func.func @f() attributes {a = " + "[" * n + "]" * n
                + "} {\n  return\n}\n")
    if kind == "modules":
        return "module {" * n + "}" * n + "\n"
    return "func.func @f() attributes {a = " + "{b = " * n + "1" + "}" * n + "} {\n  return\n}\n"


@pytest.mark.parametrize("kind", ["attribute", "modules", "dict"])
def test_deep_nesting_is_an_error_not_a_crash(tmp_path, kind):
    """10,000 nested attributes or modules (20-80 KB) overflowed the stack of MLIR's
    recursive parser: the process died with SIGSEGV. Now an error at the place."""
    text = _deep(kind, 10_000)
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    for proc, name in ((ember_opt(path, "--ember-verify"), str(path)),
                       (ember_opt("-", stdin=text), "<stdin>")):
        assert proc.returncode == 1, (proc.returncode, proc.stderr[-500:])
        no_traceback(proc)
        first = proc.stderr.splitlines()[0]
        assert first.startswith(f"{name}:1:") and "nested 501 deep" in first, first
        col = int(first[len(name) + 3:].split(":")[0])
        before = text[:col]
        depth = sum(map(before.count, "[{(<")) - sum(map(before.count, "]})>"))
        assert text[col - 1] in "[{" and depth == 501, (col, depth)


def test_nesting_check_points_at_the_first_level_too_deep():
    """The column is the 501st opener; brackets inside strings and comments do not count,
    nor do '->' and '>='."""
    text = ('"((((" // ((((\n' + "-> >= " + "(" * 501)
    with pytest.raises(opt.Failure) as info:
        opt.check_nesting(text, "in.mlir")
    (d,) = info.value.diagnostics
    assert (d.file, d.line, d.col) == ("in.mlir", 2, len("-> >= ") + 501)
    opt.check_nesting('"' + "[" * 1000 + '"\n// ' + "{" * 1000, "in.mlir")   # no error


def test_nesting_a_real_program_may_use_is_accepted(tmp_path):
    """400 levels (ten times what real programs nest) still parse and print: the limit
    rejects only what would crash."""
    text = _deep("attribute", 400)
    proc = opt_main("-", "--ember-verify", stdin=text)
    assert proc.returncode == 0, proc.stderr
    assert "[" * 400 + "]" * 400 in proc.stdout


def test_deeply_nested_pass_pipeline_is_an_error_not_a_crash():
    """MLIR's pipeline parser recurses per nested pipeline: 50,000 levels crashed it."""
    n = 50_000
    code = ("import sys; from ember.tools import opt; "
            f"sys.exit(opt.main(['-', '--pass-pipeline=builtin.module(' + 'func.func(' * {n}"
            f" + 'cse' + ')' * {n} + ')']))")
    proc = subprocess.run([sys.executable, "-c", code], input="module {}\n",
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-500:])
    no_traceback(proc)
    assert proc.stderr.startswith("<pass-pipeline>:1:") and "nested 501 deep" in proc.stderr


def test_invalid_utf8_names_the_line_and_byte(tmp_path):
    """One byte that is not UTF-8, on stdin or in a file, is an error at its line, column
    and byte offset (it was an "internal error: TypeError")."""
    data = b"module {\n  // caf\xc3\xa9 \xff\n}\n"      # the bad byte is in column 11
    path = tmp_path / "bad.mlir"
    path.write_bytes(data)
    offset = data.index(b"\xff")
    for args, name, stdin in (([str(path)], str(path), None), (["-"], "<stdin>", data)):
        proc = subprocess.run([sys.executable, "-m", "ember.tools.opt", *args], input=stdin,
                              capture_output=True, timeout=120, cwd=REPO)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and "internal error" not in err, err
        assert err.startswith(f"{name}:2:11: error: invalid UTF-8 byte 0xff at byte offset "
                              f"{offset}"), err
    proc = opt_main("-", stdin="module {}\n// \udcff\n")   # a text stdin (surrogateescape)
    assert proc.returncode == 1
    assert proc.stderr.startswith("<stdin>:2:4: error: invalid UTF-8 byte 0xff"), proc.stderr


def test_tools_without_the_compiler_say_what_to_install(tmp_path, add_file):
    """Without iree-base-compiler, ember-opt printed 'internal error: ModuleNotFoundError'
    and ember-compile a bare ModuleNotFoundError/ImportError. Simulated by a sitecustomize
    that makes importing iree.compiler fail, as it does where the package is missing."""
    import os

    (tmp_path / "sitecustomize.py").write_text(
        "import sys\nsys.modules['iree.compiler'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), str(REPO), os.environ.get("PYTHONPATH", "")])}
    (tmp_path / "model.py").write_text("def f(x):\n    return x * 2\n")
    runs = [("opt", [str(add_file)]), ("opt", ["-", "--cse"]),
            ("compile", [str(add_file), "-o", str(tmp_path / "a.vmfb")]),
            ("compile", [f"{tmp_path}/model.py:f", "--arg", "f32[4]", "-o",
                         str(tmp_path / "b.vmfb")])]
    for tool, args in runs:
        proc = subprocess.run([sys.executable, "-m", f"ember.tools.{tool}", *args],
                              input="module {}\n", capture_output=True, text=True,
                              timeout=120, cwd=REPO, env=env)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith(f"ember-{tool}: error: ember-{tool} needs the IREE "
                                      "compiler, which is not installed here"), proc.stderr
        assert "`pip install iree-base-compiler==3.13.*`" in proc.stderr
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
