"""The one reading of a Python file's imports, and the one walk through the files they load (review26g L4: the
grader's import guard and the checker's ``log(... + eps)`` and float32 copies each walked a file's imports their own
way). Nothing runs: :mod:`ast` alone. :func:`_imports` lists the imports that can run (``import``, ``from ...
import``, ``__import__``/``importlib.import_module`` of a name built from literals, the imports of ``exec``/``eval``
of literal code; never in a branch that cannot run, ``if False:``); :func:`walk_imports` follows them from file to
file, each caller saying where a module's file is (:func:`module_files` on the filesystem for the grader, the
sandbox's layout of a checked file's folder for :func:`imported_files`). Standard library only; imports nothing of
gradcheck's, so the checker (``gradcheck/``) and the grader (``gradcheck/grading/``) both stand on it.
"""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import importlib.util
import os
from collections.abc import Callable, Iterable, Iterator

from . import _pyast

__all__ = ["imported_files", "loaded_names", "module_files", "walk_imports"]


#: Calls that import the module (``"import"``) or run the code (``"code"``) their first argument names:
#: builtins, or these names on ``importlib``/``builtins`` (:func:`_dynamic`).
_DYNAMIC = {"__import__": "import", "import_module": "import", "exec": "code", "eval": "code"}
#: Modules whose namespace holds the functions of :data:`_DYNAMIC`.
_SPACES = frozenset({"builtins", "__builtins__", "importlib"})


def _space(node: ast.AST) -> bool:
    """Whether ``node`` is a namespace holding :data:`_DYNAMIC`'s functions: ``builtins``,
    ``__builtins__``, ``importlib``, their ``vars()`` or ``__dict__``, ``globals()``, or a lookup of one
    by name (``sys.modules["builtins"]``, ``globals()["__builtins__"]``)."""
    if isinstance(node, ast.Name):
        return node.id in _SPACES
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__" and _space(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id == "globals" or node.func.id == "vars" and bool(node.args) and _space(node.args[0])
    return isinstance(node, ast.Subscript) and _text(node.slice) in _SPACES


def _dynamic(node: ast.AST) -> str | None:
    """The function of :data:`_DYNAMIC` the expression ``node`` is (``"__import__"``), ``"?"`` for a
    lookup on a namespace of them (:func:`_space`) whose name the scan cannot read
    (``getattr(builtins, name)``), else None. Read: the names themselves, an attribute
    (``builtins.__import__``, ``importlib.import_module``), ``getattr(builtins, "__import__")`` and a
    subscript (``vars(builtins)["__import__"]``, ``importlib.__dict__["import_module"]``); ``exec`` and
    ``eval`` only on a namespace (``model.eval`` is not Python's)."""
    if isinstance(node, ast.Name):
        return node.id if node.id in _DYNAMIC else None
    if isinstance(node, ast.Attribute):
        obj, key = node.value, ast.Constant(node.attr)
    elif isinstance(node, ast.Subscript):
        obj, key = node.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2:
        obj, key = node.args[0], node.args[1]
    else:
        return None
    name = _text(key)
    if name is None:
        return "?" if _space(obj) else None
    return name if name in _DYNAMIC and (_DYNAMIC[name] == "import" or _space(obj)) else None


def _text(node: ast.AST | None) -> str | None:
    """The string ``node`` always is when built from string literals alone (``"sc" + "ipy"``, an
    f-string without fields), else None."""
    try:
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = _text(node.left), _text(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.JoinedStr):
            parts = [_text(v) for v in node.values]
            return None if None in parts else "".join(parts)
    except RecursionError:
        pass
    return None


