"""newuser44 F1: an import under ``if __name__ == "__main__":`` never runs when the grader or the checker imports the
file, so the autodiff guard and the unavailable-import warning pass over it, as over ``if TYPE_CHECKING:``. Before,
a correct submission with an autograd self-test in such a block scored 0/28, and ``gradcheck check`` said only that the
import would fail "if ``__name__ == '__main__'`` is true there". A file that rebinds ``__name__`` is read as before."""

import textwrap

from gradcheck.grading.static import forbidden_imports, unavailable_imports


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_imports_under_a_main_block_are_not_counted(tmp_path):
    path = _write(tmp_path, "layers.py", """\
        import numpy as np
        if __name__ == "__main__":
            import autograd.numpy as anp
            from scipy import special
        if "__main__" == __name__:
            import torch
        if __name__ != "__main__":
            import numpy.linalg
        else:
            import jax
        if not __name__ == "__main__":
            pass
        else:
            import tensorflow
        """)
    assert forbidden_imports([path], ["autograd", "torch", "jax", "tensorflow"]) == []
    assert unavailable_imports([path]) == []


def test_the_other_branch_of_a_main_test_and_other_tests_still_count(tmp_path):
    path = _write(tmp_path, "layers.py", """\
        if __name__ == "__main__":
            pass
        else:
            import torch
        if __name__ == "layers":
            import jax
        if __name__ != "__main__":
            import autograd
        """)
    assert [(v.line, v.module) for v in forbidden_imports([path], ["torch", "jax", "autograd"])] == [
        (4, "torch"), (6, "jax"), (8, "autograd")]


def test_a_file_that_rebinds_its_name_keeps_its_main_block_counted(tmp_path):
    for i, rebind in enumerate(['__name__ = "__main__"', 'globals()["__name__"] = "__main__"',
                                'import sys\nsys.modules[__name__].__name__ = "__main__"',
                                'exec("__name__ = \'__main__\'")']):
        path = _write(tmp_path, f"layers{i}.py", rebind + '\nif __name__ == "__main__":\n    import torch\n')
        assert [v.module for v in forbidden_imports([path], ["torch"])] == ["torch"], rebind
