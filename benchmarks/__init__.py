"""ember's benchmark suite: ``python -m benchmarks`` (see ``benchmarks/__main__.py``).

Modules:
    programs   the benchmarked programs, written once against a NumPy-like module ``m``
               (NumPy, ``ember.numpy`` or ``jax.numpy``) so every framework runs the same math.
    timing     interleaved batch timing with ``time.perf_counter_ns`` and the table printer.
    overhead   ``python -m benchmarks.overhead``: where ember's per-call time goes (a
               stage-by-stage breakdown of ``JitFunction.__call__`` and ``Compiled.run_flat``).
"""

import os

# OpenBLAS's threads spin for 2^28 cycles after NumPy's last call before they sleep, longer
# than the pause between contenders: whoever was timed after NumPy shared the cores with them
# (docs/benchmarks.md). 2^20 cycles keeps them awake through NumPy's own back-to-back calls
# and asleep by the next contender's. Set before NumPy loads OpenBLAS (this package is
# imported before its modules).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")
