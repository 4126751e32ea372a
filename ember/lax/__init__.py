"""``ember.lax``: one function per ember op, with ``lax``'s strict semantics.

Operands must already agree in shape and dtype (no broadcasting, no promotion); Python
scalars are lifted to weakly typed constants of the other operand's dtype. ``ember.numpy`` is
built on these.

Example:
    >>> import ember, numpy as np
    >>> ember.lax.add(np.float32(1), np.float32(2))
    Array(3., dtype=float32)
"""

from __future__ import annotations

from ember.lax._bits import *  # noqa: F403
from ember.lax._core import *  # noqa: F403
from ember.lax._core import _check_precision  # noqa: F401  (for ember.numpy's products)
from ember.lax._fft import FftType, fft  # noqa: F401
from ember.lax._indexing import *  # noqa: F403
from ember.lax._sort_scan import *  # noqa: F403
from ember.lax.control_flow import *  # noqa: F403
from ember.lax.convenience import *  # noqa: F403
from ember.lax.parallel import *  # noqa: F403
from ember.lax.windowed import *  # noqa: F403
