"""Static import guard: may a submitted file import autoprop, autograd, torch, jax or tensorflow?

An assignment on hand-derived gradients forbids automatic differentiation. :func:`forbidden_imports`
reads the files with :mod:`ast` (nothing runs, nothing they import is read: a cycle costs nothing)
and finds ``import x``, ``from x import y``, ``__import__("x")`` and
``importlib.import_module("x")`` with a name built from literals (also reached by a lookup:
``getattr(builtins, "__import__")``, ``vars(builtins)[...]``, ``importlib.__dict__[...]``), and the imports of
``exec``/``eval`` of literal code, never in a branch that cannot run (``if False:``); the sandbox
also refuses these modules at run time (names built at run time). :func:`unavailable_imports`
reads the same scan for what the grader does not provide. A file the parser cannot read for its depth (``1+1+...`` a
million times, deeply nested brackets) or larger than :data:`MAX_BYTES` is reported as unchecked,
never skipped; a file with a syntax error is skipped (the sandbox's import reports it).

The grader's scan is its own cost, bounded and done once per file content (:func:`scan`, cached by
digest): a file up to :data:`AST_BYTES` is parsed with :mod:`ast` (parsing 1 MiB of ``f(g(h(1)))``
lines took 4.7 s of CPU and 658 MB peak, measured; 64 KiB about a sixteenth of that), a larger one
is read by :func:`_token_scan`: its import statements and the calls of ``__import__``,
``import_module``, ``exec`` and ``eval`` found by :mod:`tokenize` (linear, a few MB) and each such
statement parsed alone, and none of that when a C-speed search finds no such word in it (a data
file). Above :data:`AST_BYTES`, an import in a branch that cannot run counts, and a lookup by a name
built from literals (``getattr(x["buil" + "tins"], ...)``) is not read: the sandbox refuses the
forbidden modules at run time anyway.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import io
import os
import re
import stat
import sys
import time
import tokenize
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .. import _pyast
from .._import_scan import (
    _DYNAMIC,
    _imports,
    _main_false,
    _taken,
    loaded_names,
    module_files,
    walk_imports,
)
from ..errors import CODE_MARK

__all__ = ["DEFAULT_FORBIDDEN", "MAX_BYTES", "ImportViolation", "Scan", "scan", "forbidden_imports", "graded_files", "format_violations", "code_span",
           "Markdown", "markdown_text", "name_span", "NAME_SHOWN",
           "unavailable_imports", "ENGINES", "engine_names", "vendored_engines"]

#: Automatic-differentiation packages an assignment on manual backprop forbids.
DEFAULT_FORBIDDEN = ("autoprop", "autograd", "torch", "jax", "tensorflow")

#: Largest file the guard reads (the grading plugin loads no larger file either).
MAX_BYTES = 1 << 20
#: Forbidden imports reported per file, and in one message.
MAX_PER_FILE = 10
#: Largest file read with :mod:`ast` (larger ones: :func:`_token_scan`, linear and small).
AST_BYTES = 64 << 10
#: Longest statement the token scan parses (a longer one holding an import word: the file is unchecked).
MAX_STATEMENT = 64 << 10


@dataclass(frozen=True)
class ImportViolation:
    """One forbidden (or unavailable) import: file (relative name), line, module, statement;
    ``module`` None: the file could not be checked, and ``statement`` says why (for
    :func:`unavailable_imports`: the statement whose import the scan cannot resolve)."""

    file: str
    line: int
    module: str | None
    statement: str
    #: the test of the innermost ``if`` the import sits under whose branch the scan cannot decide
    #: (``GPU`` of ``if GPU: import cupy``), else None: the import runs whenever its file does
    condition: str | None = None


def _conditions(tree: ast.AST) -> dict[ast.AST, str]:
    """Each statement inside the body or ``else`` of an ``if`` whose test :func:`_taken` cannot decide,
    mapped to that test's source (the innermost such ``if``). A walk with its own stack (redteam30 S2: a tree
    deeper than Python's recursion limit is valid code); a test too deep to write back is named so."""
    out: dict[ast.AST, str] = {}
    stack: list[tuple[ast.AST, str | None]] = [(tree, None)]
    main = _main_false(tree)
    while stack:
        node, cond = stack.pop()
        test = None
        if isinstance(node, ast.If) and _taken(node.test, id(node) in main) is None:
            try:
                test = ast.unparse(node.test)
            except RecursionError:
                test = "(a condition nested too deeply to show)"
        for child in ast.iter_child_nodes(node):
            inner = test if test is not None and child is not node.test else cond
            if inner is not None:
                out[child] = inner
            stack.append((child, inner))
    return out


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
        In file and line order; ``module`` None for a file that could not be checked.
    """
    banned = {m.split(".")[0] for m in forbidden}
    out: list[ImportViolation] = []
    for path in sorted(files):
        if not path.endswith(".py") or not os.path.isfile(path):
            continue
        name = os.path.relpath(path, root) if root else os.path.basename(path)
        found = scan(path)
        if found.unchecked:
            out.append(ImportViolation(name, 0, None, found.unchecked))
            continue
        out += [ImportViolation(name, line, mod, text) for line, mod, text in
                [i for i in found.imports if i[1].split(".")[0] in banned][:MAX_PER_FILE]]
    return sorted(out, key=lambda v: (v.file, v.line))


class _AnyFile(Exception):
    """An import :func:`graded_files` cannot follow (a module named at run time): any file may run."""


#: Modules and functions that load or run another file's code by a path or a name given as data, which
#: :func:`graded_files` does not follow as it follows ``import`` (verify44b F3: ``runpy.run_path``,
#: ``pkgutil.resolve_name("helper:f")``, ``pydoc.locate``, ``spec_from_file_location(...).loader.exec_module``,
#: ``pickle.loads(b"chelper...")`` ran a helper.py holding ``import autograd`` that the guard no longer read). A
#: reached file naming one makes every file graded, as before; the list is what the standard library and the common
#: packages offer, not a proof, and the sandbox, which holds no autodiff package, stays the wall.
_LOADERS = frozenset({
    "runpy", "run_path", "run_module", "pkgutil", "resolve_name", "pydoc", "locate", "pickle", "_pickle", "marshal",
    "dill", "cloudpickle", "joblib", "shelve", "copyreg", "allow_pickle", "importlib", "spec_from_file_location",
    "spec_from_loader", "module_from_spec", "exec_module", "load_module", "SourceFileLoader", "SourcelessFileLoader",
    "zipimport", "zipimporter", "imp", "load_source", "meta_path", "path_hooks", "__loader__", "code", "runsource",
    "runcode", "InteractiveInterpreter", "InteractiveConsole", "doctest", "testfile", "testmod", "DocFileSuite",
    "timeit", "cProfile", "profile", "pdb", "trace", "mock", "dictConfig", "fileConfig", "entry_points",
    "get_type_hints", "ForwardRef", "_evaluate"})


def _loads_by_data(tree: ast.AST) -> bool:
    """Whether ``tree`` names one of :data:`_LOADERS` (a name, an attribute, a module imported or a string)."""
    for n in ast.walk(tree):
        names = ([n.id] if isinstance(n, ast.Name) else [n.attr] if isinstance(n, ast.Attribute) else
                 [p for a in n.names for p in a.name.split(".")] if isinstance(n, ast.Import) else
                 [*(n.module or "").split("."), *(a.name for a in n.names)] if isinstance(n, ast.ImportFrom) else
                 [n.value] if isinstance(n, ast.Constant) and isinstance(n.value, str) else [])
        if any(x in _LOADERS for x in names):
            return True
    return False


def graded_files(start: str, files: dict[str, str]) -> list[str]:
    """The paths of ``files`` (``{relative name: path}``, the submission's) that importing the graded file ``start``
    may run: ``start`` and the files it imports, directly or through one another (:func:`walk_imports`; an import in
    a ``try`` too; an absolute name looked up from the submission's top and from the importing file's folder alike).
    Every file when one cannot be told: ``start`` not among them, a file over :data:`AST_BYTES`, one that does not
    parse, an import of a name known only at run time, or a file naming a way to load code by a path or a name given
    as data (:data:`_LOADERS`: ``runpy``, ``pickle``, ``importlib``, ...). A script beside the graded file that nothing imports (a
    student's own check against autograd) never runs in grading (newuser44 F6: it cost a correct submission 0/28).

    Parameters
    ----------
    start : str
        The relative name of the file a test loads (``"layers.py"``).
    files : dict of str to str
        The submission's ``.py`` files by relative name.

    Returns
    -------
    list of str
        Paths, in the order reached.

    Notes
    -----
    The answer is kept for the files as they are (:data:`_GRADED`): each test that loads a file asks again (a grading
    of cs231n_layers, 22 times: a third of its child's CPU time), and the files have not changed.
    """
    key = _files_key(start, files)
    if key is not None and key in _GRADED:
        return list(_GRADED[key])
    reached = _graded_files(start, files)
    if key is not None:
        if len(_GRADED) >= 64:
            _GRADED.clear()
        _GRADED[key] = list(reached)
    return reached


#: :func:`graded_files`' answers by :func:`_files_key`.
_GRADED: dict[tuple, list[str]] = {}


def _files_key(start: str, files: dict[str, str]) -> tuple | None:
    """``start`` and each file's name, path and ``lstat`` (device, inode, size, modification and change times in
    nanoseconds: a write changes the change time, which no call sets back); None when a file cannot be read so."""
    try:
        return start, tuple((name, os.path.abspath(path), *((st := os.lstat(path)).st_dev, st.st_ino, st.st_mode,
                                                             st.st_size, st.st_mtime_ns, st.st_ctime_ns))
                            for name, path in sorted(files.items()))
    except OSError:
        return None


def _graded_files(start: str, files: dict[str, str]) -> list[str]:
    """:func:`graded_files`' reading of the files, every time."""
    everything = list(files.values())
    if start not in files or any(os.path.getsize(p) > AST_BYTES for p in everything):
        return everything
    name_of = {os.path.abspath(p): n for n, p in files.items()}

    def follow(path: str, node: ast.AST, mod: str | None) -> list[str]:
        if mod is None:
            raise _AnyFile
        here = name_of[os.path.abspath(path)].rpartition("/")[0]
        out = []
        for m in loaded_names(node, mod):
            level, parts = len(m) - len(m.lstrip(".")), [p for p in m.split(".") if p]
            up = here.split("/") if here else []
            if level > len(up) + 1:
                continue
            bases = ["/".join(up[:len(up) - level + 1])] if level else ["", here]
            for base in bases:
                for i in range(1, len(parts) + 1):  # a.b.c runs a and a.b too
                    stem = "/".join(([base] if base else []) + parts[:i])
                    out += [files[k] for k in (stem + ".py", stem + "/__init__.py") if k in files]
        return out

    try:
        reached = []
        for path, parsed in walk_imports([files[start]], follow, _parsed, guarded=True):
            if parsed is None or _loads_by_data(parsed[1]):
                return everything
            reached.append(path)
    except _AnyFile:
        return everything
    return reached


def _parsed(path: str, nofollow: bool = False) -> tuple[list[str], ast.AST]:
    """The lines of a file's first :data:`MAX_BYTES` (UTF-8) and its tree, or the parser's error. ``nofollow``
    (``gradcheck check --isolation namespaces``, a file one did not write): the sandbox's copy rule, a symbolic link
    (the file, or a folder above it) or a file that is not regular is never read (ValueError), the file opened with
    ``O_NOFOLLOW`` (review28g M3: the parent's import scan quoted a linked file's ``# STAFF_SECRET=...`` line)."""
    if not nofollow:
        with open(path, "rb") as fh:
            src = fh.read(MAX_BYTES).decode("utf-8", errors="replace")
        return src.splitlines(), _pyast.parse(src, filename=path)
    from ..sandbox import _refuse_reason

    if why := _refuse_reason(path):
        raise ValueError(f"{path} is not read: {why}")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"{path} is not read: not a regular file")
        src = fh.read(MAX_BYTES).decode("utf-8", errors="replace")
    return src.splitlines(), _pyast.parse(src, filename=path)


def _statement(node: ast.AST, lines: list[str]) -> tuple[int, str]:
    """The line of ``node`` and its text (at most 200 characters)."""
    ln = getattr(node, "lineno", 0)
    return ln, lines[ln - 1].strip()[:200] if 0 < ln <= len(lines) else ""


@dataclass(frozen=True)
class Scan:
    """What the grader's scan read of one file: ``imports`` ``(line, module, statement)`` of each import
    that can run whose module the scan can read, in line order; ``defined`` the function and class names
    (:func:`vendored_engines`); ``unchecked`` why its imports could not be read ("" when they were);
    ``seconds`` the scan's CPU time."""

    imports: tuple[tuple[int, str, str], ...] = ()
    defined: frozenset[str] = frozenset()
    unchecked: str = ""
    seconds: float = 0.0


#: :func:`scan`'s results by the digest of a file's bytes (one scan per content, however often asked).
_SCANS: dict[str, Scan] = {}
#: The digest of a file by ``(path, size, mtime)``.
_DIGESTS: dict[tuple[str, int, int], str] = {}


def scan(path: str) -> Scan:
    """The grader's scan of the ``.py`` file ``path`` (:class:`Scan`), done once per content (cached by
    its SHA-256) and bounded: :mod:`ast` up to :data:`AST_BYTES`, :func:`_token_scan` above, nothing
    above :data:`MAX_BYTES` (``unchecked`` says so)."""
    st = os.stat(path)
    if st.st_size > MAX_BYTES:
        return Scan(unchecked=f"it is larger than {MAX_BYTES >> 20} MiB")
    key = (path, st.st_size, st.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None or digest not in _SCANS:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES)
        digest = _DIGESTS[key] = hashlib.sha256(data).hexdigest()
        if digest not in _SCANS:
            t0 = time.process_time()
            found = _ast_scan(data) if len(data) <= AST_BYTES else _token_scan(data)
            _SCANS[digest] = Scan(found.imports, found.defined, found.unchecked, time.process_time() - t0)
    return _SCANS[digest]


def _ast_scan(data: bytes) -> Scan:
    """:class:`Scan` of a small file by :mod:`ast`: every import that can run (:func:`_imports`, guarded)."""
    src = data.decode("utf-8", errors="replace")
    try:
        tree = _pyast.parse(src)
    except (SyntaxError, ValueError):
        return Scan()
    except (RecursionError, MemoryError) as exc:
        return Scan(unchecked=f"it is nested too deeply for Python's parser ({type(exc).__name__}), so its "
                              f"imports cannot be checked")
    try:  # the reading of its imports follows some expressions by recursion (redteam30 S2)
        imports = _tree_imports(tree, src.splitlines())
    except RecursionError:
        return Scan(unchecked="it is nested too deeply for the scan of its imports (RecursionError), so its imports "
                              "cannot be checked")
    return Scan(imports, frozenset(
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))))