def _imported(node: ast.AST, bound: frozenset[str] = frozenset()) -> list[str | None]:
    """The modules ``node`` imports: ``import``, ``from ... import`` (a relative one's name begins with its dots:
    the submission's own module; :func:`loaded_names` adds ``from a import b``'s ``a.b``), a call of a function of
    :data:`_DYNAMIC` (:func:`_dynamic`: ``__import__``/``import_module`` of a name built from literals,
    the imports of the code ``exec``/``eval`` run when it is built from literals); None where the scan
    cannot tell: such a call of a name or code known only at run time, a lookup it cannot read
    (``getattr(builtins, name)(...)``), or such a function taken but not called here (``imp =
    __import__``; a bare name only when the file does not bind it itself, ``bound``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):  # a relative one with its dots: "." (from . import x), "..pkg"
        return ["." * node.level + (node.module or "")]
    if not isinstance(node, ast.Call) or (name := _dynamic(node.func)) is None:
        taken = _dynamic(node) if isinstance(getattr(node, "ctx", ast.Load()), ast.Load) else None
        return [None] if taken is not None and not (isinstance(node, ast.Name) and node.id in bound) else []
    if not node.args:
        return []  # it fails when it runs, here and graded alike
    if name == "?" or (text := _text(node.args[0])) is None:
        return [None]
    if _DYNAMIC[name] == "import":
        return [text]
    try:
        code = _pyast.parse(text, mode="exec" if name == "exec" else "eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # it fails when it runs, here and graded alike
    return [m for _, m in _imports(code, guarded=True)]


def _bound(tree: ast.AST) -> frozenset[str]:
    """The names of :data:`_DYNAMIC` that ``tree`` binds itself (a parameter ``eval=False``, an
    assignment, a ``def``): a bare reference to one is the file's own, not Python's."""
    out = set()
    for n in ast.walk(tree):
        name = (n.arg if isinstance(n, ast.arg) else n.id if isinstance(n, ast.Name) and not isinstance(
            n.ctx, ast.Load) else n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            else None)
        if name in _DYNAMIC:
            out.add(name)
    return frozenset(out)


def _taken(test: ast.AST, main: bool = False) -> bool | None:
    """Whether an ``if`` with this test always runs its body (True) or its ``else`` (False): a
    constant (``if False:``, ``if 0:``), ``TYPE_CHECKING`` (false when the code runs), ``not`` of
    one, and with ``main`` (the ``if`` is one of :func:`_main_false`'s) ``__name__ == "__main__"`` (false: the grader and the checker
    import a file, never run it as a script; ``!=`` true); None when it depends on the run. Read in a loop, not by
    recursion: a valid line of 1,500 ``not``s (redteam30 S2) is no RecursionError."""
    flips = 0
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, flips = test.operand, flips + 1
    if isinstance(test, ast.Constant):
        taken = bool(test.value)
    elif isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or isinstance(
            test, ast.Attribute) and test.attr == "TYPE_CHECKING":
        taken = False
    elif main and isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.ops[0], (ast.Eq, ast.NotEq)) and _is_main_compare(test.left, test.comparators[0]):
        taken = isinstance(test.ops[0], ast.NotEq)
    else:
        return None
    return taken != bool(flips % 2)


def _is_main_compare(a: ast.AST, b: ast.AST) -> bool:
    """Whether ``a``, ``b`` are ``__name__`` and the string ``"__main__"``, in either order."""
    return any(isinstance(x, ast.Name) and x.id == "__name__" and isinstance(y, ast.Constant) and y.value == "__main__"
               for x, y in ((a, b), (b, a)))


#: Names through which code can write a module's namespace, or read one it then writes, without naming
#: ``__name__`` in a way :func:`_main_false` reads (``globals().update({"__na" + "me__": ...})``, a frame's
#: ``f_globals``, a function's ``__globals__``, ``sys.modules[...]`` with ``setattr``): a file using one keeps its
#: ``if __name__ == "__main__":`` blocks counted (verify44b F2).
_NAMESPACE_WRITERS = frozenset({
    "globals", "vars", "locals", "exec", "eval", "__import__", "import_module", "modules", "_getframe",
    "currentframe", "f_globals", "f_locals", "__globals__", "__dict__", "__builtins__", "builtins",
    "__getattribute__", "__setattr__", "attrgetter", "methodcaller", "get_referrers", "reload"})
#: Of them, those read as attributes too (``sys.modules``, ``frame.f_globals``): not ``model.eval()``.
_WRITER_ATTRS = _NAMESPACE_WRITERS - {"globals", "vars", "locals", "exec", "eval"}


def _rebinds_name(n: ast.AST) -> bool:
    """Whether the node ``n`` may bind ``__name__`` (:func:`_main_false`): an assignment, ``global``, ``del``, a
    parameter, ``import ... as``, ``except ... as``, a ``match`` capture or keyword of that name, an attribute
    ``.__name__`` set, a string holding it, a namespace writer (:data:`_NAMESPACE_WRITERS`) named, or ``setattr``,
    ``getattr``, ``delattr`` of such a name or of one not built from literals (but on ``self``, ``cls``)."""
    name = "__name__"
    if isinstance(n, ast.Name):
        return n.id == name and not isinstance(n.ctx, ast.Load) or n.id in _NAMESPACE_WRITERS
    if isinstance(n, ast.Attribute):
        return n.attr == name and not isinstance(n.ctx, ast.Load) or n.attr in _WRITER_ATTRS
    if isinstance(n, (ast.Global, ast.Nonlocal)):
        return name in n.names
    if isinstance(n, ast.Constant):
        return isinstance(n.value, str) and (name in n.value or n.value in _WRITER_ATTRS) or isinstance(
            n.value, bytes) and name.encode() in n.value
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "getattr", "delattr"):
        text = _text(n.args[1]) if len(n.args) >= 2 else None  # getattr(self, name): the layer's own attributes
        return text in _WRITER_ATTRS or text == name or text is None and not (n.args and _on_self(n.args[0]))
    bound = (n.arg if isinstance(n, (ast.arg, ast.keyword)) else n.asname if isinstance(n, ast.alias)
             else n.name if isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) else n.rest
             if isinstance(n, ast.MatchMapping) else None)
    return bound == name


def _on_self(n: ast.AST) -> bool:
    """Whether ``n`` is ``self`` or ``cls``: a layer's own attributes, not a module's namespace."""
    return isinstance(n, ast.Name) and n.id in ("self", "cls")


#: Scopes whose names are not the module's: a ``__name__`` read there may be a parameter or a local of theirs.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)


def _main_false(tree: ast.AST) -> frozenset[int]:
    """The ``id`` of each ``if`` (and ``x if c else y``) in the module's own scope (not in a function, lambda, class
    or comprehension, whose ``__name__`` may be a parameter: verify44b F2) where ``__name__ == "__main__"`` is false
    as the grader and the checker run the code (imported as a module: its ``__name__`` is its import name); none
    when the file may rebind ``__name__`` (:func:`_rebinds_name`), whose branches are read as before (the branch may
    run): newuser44 F1, a self-test under ``if __name__ == "__main__":`` importing autograd scored 0/28."""
    own = {id(n.func if isinstance(n, ast.Call) else n) for n in ast.walk(tree) if (
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars" and n.args or isinstance(
            n, ast.Attribute) and n.attr == "__dict__") and _on_self(n.args[0] if isinstance(n, ast.Call) else n.value)}
    if any(_rebinds_name(n) for n in ast.walk(tree) if id(n) not in own):  # vars(self), self.__dict__: the layer's
        return frozenset()
    out, stack = set(), [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.IfExp)):
            out.add(id(node))
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _SCOPES))
    return frozenset(out)


def _imports(tree: ast.AST, *, guarded: bool) -> Iterator[tuple[ast.AST, str | None]]:
    """``(node, module)`` of each import in ``tree`` that can run (:func:`_imported`; module None:
    the scan cannot tell), the one scan of both guards. Never in the branch an ``if`` (or ``x if c
    else y``) does not take (:func:`_taken`); with ``guarded`` False, not in the body of a ``try`` whose ``except`` makes the
    import optional (:func:`_guards_import`)."""
    stack, bound, main = [tree], _bound(tree), _main_false(tree)
    while stack:
        node = stack.pop()
        yield from ((node, m) for m in _imported(node, bound))
        if isinstance(node, ast.Call) and _dynamic(node.func) is not None:
            children = [*node.args, *node.keywords]  # its callee is read (a second look would report it taken)
        elif not guarded and isinstance(node, ast.Try) and _guards_import(node.handlers):
            children = [*node.handlers, *node.orelse, *node.finalbody]
        elif isinstance(node, (ast.If, ast.IfExp)) and (taken := _taken(node.test, id(node) in main)) is not None:
            branch = node.body if taken else node.orelse  # a list of statements, or an expression
            children = [node.test, *(branch if isinstance(branch, list) else [branch])]
        else:
            children = list(ast.iter_child_nodes(node))
        stack += reversed(children)


def loaded_names(node: ast.AST, module: str) -> list[str]:
    """The modules an import of ``module`` (:func:`_imports`' pair) may load: ``module``, and, of ``from module
    import b, c``, ``module.b`` and ``module.c`` (each loaded when it is a submodule: ``from pkg import helper``)."""
    if not isinstance(node, ast.ImportFrom) or any(a.name == "*" for a in node.names):
        return [module]
    return [module + "." * (not module.endswith(".")) + a.name for a in node.names]


def module_files(name: str, folder: str | None) -> list[tuple[str, str]]:
    """``(module name, '' for a relative one; its source file)`` of the modules ``name`` loads (each package's
    ``__init__.py``, the module's own file), found without running them: a relative name (``..pkg.mod``) in
    the importing file's ``folder``, its parents for more dots; an absolute one in ``folder`` too when given,
    else through :data:`sys.meta_path` (editable installs included); each next part in its parent's folders."""
    level = len(name) - len(name.lstrip("."))
    parts = [p for p in name.split(".") if p]
    where = None if folder is None else [functools.reduce(lambda d, _: os.path.dirname(d), range(level - 1), folder)]
    out: list[tuple[str, str]] = []
    for i in range(len(parts)):
        try:
            spec = importlib.util.find_spec(parts[0]) if i == 0 and where is None else \
                importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), where)
        except (ImportError, ValueError, AttributeError, KeyError):  # KeyError: a namespace package's parent
            spec = None                                                   # not imported (PathFinder reads sys.modules)
        if spec is None:
            break
        if isinstance(spec.origin, str) and spec.origin.endswith(".py"):
            out.append(("" if level else spec.name, spec.origin))
        where = list(spec.submodule_search_locations or [])
        if not where:
            break
    return out


