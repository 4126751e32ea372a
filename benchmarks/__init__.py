"""ember's benchmark suite: ``python -m benchmarks`` (see ``benchmarks/__main__.py``).

Modules:
    programs   the benchmarked programs, written once against a NumPy-like module ``m``
               (NumPy, ``ember.numpy`` or ``jax.numpy``) so every framework runs the same math.
    timing     interleaved batch timing with ``time.perf_counter_ns`` and the table printer.
    overhead   ``python -m benchmarks.overhead``: where ember's per-call time goes (a
               stage-by-stage breakdown of ``JitFunction.__call__`` and ``Compiled.run_flat``).
"""
