"""Nested tuples, lists and dicts of tensors, flattened to their leaves and rebuilt (torch.utils._pytree's role)."""


def flatten(tree):
    """(leaves, spec): the leaves in order, and what unflatten needs to rebuild the structure."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub, spec = flatten(item)
            leaves += sub
            specs.append((spec, len(sub)))
        return leaves, (type(tree), None, specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key in tree:
            sub, spec = flatten(tree[key])
            leaves += sub
            specs.append((spec, len(sub)))
        return leaves, (dict, list(tree), specs)
    return [tree], None


def unflatten(leaves, spec):
    leaves = list(leaves)
    if spec is None:
        return leaves[0]
    kind, keys, specs = spec
    items, at = [], 0
    for sub, n in specs:
        items.append(unflatten(leaves[at:at + n], sub))
        at += n
    if kind is dict:
        return dict(zip(keys, items))
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a namedtuple


def broadcast_prefix(prefix, tree):
    """`prefix` (an int/None, or a structure matching tree's top levels) repeated over every leaf of `tree`; None
    when the structures do not match."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * len(flatten(tree)[0])
    if isinstance(prefix, dict) != isinstance(tree, dict) or not isinstance(tree, (tuple, list, dict)) or \
            len(prefix) != len(tree):
        return None
    out = []
    for p, t in (zip(prefix.values(), tree.values()) if isinstance(tree, dict) else zip(prefix, tree)):
        sub = broadcast_prefix(p, t)
        if sub is None:
            return None
        out += sub
    return out
