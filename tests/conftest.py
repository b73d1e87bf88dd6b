"""Shared pytest configuration: hypothesis profiles, and the notebooks run first.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) bounds every property test to 25
examples with no deadline; ``dev`` (the default) uses hypothesis' defaults.

The notebooks (nbmake items, 10-60 s each) are moved to the front of the run: collected
last, they reached ``pytest -n 2``'s workers at the end, and one worker ran them alone
while the other had finished. First, they run while the other worker takes the many short
tests, and the short tests at the end balance the two (``--dist worksteal``, Makefile).
"""

import os

from hypothesis import settings

# hostile submissions (tests/test_grading_hostile.py) run only inside the grader's sandbox, never here
collect_ignore = ["hostile"]

settings.register_profile("ci", max_examples=25, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_collection_modifyitems(items):
    """Notebooks first, every other test in its collected order (the same on every worker)."""
    items.sort(key=lambda item: item.path.suffix != ".ipynb")  # a stable sort
