"""JAX-compatible pytrees.

A *pytree* is a nested structure of containers whose non-container elements are
*leaves*. This module flattens pytrees into a list of leaves plus a
:class:`PyTreeDef` describing the structure, and rebuilds them again, with the
same names and semantics as ``jax.tree_util``.

Built-in container nodes:

* ``tuple``, ``list``: children in order.
* ``dict``: children in sorted key order (insertion order if the keys cannot be
  sorted); unflattening produces a dict in that order.
* ``collections.OrderedDict``: children in insertion order.
* ``collections.defaultdict``: like ``dict``; the ``default_factory`` is kept.
* namedtuples (any ``tuple`` subclass with ``_fields``).
* ``None``: a node with no children, so it is *not* a leaf.

Everything else is a leaf, unless registered with :func:`register_pytree_node`,
:func:`register_pytree_with_keys`, :func:`register_pytree_node_class` or
:func:`register_dataclass`.
Lookup is by exact type: subclasses of registered types are leaves (except
namedtuples).

Example:
    >>> leaves, treedef = tree_flatten((1, {"b": None, "a": [2, 3]}))
    >>> leaves
    [1, 2, 3]
    >>> treedef
    PyTreeDef((*, {'a': [*, *], 'b': None}))
    >>> tree_unflatten(treedef, [10, 20, 30])
    (10, {'a': [20, 30], 'b': None})

This module depends only on the standard library.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_is_strict_leaf",
    "treedef_tuple",
]


# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Path entry for the ``idx``-th child of a tuple or list; ``str`` is ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Path entry for a mapping value under ``key``; ``str`` is ``[repr(key)]``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Path entry for an attribute, e.g. a namedtuple field; ``str`` is ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Path entry for the ``key``-th child of a custom node registered without keys."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _simple_entrystr(entry: Any) -> str:
    if isinstance(entry, SequenceKey):
        return str(entry.idx)
    if isinstance(entry, DictKey):
        return str(entry.key)
    if isinstance(entry, GetAttrKey):
        return entry.name
    if isinstance(entry, FlattenedIndexKey):
        return str(entry.key)
    return str(entry)


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path (as returned by :func:`tree_flatten_with_path`) as a string.

    Example:
        >>> keystr((SequenceKey(0), DictKey("w")))
        "[0]['w']"
        >>> keystr((SequenceKey(0), DictKey("w")), simple=True, separator="/")
        '0/w'
    """
    if simple:
        return separator.join(_simple_entrystr(k) for k in keys)
    return separator.join(str(k) for k in keys)


# ---------------------------------------------------------------------------
# Node kinds and the registry
# ---------------------------------------------------------------------------

_LEAF, _NONE, _TUPLE, _LIST, _DICT, _NAMEDTUPLE, _CUSTOM = range(7)


class _NodeKind:
    """How to take apart and rebuild one node type (internal)."""

    __slots__ = ("flatten", "flatten_with_keys", "tag", "type", "unflatten")

    def __init__(self, tag, nodetype, flatten=None, unflatten=None, flatten_with_keys=None):
        self.tag = tag
        self.type = nodetype
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys

    def __repr__(self) -> str:
        return f"<node kind {getattr(self.type, '__name__', self.type)}>"


_LEAF_KIND = _NodeKind(_LEAF, None)
_NONE_KIND = _NodeKind(_NONE, type(None))
_TUPLE_KIND = _NodeKind(_TUPLE, tuple)
_LIST_KIND = _NodeKind(_LIST, list)
_DICT_KIND = _NodeKind(_DICT, dict)

# Types that are nodes by registration (built-ins included). Never cleared.
_registry: dict[type, _NodeKind] = {
    type(None): _NONE_KIND,
    tuple: _TUPLE_KIND,
    list: _LIST_KIND,
    dict: _DICT_KIND,
}
# Per-class kinds of namedtuples seen so far; kept so that treedefs built from the same
# class always share one kind object (treedef equality compares kinds by identity).
_namedtuple_kinds: dict[type, _NodeKind] = {}
# Dispatch cache: exact type -> kind, for every type seen (leaf types included).
_dispatch: dict[type, _NodeKind] = dict(_registry)
# Types known to be leaves: the hot loops test membership here first.
_leaf_types: set[type] = set()
_DISPATCH_CACHE_LIMIT = 4096


