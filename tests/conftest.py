"""Shared pytest configuration: hypothesis profiles.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) bounds every property test to 25
examples with no deadline; ``dev`` (the default) uses hypothesis' defaults.
"""

import os

from hypothesis import settings

# hostile submissions (tests/test_grading_hostile.py) run only inside the grader's sandbox, never here
collect_ignore = ["hostile"]

settings.register_profile("ci", max_examples=25, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
