"""gradcheck's check pipeline imports one way: config -> sources/numerical -> compare -> result (and its tables) -> check.

The imports of ``gradcheck/*.py`` (parsed, not run) form no cycle, at module level nor counting the imports
inside functions (``grading/`` as one module; a lazy import postpones a cycle, it does not remove it), the pipeline
modules import only the layers below them, and each pipeline module imports alone in a fresh
interpreter.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from tests.import_graph import first_cycle

PKG = Path(__file__).resolve().parents[1] / "gradcheck"

#: What each pipeline module may import of gradcheck at module level (the one-way rule ARCHITECTURE.md states).
ALLOWED = {
    "errors": set(),
    "compare": {"_kernel"},
    "_kernel": set(),
    "_pyast": set(),
    "_switch_reach": {"_pyast"},
    "_import_scan": {"_pyast"},
    "_adapters": {"_kernel", "_pyast", "_switch_reach"},
    "_validation": {"errors"},
    "numerical": {"_kernel", "compare"},
    "config": {"_validation", "compare", "errors", "numerical"},
    "sources": {"_adapters", "_validation", "compare", "errors"},
    "result": {"_validation", "compare"},
    "_large_inputs": {"_validation", "compare", "errors", "result", "sources"},
    "_layout": {"compare", "errors", "result", "sources"},
    "_kink_groups": {"_kernel", "compare", "numerical"},
    "check": {"_kink_groups", "_large_inputs", "_layout", "_validation", "compare", "config", "errors", "numerical", "result", "sources"},
}


@functools.cache
def _parsed(path: Path) -> tuple:
    """What these tests read of the module at ``path``, from one parse (the tests below read each of gradcheck's
    4 MB of source several times: parsed again each time, they took 15 s of a quiet machine): its ``from``
    imports at module level and anywhere (each ``(level, module, names)``), every function's ``(name, lines)``,
    and the names its body defines (functions and classes)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = [n for node in tree.body for n in (ast.walk(node) if isinstance(node, (ast.Try, ast.If)) else [node])]
    every = list(ast.walk(tree))

    def imports(nodes):
        return tuple((n.level, n.module, tuple(a.name for a in n.names)) for n in nodes if isinstance(n, ast.ImportFrom))

    return (imports(top), imports(every),  # a module-level import under if/try counts
            tuple((n.name, n.end_lineno - n.lineno + 1) for n in every
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
            tuple(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))))


def module_imports(name: str, anywhere: bool = False) -> set[str]:
    """The gradcheck modules ``gradcheck/<name>.py`` imports at module level (not inside functions), or, with
    ``anywhere``, wherever they are imported; ``grading`` is the subpackage's files together (what they import
    from the rest of gradcheck)."""
    files = sorted((PKG / "grading").glob("*.py")) if name == "grading" else [PKG / f"{name}.py"]
    level = 2 if name == "grading" else 1
    out = set()
    for f in files:
        for node_level, module, names in _parsed(f)[1 if anywhere else 0]:
            if node_level == level:
                out |= {module.split(".")[0]} if module else set(names)
            elif (module or "").startswith("gradcheck."):
                out.add(module.split(".")[1])
    return out - {name}


def _cycle(anywhere: bool) -> str | None:
    """The first import cycle among gradcheck's modules (and ``grading``), as ``a -> b -> a``, or None."""
    names = [p.stem for p in PKG.glob("*.py") if p.stem not in ("__init__", "__main__")] + ["grading"]
    graph = {m: module_imports(m, anywhere) for m in names}
    return first_cycle(graph)


def test_module_imports_form_no_cycle():
    assert _cycle(anywhere=False) is None, f"import cycle: {_cycle(anywhere=False)}"


def test_imports_inside_functions_form_no_cycle_either():
    assert _cycle(anywhere=True) is None, f"import cycle through a function-level import: {_cycle(anywhere=True)}"


def test_the_cycle_finder_sees_a_function_level_import(monkeypatch):
    real = module_imports
    monkeypatch.setattr(sys.modules[__name__], "module_imports",
                        lambda m, anywhere=False: real(m, anywhere) | ({"cli"} if m == "compare" and anywhere else set()))
    assert _cycle(anywhere=False) is None
    assert "compare" in _cycle(anywhere=True) and "cli" in _cycle(anywhere=True)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_pipeline_module_imports_only_the_layers_below(name):
    assert module_imports(name) <= ALLOWED[name], f"{name} imports {sorted(module_imports(name) - ALLOWED[name])}"


