"""``ember.ad_checkpoint``: JAX's ``jax.ad_checkpoint`` names (``checkpoint``, ``remat``,
``checkpoint_name``, ``checkpoint_policies``).

Example:
    >>> from ember.ad_checkpoint import checkpoint, checkpoint_name
"""

from ember.frontend.checkpoint import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