def _tree_imports(tree: ast.AST, lines: list[str]) -> tuple[tuple[int, str, str], ...]:
    """``(line, module, statement)`` of each import in ``tree`` that can run and whose module is read."""
    found = sorted((*_statement(node, lines), mod) for node, mod in _imports(tree, guarded=True) if mod is not None)
    return tuple((ln, mod, text) for ln, text, mod in found)


#: Words without which a file imports nothing :func:`_imports` reads (searched at C speed first).
_IMPORT_WORDS = re.compile(r"import|exec|eval")
#: A ``def``/``class`` name at the start of a line (:func:`vendored_engines` of a large file).
_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)
#: Tokens after which a new statement starts.
_STARTS = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.ENCODING})


def _token_scan(data: bytes) -> Scan:
    """:class:`Scan` of a large file without building its tree: the statements holding ``import`` (or
    ``from``) or a name of :data:`_DYNAMIC`, found by :mod:`tokenize` and each parsed alone by
    :func:`_ast_scan` (at most :data:`MAX_STATEMENT` characters each); a file without such a word (a
    C-speed search of its NFKC form, as Python reads names) is not tokenized."""
    src = unicodedata.normalize("NFKC", data.decode("utf-8", errors="replace"))
    defined = frozenset(_DEFINED.findall(src))
    if not _IMPORT_WORDS.search(src):
        return Scan(defined=defined)
    lines, found, start, hit, depth, clause = src.splitlines(keepends=True), set(), None, False, 0, None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if start is None and tok.type not in _STARTS and tok.type != tokenize.COMMENT:
                start = tok.start
            if tok.type == tokenize.NAME and tok.string in {"import", *_DYNAMIC}:
                hit = True
            elif tok.type == tokenize.OP:
                depth += (tok.string in "([{") - (tok.string in ")]}")
                clause = tok.end if tok.string == ":" and depth == 0 and not hit else clause
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or tok.type == tokenize.OP and tok.string == ";":
                if hit and start is not None:
                    found |= _statement_imports(lines, start, tok.start, clause)
                start, hit, depth, clause = None, False, 0, None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the import reports a syntax error; what was read stays
    except _TooLong as exc:
        return Scan(defined=defined, unchecked=str(exc))
    return Scan(tuple(sorted(found)), defined)


