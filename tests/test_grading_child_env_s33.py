"""The grading child's environment keeps the grader's bytecode cache folder and nothing else of Python's (session 33).

Under ``PYTHONDONTWRITEBYTECODE`` a checkout holds no ``__pycache__``: each grading zygote compiled gradcheck, pytest's
plugin and the adapters from source, 0.4-0.7 s of CPU at every batch (hundreds of batches in this suite). The cache
folder named by ``PYTHONPYCACHEPREFIX`` is read (the child writes no bytecode); every other PYTHON*/PYTEST_* variable
of the grader is still dropped, so none changes how the child runs.
"""

from pathlib import Path

import gradcheck
from gradcheck.grading.runner import _child_env


def test_the_cache_folder_is_kept_and_the_rest_of_python_s_variables_dropped(monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pyc"))
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "startup.py"))
    monkeypatch.setenv("PYTHONINSPECT", "1")
    monkeypatch.setenv("PYTHONWARNINGS", "error")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    monkeypatch.setenv("COV_CORE_SOURCE", "gradcheck")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))  # replaced by the grader's own folder
    env = _child_env()
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pyc")
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # read, never written by the child
    # PYTHONPATH: the folder of this checkout's gradcheck alone, whatever the caller's was (verify43c F9)
    assert env["PYTHONPATH"] == str(Path(gradcheck.__file__).resolve().parents[1])
    assert sorted(k for k in env if k.startswith(("PYTHON", "PYTEST_", "COV_"))) == [
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PYTHONPYCACHEPREFIX"]


def test_without_a_cache_folder_none_is_set(monkeypatch):
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    assert "PYTHONPYCACHEPREFIX" not in _child_env()
