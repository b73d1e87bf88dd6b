"""``_log_eps.own_eps`` reads the methods of a class and of every base defined in its file, whatever else it
derives from (session 19: ``class L(Mine, object)`` stopped at ``object`` and never read ``Mine``)."""
import textwrap

import pytest

from gradcheck._log_eps import own_eps

SOURCE = textwrap.dedent("""
    import numpy as np

    class Mine:
        def forward(self, X):
            self.X = X
            return np.log(X + 1e-7)

    class Other:
        def helper(self, X):
            return np.log(X + 1e-3)

    class L(Mine, {extra}):
        def backward(self, dY):
            return dY / (self.X + 1e-7)
""")


@pytest.mark.parametrize("extra", ["object", "Exception", "np.ndarray"])
def test_a_base_defined_in_the_file_is_read_beside_one_that_is_not(tmp_path, extra):
    path = tmp_path / "layer.py"
    path.write_text(SOURCE.format(extra=extra))
    consts, places, by_method = own_eps(str(path), "L", [1e-7, 1e-3], ["log", "denominator"])
    assert consts == [1e-7]  # Other's 1e-3 is not L's
    assert by_method["forward"] == {"log": [1e-7]}  # read from Mine
    assert by_method["backward"] == {"denominator": [1e-7]}
    assert places == ["log", "denominator"]
