# lit configuration of ember's FileCheck tests: `lit tests/mlir` (tests/test_mlir_files.py
# runs each file through it under pytest). ember-opt and filecheck are the console scripts
# installed beside the Python that runs lit.
import os
import sys

import lit.formats

config.name = "ember"  # noqa: F821 (lit defines config)
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["lit.cfg.py"]  # noqa: F821
_repo = os.path.dirname(os.path.dirname(config.test_source_root))  # noqa: F821
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    [os.path.dirname(sys.executable), os.environ.get("PATH", "")])
config.environment["PYTHONPATH"] = os.pathsep.join(  # noqa: F821
    p for p in [_repo, os.environ.get("PYTHONPATH")] if p)
# Passes read no environment, but the tools' own options (the cache) may: keep the caller's.
for name in ("HOME", "EMBER_CACHE_DIR", "XDG_CACHE_HOME", "TMPDIR"):
    if name in os.environ:
        config.environment[name] = os.environ[name]  # noqa: F821
