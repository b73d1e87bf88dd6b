"""A JSON file written whole or not at all: the grader's results.json and ``gradcheck check --json``'s report.

Written to a temporary file beside it and moved onto it (``os.replace``), so that a reader never sees a half-written
file or an earlier run's (newuser35 H1: a stale PASS); every string made valid Unicode first (redteam35 F1b: a file
name that is not UTF-8 put lone surrogates into results.json). Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["replaced", "valid_unicode", "write_json"]


def valid_unicode(obj: Any) -> Any:
    """``obj`` (JSON data: dicts and lists changed in place) with every string valid Unicode: a lone surrogate (of a
    file name that is not UTF-8, read with ``surrogateescape``) written out as ``\\udcff``, a pair joined, so that
    results.json decodes to text a strict reader takes (redteam35 F1b: ``output.encode("utf-8")`` raised)."""
    if isinstance(obj, str):
        if obj.isascii() or not any("\ud800" <= c <= "\udfff" for c in obj):
            return obj
        joined = obj.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
        return joined.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(obj, dict):
        for k in list(obj):
            v = valid_unicode(obj.pop(k))
            obj[valid_unicode(k) if isinstance(k, str) else k] = v
    elif isinstance(obj, list):
        obj[:] = [valid_unicode(v) for v in obj]
    return obj


@contextlib.contextmanager
def replaced(path: Path) -> Iterator[Path]:
    """A new temporary file beside ``path`` (its folder made) to write, moved onto ``path`` when the block ends;
    removed when the writing fails (a full disk: no half-written temporary file left, tester16g M2)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if tmp.is_symlink():
        tmp.unlink()
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON (indented) to ``path`` atomically (:func:`replaced`), every string valid Unicode
    (:func:`valid_unicode`, which changes ``data`` in place); a link at ``path``'s temporary name is not followed.

    Raises
    ------
    OSError
        The file cannot be written (its temporary file removed).
    """
    valid_unicode(data)
    with replaced(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2))
