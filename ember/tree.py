"""ember.tree: the short names of :mod:`ember.tree_util`, as ``jax.tree``.

Example:
    >>> import ember
    >>> ember.tree.map(lambda x: x + 1, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (3, 4)}
"""

import dataclasses

from ember import tree_util

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

all = tree_util.tree_all                                # noqa: A001 (jax.tree's names)
broadcast = tree_util.tree_broadcast
flatten = tree_util.tree_flatten
flatten_with_path = tree_util.tree_flatten_with_path
leaves = tree_util.tree_leaves
leaves_with_path = tree_util.tree_leaves_with_path
map = tree_util.tree_map                                # noqa: A001
map_with_path = tree_util.tree_map_with_path
reduce = tree_util.tree_reduce
reduce_associative = tree_util.tree_reduce_associative
structure = tree_util.tree_structure
transpose = tree_util.tree_transpose
unflatten = tree_util.tree_unflatten


def static(**kwargs):
    """A dataclass field that :func:`ember.tree_util.register_dataclass` makes static (part
    of the treedef): ``dataclasses.field`` with ``metadata={"static": True}``.

    Example:
        >>> import dataclasses, ember
        >>> @ember.tree_util.register_dataclass
        ... @dataclasses.dataclass
        ... class Layer:
        ...     w: object
        ...     act: str = ember.tree.static(default="tanh")
        >>> ember.tree.leaves(Layer(1.0))
        [1.0]
    """
    return dataclasses.field(metadata={"static": True, **(kwargs.pop("metadata", None) or {})},
                             **kwargs)
