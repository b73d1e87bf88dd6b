"""Grading students' layers: a pytest plugin, checks with diagnoses, and the ``gradcheck grade`` command.

Student code never runs in the grader's process: each submission is graded
by a child pytest process (plugins not auto-loaded, the submission's
``conftest.py``/``pytest.ini`` never read), and inside it the student's classes
run in a :class:`gradcheck.sandbox.Sandbox`.

Modules
-------
plugin
    The pytest plugin (markers ``points``, ``visibility``, ``timeout``,
    ``forbid_imports``; fixtures ``student``, ``grade``, ``rng``, ``grading_seed``).
checks
    The graded checks (:class:`Verdict` with one :class:`Part` per tensor).
diagnosis
    :func:`diagnose`: one sentence naming the bug behind a wrong tensor.
static
    :func:`forbidden_imports`: the ``ast`` import guard.
runner
    :func:`grade_submission`, :func:`grade_batch`: results.json, JUnit XML, gradebook, histogram.
cli
    The ``gradcheck grade`` subcommand.
"""

from .checks import (
    GradingFailure,
    Part,
    Verdict,
    away_from_kinks,
    backward_repeatable,
    dtypes,
    forward_keywords,
    layer_forward,
    layer_gradients,
    loss_gradient,
    loss_value,
)
from .diagnosis import diagnose
from .static import DEFAULT_FORBIDDEN, forbidden_imports

__all__ = [
    "DEFAULT_FORBIDDEN",
    "GradingFailure",
    "Part",
    "Verdict",
    "away_from_kinks",
    "backward_repeatable",
    "diagnose",
    "dtypes",
    "forbidden_imports",
    "forward_keywords",
    "layer_forward",
    "layer_gradients",
    "loss_gradient",
    "loss_value",
]
