"""autoprop's core imports one way, floor by floor: the tensor and the tape know no primitive.

The imports of ``autoprop/core/**/*.py`` (parsed, not run; also those inside functions: a lazy
import postpones a cycle, it does not remove it) form no cycle, and each module imports only
modules on lower floors (:data:`FLOORS`, the order ARCHITECTURE.md draws): ``views``, ``tensor``,
``observe``, ``tape``, then ``registry`` (the record type and its tables), then ``prims/`` (the
records, whose files may import each other in one direction), then what reads a tape
(``forward``, ``control``, ``functional``, ``diagnose``, ``source``). Where a lower module calls up
at run time (Tensor's operators reach their primitive through ``tensor._R``), it names a slot
that ``autoprop/core/__init__.py`` fills once everything has loaded; the last tests check the
slots are filled.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

from tests.import_graph import first_cycle

CORE = Path(__file__).resolve().parents[1] / "autoprop" / "core"

#: Each module's floor (``prims.*``: every file of prims/); an import must go to a lower floor,
#: or, inside prims/, to a file that imports it back by no path (the cycle test).
FLOORS = {
    "views": 0, "complex": 0,
    "tensor": 1,
    "observe": 2,
    "tape": 3,
    "registry": 4,
    "prims": 5,
    "forward": 6, "control": 6, "functional": 6, "diagnose": 6, "source": 6,
    "": 7,  # autoprop/core/__init__.py: the package's face, which fills the slots
}


def _name(path: Path) -> str:
    """``prims.shape`` for autoprop/core/prims/shape.py, ``prims`` for its __init__, ``""`` for core's."""
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(CORE.rglob("*.py"))}


def _targets(module: str, node: ast.ImportFrom | ast.Import) -> set[str]:
    """The core modules one import statement of ``module`` names (a parent package that is
    only passed through, ``from .. import registry``, is not one of them)."""
    if isinstance(node, ast.Import):
        names = [a.name.removeprefix("autoprop.core.") for a in node.names if a.name.startswith("autoprop.core.")]
        return {n for n in names if n in MODULES}
    if node.level == 0:
        if not (node.module or "").startswith("autoprop.core"):
            return set()
        base = node.module.removeprefix("autoprop.core").lstrip(".").split(".")
    else:
        package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        package = [p for p in package if p]
        base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
    base = [p for p in base if p]
    out = set()
    for alias in node.names:
        whole = ".".join(base + [alias.name])
        out.add(whole if whole in MODULES else ".".join(base))
    return out - {module}


@functools.cache
def _parsed_imports(module: str) -> tuple[frozenset, frozenset]:
    """(module-level, anywhere) core imports of ``module``, each file parsed once."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top = [n for node in tree.body for n in (ast.walk(node) if isinstance(node, (ast.Try, ast.If)) else [node])]
    found = []
    for nodes in (top, ast.walk(tree)):
        found.append(frozenset().union(*(_targets(module, n) for n in nodes
                                         if isinstance(n, (ast.Import, ast.ImportFrom)))))
    return found[0], found[1]


def core_imports(module: str, anywhere: bool = False) -> set[str]:
    """The core modules ``module`` imports at module level (under ``if``/``try`` too), or, with
    ``anywhere``, wherever it imports them (inside functions and methods too)."""
    return set(_parsed_imports(module)[anywhere])


def _cycle(anywhere: bool) -> str | None:
    """The first import cycle among the core's modules, as ``a -> b -> a``, or None."""
    graph = {m: core_imports(m, anywhere) for m in MODULES}
    return first_cycle(graph)


def _floor(module: str) -> int:
    return FLOORS[module.split(".")[0]]


def test_every_core_module_has_a_floor():
    assert sorted(m for m in MODULES if m.split(".")[0] not in FLOORS) == []


def test_module_imports_form_no_cycle():
    assert _cycle(anywhere=False) is None, f"import cycle: {_cycle(anywhere=False)}"


def test_imports_inside_functions_form_no_cycle_either():
    assert _cycle(anywhere=True) is None, f"import cycle through a function-level import: {_cycle(anywhere=True)}"


def test_each_module_imports_only_lower_floors():
    up = sorted(f"{m} -> {n}" for m in MODULES for n in core_imports(m, anywhere=True)
                if _floor(n) > _floor(m) or (_floor(n) == _floor(m) and n.split(".")[0] != "prims"))
    assert up == [], f"imports that run up a floor (or across one): {up}"


def test_the_tensor_and_the_tape_know_no_primitive():
    for m in ("tensor", "tape", "observe", "views", "registry"):
        reach = core_imports(m, anywhere=True)
        assert not {n for n in reach if n.split(".")[0] in ("prims", "registry") and n != m}, (m, sorted(reach))


def test_the_cycle_finder_sees_a_function_level_import(monkeypatch):
    assert "registry" in core_imports("prims.elementwise")  # the finder reads relative imports
    assert "prims.stacking" in core_imports("prims.numeric")
    real = core_imports
    monkeypatch.setattr(sys.modules[__name__], "core_imports",
                        lambda m, anywhere=False: real(m, anywhere) | ({"prims.linalg"} if m == "tensor" and anywhere
                                                                         else set()))
    assert _cycle(anywhere=False) is None
    assert "tensor" in _cycle(anywhere=True) and "prims.linalg" in _cycle(anywhere=True)
    assert "tensor -> prims.linalg" in " ".join(
        f"{m} -> {n}" for m in MODULES for n in core_imports(m, anywhere=True) if _floor(n) > _floor(m))


def test_the_slots_the_lower_floors_call_up_through_are_filled():
    import autoprop.core as core
    from autoprop.core import diagnose, observe, registry, source, tape, tensor

    assert tensor._R is registry and observe._R is registry and tensor._observe is observe
    assert tape._diagnose is diagnose and tape._source is source
    assert core.registry is registry
    # the registry's namespace holds every family's names, as one table (registry.tanh)
    for family in registry.FAMILIES:
        for name in family.__all__:
            assert getattr(registry, name) is getattr(family, name), (family.__name__, name)
    assert registry.tanh is registry.PRIMITIVES["tanh"] and set(registry.__all__) >= {"tanh", "unbroadcast"}
