"""Run the ``// RUN:`` lines of every ``tests/mlir/*.mlir`` file, as lit would.

Each RUN line runs in bash with ``set -o pipefail``. ``%s`` is the file, ``%S`` its folder and
``%t`` a scratch path. ``ember-opt`` is ``python -m ember.tools.opt`` (no console script on PATH
needed) and ``not CMD`` succeeds when CMD fails. A line ending in ``\\`` continues on the next
RUN line. ``// XFAIL: reason`` marks a file expected to fail (strictly: an unexpected pass is
reported, so the mark is removed once the bug is fixed).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MLIR_DIR = Path(__file__).parent / "mlir"
FILES = sorted(MLIR_DIR.glob("*.mlir"))
REPO = Path(__file__).resolve().parent.parent

_RUN = re.compile(r"^\s*//\s*RUN:(.*)$")
_XFAIL = re.compile(r"^\s*//\s*XFAIL:(.*)$")


def run_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) of each RUN command, continuations joined."""
    out, pending, start = [], "", 0
    for n, line in enumerate(text.splitlines(), start=1):
        m = _RUN.match(line)
        if m is None:
            continue
        part = m.group(1).strip()
        if not pending:
            start = n
        if part.endswith("\\"):
            pending += part[:-1] + " "
            continue
        out.append((start, pending + part))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def _filecheck() -> str:
    beside = Path(sys.executable).parent / "filecheck"
    if beside.exists():
        return str(beside)
    found = shutil.which("filecheck")
    if found is None:
        pytest.skip("the filecheck command is not installed (pip install filecheck)")
    return found


def _prelude() -> str:
    python = shlex.quote(sys.executable)
    return "\n".join([
        "set -o pipefail",
        f'ember-opt() {{ {python} -m ember.tools.opt "$@"; }}',
        f'filecheck() {{ {shlex.quote(_filecheck())} "$@"; }}',
        'not() { if "$@"; then return 1; else return 0; fi; }',
        "",
    ])


def substitute(command: str, path: Path, tmp: Path) -> str:
    subs = {"%s": shlex.quote(str(path)), "%S": shlex.quote(str(path.parent)),
            "%t": shlex.quote(str(tmp / path.stem)), "%%": "%"}
    return re.sub(r"%[sSt%]", lambda m: subs[m.group(0)], command)


def test_every_file_has_run_lines():
    assert FILES, f"no .mlir files in {MLIR_DIR}"
    for path in FILES:
        assert run_lines(path.read_text()), f"{path.name} has no RUN line"


def test_run_line_parsing():
    text = "// RUN: a %s \\\n// RUN:   | b\n// x\n  // RUN: c\n"
    assert run_lines(text) == [(1, "a %s  | b"), (4, "c")]
    assert substitute("x %s %S %t %%s", Path("/d/f.mlir"), Path("/tmp")) == \
        "x /d/f.mlir /d /tmp/f %s"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_mlir_file(path: Path, tmp_path: Path):
    text = path.read_text()
    xfail = [m.group(1).strip() for m in map(_XFAIL.match, text.splitlines()) if m]
    prelude = _prelude()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    failures = []
    for line, command in run_lines(text):
        cmd = substitute(command, path, tmp_path)
        proc = subprocess.run(["bash", "-c", prelude + cmd], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            failures.append(f"{path.name}:{line}: RUN: {cmd}\nexit status {proc.returncode}\n"
                            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
    if xfail:
        if failures:
            pytest.xfail(f"XFAIL: {'; '.join(xfail)}")
        pytest.fail(f"{path.name} is marked XFAIL ({'; '.join(xfail)}) but passed: "
                    f"remove the XFAIL line")
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)
