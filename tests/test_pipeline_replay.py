"""``ember-opt --pass-pipeline=<Lowered.pipeline(stage)>`` reproduces what ``jit`` ran, bit for
bit, whatever the configuration: the passes read only their options, and the pipeline string
carries every option ``jit`` chose from ``ember.config`` and the target."""

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.numpy as enp
from ember.tools import opt

X = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
Y = np.linspace(0, 2, 12, dtype=np.float32).reshape(4, 3)


def _mlp(x, y):
    return enp.tanh(x @ y + 1.0).sum(axis=-1)


def _loop(x, y):
    return lax.fori_loop(0, 3, lambda i, c: enp.sin(c) @ y @ y.T * 0.5, x)


def _batched(x, y):
    return ember.vmap(lambda r: enp.exp(r) @ y, in_axes=0)(x)


CASES = {
    "default": (_mlp, {}, {}),
    "function budget": (_mlp, {"memory_budget": "1KiB"}, {}),
    "config budget": (_mlp, {}, {"memory_budget": "2KiB"}),
    "no planner": (_loop, {}, {"memory_planner": False}),
    "no fusion": (_batched, {}, {"fusion": False}),
    "run ahead": (_loop, {}, {"loop_run_ahead": 2}),
    "vulkan": (_batched, {"backend": "vulkan"}, {}),
}


def _replay(capsys, tmp_path, text, pipeline):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    capsys.readouterr()
    assert opt.main([str(path), f"--pass-pipeline={pipeline}"]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("case", CASES)
def test_ember_opt_replays_jit(case, capsys, tmp_path, config_value):
    fun, jit_kwargs, settings = CASES[case]
    for name, value in settings.items():
        config_value(name, value)
    lowered = ember.jit(fun, **jit_kwargs).lower(X, Y)
    for prev, stage in (("ember", "optimized"), ("optimized", "linalg")):
        pipeline = lowered.pipeline(stage)
        got = _replay(capsys, tmp_path, lowered.as_text(prev, debug_info=True), pipeline)
        assert got == lowered.as_text(stage), (stage, pipeline)


def test_pipelines_differ_with_the_configuration(config_value):
    """The string names what changed: a pass left out, an option set."""
    def pipe(stage, **kwargs):
        return ember.jit(_mlp, **kwargs).lower(X, Y).pipeline(stage)

    plain = pipe("optimized")
    assert "ember-fuse" in plain and "ember-plan-memory," not in plain
    config_value("fusion", False)
    config_value("memory_planner", False)
    config_value("memory_budget", "3KiB")
    changed = pipe("optimized")
    assert "ember-fuse" not in changed
    assert "ember-plan-memory{enabled=false default-budget=3072}" in changed
    assert "ember-to-linalg{run-ahead=32}" in pipe("linalg")
    assert "ember-to-linalg{dispatch-regions=false float64=false exact-division=false " \
        "outer-reductions=false exact-rounding=false run-ahead=0}" in pipe("linalg",
                                                                     backend="vulkan")
    with pytest.raises(ValueError, match="has no pipeline"):
        ember.jit(_mlp).lower(X, Y).pipeline("ember")


def test_passes_read_no_environment():
    """No module of ember.passes reads the environment or ember.config, except the one
    pipeline builder."""
    import pathlib
    root = pathlib.Path(ember.__file__).parent / "passes"
    offenders = []
    for path in sorted(root.glob("*.py")):
        if path.name == "pipelines.py":
            continue
        text = path.read_text()
        for needle in ("os.environ", "getenv", "from ember.config import config",
                       "config.memory", "config.fusion"):
            if needle in text:
                offenders.append(f"{path.name}: {needle}")
    assert not offenders, offenders
