"""``ember.ad_checkpoint``: JAX's ``jax.ad_checkpoint`` names (``checkpoint``, ``remat``,
``checkpoint_name``, ``checkpoint_policies``, ``saved_residuals``, ``print_saved_residuals``).

Example:
    >>> from ember.ad_checkpoint import checkpoint, checkpoint_name, print_saved_residuals
"""

from ember.frontend.checkpoint import checkpoint, checkpoint_name, checkpoint_policies, remat
from ember.frontend.residuals import print_saved_residuals, saved_residuals

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat",
           "saved_residuals", "print_saved_residuals"]
