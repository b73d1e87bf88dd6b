"""testtime38 (session 38): under the staff's no-forward-in-backward policy the sandbox child keyed every code object
its counting profilers recorded (numpy's, its own) by ``_sandbox_child._text_key``, one ``dis`` reading per code and
process: about a fifth of a graded submission's sandbox CPU time. A text key holds its code's argument counts and
line table as they are, so a code whose three match none of forward's codes cannot have a text key of forward's:
``forward_keys``' lookup now reads ``dis`` only for such a candidate. The keys it gives are the same."""

import inspect
import json
import textwrap
import types

import numpy as np

from gradcheck import _sandbox_child as child
from tests.test_forward_keys_s29 import _cube
from tests.test_grading_redteam34 import _hostile_code


def _codes() -> list[types.CodeType]:
    """Code objects of many shapes: numpy's and the standard library's Python functions, the test cube's methods,
    copies of its forward's."""
    codes = [f.__code__ for m in (np, inspect, json, textwrap) for f in vars(m).values()
             if isinstance(f, types.FunctionType)]
    fwd = _cube().forward.__code__
    copies = [fwd.replace(co_consts=fwd.co_consts + ("pad",)),
              fwd.replace(co_consts=fwd.co_consts + ("pad",), co_firstlineno=fwd.co_firstlineno + 7),
              fwd.replace(co_name="h", co_qualname="h", co_firstlineno=1)]
    return [*codes, fwd, _cube().square.__code__, *copies]


def test_the_shape_key_is_the_text_keys_last_three_items():
    for code in [*_codes(), _hostile_code()[0]]:
        assert child._shape_key(code) == child._text_key(code)[4:]


def test_the_keys_are_those_of_the_full_text_key_lookup():
    """The lookup of session 37 (every code's text key read) gives the same key for every code."""
    fwd = _cube().forward.__code__
    for forwards in ([fwd], [fwd, textwrap.dedent.__code__], [_cube().square.__code__]):
        keys = {child.code_key(c) for c in forwards}
        at = {child._where(c): child.code_key(c) for c in forwards}
        text = {child._text_key(c): child.code_key(c) for c in forwards}
        key = child.forward_keys(forwards)
        for code in _codes():
            k = child.code_key(code)
            assert key(code) == (k if k in keys else at.get(child._where(code)) or text.get(child._text_key(code), k))


def test_a_code_of_another_shape_is_not_read_by_dis(monkeypatch):
    """Other functions beside forward: no text key read for them (it failed before: one per code)."""
    fwd = _cube().forward.__code__
    key = child.forward_keys([fwd])
    read = []
    monkeypatch.setattr(child, "_TEXTS", {})  # none kept from an earlier test
    monkeypatch.setattr(child, "_read_text", lambda code: read.append(code) or ())
    others = [f.__code__ for f in (textwrap.dedent, json.dumps, inspect.signature, np.asarray_chkfinite)]
    assert all(key(c) == child.code_key(c) for c in others)
    assert read == []
    copy = fwd.replace(co_consts=fwd.co_consts + ("pad",), co_qualname="h", co_firstlineno=1)  # forward's text: found
    monkeypatch.undo()
    assert key(copy) == child.code_key(fwd)
