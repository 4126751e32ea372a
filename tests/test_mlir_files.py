"""Every ``tests/mlir/*.mlir`` file through LLVM's lit (``tests/mlir/lit.cfg.py``), each file a
test: its ``// RUN:`` lines run ``ember-opt`` and ``filecheck`` in lit's own shell, as MLIR's
and IREE's tests do. ``lit tests/mlir`` runs the same outside pytest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MLIR_DIR = Path(__file__).parent / "mlir"
FILES = sorted(MLIR_DIR.glob("*.mlir"))


def test_every_file_has_run_lines():
    assert FILES, f"no .mlir files in {MLIR_DIR}"
    for path in FILES:
        assert "// RUN:" in path.read_text(), f"{path.name} has no RUN line"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_mlir_file(path: Path):
    lit = [sys.executable, "-c", "from lit.main import main; main()"]
    proc = subprocess.run([*lit, "-v", str(path)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"lit failed on {path.name}:\n{proc.stdout[-20000:]}\n{proc.stderr}",
                    pytrace=False)
    assert "Passed: 1" in proc.stdout or "Expectedly Failed: 1" in proc.stdout, proc.stdout
