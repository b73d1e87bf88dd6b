"""redteam36's findings on ``gradcheck check`` of a submission (fixr36).

F3: ``check --tape --jacobian`` sized ``np.eye(n)`` from the ``Y`` of the child's tape reply (the 400-element
``JACOBIAN_MAX`` was checked on the plain forward only): a reply claiming ``Y`` of shape ``(6000,)`` cost the checking
process 1.2 GB, and the message blamed the student's forward. Now the tape's ``Y`` must have the forward's shape first.
"""

from test_cli import both, run_here, student

from tests.test_grading_policy import SOLUTION

#: the solution whose Linear constructor wraps the child's ``reply`` (found through ``sys._getframe``, as redteam35's
#: F2 and redteam36's cases/tape_huge) so that the tape reply to a request with no upstream gradient (the first of
#: ``StudentTape.jacobian``) claims ``Y = zeros(N)``
_TAPE_Y = SOLUTION + '''
import sys as _sys


def _forge():
    f = _sys._getframe(1)
    while f is not None:
        s = f.f_locals.get("self")
        if s is not None and hasattr(s, "reply") and hasattr(s, "serve"):
            break
        f = f.f_back
    else:
        return
    if getattr(s, "_forged", False):
        return
    s._forged, orig, g = True, s.reply, f.f_globals

    def reply(ok, meta=None, packer=None, error=None):
        if ok and meta and "unconnected_read" in meta and packer is not None and not meta["grads"]:
            meta = dict(meta, value=g["describe"](s.np, packer, s.np.zeros(N)))
        return orig(ok, meta, packer, error)
    s.reply = reply


_Linear_init = Linear.__init__


def _init(self, *a, **k):
    _forge()
    _Linear_init(self, *a, **k)


Linear.__init__ = _init
'''

_JACOBIAN = ("--init", '{"in_features": 5, "out_features": 3}', "--input-shape", "4,5", "--tape", "--jacobian")


def test_f3_a_tape_reply_whose_y_disagrees_with_the_forwards_fails_before_the_jacobian_is_sized(tmp_path):
    """Before: the reply's (3000,) sized a 3000 x 3000 identity and 3000 upstream gradients; the check PASSed (exit 0)
    with "Linear.forward raised ValueError on autoprop tensors" (the child refusing the gradients' shape). Now the
    tape's Y is compared with the forward's (4, 3) before anything is built from it: FAIL, naming both shapes."""
    f = student(tmp_path, _TAPE_Y.replace("zeros(N)", "zeros(3000)"), "layers.py")
    p = run_here("check", f"{f}::Linear", *_JACOBIAN)
    out = both(p)
    assert p.returncode == 1, out
    assert ("jacobian dY/dX in eval mode: FAIL: Linear: the tape's Y has shape (3000,); the forward's Y on numpy "
            "arrays has shape (4, 3).") in out, out
    assert "raised ValueError on autoprop tensors" not in out, out


def test_f3_an_honest_tape_jacobian_still_compares(tmp_path):
    f = student(tmp_path, SOLUTION, "layers.py")
    p = run_here("check", f"{f}::Linear", *_JACOBIAN)
    out = both(p)
    assert p.returncode == 0, out
    assert "jacobian dY/dX in eval mode (12 x 20): tape (your forward, stacked VJPs) vs central differences" in out, out