#: Exceptions whose ``except`` makes an import optional (the file imports without the module).
_IMPORT_GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _guards_import(handlers: list[ast.ExceptHandler]) -> bool:
    types = [t for h in handlers if h.type is not None
             for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])]
    return any(h.type is None for h in handlers) or any(
        (t.id if isinstance(t, ast.Name) else getattr(t, "attr", "")) in _IMPORT_GUARDS for t in types)



#: What a file that cannot be read or parsed raises in :func:`walk_imports` (a recursion: ``1+1+...`` a million times;
#: or a tree deeper than a reading of its imports can follow, redteam30 S2: a file that is then not checked).
UNREADABLE = (OSError, SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError)


def walk_imports(starts: Iterable[str], follow: Callable[[str, ast.AST, str | None], Iterable[str]],
                 parse: Callable[[str], tuple[list[str], ast.AST]], *,
                 guarded: bool) -> Iterator[tuple[str, tuple[list[str], ast.AST, list] | None]]:
    """Each file reached from ``starts`` by the imports that can run, once, in the order reached: ``(path, (lines,
    tree, imports))``, ``imports`` :func:`_imports`' ``(node, module)`` pairs (``guarded``: as there), or ``(path,
    None)`` for a file ``parse`` (``path -> (lines, tree)``) could not read (:data:`UNREADABLE`). ``follow(path,
    node, module)`` gives the files an import loads that are to be read too (a module None: one the scan cannot
    name); the walk goes on into them. The one walk of the grader's import guard (:func:`gradcheck.grading.static.
    unavailable_imports`) and the checker's copies (:func:`imported_files`)."""
    todo, seen = list(starts)[::-1], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            lines, tree = parse(path)
            found = list(_imports(tree, guarded=True) if guarded else _imports(tree, guarded=False))
        except UNREADABLE:
            yield path, None
            continue
        yield path, (lines, tree, found)
        nxt = [f for node, mod in found for f in follow(path, node, mod)]
        todo += [f for f in nxt if f not in seen][::-1]  # depth first, each file's imports in their order


