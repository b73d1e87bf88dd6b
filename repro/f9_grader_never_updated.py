"""Run from the worktree root: PYTHONPATH=. .venv/bin/python repro/f9_grader_never_updated.py

verify37 F9: a BatchNorm whose training forward never updates its running statistics, graded on its eval output after
three training forwards (test_grading_running_stats_s37's test): the grader's words name the momentum's convention
("check the momentum's convention and the batch variance") where check says the statistics were not updated by the
training forward."""
import pathlib
import sys
import tempfile

sys.path.insert(0, "tests")
from test_grading_keys_s35 import _grade  # noqa: E402
from test_grading_running_stats_s37 import BN, TEST, TRAIN  # noqa: E402

if __name__ == "__main__":
    src = BN.replace(TRAIN, "        if training:\n")
    with tempfile.TemporaryDirectory() as tmp:
        r, data = _grade(pathlib.Path(tmp), {"layers.py": src}, "\n\n".join(TEST.split("\n\n\n")[:2]) + "\n")
        for t in data["tests"]:
            print(t["name"], t["score"], "/", t["max_score"], ":", " ".join(t["output"].split()))
