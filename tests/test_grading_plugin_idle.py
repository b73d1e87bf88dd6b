"""The grading plugin is installed for every pytest run where gradcheck is (its pytest11 entry point): outside
a grading session (no ``--grading-results``) it must not digest the tests' imports. Merging session 18's
resume digest (which walks every ``.py`` under the session's root) into a run of the repository's own suite
walked ``.venv`` and stopped collection with a KeyError from a namespace package."""

import types

import pytest

from gradcheck.grading import plugin, runner, static


def _session(results_option):
    options = {"--grading-results": results_option}  # the others at their defaults (fixr25's diagnosis clock
    config = types.SimpleNamespace(stash=pytest.Stash(),  # reads --grading-submission-timeout)
                                   getoption=lambda name, default=None: options.get(name, default))
    config.stash[plugin._RESULTS] = {}
    config.stash[plugin._PARTIAL] = {"blocked": set(), "started": 0.0}
    return types.SimpleNamespace(config=config, items=[], path="/")


def test_an_ordinary_pytest_run_does_not_digest_the_imports(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("tests_imports called outside a grading session")

    monkeypatch.setattr(plugin, "tests_imports", refuse)
    plugin.pytest_collection_finish(_session(None))  # returns without walking anything


def test_a_grading_session_digests_them(monkeypatch):
    seen = []
    monkeypatch.setattr(plugin, "tests_imports", lambda path: seen.append(path) or {})
    monkeypatch.setattr(plugin, "_write_results", lambda config, status: None)
    plugin.pytest_collection_finish(_session("/tmp/results.json"))
    assert seen == ["/"]


def test_a_nested_namespace_package_is_skipped_not_raised(tmp_path, monkeypatch):
    # PathFinder reads sys.modules for a namespace package's parent: KeyError when it was never imported
    (tmp_path / "ns1_s18" / "ns2").mkdir(parents=True)  # namespace packages (no __init__.py)
    (tmp_path / "ns1_s18" / "ns2" / "mod.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert static.module_files("ns1_s18.ns2.mod", None) == []


def test_hidden_and_site_packages_folders_are_not_walked(tmp_path):
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text("import json\nimport_module(name)\n")
    (tmp_path / "test_a.py").write_text("from importlib import import_module\nimport_module(NAME)\n")
    hits, dynamic = runner._static_imports(str(tmp_path))
    assert dynamic == ["test_a.py:2"]
