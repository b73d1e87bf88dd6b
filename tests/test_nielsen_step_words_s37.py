"""Session 37 (fix37a; note36 item 2): the words of Nielsen's ``update_mini_batch`` step check.

- A step whose per-sample gradient sums have another shape than their arrays was graded "update_mini_batch could not
  be run: backprop's gradients summed over the samples are biases[0] of shape (3,), expected (3, 1): the step due
  cannot be made of them": the step had run; what could not be made is the step due. Now each part says the step was
  not checked, names each array, what came and what was expected, and the fix; ``check`` says it the same way
  (:meth:`gradcheck._nielsen_step.StepCheck.not_checked`, one sentence for both).
- At m = 2 (the mini-batch ``--targets real@N_OUT,2`` gives) a step of eta/4 is eta halved and the mean divided by m
  again alike: the sentence says both give this step and that which one cannot be told here.

A stand-in for the sandboxed network (its ``mini_batch_step`` reply as :meth:`gradcheck.sandbox.RemoteLayer.
mini_batch_step` gives it): the words are the subject, and the sandbox round trip is tests/test_grading_nielsen_step_s36.py's.
"""

import numpy as np

from gradcheck._nielsen_step import step_check
from gradcheck.grading import checks

ARRAYS = ("biases[0]", "weights[0]")


class _Net:
    """One sigmoid layer of 3 units over 2 inputs, its gradients summed over the mini-batch given (``sums``), its step
    method leaving ``stepped`` (``mini_batch_step``'s reply: stepped, method, keywords, the last sample's gradients,
    the one-sample gradients summed, the method's parameters)."""

    def __init__(self, sums, stepped):
        rng = np.random.default_rng(0)
        self.params = {"biases[0]": rng.standard_normal((3, 1)), "weights[0]": rng.standard_normal((3, 2))}
        self.grads, self.targets, self._sums, self._stepped = {}, np.zeros((3, 2)), sums, stepped

    def forward(self, X, training=False):
        return np.zeros(1)

    def backward(self, dY):
        self.grads = {k: np.ones(v.shape) for k, v in self.params.items()}

    def mini_batch_step(self, X, T, eta, lmbda, n):
        return self._stepped(self.params), "update_mini_batch", [], {}, self._sums(self.params), ["mini_batch", "eta"]


def test_sums_of_another_shape_say_what_came_and_what_was_expected(monkeypatch):
    """A bias delta of shape (3,) per sample: each part names biases[0], (3,) and (3, 1); "could not be run" is gone."""
    net = _Net(lambda p: {"biases[0]": np.ones(3), "weights[0]": np.ones((3, 2))}, lambda p: dict(p))
    monkeypatch.setattr(checks, "_sandboxed", lambda layer: layer)
    verdict = checks.mini_batch_step(net, np.zeros((2, 2)), points=2)
    assert [(p.name, p.passed) for p in verdict.parts] == [(k, False) for k in ARRAYS]
    msg = verdict.parts[0].message
    assert msg == verdict.parts[1].message and "could not be run" not in msg, msg
    assert msg.startswith("update_mini_batch's step was not checked: the step due is made of backprop's gradients "
                          "summed over the mini-batch's 2 samples"), msg
    assert "the sum for biases[0] is of shape (3,), where (3, 1), the shape of biases[0], is expected" in msg, msg
    assert "weights[0] is of shape" not in msg, msg  # its sum has its shape: not named
    assert "No step due could be made, so no array was compared" in msg, msg


def test_eta_halved_at_two_samples_says_both_readings_give_the_step():
    """m = 2: eta/4 where eta/2 is due; the sentence says both readings give this same step."""
    net = _Net(lambda p: {k: np.ones(v.shape) for k, v in p.items()},
               lambda p: {k: v - 0.5 / 4 * np.ones(v.shape) for k, v in p.items()})
    res = step_check(net, np.zeros((2, 2)), np.zeros((3, 2)))
    assert set(res.wrong) == set(ARRAYS) and not res.bugs, res.wrong
    assert res.wrong["weights[0]"] == (
        "the step is (eta/4) * sum(nabla) where (eta/2) * sum(nabla) is due (m = 2): eta halved, or (eta/m)/m, the "
        "mean over the mini-batch averaged twice; with m = 2 samples both give this same step, so which one it is "
        "cannot be told here (a mini-batch of 3 samples or more, --targets real@N_OUT,3, tells them apart)")
