"""The values a traced node maps to (see mapping.py's docstring) and small helpers on them."""
from .tracing import Ref, TMeta


class Unmappable(Exception):
    """This node has no BatchFit equivalent (message: why)."""


class Param:
    def __init__(self, key, name, meta):
        self.key, self.name, self.meta = key, name, meta


class Const:
    """An unbatched tensor computed without the model input.  ``params``: the parameters it was computed
    from (claimed by the opaque layer that consumes it); ``saved``: what autograd saved while computing
    it (batch 1, 2), carried into that layer."""

    def __init__(self, node, meta, params=(), saved=(0, 0), buffers=()):
        self.node, self.meta = node, meta
        self.params = set(params)
        self.buffers = set(buffers)  # the buffers it was computed from (a mask from a tril buffer)
        self.saved = list(saved)
        self.consumed = False


class Pending:
    def __init__(self, kind, node, data):
        self.kind, self.node, self.data = kind, node, data


class Tup(tuple):
    pass


def _compact(v, n=None):
    """(k, k) -> k; [a, b] stays a list."""
    if isinstance(v, (tuple, list)):
        v = [int(x) for x in v]
        return v[0] if len(set(v)) == 1 else v
    return int(v)


def _is_default(v, d):
    if isinstance(v, list):
        return all(x == d for x in v)
    return v == d


def _listify(v, d):
    return list(v) if isinstance(v, (tuple, list)) else [v] * d


def _has_tmeta(v, depth=0):
    if isinstance(v, TMeta):
        return True
    if depth > 3:
        return False
    if isinstance(v, (tuple, list)):
        return any(_has_tmeta(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return any(_has_tmeta(x, depth + 1) for x in v.values())
    return False


def _refs(obj):
    if isinstance(obj, Ref):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            yield from _refs(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _refs(x)
    elif isinstance(obj, slice):
        yield from _refs((obj.start, obj.stop, obj.step))