class _TooLong(Exception):
    """A statement holding an import word is longer than :data:`MAX_STATEMENT`."""


def _statement_imports(lines: list[str], start: tuple[int, int], end: tuple[int, int],
                       clause: tuple[int, int] | None) -> set[tuple[int, str, str]]:
    """The imports (:func:`_ast_scan`) of the statement from ``start`` to ``end`` (tokenize's positions),
    parsed alone, lines numbered as in the file; when it does not parse alone (``try: import torch``,
    ``else: import torch``), its part after the ``clause`` colon."""
    r0, r1 = start[0], end[0]
    if sum(len(ln) for ln in lines[r0 - 1:r1]) > MAX_STATEMENT:
        raise _TooLong(f"a statement at line {r0} holds an import and is longer than {MAX_STATEMENT:,} "
                       f"characters, so its imports cannot be checked")
    out: set[tuple[int, str, str]] = set()
    for begin in (start, clause):
        if begin is None:
            continue
        (b0, c0), (e0, c1) = begin, end
        body = "".join(lines[b0 - 1:e0])
        found = _body_imports(body[c0:len(body) - len(lines[e0 - 1]) + c1].lstrip())
        if found is None:
            continue
        for ln, mod in found:
            out.add((b0 + ln - 1, mod, lines[b0 + ln - 2].strip()[:200]))
        break
    return out


