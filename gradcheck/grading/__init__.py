"""Grading students' layers: a pytest plugin, checks with diagnoses, and ``gradcheck grade``.

Student code never runs in the grader's process: each submission is graded by a child pytest
(plugins not auto-loaded, the submission's ``conftest.py``/``pytest.ini`` never read), and in it
the student's classes run in a :class:`gradcheck.sandbox.Sandbox`. Modules: ``plugin`` (markers
and fixtures), ``checks`` (:class:`Verdict`, one :class:`Part` per tensor), ``diagnosis`` (the
sentence naming a bug), ``static`` (the ``ast`` import guard), ``runner`` (results.json, JUnit XML,
gradebook, histogram; a batch here or on dask), ``cli`` (``gradcheck grade``), ``zygote``,
``archive`` (a ``.zip`` submission), ``stopping`` (SIGTERM as Ctrl-C). ``runner`` owns the
results.json rows (``VISIBILITIES``, ``result_row``, ``write_json``); ``plugin`` imports them from
it, never the reverse.
"""

from .checks import (
    GradingFailure,
    Part,
    Verdict,
    away_from_kinks,
    backward_repeatable,
    class_labels,
    dtypes,
    forward_keywords,
    layer_forward,
    layer_gradients,
    loss_gradient,
    loss_value,
)
from .diagnosis import diagnose
from .static import DEFAULT_FORBIDDEN, forbidden_imports

__all__ = ["DEFAULT_FORBIDDEN", "GradingFailure", "Part", "Verdict", "away_from_kinks",
           "backward_repeatable", "class_labels", "diagnose", "dtypes", "forbidden_imports", "forward_keywords",
           "layer_forward", "layer_gradients", "loss_gradient", "loss_value"]
