"""gradcheck._switch_reach reads each function's syntax tree from a node list made once (session 22, issue 15)."""


def test_switch_reach_lists_a_forwards_nodes_once_in_ast_walks_order():
    """gradcheck._switch_reach walks a forward's syntax tree from a list made once per tree (grading reads the same
    reference's forward for every test): the same nodes in ast.walk's order, the same list the second time."""
    import ast

    from gradcheck._switch_reach import _nodes, _tree
    from manualprop import BatchNorm1D

    tree = _tree(BatchNorm1D.forward)
    assert tree is _tree(BatchNorm1D.forward)  # the parsed tree is kept, so the list can be
    first = _nodes(tree)
    assert [type(n) for n in first] == [type(n) for n in ast.walk(tree)] and len(first) > 50
    assert all(a is b for a, b in zip(first, ast.walk(tree)))
    assert _nodes(tree) is first
