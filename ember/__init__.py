"""ember: NumPy-style Python, traced into an MLIR dialect and compiled by IREE.

Example:
    >>> import numpy as np, ember, ember.numpy as enp
    >>> f = ember.jit(lambda x: enp.tanh(x).sum())
    >>> float(f(np.ones(4, np.float32)))
    3.0463766
"""

from ember import _quiet  # noqa: F401, I001  (first: silences exit-time leak reports)
from ember import dtypes, errors, tree_util
from ember.backends import default_backend, devices
from ember.backends.array import Array, device_put
from ember.config import config
from ember.core import ShapedArray, ShapeDtypeStruct
from ember.frontend import array_methods as _array_methods
from ember.frontend.api import Compiled, Lowered, clear_caches, jit
from ember.frontend.tracing import Tracer
from ember.frontend.vmap import vmap

_array_methods.install(Array)
_array_methods.install(Tracer)

# After the methods are installed: these modules build on them.
from ember import lax, nn, numpy, random, scipy  # noqa: E402
from ember.scipy import special  # noqa: E402, F401

numpy.ndarray = Array

__version__ = "0.1.0"
__all__ = ["Array", "Compiled", "Lowered", "ShapeDtypeStruct", "ShapedArray", "clear_caches",
           "config", "default_backend", "device_put", "devices", "dtypes", "errors", "jit", "lax",
           "nn", "numpy", "random", "scipy", "tree_util", "vmap"]
