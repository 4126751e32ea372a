"""The README's example runs as written, and its values are NumPy's."""

import pathlib
import re

import numpy as np
import pytest

pytestmark = pytest.mark.fast
README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    (code,) = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(code, str(README), "exec"), scope)
    x, (w, b) = scope["x"], scope["params"]
    np.testing.assert_allclose(np.asarray(scope["y"]), np.tanh(x @ w + b).sum(-1), rtol=1e-6)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(scope["batched"](scope["params"], xs)),
                               np.tanh(xs @ w + b).sum(-1), rtol=1e-6)
    assert (tmp_path / "predict.vmfb").stat().st_size > 0
    assert "ember." in capsys.readouterr().out
