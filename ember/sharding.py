"""``ember.sharding``: meshes, partition specs and shardings, as ``jax.sharding``.

Example:
    >>> from ember.sharding import Mesh, NamedSharding, PartitionSpec as P
    >>> mesh = Mesh(ember.devices("cpu")[:4], ("data",))
    >>> x = ember.device_put(np.zeros((8, 3)), NamedSharding(mesh, P("data")))
"""

from ember.frontend.sharding import (
    Mesh,
    NamedSharding,
    P,
    PartitionSpec,
    Shard,
    ShardedArray,
    ShardingError,
)

__all__ = ["Mesh", "NamedSharding", "P", "PartitionSpec", "Shard", "ShardedArray",
           "ShardingError"]
