"""review35/review36 chld_later_off: the counting profiler and its records are put aside (``_LATER``) until the next
counted step, because the records may hold the last reference to a code object of the submission's, whose constants'
``__del__`` would run where nothing counts. A forward builds a fresh function each call, its code holding one more
constant whose ``__del__`` takes the central differences where no profiler is installed, calls it once and drops it:
the profiler's records hold the code's last reference.

Checked (fixv36): this passes with chld_later_off applied too: every code object in the records is also held by the
count's key cache (``_KEYS``, :func:`gradcheck._sandbox_child._cached`, put aside in ``_LATER`` when full), so the
mutant is equivalent today (fixv35's argument). The test pins the property for the day that cache holds less."""

from tests.test_grading_redteam33 import _LINEAR, _PRELUDE, _forward_then_backward_after_a_wait
from tests.test_grading_redteam34 import _TICK, _UNCOUNTED

FRESH_CODE = _PRELUDE + _UNCOUNTED + '''
import types


class _Del:
    def __del__(self):
        _uncounted()
''' + _TICK + _LINEAR.replace(
    "ARM", "types.FunctionType(_tick.__code__.replace(co_consts=_tick.__code__.co_consts + (_Del(),)), globals())()")


def test_a_code_object_the_count_recorded_is_not_freed_after_the_seal(tmp_path):
    exc = _forward_then_backward_after_a_wait(tmp_path, FRESH_CODE)
    assert exc is not None, "backward applied differences taken where nothing counted"
    text = " ".join(str(exc).split())
    assert exc.reason == "policy" or "no Jacobian stored" in text, text