def _module_keys(name: str) -> tuple[str, str]:
    """The file names a module ``name`` (``common.functions``) may be in a checked file's folder as the sandbox lays it
    out (:func:`gradcheck.sandbox.sibling_files`' keys): ``("common/functions.py", "common/functions/__init__.py")``."""
    base = name.replace(".", "/")
    return base + ".py", base + "/__init__.py"


class _Unknown(Exception):
    """An import whose module the scan cannot name (``import_module(name)``): any file may be loaded."""


def _read(path: str) -> tuple[list[str], ast.AST]:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return text.splitlines(), _pyast.parse(text)


def imported_files(start: str, files: dict[str, str]) -> list[str]:
    """The names in ``files`` (``{name: path}``, :func:`gradcheck.sandbox.sibling_files`) that the file named
    ``start`` imports, directly or through another of them, ``start`` included, in the order reached (tester25s M5:
    Deep Learning from Scratch's ``common/util.py``, with a ``1e-6`` in a denominator, imported by nothing the checked
    file uses, was named as the loss's eps beside ``common/functions.py``'s ``1e-7``). The imports are
    :func:`walk_imports`' (those that can run, in a ``try`` too; ``importlib.import_module("common.util")`` of a
    literal name too; not one under ``if False:``); ``import a.b`` and ``from a.b import c`` reach ``a/__init__.py``,
    ``a/b.py`` and ``a/b/c.py``; a relative import is read from the importing file's folder (review26g M2). Every
    name of ``files`` when a file reached does not parse or imports a module named only at run time (what it loads
    is then unknown)."""
    names = {p: n for n, p in files.items()}

    def follow(path: str, node: ast.AST, mod: str | None) -> list[str]:
        if mod is None:
            raise _Unknown
        here = names[path].rpartition("/")[0].split("/") if "/" in names[path] else []
        out = []
        for m in loaded_names(node, mod):
            level = len(m) - len(m.lstrip("."))
            if level and level - 1 > len(here):
                continue
            parts = here[:len(here) - (level - 1)] + [p for p in m.split(".") if p] if level else m.split(".")
            for i in range(1, len(parts) + 1):  # a.b.c imports a and a.b too
                out += [files[k] for k in _module_keys(".".join(parts[:i])) if k in files]
        return out

    if start not in files:
        return []
    reached = []
    try:
        for path, parsed in walk_imports([files[start]], follow, _read, guarded=True):
            if parsed is None:
                return list(files)
            reached.append(names[path])
    except _Unknown:
        return list(files)
    return reached
