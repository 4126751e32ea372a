"""Fusion's cost model, derived from the cost class each op declares (``OpDef.cost``): read
by ``ember-fuse`` (``ember/passes/fuse.py``) and by the lowering of ``ember.fusion``
(``ember/dialects/fusion.py``), which recomputes cheap producers in each consumer."""

from __future__ import annotations

from ember.rules.base import OPS

__all__ = ["FUSION_COST", "op_cost"]


# Fusion's weight of each cost class an op declares (``OpDef.cost``; None: 1).
FUSION_COST = {"free": 0, "cheap": 1, "division": 2, "transcendental": 4, "never": 1 << 30}


def op_cost(name: str) -> int:
    """Relative per-element cost of one fusible op, the whole cost model of fusion.

    Index-map ops (broadcast, transpose, reshape, iota) and converts are free, simple
    arithmetic costs 1, division and square roots 2, transcendental functions 4, and a
    reduction or ``dot_general`` is never recomputed (cost above any limit). A value whose
    producers inside a fusion cost more than its ``duplicate_limit`` in total (ember-fuse's
    ``DUPLICATE_LIMIT`` unless set) is computed once even when several consumers read it;
    cheaper ones are recomputed in each consumer.

    Example:
        >>> op_cost("ember.add"), op_cost("ember.exp"), op_cost("ember.broadcast_in_dim")
        (1, 4, 0)
    """
    return FUSION_COST.get(OPS[name].cost, 1)
