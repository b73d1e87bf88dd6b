"""The grading plugin reads only graded tests at collection (session 33).

gradcheck's pytest plugin is installed with the package (an entry point), so it runs in every pytest session where
gradcheck is installed: a student's own tests, this project's 11,000. Its check that a test's literal points add up
(tester21g) read the source of every collected item and parsed it: a third of this suite's collection time. A test
that does not take the ``grade`` fixture cannot call ``grade.<check>``; it is not read now, and a parametrized graded
test is read once, not once per item.
"""

import pytest

from gradcheck.grading import plugin

FILE = '''
import pytest

@pytest.mark.parametrize("k", range(40))
def test_plain(k):
    assert k >= 0

def test_graded_a(student, grade):
    """A"""
    grade.layer_forward(None, None, None, points=1)

@pytest.mark.points(2)
def test_graded_b(student, grade):
    """B"""
    grade.layer_forward(None, None, None, points=2)
'''


def _count_reads(monkeypatch):
    """The names of the test functions the plugin reads (its ``_one_check``), in order, as they are read."""
    read = []
    one_check = plugin._one_check

    def counting(function):
        read.append(getattr(function, "__name__", function))
        return one_check(function)

    monkeypatch.setattr(plugin, "_one_check", counting)
    return read


def test_only_graded_tests_are_read_and_each_once(tmp_path, monkeypatch):
    read = _count_reads(monkeypatch)
    (tmp_path / "test_mixed.py").write_text(FILE)
    assert pytest.main([str(tmp_path), "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts="]) == 0
    assert sorted(read) == ["test_graded_a", "test_graded_b"]  # 40 plain items: none read


def test_a_contradiction_is_still_refused_after_the_first_read(tmp_path):
    """The cache per function keeps the verdict: a graded test whose one check gives 3 points beside points(2)
    is refused whichever item reads it."""
    (tmp_path / "test_bad.py").write_text(FILE.replace("points=2)", "points=3)"))
    assert pytest.main([str(tmp_path), "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts="]) \
        == pytest.ExitCode.USAGE_ERROR
    why = plugin._points_contradiction(type("Item", (), {
        "function": None, "nodeid": "x", "get_closest_marker": lambda self, name: None})())
    assert why == ""  # nothing to read: no verdict


GFV = '''
import pytest

@pytest.mark.parametrize("k", range(5))
def test_plain(k, request):
    assert request.node is not None

@pytest.mark.points(2)
def test_graded_via_request(student, request):
    """V"""
    grade = request.getfixturevalue("grade")
    grade.layer_forward(None, None, None, points=2)
'''


def test_a_test_taking_grade_by_getfixturevalue_is_read_too(tmp_path, monkeypatch):
    """review34 PLUGIN_POINTS_GETFIXTUREVALUE: a test taking grade with ``request.getfixturevalue("grade")`` was not
    read (only tests naming the fixture were), so points(2) beside ``points=3`` was no longer refused."""
    read = _count_reads(monkeypatch)
    (tmp_path / "test_gfv.py").write_text(GFV)
    args = [str(tmp_path), "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    assert pytest.main(args) == 0  # points agree
    assert read == ["test_graded_via_request"]  # the plain items (which take request) are not read
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "test_gfv_bad.py").write_text(GFV.replace("points=2)", "points=3)"))  # a new module name: not cached
    assert pytest.main([str(bad), *args[1:]]) == pytest.ExitCode.USAGE_ERROR