def test_each_pipeline_module_imports_alone_in_a_fresh_interpreter():
    code = ("import importlib, sys\n"
            f"for m in {sorted(ALLOWED)!r}:\n"
            "    for k in [k for k in sys.modules if k == 'gradcheck' or k.startswith('gradcheck.')]:\n"
            "        del sys.modules[k]\n"
            "    importlib.import_module('gradcheck.' + m)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


#: Longest function or method allowed in gradcheck, autoprop and manualprop (issue 10: one idea per function, each
#: readable whole; its docstring counts).
MAX_FUNCTION_LINES = 80

#: The packages the limit holds in (session 15: autoprop and manualprop too).
LIMITED = ("gradcheck", "autoprop", "manualprop")


#: Functions still over the limit, to be split; an entry that has come under the limit fails the test
#: too, so the list only shrinks (it is empty now).
KNOWN_LONG: set = set()



def _long_functions() -> dict:
    """``{"package/module.py::name": lines}`` of every function or method over the limit in :data:`LIMITED`."""
    return {f"{p.relative_to(PKG.parent)}::{name}": lines
            for pkg in LIMITED for p in sorted((PKG.parent / pkg).rglob("*.py"))
            for name, lines in _parsed(p)[2] if lines > MAX_FUNCTION_LINES}


def test_no_function_in_gradcheck_autoprop_or_manualprop_is_longer_than_80_lines():
    long = _long_functions()
    new = {k: v for k, v in long.items() if k not in KNOWN_LONG}
    assert not new, "functions over 80 lines (split them): " + "; ".join(f"{k} ({v} lines)" for k, v in new.items())
    assert not KNOWN_LONG - set(long), f"no longer over the limit, remove from KNOWN_LONG: {KNOWN_LONG - set(long)}"


def test_the_length_limit_sees_every_package():
    """The walk reaches the three packages: a function of each is measured (a wrong root would pass vacuously)."""
    seen = {p.relative_to(PKG.parent).parts[0] for pkg in LIMITED for p in (PKG.parent / pkg).rglob("*.py")}
    assert seen == set(LIMITED), seen


def test_no_module_defines_a_function_or_class_twice():
    """A second ``def _scalar`` in _adapters.py silently replaced the first at import (tester14's helper found it:
    walk() ran with the usage probe's meaning of a scalar). ruff's F811 only catches a redefinition of an unused
    name; this catches any, in every package of ours."""
    twice = []
    for pkg in ("gradcheck", "autoprop", "manualprop"):
        for p in sorted((PKG.parent / pkg).rglob("*.py")):
            names = list(_parsed(p)[3])
            twice += [f"{p.relative_to(PKG.parent)}::{n}" for n in sorted(set(names)) if names.count(n) > 1]
    assert not twice, "defined twice in one module (the second replaces the first): " + ", ".join(twice)


def test_one_difference_kernel():
    """Issue 10: _adapters formed its own central difference ((f+ - f-) / (2 * eps), choosing between a stored
    and a returned dW), and numerical.local_differences its own ((Yp - Ym) * G / (x+ - x-)); every difference
    quotient is now the kernel's, which the sandbox child gets as text."""
    import re

    from gradcheck import _adapters, _kernel, numerical
    assert numerical.kernel is _kernel.kernel and _adapters.difference_quotient is _kernel.difference_quotient
    quotient = re.compile(r"/\s*\(\s*2(?:\.0)?\s*\*\s*(?:eps|h|step)\s*\)"  # (f+ - f-) / (2 * eps)
                          r"|\((\w*?)(?:p|plus)\s*-\s*\1(?:m|minus)\)[^\n]*/\s*\(")  # (Yp - Ym) ... / (x+ - x-)
    for path in PKG.rglob("*.py"):
        if path.name != "_kernel.py":
            assert not quotient.search(path.read_text(encoding="utf-8")), f"{path.name} forms a central difference"
