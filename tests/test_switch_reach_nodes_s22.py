"""gradcheck._switch_reach reads each function's syntax tree from a node list made once (session 22, issue 15), of the
nodes its reading acts on only (session 23)."""

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

from gradcheck import _switch_reach as SR

ROOT = Path(__file__).resolve().parents[1]


def test_switch_reach_lists_a_forwards_nodes_once_in_ast_walks_order():
    """gradcheck._switch_reach walks a forward's syntax tree from lists made once per tree (grading reads the same
    reference's forward for every test): the nodes ``_Env.note`` reads and the calls, each in ast.walk's order, the
    same lists the second time."""
    from manualprop import BatchNorm1D

    tree = SR._tree(BatchNorm1D.forward)
    assert tree is SR._tree(BatchNorm1D.forward)  # the parsed tree is kept, so the lists can be
    noted, calls = first = SR._nodes(tree)
    every = list(ast.walk(tree))
    assert list(noted) == [n for n in every if isinstance(n, SR._NOTED)] and len(noted) > 30
    assert list(calls) == [n for n in every if isinstance(n, ast.Call)] and calls
    assert len(noted) + len(calls) < len(every)  # names, constants, contexts, arguments: left out
    assert SR._nodes(tree) is first


def _forwards():
    """Bound forwards of many layers: manualprop's, the planted-bug layers' (switch arguments, attributes, globals,
    the environment, sub-layers) and the examples'."""
    import manualprop
    import tests.buggy_layers as bl

    mods = [manualprop] + [importlib.import_module(f"tests.buggy_layers.{m.name}")
                           for m in pkgutil.iter_modules(bl.__path__) if not m.name.startswith("_")]
    out = []
    for mod in mods:
        for name, cls in sorted(vars(mod).items()):
            if not (inspect.isclass(cls) and callable(getattr(cls, "forward", None))):
                continue
            for kwargs in (dict(getattr(cls, "KWARGS", getattr(mod, "KWARGS", {}))), {}):
                try:
                    out.append((f"{mod.__name__}.{name}", cls(**kwargs).forward))
                    break
                except Exception:  # noqa: BLE001 - a class these arguments do not build
                    continue
    return out


def test_switch_reach_reads_as_when_it_noted_every_node(monkeypatch):
    """``_Env.note`` acts on :data:`_NOTED`'s node types only, so noting those alone reads what noting every node of
    ``ast.walk`` read (session 22's walk): the same switches, values, words and unreadable arguments, on every layer
    of manualprop and of the planted-bug table."""
    forwards = _forwards()
    assert len(forwards) > 200

    def reading():
        out = {}
        for name, fn in forwards:
            params = list(inspect.signature(fn).parameters)
            out[name] = (repr(SR._walked(fn)), [SR.argument_words(fn, p) for p in params])
        return out

    now = reading()
    monkeypatch.setattr(SR, "_nodes", lambda tree: (tuple(ast.walk(tree)),
                                                    tuple(n for n in ast.walk(tree) if isinstance(n, ast.Call))))
    assert reading() == now
    assert sum("self." in w for w, *_ in now.values()) > 20  # layers that do branch on switches were read


def test_every_node_type_note_tests_is_noted():
    """Every node type ``_Env.note`` and ``_Env._argument_use`` test ``node`` for (``isinstance(node, ...)``) is in
    :data:`_NOTED`: a type tested there and not listed would never reach them."""
    import textwrap

    tested = set()
    for fn in (SR._Env.note, SR._Env._argument_use):
        for call in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(fn)))):
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "isinstance" \
                    and getattr(call.args[0], "id", None) == "node":
                kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
                tested |= {getattr(ast, k.attr) for k in kinds}
    assert len(tested) >= 10 and tested <= set(SR._NOTED), tested - set(SR._NOTED)
