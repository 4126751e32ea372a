"""The op-definition machinery and the engines that apply op rules.

``base`` declares ops (``define``, ``OPS``) and emits them; ``lowering``, ``batching`` and
``autodiff`` hold the rule tables (``LOWERINGS``/``SCALAR``, ``BATCHING``, ``JVP``/
``TRANSPOSE``/``NOT_DIFFERENTIABLE``), the decorators that fill them and the engines that
walk IR applying them. The op families (``ember/dialects/``) sit above this layer and fill
the tables; the passes (``ember/passes/``) sit above the families and drive the engines.
"""
