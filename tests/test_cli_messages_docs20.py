"""Session 20's new user: what ``gradcheck check`` says about a stub exercise and a file that does not import."""

from tests.test_cli import run_here

INIT = ["--input-shape", "8,5", "--init", '{"in_features": 5, "out_features": 3}']


def test_a_released_exercise_stub_is_called_not_written_yet_without_a_shape_hint(tmp_path):
    # before: "X had the shape --input-shape gave, 8,5: if forward expects another ..., change --input-shape"
    (tmp_path / "stub.py").write_text(
        "class Affine:\n    def __init__(self, in_features, out_features):\n        self.params, self.grads = {}, {}\n"
        "    def forward(self, X, training=False):\n"
        "        raise NotImplementedError('Exercise 1: implement the forward of Affine')\n"
        "    def backward(self, dY):\n        raise NotImplementedError('Exercise 1')\n")
    p = run_here("check", "stub.py::Affine", *INIT, cwd=tmp_path)
    said = " ".join(p.stderr.split())
    assert p.returncode == 3 and "The exercise is not written yet" in said, said
    assert "--input-shape" not in said and "Expected forward to return" not in said, said


def test_a_file_importing_a_course_package_is_told_what_check_and_grade_provide(tmp_path):
    # before: "... not available to submissions. at mp.py:1 in <module>" and "in the grading sandbox" under check
    (tmp_path / "mp.py").write_text("import manualprop\n\nclass Linear:\n    pass\n")
    p = run_here("check", "mp.py::Linear", *INIT, cwd=tmp_path)
    said = " ".join(p.stderr.split())
    assert p.returncode == 3 and "No module named 'manualprop' in gradcheck's sandbox" in said, said
    assert ". at mp.py:1" not in said and "available to checked or graded code at mp.py:1" in said, said
    assert "the grader provides only numpy and the standard library to submissions" in said, said
