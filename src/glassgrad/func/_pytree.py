"""The small pytree the function transforms need: tuples, lists, dicts and namedtuples of leaves.

``tree_flatten(tree)`` gives the leaves (left to right, dict entries in insertion order, as torch's
``torch.utils._pytree``) and a ``TreeSpec``; ``tree_unflatten(leaves, spec)`` rebuilds the tree;
``broadcast_prefix(prefix, spec)`` flattens a prefix tree (vmap's ``in_dims`` / ``out_dims``: an int or
None stands for a whole subtree) against a full tree's spec, or returns None where they do not match.
``str(spec)`` prints as torch's TreeSpec does (its error messages quote it).
"""

__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "broadcast_prefix"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_kind(x):
    if _is_namedtuple(x):
        return "namedtuple"
    if type(x) in (tuple, list, dict):
        return type(x).__name__
    return None


class TreeSpec:
    __slots__ = ("kind", "ctx", "children")

    def __init__(self, kind, ctx, children):
        self.kind, self.ctx, self.children = kind, ctx, children

    @property
    def is_leaf(self):
        return self.kind is None

    def num_leaves(self):
        return 1 if self.is_leaf else sum(c.num_leaves() for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind and self.ctx == other.ctx
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, len(self.children)))

    def _str(self, indent):
        if self.is_leaf:
            return "*"
        ctx = "None" if self.kind in ("tuple", "list") else repr(list(self.ctx)) if self.kind == "dict" \
            else self.ctx.__name__
        kind = "namedtuple" if self.kind == "namedtuple" else self.kind
        inner = (",\n" + " " * (indent + 2)).join(c._str(indent + 2) for c in self.children)
        return f"TreeSpec({kind}, {ctx}, [{inner}])"

    def __str__(self):
        return self._str(0)

    __repr__ = __str__

    def pprint(self):
        """torch's treespec_pprint: the tree with '*' for each leaf, as Python prints it."""
        return repr(_unflatten(iter([_STAR] * self.num_leaves()), self))


class _Star:
    def __repr__(self):
        return "*"


_STAR = _Star()


_LEAF = TreeSpec(None, None, [])


def _flatten(x, leaves):
    kind = _node_kind(x)
    if kind is None:
        leaves.append(x)
        return _LEAF
    if kind == "dict":
        keys = list(x.keys())
        return TreeSpec("dict", keys, [_flatten(x[k], leaves) for k in keys])
    ctx = type(x) if kind == "namedtuple" else None
    return TreeSpec(kind, ctx, [_flatten(v, leaves) for v in x])


def tree_flatten(tree):
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _unflatten(it, spec):
    if spec.is_leaf:
        return next(it)
    vals = [_unflatten(it, c) for c in spec.children]
    if spec.kind == "dict":
        return dict(zip(spec.ctx, vals))
    if spec.kind == "namedtuple":       # torch.return_types (structseq) take one sequence
        return spec.ctx(vals) if hasattr(spec.ctx, "n_fields") else spec.ctx(*vals)
    return tuple(vals) if spec.kind == "tuple" else vals


def tree_unflatten(leaves, spec):
    return _unflatten(iter(leaves), spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(v) for v in leaves], spec)


def broadcast_prefix(prefix, spec):
    """The leaves of ``prefix`` repeated over ``spec``'s leaves (a leaf of the prefix covers a subtree);
    None when the prefix's structure is not a prefix of ``spec``."""
    out = []

    def walk(p, s):
        kind = _node_kind(p)
        if kind is None:
            out.extend([p] * s.num_leaves())
            return True
        if kind != s.kind or len(p) != len(s.children):
            return False
        if kind == "dict":
            if set(p.keys()) != set(s.ctx):
                return False
            return all(walk(p[k], c) for k, c in zip(s.ctx, s.children))
        return all(walk(v, c) for v, c in zip(p, s.children))

    return out if walk(prefix, spec) else None