@functools.lru_cache(maxsize=1024)
def _body_imports(body: str) -> tuple[tuple[int, str], ...] | None:
    """``(line in body, module)`` of each import :func:`_tree_imports` reads in one statement's text ``body``, parsed
    alone; None when it does not parse. Kept by text: a large file repeats its statements (a hostile submission's
    ``import os`` 100,000 times was 100,000 parses, 3 s of the grading's CPU)."""
    try:
        tree = _pyast.parse(body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tuple((ln, mod) for ln, mod, _ in _tree_imports(tree, []))


class Markdown(str):
    """Text the grader wrote as Markdown (a command in a code span, a staff's ``grade.note``): :func:`markdown_text`
    passes it as it is. Any other string is plain text. Joining or formatting makes a plain ``str`` again, so text
    built from a submission's strings is escaped unless the grader marks the result (and made it safe: each string
    of the submission's in :func:`code_span`)."""

    __slots__ = ()


#: What :func:`markdown_text` backslash-escapes (CommonMark 0.31 and GitHub's tables and strikethrough): a backslash
#: before punctuation (it would escape it); `` ` * ~ | & < `` everywhere (code spans, emphasis, strikethrough, tables,
#: entities, HTML and autolinks); ``_`` unless between two letters or digits (``dy_pred``: an underscore inside a word
#: never emphasises); ``]`` before ``( [ :`` (no link, image or link definition can close); ``#`` and ``>`` first on
#: a line (a heading, a quote); and GitHub's autolinks of bare text (GFM 0.29, "Autolinks (extension)", which a
#: renderer such as Gradescope's may apply): ``:`` before ``//`` (``http://``, ``https://``, ``ftp://``), the ``.``
#: after ``www`` and an ``@`` between an address's characters, a dot in its domain (an email, ``mailto:``, ``xmpp:``;
#: not ``real@3,4``), so that a URL in a submission's message reads as written (``http\://e.vil`` shows
#: ``http://e.vil``) and links nowhere: an escaped character is its own text, which the autolink rules do not read
#: across (mistune's URL plugin and markdown-it's linkify: the tests); and a dot between a word's character and a
#: letter, where a bare domain's labels meet (markdown-it's linkify, linkify-it's fuzzy links, links ``e.vil.com``
#: and ``layers.py``, Paraguay's domain, with no ``www`` or scheme: fix37b), so ``e\.vil\.com`` reads ``e.vil.com``
_MD_ACTIVE = re.compile(r"\\(?=[!-/:-@\[-`{-~\x00])|[`*~|&<]|(?<![^\W_])_|_(?![^\W_])|\](?=[(\[:])|^ {0,3}[#>]"
                        r"|:(?=//)|(?<=(?i:www))\.|(?<=[\w-])\.(?=[^\W\d_])|(?<=[\w.+-])@(?=[\w-]+\.[\w-])", re.M)


def markdown_text(text: str) -> str:
    """Plain ``text`` as Markdown that shows it as written, so that no link, image, HTML, entity, emphasis,
    strikethrough, code span, table, heading or quote comes from it: each character Markdown would read as syntax
    there backslash-escaped (:data:`_MD_ACTIVE`), the rest left as it is, readable as plain text too (``Y[0, 2]``,
    ``forward(X) -> L``, ``dy_pred``), except gradcheck's own code spans, marked where the message was written
    (:func:`gradcheck.errors.code`): each a code span (:func:`code_span`, whatever it quotes); a :class:`Markdown`
    string as it is. A backtick of the submission's is text: its strings hold no mark (the sandbox cleans each with
    :func:`gradcheck._validation.printable`). The one place where text becomes
    results.json's Markdown (the grader's messages, which quote the submission's strings, names and error messages
    as data): the sandbox passes the child's strings on unescaped (cleaned of control characters,
    :func:`gradcheck._validation.printable`), so a parameter ``biases[0]`` or an option value ``avg_pool`` is compared
    and looked up as it is (session 34: escaped on receipt, ``biases\\[0\\]`` matched no key of the reference and a
    correct network scored 0).

    Parameters
    ----------
    text : str
        Plain text (the grader's message quoting the submission's strings), or a :class:`Markdown` string.

    Returns
    -------
    str
        Markdown (a :class:`Markdown` ``text`` unchanged); its characters shown as written, newlines kept.

    Examples
    --------
    >>> print(markdown_text("W](http://x) <img> **b** _em_ dy_pred Y[0, 2] -> L"))
    W\\](http\\://x) \\<img> \\*\\*b\\*\\* \\_em\\_ dy_pred Y[0, 2] -> L
    >>> print(markdown_text("# 9/9 at line start"))
    \\# 9/9 at line start
    >>> markdown_text(Markdown("run `gradcheck check`"))
    'run `gradcheck check`'
    >>> from gradcheck.errors import code
    >>> print(markdown_text("name the class " + code("Linear") + " in your `x` file " + code("a`b")))
    name the class `Linear` in your \\`x\\` file ``a`b``
    """
    if isinstance(text, Markdown):
        return text
    pieces = str(text).split(CODE_MARK + "`")  # text, gradcheck's code, text, ...: marked by errors.code
    if len(pieces) % 2 == 0:  # a mark left without its pair: its backtick is text
        pieces[-2:] = [pieces[-2] + "`" + pieces[-1]]
    texts = "\0".join(t.replace("\0", "\\x00").replace(CODE_MARK, "") for t in pieces[::2])  # \0: where a span goes
    shown = _MD_ACTIVE.sub(lambda m: m[0][:-1] + "\\" + m[0][-1], texts).split("\0")
    spans = pieces[1::2]  # two spans side by side would read as one (their fences join): a space between them
    return shown[0] + "".join(code_span(c) + (t or " " * (i < len(spans) - 1)) for i, (c, t) in enumerate(zip(spans,
                                                                                                         shown[1:])))


def code_span(text: str) -> str:
    """``text`` as a Markdown code span that shows it whole: fenced by one backtick more than its longest run of
    backticks, padded with a space where it starts or ends with a backtick or with spaces at both ends (CommonMark
    strips one such space each side). tester22g: a submitted file named ``la`yers](http://x).py`` ended its single
    backtick span at its own backtick. Control characters first go through the one escaping,
    :func:`gradcheck._validation.printable` (a newline or a tab a space, ESC ``\x1b``): review29 NEWLINE_NAME, a folder
    named with a blank line ended the paragraph, and the rest of its name rendered as live Markdown (bold, a link)."""
    from .._validation import printable

    text = printable(text)
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" or (text[:1] == " " and text[-1:] == " " and text.strip()) \
        else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: Characters of a name of the submission's (a parameter's, a graded tensor's) shown in results.json's lists of parts;
#: a longer one is compared whole and cut for display only (:func:`name_span`).
NAME_SHOWN = 120


def name_span(name: str) -> str:
    """A name of the submission's (``dw_in[0]``) as a code span (:func:`code_span`), cut for display at
    :data:`NAME_SHOWN` characters with the cut said outside the span, so that it never reads as the name itself.
    The name stays whole where it is compared (session 36: the sandbox cut every key of the child's at 120 characters
    on receipt, and a correct layer whose parameter's name was longer matched no key of the reference's and lost its
    points).

    Parameters
    ----------
    name : str
        The name as the submission wrote it (plain text).

    Returns
    -------
    str
        Markdown: :func:`code_span` of the name, or of its first :data:`NAME_SHOWN` characters followed by
        ``... (cut: N characters; ends `<its last 16>`; sha256 <8 hex digits of the whole name>)``: two names
        sharing their first characters are shown apart (verify36 F9).

    Examples
    --------
    >>> name_span("dw_in[0]")
    '`dw_in[0]`'
    >>> name_span("d" + "x" * 130)[122:164]
    '... (cut: 131 characters; ends `xxxxxxxxxx'
    """
    name = str(name)
    return code_span(name) if len(name) <= NAME_SHOWN else (
        f"{code_span(name[:NAME_SHOWN])}... (cut: {len(name):,} characters; ends {code_span(name[-16:])}; sha256 "
        f"{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]})")


def format_violations(violations: list[ImportViolation], forbidden: Iterable[str]) -> str:
    """A Markdown paragraph naming each forbidden import (or file that could not be checked) and why it
    costs the credit."""
    found = [v for v in violations if v.module is not None]
    unchecked = [v for v in violations if v.module is None]
    more = max(0, len(found) - MAX_PER_FILE) + max(0, len(unchecked) - MAX_PER_FILE)
    found, unchecked = found[:MAX_PER_FILE], unchecked[:MAX_PER_FILE]
    text = (f"This part of the assignment must be written without automatic differentiation: "
            f"{', '.join(sorted(set(forbidden)))} may not be imported")
    if found:
        where = "; ".join(f"{code_span(v.statement)} ({code_span(v.file)}, line {v.line})" for v in found)
        text += (f", and the submission imports {', '.join(sorted({v.module.split('.')[0] for v in found}))}: "
                 f"{where}")
    if unchecked:
        text += (f"{'. Also' if found else ', and'} the autograder could not check " +
                 "; ".join(f"{code_span(v.file)}: {v.statement}" for v in unchecked) +
                 ". Remove the file or simplify it")
    text += f" (and {more} more)" if more else ""
    return text + ". No credit is given for this part; derive the gradients by hand with numpy."


def unavailable_imports(files: Iterable[str], *, root: str | None = None,
                        nofollow: bool = False) -> list[ImportViolation]:
    """Imports the grader's sandbox cannot satisfy, found with :mod:`ast` (nothing runs).

    A graded submission can import the standard library, :data:`gradcheck.isolation.PROVIDED_PACKAGES`
    (numpy) and its own modules (a ``.py`` file or folder beside the importing file, or beside one of ``files``, whose
    folders are on ``sys.path`` where they run: a package's module importing the package by name); any other
    top-level module (scipy, the course packages, torch) fails there, though it may be installed
    where ``gradcheck check`` runs. An import in the body of a ``try`` whose ``except`` catches
    ImportError (or ModuleNotFoundError, Exception, a bare ``except``) is optional and not reported,
    nor one in a branch that never runs (``if False:``, ``if TYPE_CHECKING:``, ``if __name__ == "__main__":``
    in a file that does not rebind ``__name__``). A name built from
    literals (``__import__("sc" + "ipy")``, ``getattr(builtins, "__import__")("scipy")``) and the code of
    ``exec("import x")`` are read; a dynamic import, ``exec`` or ``eval`` of a name or code known only at
    run time, a lookup of one the scan cannot read (``getattr(builtins, name)``) or one taken but not
    called (``imp = __import__``) is reported with ``module`` None (the scan cannot tell what it imports). An own module or package the files
    import (``import helper``, ``from . import helper``, ``from pkg import helper``) is read too (what importing them
    runs); one they do not import is not.

    Parameters
    ----------
    files : iterable of str
        Paths of ``.py`` files, as the grader imports them (others are skipped; so is a file that
        does not parse).
    root : str, optional
        Folder the reported names are relative to (default: base names).
    nofollow : bool, optional
        Read no symbolic link, no file in a folder reached through one and no file that is not regular (the
        sandbox's copy rule for a file one did not write, ``gradcheck check --isolation namespaces``): nothing of a
        link's target is read or quoted (review28g M3).

    Returns
    -------
    list of ImportViolation
        In file and line order, at most :data:`MAX_PER_FILE` per file; ``module`` the dotted name
        imported, or None (a dynamic import or code the scan cannot resolve).
    """
    from ..isolation import PROVIDED_PACKAGES

    provided = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | set(PROVIDED_PACKAGES)
    out: list[ImportViolation] = []
    paths = sorted(os.path.abspath(f) for f in files)
    roots = sorted({os.path.dirname(p) for p in paths})  # on sys.path where the files run
    owned: dict[str, dict[str, str]] = {}

    def owners(path: str) -> dict[str, str]:  # own module or package -> the folder it is found in: beside the
        folder = os.path.dirname(path)         # file, else a root
        if folder not in owned:
            owned[folder] = {}
            for base in [folder, *roots]:
                for e in os.listdir(base):
                    owned[folder].setdefault(e[:-3] if e.endswith(".py") else e, base)
        return owned[folder]

    def follow(path: str, node: ast.AST, mod: str | None) -> list[str]:  # its own module (or package, relative
        top = None if mod is None else mod.split(".")[0]                  # import): read what it imports
        if top is None or (top != "" and top not in owners(path)):
            return []
        base = os.path.dirname(path) if top == "" else owners(path)[top]
        return [os.path.abspath(f) for n in loaded_names(node, mod) for _, f in module_files(n, base)]

    for path, parsed in walk_imports(paths, follow, functools.partial(_small_parsed, nofollow=nofollow), guarded=False):
        if parsed is None:
            continue  # the import itself reports it, graded or checked
        lines, tree, imports = parsed
        found, conditions, own = [], _conditions(tree), owners(path)
        for node, mod in imports:
            top = None if mod is None else mod.split(".")[0]
            if top is None or top and top not in provided and top not in own:
                found.append((*_statement(node, lines), mod, conditions.get(node)))
        name = os.path.relpath(path, root) if root else os.path.basename(path)
        out += [ImportViolation(name, ln, mod, text, cond)
                for ln, text, mod, cond in sorted(found, key=lambda f: f[0])[:MAX_PER_FILE]]
    return sorted(out, key=lambda v: (v.file, v.line))


def _small_parsed(path: str, nofollow: bool = False) -> tuple[list[str], ast.AST]:
    """:func:`_parsed` of a ``.py`` file of at most :data:`MAX_BYTES`; ValueError for another (not read); ``nofollow``:
    neither a link nor a file beyond one is read (lstat, ``O_NOFOLLOW``: :func:`_parsed`)."""
    st = os.lstat(path) if nofollow else (os.stat(path) if os.path.isfile(path) else None)
    if not path.endswith(".py") or st is None or not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
        raise ValueError(f"{path} is not read")
    return _parsed(path, nofollow)


#: Autodiff engines whose structure :func:`vendored_engines` looks for: package -> how a report names it.
#: Only pure-Python engines whose source the grader has (installed, or ours); torch, jax and tensorflow
#: are compiled and cannot run from a copy in the sandbox (it provides numpy alone).
ENGINES = {"autograd": "HIPS autograd", "autoprop.core": "autoprop's core (this course's engine)"}
#: A submission whose .py files hold fewer bytes is not looked at (a copied engine is large: autograd's
#: core and numpy wrapper alone are over 60 kB).
MIN_VENDORED_BYTES = 20_000
#: A report needs this many of the engine's names, and this share of them.
MIN_SHARED, MIN_SHARE = 20, 0.15


def _defined(path: str) -> set[str]:
    """The function and class names a file defines (any depth), or none when it cannot be parsed (an installed
    engine's file; a submission's is read by :func:`scan`)."""
    try:
        tree = _parsed(path)[1]
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _distinctive(names: set[str]) -> set[str]:
    """Names long and rare enough to tell an engine: no dunder, none shorter than 6 characters."""
    return {n for n in names if len(n) >= 6 and not (n.startswith("__") and n.endswith("__"))}


@functools.lru_cache(maxsize=None)
def engine_names(package: str) -> frozenset[str]:
    """The distinctive function and class names of an installed package's source (empty when it is not
    installed), less those of manualprop (the layers students write: ``Linear``, ``Softmax``)."""
    def names(pkg: str) -> set[str]:
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            return set()
        out: set[str] = set()
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for dirpath, _, filenames in os.walk(folder):
                for f in filenames:
                    if f.endswith(".py") and not f.startswith("test"):
                        out |= _defined(os.path.join(dirpath, f))
        return _distinctive(out)
    return frozenset(names(package) - names("manualprop"))


def vendored_engines(files: dict[str, str]) -> list[str]:
    """Report lines for course staff: the submission's ``.py`` files (``{relative name: path}``) define
    many of a known engine's (:data:`ENGINES`) function and class names, as a copy of it under another
    module name would. Not a verdict (no points are taken); renamed copies, engines not listed and
    small engines written from scratch are not seen. Submissions under :data:`MIN_VENDORED_BYTES` are
    not read."""
    sizes = {rel: os.path.getsize(p) for rel, p in files.items() if os.path.isfile(p)}
    if sum(sizes.values()) < MIN_VENDORED_BYTES:
        return []
    defined = {rel: _distinctive(set(scan(files[rel]).defined)) for rel in sizes}
    ours = set().union(*defined.values())
    out = []
    for package, label in ENGINES.items():
        theirs = engine_names(package)
        shared = ours & theirs
        if theirs and len(shared) >= MIN_SHARED and len(shared) >= MIN_SHARE * len(theirs):
            where = sorted((rel for rel in defined if defined[rel] & theirs), key=lambda r: -len(defined[r] & theirs))
            shown = ", ".join(code_span(r) for r in where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
            out.append(f"the submission defines {len(shared)} of the {len(theirs)} function and class names of "
                       f"{label} (e.g. {', '.join(sorted(shared)[:4])}), in {shown}: it may carry a copy of that "
                       f"engine under another name; a person should look (no points were taken for this)")
    return out
