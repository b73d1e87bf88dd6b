"""Static import guard: may a submitted file import autoprop, autograd, torch, jax or tensorflow?

An assignment that asks for hand-derived gradients forbids automatic
differentiation in the student's files. :func:`forbidden_imports` reads the
files with :mod:`ast` (nothing is executed) and finds ``import x``,
``from x import y``, ``__import__("x")`` and ``importlib.import_module("x")``
with a literal name. The sandbox also refuses to import these modules at run
time (``Sandbox(blocked_modules=...)``), which catches names built at run time.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["DEFAULT_FORBIDDEN", "ImportViolation", "forbidden_imports", "format_violations"]

#: Automatic-differentiation packages an assignment on manual backprop forbids.
DEFAULT_FORBIDDEN = ("autoprop", "autograd", "torch", "jax", "tensorflow")


@dataclass(frozen=True)
class ImportViolation:
    """One forbidden import: file (relative name), line, the module imported, the statement."""

    file: str
    line: int
    module: str
    statement: str


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module] if node.module and not node.level else []
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in ("__import__", "import_module"):
            return [node.args[0].value]
    return []


def forbidden_imports(files: Iterable[str], forbidden: Iterable[str] = DEFAULT_FORBIDDEN, *,
                      root: str | None = None) -> list[ImportViolation]:
    """Find imports of forbidden top-level modules in Python files.

    Parameters
    ----------
    files : iterable of str
        Paths of ``.py`` files (others are skipped).
    forbidden : iterable of str, default :data:`DEFAULT_FORBIDDEN`
        Top-level module names; ``"torch"`` also forbids ``torch.nn``.
    root : str, optional
        Folder the reported names are relative to (default: base names).

    Returns
    -------
    list of ImportViolation
        In file and line order. A file that does not parse is skipped here (the
        import in the sandbox reports its syntax error).
    """
    banned = {m.split(".")[0] for m in forbidden}
    out: list[ImportViolation] = []
    for path in sorted(files):
        if not path.endswith(".py") or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                src = fh.read()
            tree = ast.parse(src, filename=path)
        except (SyntaxError, ValueError):
            continue
        lines = src.splitlines()
        name = os.path.relpath(path, root) if root else os.path.basename(path)
        for node in ast.walk(tree):
            for mod in _imported(node):
                if mod.split(".")[0] in banned:
                    ln = getattr(node, "lineno", 0)
                    text = lines[ln - 1].strip() if 0 < ln <= len(lines) else ""
                    out.append(ImportViolation(name, ln, mod, text))
    return sorted(out, key=lambda v: (v.file, v.line))


def format_violations(violations: list[ImportViolation], forbidden: Iterable[str]) -> str:
    """A Markdown paragraph naming each forbidden import and why it costs the credit."""
    where = "; ".join(f"`{v.statement}` ({v.file}, line {v.line})" for v in violations)
    return (f"This part of the assignment must be written without automatic differentiation: "
            f"{', '.join(sorted(set(forbidden)))} may not be imported, and the submission imports "
            f"{', '.join(sorted({v.module.split('.')[0] for v in violations}))}: {where}. "
            f"No credit is given for this part; derive the gradients by hand with numpy.")
