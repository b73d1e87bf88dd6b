"""The dicts a layer's ``variables`` gives: its own (written into, as manualprop's ``params``) and the listing of
a layer holding sub-layers (built on each access, so an assignment into it is refused or written through, never
lost; verify45d F1).

TensorFlow's ``tf.Module.variables`` is a tuple and Keras's ``layer.variables`` a list built on access: an
assignment into Keras's list is lost without a word, one into TensorFlow's tuple raises. Here ``variables`` is a
dict (manualprop's ``params``'s twin): a key of the layer's own weights is set in the layer (on a layer with or
without sub-layers alike), and a key of a sub-layer's or attribute's Variable raises TypeError naming where that
Variable is held and ``.assign``.
"""

from __future__ import annotations

from ..core.tensor import _STATE, Variable

__all__ = ["OwnVariables", "ListedVariables"]


def _checked(owner, key, value):
    """``value`` if it is a Variable; TypeError naming ``.assign`` and ``ap.Variable`` otherwise."""
    if isinstance(value, Variable):
        return value
    raise TypeError(
        f"{owner}.variables[{key!r}] = {type(value).__name__}: a layer's variables are autoprop Variables. "
        f"To change a weight's value in place: layer.variables[{key!r}].assign(value); to make a new weight: "
        f"layer.variables[{key!r}] = ap.Variable(value) (or layer.add_weight(shape=..., name={key!r}))")


def _expression(path):
    """Python for the object at dotted ``path`` in a layer: ``"blocks.0"`` -> ``layer.blocks[0]``, ``"0"`` (a
    Sequential's) -> ``layer.layers[0]``."""
    head, *rest = path.split(".")
    out = f"layer.{head}" if head.isidentifier() else f"layer.layers[{head}]"
    return out + "".join(f"[{p}]" if p.isdigit() else f"[{p!r}]" for p in rest)


class _ThroughSetitem(dict):
    """A dict whose ``update`` and ``setdefault`` go one key at a time through ``__setitem__``."""

    def update(self, *args, **kwargs):
        """As dict's, one key at a time through ``__setitem__``."""
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key, default=None):
        """As dict's, through ``__setitem__``."""
        if key not in self:
            self[key] = default
        return self[key]


class OwnVariables(_ThroughSetitem):
    """A layer's own Variables (``add_weight``'s, a built-in layer's ``"W"``, ``"b"``): a dict, whose item
    assignment and deletion count as a change of the layer's Python state (``_STATE``: an ``autoprop.function``
    that read the old Variable traces again, where it replayed the old one, verify45d F1) and take Variables only."""

    __slots__ = ()

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, _checked("layer", key, value))
        _STATE[0] += 1

    def __delitem__(self, key):
        dict.__delitem__(self, key)
        _STATE[0] += 1

    def pop(self, key, *default):
        """As dict's; counts as a change of state."""
        _STATE[0] += 1
        return dict.pop(self, key, *default)

    def popitem(self):
        """As dict's; counts as a change of state."""
        _STATE[0] += 1
        return dict.popitem(self)

    def clear(self):
        """As dict's; counts as a change of state."""
        _STATE[0] += 1
        dict.clear(self)

    def __ior__(self, other):
        self.update(other)
        return self

    def __reduce__(self):  # copy, deepcopy and pickle rebuild it from its items (no __setitem__ check)
        return type(self), (dict(self),)


class ListedVariables(_ThroughSetitem):
    """The ``variables`` of a layer holding sub-layers or Variables as attributes: a new dict at each access,
    path -> Variable. An assignment into it is not lost: a key of the layer's own weights (or a new key, on a layer
    with its own weights) is set in the layer's own dict; a sub-layer's or attribute's path raises TypeError naming
    where the Variable is held, as ``tf.Module.variables`` (a tuple) refuses item assignment. Copies (``dict(d)``,
    ``copy``, ``pickle``) are plain dicts."""

    __slots__ = ("_owner", "_own", "_held")

    @classmethod
    def of(cls, items, owner, own, held=()):
        """The listing ``items`` of layer ``owner``, whose own dict is ``own`` (None: none, every key is held
        elsewhere) and whose tracked attribute names are ``held``."""
        out = cls(items)
        out._owner, out._own, out._held = owner, own, tuple(held)
        return out

    def _refusal(self, key, verb):
        owner = f"{type(self._owner).__name__}"
        head = key.split(".", 1)[0]
        if key in self:
            if key in self._held:
                where = f"the attribute {key!r}: assign it, layer.{key} = ap.Variable(...)"
            elif "." in key:
                at, name = key.rsplit(".", 1)
                where = (f"the sub-layer or attribute at {at!r}: set it there (a sub-layer's own weight: "
                         f"{_expression(at)}.variables[{name!r}] = ap.Variable(...))")
            else:
                where = "a sub-layer"
            return TypeError(
                f"{owner}.variables[{key!r}] cannot be {verb}: {key!r} is not one of {owner}'s own weights but a "
                f"Variable held by {where}. This dict is built anew at each access (as Keras's layer.variables "
                f"list; tf.Module.variables is a tuple), so the change would be lost. To change the weight's "
                f"value in place: layer.variables[{key!r}].assign(value)")
        return TypeError(
            f"{owner}.variables[{key!r}] cannot be {verb}: "
            + (f"{head!r} is a sub-layer or attribute of {owner}; give the weight to it, or a name without a dot"
               if head in self._held else f"{owner}'s variables are its sub-layers' (it has no weights of its own)")
            + f"; or create a weight of {owner}'s own with add_weight(shape=..., name=...)")

    def __setitem__(self, key, value):
        if self._own is None or (key in self and key not in self._own) or (
                "." in key and key.split(".", 1)[0] in self._held):
            raise self._refusal(key, "assigned")
        self._own[key] = _checked(type(self._owner).__name__, key, value)  # counts as a change of state
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        if self._own is None or key not in self._own:
            raise self._refusal(key, "deleted")
        del self._own[key]
        dict.__delitem__(self, key)

    def pop(self, key, *default):
        """As dict's, through ``__delitem__`` (only the layer's own weights)."""
        if key not in self and default:
            return default[0]
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Refused: the last item may be a sub-layer's."""
        raise TypeError(f"{type(self._owner).__name__}.variables.popitem(): refused; delete one of the layer's "
                        "own weights by its key (del layer.variables[key])")

    def clear(self):
        """Refused: most of the items are the sub-layers'."""
        raise TypeError(f"{type(self._owner).__name__}.variables.clear(): refused; the sub-layers' variables are "
                        "theirs (layer.variables = {} replaces the layer's own weights)")

    def __ior__(self, other):
        self.update(other)
        return self

    def __reduce__(self):  # a copy is a plain dict
        return dict, (dict(self),)