def _classify(t: type) -> _NodeKind:
    """Find the kind of an exact type not yet in the dispatch cache, and cache it."""
    kind = _registry.get(t)
    if kind is None:
        if issubclass(t, tuple) and hasattr(t, "_fields"):
            kind = _namedtuple_kinds.get(t)
            if kind is None:
                kind = _namedtuple_kinds[t] = _NodeKind(_NAMEDTUPLE, t)
        else:
            kind = _LEAF_KIND
    if len(_dispatch) >= _DISPATCH_CACHE_LIMIT:
        _dispatch.clear()
        _dispatch.update(_registry)
        _leaf_types.clear()
    _dispatch[t] = kind
    if kind is _LEAF_KIND:
        _leaf_types.add(t)
    return kind


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:  # unorderable keys: fall back to insertion order
        return tuple(d)


def _short_repr(x: Any, limit: int = 200) -> str:
    r = repr(x)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _call_flatten(kind: _NodeKind, node: Any) -> tuple[Any, Any]:
    res = kind.flatten(node)
    if type(res) is not tuple or len(res) != 2:
        raise ValueError(
            f"The flatten function for pytree node type {kind.type.__name__} should "
            f"return a (children, aux_data) tuple, got {_short_repr(res)}"
        )
    return res


def _node_children(kind: _NodeKind, node: Any) -> tuple[Any, Any]:
    """Return ``(children, aux_data)`` of a non-leaf node."""
    tag = kind.tag
    if tag <= _LIST or tag == _NAMEDTUPLE:  # tuple, list, namedtuple (and None)
        return (() if tag == _NONE else node), None
    if tag == _DICT:
        keys = _sorted_keys(node)
        return [node[k] for k in keys], keys
    return _call_flatten(kind, node)


