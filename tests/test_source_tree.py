"""``_switch_reach.source_tree``, the one cached parser of a function's source: ``_adapters._source`` is it, and
``_switch_reach._tree`` (the ``def``) a view on it (session 20: two parsers, one uncached, one that raised on an
unhashable callable)."""
import ast

from gradcheck import _adapters, _switch_reach


class Layer:
    def forward(self, X, training=False):
        return X * 2 if training else X


class Unhashable:
    __eq__ = object.__eq__  # and so no __hash__
    __hash__ = None

    def __call__(self, X):
        return X


def test_one_tree_per_function_shared_by_both_readers():
    a, b = Layer(), Layer()
    tree = _adapters._source(a.forward)
    assert isinstance(tree, ast.Module) and tree.body[0].name == "forward"
    assert _switch_reach.source_tree(b.forward) is tree  # a method of another object: its function's tree
    assert _switch_reach._tree(Layer.forward) is tree.body[0]


def test_an_unhashable_callable_is_parsed_not_refused():
    f = Unhashable()
    assert _adapters._source(f) is None  # inspect cannot read an instance's source: None, as before
    assert _switch_reach._tree(f) is None  # was TypeError: unhashable type (lru_cache)
    assert _switch_reach._tree(len) is None
