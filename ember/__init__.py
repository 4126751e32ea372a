"""ember: NumPy-style Python, traced into an MLIR dialect and compiled by IREE.

Example:
    >>> import numpy as np, ember, ember.numpy as enp
    >>> f = ember.jit(lambda x: enp.tanh(x).sum())
    >>> float(f(np.ones(4, np.float32)))
    3.0463766

Without ``iree-base-compiler`` installed only the runtime side imports: ``ember.load`` (run
an exported ``.vmfb``), ``Array``, ``dtypes``, ``errors``, ``tree``, ``tree_util``, ``config``; the
other attributes raise ImportError naming the missing package.
"""

from ember import _quiet, dtypes, errors, tree, tree_util
from ember.backends import default_backend, devices
from ember.backends.array import Array, device_put
from ember.config import config
from ember.core import ShapedArray, ShapeDtypeStruct, symbolic_shape
from ember.exported import load

_quiet.quiet_runtime_binding()      # (no exit-time leak report from IREE's runtime binding)

__version__ = "0.1.0"

try:
    import iree.compiler  # noqa: F401
except ImportError as _e:
    _COMPILER_MISSING = _e
else:
    _COMPILER_MISSING = None

if _COMPILER_MISSING is None:
    from ember import sharding
    from ember.exported.build import Exported, export
    from ember.frontend import array_methods as _array_methods
    from ember.frontend.api import Compiled, Lowered, Traced, clear_caches, eval_shape, jit
    from ember.frontend.autodiff import (
        grad,
        hessian,
        jacfwd,
        jacrev,
        jvp,
        linearize,
        value_and_grad,
        vjp,
    )
    from ember.frontend.checkpoint import checkpoint, checkpoint_policies, remat
    from ember.frontend.custom_derivatives import custom_jvp, custom_vjp
    from ember.frontend.sharding import device_put, pmap, shard_map
    from ember.frontend.tracing import Tracer
    from ember.frontend.vmap import vmap

    _array_methods.install(Array)
    _array_methods.install(Tracer)

    # ember.numpy installs the operators and NumPy's methods (ember/numpy/_array_methods.py)
    # when it is imported; the modules after it build on them.
    from ember import ad_checkpoint, lax, nn, numpy, random, scipy  # noqa: E402
    from ember.lax import linalg as _lax_linalg  # noqa: E402, F401  (ember.lax.linalg)
    from ember.scipy import special  # noqa: E402, F401

    numpy.ndarray = Array
else:
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(
            f"ember.{name} needs the IREE compiler, which is not installed here "
            f"({_COMPILER_MISSING}); install it with `pip install iree-base-compiler==3.13.*`. "
            "Without it, ember.load runs exported .vmfb modules.")

__all__ = ["Array", "Compiled", "Exported", "Lowered", "ShapeDtypeStruct", "ShapedArray",
           "Traced", "ad_checkpoint", "checkpoint", "checkpoint_policies", "clear_caches",
           "config", "custom_jvp", "custom_vjp",
           "default_backend", "device_put", "devices", "dtypes", "errors", "eval_shape",
           "export", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax", "linearize",
           "load", "nn", "numpy", "pmap", "random", "remat", "scipy", "shard_map", "sharding",
           "symbolic_shape",
           "tree", "tree_util",
           "value_and_grad", "vjp", "vmap"]

# Several processes: ember.distributed joins those an MPI launcher started (mpi4py is imported
# by its initialize, not here, so `import ember` does not need it). Imported as a submodule
# (which binds ember.distributed): without the compiler, `from ember import` would ask the
# module's __getattr__ first.
from ember.distributed import process_count, process_index  # noqa: E402

__all__ += ["distributed", "process_count", "process_index"]