def _build(kind: _NodeKind, aux: Any, children: list) -> Any:
    """Rebuild a node of ``kind`` from a fresh list of rebuilt children."""
    tag = kind.tag
    if tag == _TUPLE:
        return tuple(children)
    if tag == _LIST:
        return children
    if tag == _DICT:
        return dict(zip(aux, children, strict=True))
    if tag == _NAMEDTUPLE:
        return kind.type(*children)
    if tag == _NONE:
        return None
    return kind.unflatten(aux, tuple(children))


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable, Any]],
    unflatten_func: Callable[[Any, tuple], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable, Any]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(x)`` returns ``(children, aux_data)``; ``unflatten_func(aux_data,
    children)`` rebuilds the node from ``aux_data`` and a tuple of children. The
    optional ``flatten_with_keys_func(x)`` returns ``(((key, child), ...), aux_data)``
    and names the children in key paths (otherwise they get :class:`FlattenedIndexKey`).
    ``aux_data`` should be hashable and comparable with ``==``: it is part of the
    treedef. Registering a type twice raises ``ValueError``.

    Example:
        >>> class Box:
        ...     def __init__(self, x, tag):
        ...         self.x, self.tag = x, tag
        >>> register_pytree_node(Box, lambda b: ((b.x,), b.tag), lambda t, c: Box(c[0], t))
        >>> tree_leaves([Box(1, "a"), Box((2, 3), "b")])
        [1, 2, 3]
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"Expected a type to register as a pytree node, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype!r}.")
    kind = _NodeKind(_CUSTOM, nodetype, flatten_func, unflatten_func, flatten_with_keys_func)
    _registry[nodetype] = kind
    _dispatch[nodetype] = kind
    _leaf_types.discard(nodetype)


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable, Any]],
    unflatten_func: Callable[[Any, tuple], Any],
    flatten_func: Callable[[Any], tuple[Iterable, Any]] | None = None,
) -> None:
    """Register ``nodetype`` with a flatten function that names its children.

    ``flatten_with_keys(x)`` returns ``(((key, child), ...), aux_data)``; keys appear in
    the paths of :func:`tree_flatten_with_path`. ``flatten_func`` defaults to dropping
    the keys.

    Example:
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> register_pytree_with_keys(
        ...     Pair,
        ...     lambda p: (((GetAttrKey("a"), p.a), (GetAttrKey("b"), p.b)), None),
        ...     lambda _, c: Pair(*c))
        >>> [keystr(p) for p, _ in tree_flatten_with_path([Pair(1, 2)])[0]]
        ['[0].a', '[0].b']
    """
    if flatten_func is None:

        def flatten_func(x):
            key_children, aux = flatten_with_keys(x)
            return [c for _, c in key_children], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` using its ``tree_flatten`` / ``tree_unflatten``.

    ``cls.tree_flatten(self)`` returns ``(children, aux_data)`` and the classmethod
    ``cls.tree_unflatten(aux_data, children)`` rebuilds an instance.

    Example:
        >>> @register_pytree_node_class
        ... class Scaled:
        ...     def __init__(self, value, scale):
        ...         self.value, self.scale = value, scale
        ...     def tree_flatten(self):
        ...         return (self.value,), self.scale
        ...     @classmethod
        ...     def tree_unflatten(cls, scale, children):
        ...         return cls(children[0], scale)
        >>> tree_map(lambda v: v + 1, Scaled(1, 2.0)).value
        2
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields=None, meta_fields=None,
                       drop_fields=()) -> type:
    """Register a dataclass-like ``nodetype`` whose ``data_fields`` are children and whose
    ``meta_fields`` are part of the treedef (static under ``jit``), as JAX's.

    For a dataclass both may be left out: fields are data unless declared with
    ``field(metadata={"static": True})``. Together they must name every ``init`` field
    not in ``drop_fields``; nodes are rebuilt with ``nodetype(**fields)``. Returns
    ``nodetype``, so it works as a decorator.

    Example:
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Layer:
        ...     w: object
        ...     act: str = dataclasses.field(default="tanh", metadata={"static": True})
        >>> tree_flatten(Layer(1.0))
        ([1.0], PyTreeDef(CustomNode(Layer[('tanh',)], [*])))
    """
    if (data_fields is None) != (meta_fields is None):
        raise TypeError("register_dataclass: data_fields and meta_fields must both be given "
                        f"when either is; got data_fields={data_fields!r}, "
                        f"meta_fields={meta_fields!r}")
    is_dataclass = dataclasses.is_dataclass(nodetype)
    if data_fields is None:
        if not is_dataclass:
            raise TypeError("register_dataclass: data_fields and meta_fields are needed for "
                            f"{nodetype!r}, which is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(f"register_dataclass: fields {sorted(overlap)} are in both "
                         "data_fields and meta_fields")
    if is_dataclass:
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        if missing := init - {*data_fields, *meta_fields}:
            raise ValueError(f"register_dataclass: the init fields {sorted(missing)} of "
                             f"{nodetype.__name__} are in neither data_fields nor "
                             "meta_fields (add them to drop_fields to leave them out)")
        if unexpected := {*data_fields, *meta_fields} - init:
            raise ValueError(f"register_dataclass: {sorted(unexpected)} are not init fields "
                             f"of {nodetype.__name__}")

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten)
    return nodetype


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register ``cls`` using its ``tree_flatten_with_keys`` (and, if it has
    one, ``tree_flatten``) method and its ``tree_unflatten`` classmethod, as JAX's.

    Example:
        >>> @register_pytree_with_keys_class
        ... class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        ...     def tree_flatten_with_keys(self):
        ...         return ((GetAttrKey("a"), self.a), (GetAttrKey("b"), self.b)), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children):
        ...         return cls(*children)
        >>> keystr(tree_leaves_with_path(Pair(1, 2))[1][0])
        '.b'
    """
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)
    return cls


def register_static(cls: type) -> type:
    """Register ``cls`` as a pytree node with no children: its instances are part of the
    treedef, so ``jit`` treats them as static (they must be hashable). Returns ``cls``.

    Example:
        >>> @register_static
        ... class Mode(str):
        ...     pass
        >>> tree_leaves([Mode("add"), 1])
        [1]
    """
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def is_tree_node(typ: type) -> bool:
    """True for a type that is a pytree node (built in, registered, or a namedtuple).

    Example:
        >>> is_tree_node(dict), is_tree_node(int)
        (True, False)
    """
    return (_dispatch.get(typ) or _classify(typ)) is not _LEAF_KIND


def _one_level(tree: Any) -> tuple[_NodeKind, Any, Any]:
    """(kind, children, node data) of a node; a namedtuple's node data is its class."""
    kind = _dispatch.get(type(tree)) or _classify(type(tree))
    if kind is _LEAF_KIND:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = _node_children(kind, tree)
    return kind, children, kind.type if kind.tag == _NAMEDTUPLE else aux


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Any]:
    """The children and the node data of a pytree node, one level down.

    Example:
        >>> flatten_one_level({"a": [1, 2], "b": {"c": 3}})
        ([[1, 2], {'c': 3}], ('a', 'b'))
    """
    return _one_level(tree)[1:]


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Any]:
    """As :func:`flatten_one_level`, each child with its key.

    Example:
        >>> flatten_one_level_with_keys([7])
        ([(SequenceKey(idx=0), 7)], None)
    """
    kind, _, aux = _one_level(tree)
    return list(_key_children(kind, tree)), aux


class _BoxedPartial:
    """A ``functools.partial`` as the function of a :class:`Partial`: ``functools.partial``
    would merge its arguments into the new one's, and only the new ones are children."""

    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other) -> bool:
        return self.fun == (other.fun if isinstance(other, _BoxedPartial) else other)

    def __repr__(self) -> str:
        return repr(self.fun)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree, as ``jax.tree_util.Partial``: the bound
    arguments are its children (traced under ``jit``), the function is static.

    Example:
        >>> add_one = Partial(operator.add, 1)
        >>> tree_leaves(add_one), add_one(2)
        ([1], 3)
    """

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial):
            func = _BoxedPartial(func)
        return super().__new__(cls, func, *args, **kwargs)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` into one of
    structure ``inner`` of ``outer`` trees; ``inner_treedef=None`` reads it off the first
    inner tree.

    Example:
        >>> tree_transpose(tree_structure([0, 0]), None, [(1, 2, 3), (4, 5, 6)])
        ([1, 4], [2, 5], [3, 6])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner, outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner * outer:
        raise TypeError(f"tree_transpose: the tree {treedef} does not have the structure "
                        f"{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner:(i + 1) * inner] for i in range(outer)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``full_tree``'s structure, each leaf the leaf of ``prefix_tree`` above it.

    Example:
        >>> tree_broadcast([1, 2], [(0, 0), {"a": 0}])
        [(1, 1), {'a': 2}]
    """
    leaves, prefix = tree_flatten(prefix_tree, is_leaf)
    subtrees = prefix.flatten_up_to(full_tree)
    return tree_structure(full_tree).unflatten(
        [x for x, sub in zip(leaves, subtrees, strict=True)
         for _ in range(tree_structure(sub).num_leaves)])


_NO_IDENTITY = object()


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _NO_IDENTITY,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Reduce the leaves with an associative ``operation``, pairwise as a balanced tree
    (``identity`` is the result for a tree without leaves).

    Example:
        >>> tree_reduce_associative(operator.add, [1, (2, 3), 4])
        10
    """
    def reduce(xs):
        if len(xs) == 1:
            return xs[0]
        half = len(xs) // 2
        return operation(reduce(xs[:half]), reduce(xs[half:]))

    leaves = tree_leaves(tree, is_leaf)
    if leaves:
        return reduce(leaves)
    if identity is _NO_IDENTITY:
        raise TypeError("tree_reduce_associative: the tree has no leaves; give an identity")
    return identity


# OrderedDict, defaultdict and Partial are registered like user nodes, as in JAX.


def _odict_flatten(d):
    return tuple(d.values()), tuple(d)


def _odict_flatten_with_keys(d):
    return tuple((DictKey(k), v) for k, v in d.items()), tuple(d)


def _odict_unflatten(keys, values):
    return collections.OrderedDict(zip(keys, values, strict=True))


def _ddict_flatten(d):
    keys = _sorted_keys(d)
    return tuple(d[k] for k in keys), (d.default_factory, keys)


def _ddict_flatten_with_keys(d):
    keys = _sorted_keys(d)
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _ddict_unflatten(aux, values):
    return collections.defaultdict(aux[0], zip(aux[1], values, strict=True))


register_pytree_node(
    collections.OrderedDict, _odict_flatten, _odict_unflatten, _odict_flatten_with_keys
)
register_pytree_node(
    collections.defaultdict, _ddict_flatten, _ddict_unflatten, _ddict_flatten_with_keys
)
register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------


class PyTreeDef:
    """The structure of a pytree: node types, aux data (e.g. dict keys), and nesting.

    Obtain one from :func:`tree_flatten` or :func:`tree_structure`; do not construct it
    directly. Treedefs are immutable and hashable, and compare equal when they describe
    the same structure (same node types, aux data and dict keys), so they can be used as
    cache keys.

    Example:
        >>> td = tree_structure((1, {"a": 2, "b": None}))
        >>> td
        PyTreeDef((*, {'a': *, 'b': None}))
        >>> td.num_leaves, td.num_nodes
        (2, 5)
        >>> td.unflatten(["x", "y"])
        ('x', {'a': 'y', 'b': None})
    """

    __slots__ = ("_aux", "_children", "_flat", "_hash", "_kind", "_num_leaves")

    def __init__(self, kind, aux, children, num_leaves, flat):
        # kind: _NodeKind; aux: node aux data; children: tuple of PyTreeDef;
        # flat: True iff every child is a leaf.
        self._kind = kind
        self._aux = aux
        self._children = children
        self._num_leaves = num_leaves
        self._flat = flat
        self._hash = None

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes in the structure, leaves and ``None`` included."""
        return 1 + sum(c.num_nodes for c in self._children)

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the immediate children (empty for a leaf)."""
        return list(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """``None`` for a leaf, else ``(node_type, aux_data)`` of the root node."""
        kind = self._kind
        if kind is _LEAF_KIND:
            return None
        return kind.type, self._aux

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a pytree of this structure from ``leaves``; see :func:`tree_unflatten`."""
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = len(leaves)
        if n != self._num_leaves:
            which = "few" if n < self._num_leaves else "many"
            raise ValueError(
                f"Too {which} leaves for PyTreeDef; expected {self._num_leaves}, got {n}"
            )
        kind = self._kind
        if self._flat:
            tag = kind.tag
            if tag == _TUPLE:
                return tuple(leaves)
            if tag == _LIST:
                return list(leaves)
            return _build(kind, self._aux, list(leaves))
        if kind is _LEAF_KIND:
            return leaves[0]
        return _unflatten(self, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` down to this structure, whose leaves may be subtrees of ``tree``.

        Raises ``ValueError`` if ``tree`` does not have this structure as a prefix.

        Example:
            >>> tree_structure((1, 2)).flatten_up_to(([1, 2], {"a": 3}))
            [[1, 2], {'a': 3}]
        """
        out: list[Any] = []
        _flatten_up_to(self, tree, out)
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The treedef obtained by replacing every leaf of ``self`` with ``inner``."""
        if self._kind is _LEAF_KIND:
            return inner
        children = tuple(c.compose(inner) for c in self._children)
        flat = self._flat and inner._kind is _LEAF_KIND
        return PyTreeDef(
            self._kind, self._aux, children, sum(c._num_leaves for c in children), flat
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return (
            self._kind is other._kind
            and self._num_leaves == other._num_leaves
            and len(self._children) == len(other._children)
            and self._aux == other._aux
            and self._children == other._children
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                aux_hash = hash(self._aux)
            except TypeError:  # unhashable aux data: equal treedefs still hash equal
                aux_hash = 0
            h = hash((self._kind.tag, self._kind.type, aux_hash, self._children))
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_treedef_str(self)})"

    def __copy__(self) -> PyTreeDef:
        return self

    def __deepcopy__(self, memo: dict) -> PyTreeDef:
        return self


def _treedef_str(td: PyTreeDef) -> str:
    kind = td._kind
    tag = kind.tag
    if tag == _LEAF:
        return "*"
    if tag == _NONE:
        return "None"
    parts = [_treedef_str(c) for c in td._children]
    if tag == _TUPLE:
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    if tag == _LIST:
        return "[" + ", ".join(parts) + "]"
    if tag == _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(td._aux, parts, strict=True)) + "}"
    if tag == _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{kind.type.__name__}], [{', '.join(parts)}])"
    return f"CustomNode({kind.type.__name__}[{td._aux}], [{', '.join(parts)}])"


_LEAF_DEF = PyTreeDef(_LEAF_KIND, None, (), 1, False)
_NONE_DEF = PyTreeDef(_NONE_KIND, None, (), 0, True)
_EMPTY_DICT_DEF = PyTreeDef(_DICT_KIND, (), (), 0, True)
_SEQ_DEF_CACHE_SIZE = 65
# Treedefs of tuples/lists of n leaves, shared for n < _SEQ_DEF_CACHE_SIZE.
_TUPLE_DEFS = [
    PyTreeDef(_TUPLE_KIND, None, (_LEAF_DEF,) * n, n, True) for n in range(_SEQ_DEF_CACHE_SIZE)
]
_LIST_DEFS = [
    PyTreeDef(_LIST_KIND, None, (_LEAF_DEF,) * n, n, True) for n in range(_SEQ_DEF_CACHE_SIZE)
]


def _leaf_seq_def(kind: _NodeKind, n: int) -> PyTreeDef:
    """Treedef of a tuple or list (``kind``) of ``n`` leaves."""
    if n < _SEQ_DEF_CACHE_SIZE:
        return (_TUPLE_DEFS if kind is _TUPLE_KIND else _LIST_DEFS)[n]
    return PyTreeDef(kind, None, (_LEAF_DEF,) * n, n, True)


# ---------------------------------------------------------------------------
# Flatten / unflatten
# ---------------------------------------------------------------------------


def _flatten(node: Any, leaves: list) -> PyTreeDef:
    """Append the leaves of ``node`` to ``leaves`` and return its treedef."""
    t = type(node)
    if t in _leaf_types:
        leaves.append(node)
        return _LEAF_DEF
    kind = _dispatch.get(t) or _classify(t)
    if kind is _TUPLE_KIND or kind is _LIST_KIND:
        children = node
        aux = None
    elif kind is _DICT_KIND:
        if not node:  # e.g. the kwargs of most calls
            return _EMPTY_DICT_DEF
        try:
            aux = tuple(sorted(node))
        except TypeError:  # unorderable keys: insertion order
            aux = tuple(node)
        children = [node[k] for k in aux]
    elif kind is _LEAF_KIND:
        leaves.append(node)
        return _LEAF_DEF
    elif kind is _NONE_KIND:
        return _NONE_DEF
    elif kind.tag == _NAMEDTUPLE:
        children = node
        aux = None
    else:
        children, aux = _call_flatten(kind, node)
    start = len(leaves)
    defs = []
    flat = True
    for c in children:
        if type(c) in _leaf_types:
            leaves.append(c)
            defs.append(_LEAF_DEF)
        else:
            d = _flatten(c, leaves)
            defs.append(d)
            if d is not _LEAF_DEF:
                flat = False
    if flat and (kind is _TUPLE_KIND or kind is _LIST_KIND):
        return _leaf_seq_def(kind, len(defs))
    return PyTreeDef(kind, aux, tuple(defs), len(leaves) - start, flat)


def _flatten_pred(node: Any, leaves: list, is_leaf: Callable[[Any], bool]) -> PyTreeDef:
    """Like :func:`_flatten`, but ``is_leaf(x)`` true makes ``x`` a leaf."""
    if is_leaf(node):
        leaves.append(node)
        return _LEAF_DEF
    t = type(node)
    kind = _dispatch.get(t) or _classify(t)
    if kind is _LEAF_KIND:
        leaves.append(node)
        return _LEAF_DEF
    if kind is _NONE_KIND:
        return _NONE_DEF
    children, aux = _node_children(kind, node)
    start = len(leaves)
    defs = tuple(_flatten_pred(c, leaves, is_leaf) for c in children)
    flat = all(d is _LEAF_DEF for d in defs)
    return PyTreeDef(kind, aux, defs, len(leaves) - start, flat)


def _collect_leaves(node: Any, leaves: list) -> None:
    t = type(node)
    if t in _leaf_types:
        leaves.append(node)
        return
    kind = _dispatch.get(t) or _classify(t)
    if kind is _TUPLE_KIND or kind is _LIST_KIND:
        children = node
    elif kind is _DICT_KIND:
        try:
            children = [node[k] for k in sorted(node)]
        except TypeError:  # unorderable keys: insertion order
            children = node.values()
    elif kind is _LEAF_KIND:
        leaves.append(node)
        return
    else:
        children = _node_children(kind, node)[0]
    for c in children:
        if type(c) in _leaf_types:
            leaves.append(c)
        else:
            _collect_leaves(c, leaves)


def _unflatten(td: PyTreeDef, it) -> Any:
    kind = td._kind
    if kind is _LEAF_KIND:
        return next(it)
    if td._flat:
        children = [next(it) for _ in td._children]
    else:
        children = [next(it) if c is _LEAF_DEF else _unflatten(c, it) for c in td._children]
    if kind is _TUPLE_KIND:
        return tuple(children)
    if kind is _DICT_KIND:
        return dict(zip(td._aux, children, strict=True))
    if kind is _LIST_KIND:
        return children
    return _build(kind, td._aux, children)


def _mismatch(expected: str, node: Any) -> ValueError:
    return ValueError(f"Expected {expected}, got {_short_repr(node)}.")


def _flatten_up_to(td: PyTreeDef, node: Any, out: list) -> None:
    kind = td._kind
    if kind is _LEAF_KIND:
        out.append(node)
        return
    tag = kind.tag
    children = td._children
    if tag == _NONE:
        if node is not None:
            raise _mismatch("None", node)
        return
    if tag == _DICT:
        if type(node) is not dict:
            raise _mismatch("dict", node)
        keys = td._aux
        if len(node) != len(keys) or any(k not in node for k in keys):
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(keys)!r}; dict: {_short_repr(node)}."
            )
        values = [node[k] for k in keys]
    elif tag == _CUSTOM:
        if type(node) is not kind.type:
            raise ValueError(
                f"Custom node type mismatch; expected type: {kind.type!r}; "
                f"value: {_short_repr(node)}."
            )
        values, aux = _call_flatten(kind, node)
        values = list(values)
        if aux != td._aux:
            raise ValueError(
                f"Mismatch custom node data: {_short_repr(td._aux)} != "
                f"{_short_repr(aux)}; value: {_short_repr(node)}."
            )
    else:  # tuple, list, namedtuple
        if type(node) is not kind.type:
            name = "named tuple " + kind.type.__name__ if tag == _NAMEDTUPLE else kind.type.__name__
            raise _mismatch(name, node)
        values = node
    if len(values) != len(children):
        raise ValueError(
            f"{kind.type.__name__} arity mismatch: {len(values)} != {len(children)}; "
            f"value: {_short_repr(node)}."
        )
    for c, v in zip(children, values, strict=True):
        if c is _LEAF_DEF:
            out.append(v)
        else:
            _flatten_up_to(c, v, out)


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into ``(leaves, treedef)``.

    ``is_leaf(x)``, if given, is called on every subtree (root included) before it is
    taken apart; a true result makes that subtree a leaf.

    Example:
        >>> leaves, treedef = tree_flatten([1, (2, None), {"k": 3}])
        >>> leaves
        [1, 2, 3]
        >>> treedef
        PyTreeDef([*, (*, None), {'k': *}])
        >>> tree_flatten([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))[0]
        [1, (2, 3)]
    """
    if is_leaf is None:
        t = type(tree)
        if t is tuple or t is list:
            # Fast path: a flat sequence of leaves of already-seen types.
            for x in tree:
                if type(x) not in _leaf_types:
                    break
            else:
                n = len(tree)
                if n < _SEQ_DEF_CACHE_SIZE:
                    td = (_TUPLE_DEFS if t is tuple else _LIST_DEFS)[n]
                else:
                    td = _leaf_seq_def(_TUPLE_KIND if t is tuple else _LIST_KIND, n)
                return list(tree), td
        leaves: list[Any] = []
        return leaves, _flatten(tree, leaves)
    leaves = []
    return leaves, _flatten_pred(tree, leaves, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of structure ``treedef`` from ``leaves``.

    Raises ``ValueError`` (naming expected and got counts) if the number of leaves does
    not match ``treedef.num_leaves``.

    Example:
        >>> _, treedef = tree_flatten({"a": 1, "b": (2, 3)})
        >>> tree_unflatten(treedef, ["x", "y", "z"])
        {'a': 'x', 'b': ('y', 'z')}
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in flattening order.

    Example:
        >>> tree_leaves({"b": [3, 4], "a": 1, "c": None})
        [1, 3, 4]
    """
    leaves: list[Any] = []
    if is_leaf is None:
        _collect_leaves(tree, leaves)
    else:
        _flatten_pred(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of ``tree``.

    Example:
        >>> tree_structure((1, [2, None]))
        PyTreeDef((*, [*, None]))
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply ``f`` leaf-wise, returning a pytree with the structure of ``tree``.

    With extra trees in ``rest``, ``f`` gets the corresponding leaf of each; every tree
    in ``rest`` must have the structure of ``tree`` (or have it as a prefix, in which
    case ``f`` receives subtrees), else ``ValueError`` is raised.

    Example:
        >>> tree_map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
        {'a': 2, 'b': (4, 6)}
        >>> tree_map(lambda x, y: x + y, [1, 2], [10, 20])
        [11, 22]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if rest:
        others = [treedef.flatten_up_to(r) for r in rest]
        new_leaves = [f(*xs) for xs in zip(leaves, *others, strict=True)]
    else:
        new_leaves = [f(x) for x in leaves]
    return treedef.unflatten(new_leaves)


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    *initializer: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduce the leaves of ``tree`` with ``function``, like :func:`functools.reduce`.

    Example:
        >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)], 0)
        6
    """
    return functools.reduce(function, tree_leaves(tree, is_leaf), *initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every leaf of ``tree`` is truthy (so also for a tree with no leaves).

    Example:
        >>> tree_all([True, (1, None)]), tree_all({"a": 0})
        (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every element of ``iterable`` is a leaf (``None`` is not a leaf).

    Example:
        >>> all_leaves([1, "a", 2.0]), all_leaves([1, (2,)]), all_leaves([None])
        (True, False, False)
    """
    for x in iterable:
        if type(x) in _leaf_types or (is_leaf is not None and is_leaf(x)):
            continue
        t = type(x)
        if (_dispatch.get(t) or _classify(t)) is not _LEAF_KIND:
            return False
    return True


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True iff ``treedef`` has a single node: a leaf, or a childless node such as ``None``
    or ``()`` (as in JAX; see :func:`treedef_is_strict_leaf`).

    Example:
        >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure((1,)))
        (True, False)
    """
    return not treedef._children


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True iff ``treedef`` is the structure of a single leaf.

    Example:
        >>> treedef_is_strict_leaf(tree_structure(1)), treedef_is_strict_leaf(tree_structure(None))
        (True, False)
    """
    return treedef._kind is _LEAF_KIND


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Treedefs of the immediate children of ``treedef``.

    Example:
        >>> treedef_children(tree_structure((1, [2, 3])))
        [PyTreeDef(*), PyTreeDef([*, *])]
    """
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the given treedefs.

    Example:
        >>> treedef_tuple([tree_structure(1), tree_structure([2, 3])])
        PyTreeDef((*, [*, *]))
    """
    children = tuple(treedefs)
    for c in children:
        if not isinstance(c, PyTreeDef):
            raise TypeError(f"Expected PyTreeDef, got {c!r}")
    flat = all(c._kind is _LEAF_KIND for c in children)
    return PyTreeDef(_TUPLE_KIND, None, children, sum(c._num_leaves for c in children), flat)


# ---------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------


def _key_children(kind: _NodeKind, node: Any) -> Iterable[tuple[Any, Any]]:
    tag = kind.tag
    if tag == _TUPLE or tag == _LIST:
        return [(SequenceKey(i), c) for i, c in enumerate(node)]
    if tag == _DICT:
        return [(DictKey(k), node[k]) for k in _sorted_keys(node)]
    if tag == _NAMEDTUPLE:
        return [(GetAttrKey(name), c) for name, c in zip(kind.type._fields, node, strict=True)]
    if tag == _NONE:
        return ()
    if kind.flatten_with_keys is not None:
        return kind.flatten_with_keys(node)[0]
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(_call_flatten(kind, node)[0])]


def _flatten_with_path(node: Any, path: tuple, out: list, is_leaf) -> None:
    if is_leaf is not None and is_leaf(node):
        out.append((path, node))
        return
    t = type(node)
    kind = _dispatch.get(t) or _classify(t)
    if kind is _LEAF_KIND:
        out.append((path, node))
        return
    for key, child in _key_children(kind, node):
        _flatten_with_path(child, (*path, key), out, is_leaf)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but each leaf comes with its key path.

    Returns ``([(path, leaf), ...], treedef)`` where ``path`` is a tuple of
    :class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey` or
    :class:`FlattenedIndexKey` entries; render one with :func:`keystr`.

    Example:
        >>> pairs, _ = tree_flatten_with_path([{"w": 1, "b": 2}])
        >>> [(keystr(p), leaf) for p, leaf in pairs]
        [("[0]['b']", 2), ("[0]['w']", 1)]
    """
    out: list[tuple[tuple, Any]] = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[tuple, Any]]:
    """The ``(path, leaf)`` pairs of ``tree``; see :func:`tree_flatten_with_path`.

    Example:
        >>> tree_leaves_with_path((7,))
        [((SequenceKey(idx=0),), 7)]
    """
    out: list[tuple[tuple, Any]] = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Like :func:`tree_map`, but ``f`` is called as ``f(path, leaf, *other_leaves)``.

    Example:
        >>> tree_map_with_path(lambda p, x: keystr(p), {"a": 1, "b": [2]})
        {'a': "['a']", 'b': ["['b'][0]"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    if rest:
        others = [treedef.flatten_up_to(r) for r in rest]
        new_leaves = [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others, strict=True)]
    else:
        new_leaves = [f(p, x) for p, x in pairs]
    return treedef.unflatten(new_leaves)
