"""No ``TqdmWarning: IProgress not found`` in a notebook kernel without ipywidgets (newuser24 L6).

Executed notebook 01 showed the warning under its first ``check_layer`` cell: ``tqdm.auto`` warns at import in a
Jupyter kernel that lacks ipywidgets. Every progress bar of the three packages comes from
:func:`manualprop.training.progress_bar`, which imports it quietly (the text bar is used there).
"""

import sys
import types
import warnings

import pytest

from manualprop.training import progress_bar


@pytest.fixture
def kernel_without_ipywidgets(monkeypatch):
    """What ``tqdm.autonotebook`` sees in a Jupyter kernel: ``ipykernel.zmqshell`` loaded, no ipywidgets."""
    shell = type("ZMQInteractiveShell", (), {})()
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    for k in [k for k in list(sys.modules) if k.startswith("IPython.")]:
        monkeypatch.delitem(sys.modules, k)


def test_tqdm_auto_itself_warns_there(kernel_without_ipywidgets):  # the premise: the kernel is simulated well
    with pytest.warns(Warning, match="IProgress not found"):
        import tqdm.auto  # noqa: F401


def test_progress_bar_is_quiet_there_and_works(kernel_without_ipywidgets, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tqdm = progress_bar()
        with tqdm(total=3, disable=False, file=sys.stderr) as bar:
            bar.update(3)
    assert not tqdm.__module__.startswith("tqdm.notebook")  # the text bar (tqdm.auto's asyncio subclass of it)
    assert "3/3" in capsys.readouterr().err


def test_the_packages_import_tqdm_only_through_it():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    users = [p.relative_to(root).as_posix() for pkg in ("manualprop", "autoprop", "gradcheck")
             for p in (root / pkg).rglob("*.py") if "from tqdm" in p.read_text() or "import tqdm" in p.read_text()]
    assert users == ["manualprop/training.py"], users
