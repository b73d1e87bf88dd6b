"""Every public function has a docstring (the project's standard: numpydoc, with shapes, dtypes,
what it raises and the source of each formula; ``mkdocs.yml`` renders them with
``docstring_style: numpy``).

The scan reads the source (``ast``), not the imported objects: ``registry.defcomposite`` writes a
generic docstring into a composite that has none, so an import-time check would never see the gap.
It covers, in ``manualprop``, ``autoprop`` and ``gradcheck``:

* module-level public functions and classes (names not starting with ``_``), in every module,
  ``_``-prefixed ones too (``_sandbox_child.main``);
* the public methods of public classes, property setters included (``Layer.trainable``'s says
  what it raises), in every module: the ``_``-prefixed modules hold classes users reach through
  the checker (``_adapters.Adapted.forward``) and the grader (``_zygote.ZygoteChild.kill``).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("manualprop", "autoprop", "gradcheck")

#: Gaps another helper of session 21 owns (those files were being changed beside this scan);
#: delete an entry when its function gets its docstring, so the scan guards it too.
KNOWN_GAPS = {}


def _missing(tree):
    """``(line, qualified name)`` of each public function, class or public class's method of the
    module ``tree`` without a docstring (a property setter named ``name@setter``)."""
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name.startswith("_"):
            continue
        if not ast.get_docstring(node):
            out.append((node.lineno, node.name))
        if isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith("_") \
                        and not ast.get_docstring(m):
                    setter = any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                                 for d in m.decorator_list)
                    out.append((m.lineno, f"{node.name}.{m.name}" + ("@setter" if setter else "")))
    return out


def _scan():
    found = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            known = KNOWN_GAPS.get(rel, set())
            found += [f"{rel}:{line} {name}" for line, name in _missing(ast.parse(path.read_text(encoding="utf-8")))
                      if name not in known]
    return found


def test_every_public_function_and_method_has_a_docstring():
    missing = _scan()
    assert not missing, (f"{len(missing)} public function(s) without a docstring (numpydoc: a summary line, "
                         "Parameters/Returns with shapes and dtypes, Raises, and the formula's source):\n"
                         + "\n".join(missing))


@pytest.mark.parametrize("source, want", [
    ("def f(x):\n    return x\n", [(1, "f")]),
    ("def _f(x):\n    return x\n", []),
    ('def f(x):\n    """Doc."""\n', []),
    ("class C:\n    '''Doc.'''\n    def m(self):\n        pass\n    def _p(self):\n        pass\n", [(3, "C.m")]),
    ("class C:\n    '''Doc.'''\n    @property\n    def v(self):\n        '''Doc.'''\n"
     "    @v.setter\n    def v(self, x):\n        pass\n", [(7, "C.v@setter")]),
    ("class _C:\n    def m(self):\n        pass\n", []),
    ("class C:\n    def m(self):\n        '''Doc.'''\n", [(1, "C")]),
])
def test_the_scan_finds_what_it_should(source, want):
    assert _missing(ast.parse(source)) == want
