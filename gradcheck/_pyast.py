"""``ast.parse`` for gradcheck: every parse of ours goes through :func:`parse`. Standard library only: the sandbox
child runs this text as the module ``_pyast`` beside ``_adapters.py`` and ``_switch_reach.py``, which parse in the
child too (``gradcheck.sandbox._adapters_text``; the child's own file, ``_sandbox_child.py``, parses nothing).

CPython 3.11 before 3.11.8 (and 3.12 before 3.12.2) can fail a correct parse with ``SystemError: AST constructor
recursion depth mismatch (before=147, after=96)``: python/cpython#106905. The recursion depth of the conversion of
the parser's tree into ``ast`` objects (``PyAST_mod2obj``) was kept in the interpreter-wide ``ast_state``, not in
the call; a garbage collection during the conversion can run Python code (a finalizer, a ``gc.callbacks`` entry)
that lets another thread run, and that thread's own ``ast.parse`` overwrites the counter, so the first call's check
at its end fails. The tree built is dropped and nothing else is changed; each call starts the counter afresh, so the
same parse again succeeds (the fix, python/cpython#113035, backported as #113476 for 3.11.8, gives each call its own
counter). Seen once in this project's CI (session 32): ``gradcheck grade``'s ``find_grading_tests`` in a batch
resumed after a Ctrl-C, on the dask runner with its threads.
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["parse", "RACE_MESSAGE", "RETRIES"]

#: The start of the SystemError's message that python/cpython#106905's race gives (the counts that follow vary).
RACE_MESSAGE = "AST constructor recursion depth mismatch"
#: How many times a parse that failed with that race is tried again. The race needs another thread inside its own
#: parse while a collection runs: in this project one thread parses a file now and then, and one retry would do; in
#: the issue's reproduction (30 threads parsing ast.py 20 times each while gc callbacks run, 6 x 600 parses on 3.11.7)
#: 6 SystemErrors in 1800 parses without retries, 1 in 3600 with 2, none with 5 (flaky33).
RETRIES = 4


def parse(source: str | bytes, *args: Any, **kwargs: Any) -> ast.AST:
    """:func:`ast.parse` (the same arguments, the same result), tried again when CPython 3.11's race of the AST
    constructor's recursion depth failed it (python/cpython#106905, see the module's docstring).

    Parameters
    ----------
    source : str or bytes
        The source text, as :func:`ast.parse` takes it.
    *args, **kwargs
        ``filename``, ``mode``, ... as :func:`ast.parse` takes them.

    Returns
    -------
    ast.AST
        The parsed tree (an ``ast.Module`` for ``mode="exec"``).

    Raises
    ------
    SyntaxError, ValueError, RecursionError, MemoryError
        As :func:`ast.parse` raises them (never tried again: the same source fails alike).
    SystemError
        Any other SystemError at once; that race's after :data:`RETRIES` more tries failed alike.
    """
    for tries_left in range(RETRIES, -1, -1):
        try:
            return ast.parse(source, *args, **kwargs)
        except SystemError as exc:
            if tries_left == 0 or not str(exc).startswith(RACE_MESSAGE):
                raise
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
