"""Lesson 31 names the tape's RNN primitive by its signature (newuser32 F5: it gave ``rnn_tanh(A, W_hh, h0)``, the
primitive is ``rnn_tanh(x, h0, W_ih, W_hh, b_ih, b_hh)``): every call of ``rnn_tanh`` the lesson writes has the
primitive's parameter names, in its order."""
import inspect
import re
from pathlib import Path

from autoprop.core.prims.recurrent import _rnn_fwd  # rnn_tanh = defprim("rnn_tanh", _rnn_fwd, ...)

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "31-rnn-bptt.md"


def test_lesson_31_names_rnn_tanh_with_the_primitives_arguments():
    names = [p.name for p in inspect.signature(_rnn_fwd).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    calls = re.findall(r"rnn_tanh\(([^)]*)\)", LESSON.read_text())
    assert calls, "lesson 31 no longer names rnn_tanh"
    for args in calls:
        assert [a.strip() for a in args.split(",")] == names, (args, names)
