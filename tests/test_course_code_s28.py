"""Session 28 (fixs28): tester28s ran public course code through ``gradcheck check``.

Each test writes the published code's pattern as a small student-style file: Georgia Tech CS7643 A2's layers
(``backward(dout)`` returns nothing and sets ``self.dx``, ``self.dw``, ``self.db``), tinynn's weights built by the
first forward into ``self.params = {p: None ...}``, a float16 cast in float32 code's backward.
"""

import numpy as np
from test_cli import both, run_here, student

CS7643_RELU = """
import numpy as np

class ReLU:
    def __init__(self):
        self.cache = None
        self.dx = None

    def forward(self, x):
        out = np.copy(x)
        out[out < 0] = 0
        self.cache = x
        return out

    def backward(self, dout):
        '''
        :return: nothing but dx of self should be updated
        '''
        x = self.cache
        self.dx = (x > 0) * dout{bug}
"""

CS7643_LINEAR = """
import numpy as np

class Linear:
    def __init__(self, in_dim, out_dim):
        rng = np.random.default_rng(1024)
        self.weight = 1e-1 * rng.standard_normal((in_dim, out_dim))
        self.bias = rng.standard_normal(out_dim)
        self.dx = self.dw = self.db = None

    def forward(self, x):
        self.cache = x
        return x.reshape(x.shape[0], -1) @ self.weight + self.bias

    def backward(self, dout):
        '''
        :return: nothing but dx, dw, and db of self should be updated
        '''
        x = self.cache
        self.dw = x.reshape(x.shape[0], -1).T @ dout
        self.db = np.sum(dout, axis=0){bug}
        self.dx = (dout @ self.weight.T).reshape(x.shape)
"""


def test_cs7643_relu_that_stores_self_dx_is_read_there(tmp_path):
    """Was exit 1: "ReLU.backward(dY) ... returned None for dX ... Did you forget the return statement?"."""
    f = student(tmp_path, CS7643_RELU.replace("{bug}", ""))
    p = run_here("check", f"{f}::ReLU", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 0, text
    assert "backward returns nothing and stores dX in self.dx" in text, text
    assert "PASS: ReLU: every gradient (dX) matches" in text, text
    bad = student(tmp_path, CS7643_RELU.replace("{bug}", " * 2"), "bad.py")
    p = run_here("check", f"{bad}::ReLU", "--input-shape", "4,5")
    assert p.returncode == 1 and "FAIL: ReLU: gradient mismatch in dX." in both(p), both(p)


def test_a_backward_that_sets_no_gradient_anywhere_still_forgot_its_return(tmp_path):
    f = student(tmp_path, CS7643_RELU.replace("{bug}", "").replace("self.dx = (x > 0) * dout", "dx = (x > 0) * dout"))
    p = run_here("check", f"{f}::ReLU", "--input-shape", "4,5")
    assert p.returncode == 1 and "Did you forget the return statement?" in both(p), both(p)


def test_cs7643_linear_pairs_dw_with_weight_and_db_with_bias(tmp_path):
    """Was "NOT CHECKED as a whole: backward writes dw, shaped like weight (5, 3) ... name it dweight"."""
    f = student(tmp_path, CS7643_LINEAR.replace("{bug}", ""))
    p = run_here("check", f"{f}::Linear", "--input-shape", "4,5", "--init", '{"in_dim": 5, "out_dim": 3}')
    text = both(p)
    assert p.returncode == 0, text
    assert "attribute style (weight/dw, bias/db)" in text, text
    assert "PASS: Linear: every gradient (dX, dweight, dbias) matches" in text, text
    assert "NOT CHECKED" not in text and "name it" not in text, text
    bad = student(tmp_path, CS7643_LINEAR.replace("{bug}", " / x.shape[0]"), "bad.py")
    p = run_here("check", f"{bad}::Linear", "--input-shape", "4,5", "--init", '{"in_dim": 5, "out_dim": 3}')
    assert p.returncode == 1 and "FAIL: Linear: gradient mismatch in dbias." in both(p), both(p)


TINYNN_DENSE = """
import numpy as np

class Dense:
    def __init__(self, num_out):
        self.params = {p: None for p in ("w", "b")}
        self.grads = {}
        self.shapes = {"w": [None, num_out], "b": [num_out]}
        self.is_init = False
        self.ctx = {}

    def _init_params(self):
        rng = np.random.default_rng(0)
        self.params["w"] = rng.uniform(-0.5, 0.5, self.shapes["w"])
        self.params["b"] = rng.uniform(-0.5, 0.5, self.shapes["b"])
        self.is_init = True

    def forward(self, inputs):
        if not self.is_init:
            self.shapes["w"][0] = inputs.shape[1]
            self._init_params()
        self.ctx = {"X": inputs}
        return inputs @ self.params["w"] + self.params["b"]

    def backward(self, grad):
        self.grads["w"] = self.ctx["X"].T @ grad
        self.grads["b"] = np.sum(grad, axis=0){bug}
        return grad @ self.params["w"].T
"""


def test_tinynn_weights_built_by_the_first_forward_into_a_params_dict_of_nones(tmp_path):
    """Was exit 3: "Dense.params['w'] must be a numpy float array ...; got none."."""
    f = student(tmp_path, TINYNN_DENSE.replace("{bug}", ""))
    p = run_here("check", f"{f}::Dense", "--input-shape", "4,5", "--init", '{"num_out": 3}')
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: Dense: every gradient (dX, dw, db) matches" in text, text
    bad = student(tmp_path, TINYNN_DENSE.replace("{bug}", " / 4"), "bad.py")
    p = run_here("check", f"{bad}::Dense", "--input-shape", "4,5", "--init", '{"num_out": 3}')
    assert p.returncode == 1 and "FAIL: Dense: gradient mismatch in db." in both(p), both(p)


FLOAT32_DENSE = """
import numpy as np

class Dense:
    def __init__(self, num_in, num_out):
        rng = np.random.default_rng(0)
        self.params = {"w": rng.uniform(-0.5, 0.5, (num_in, num_out)).astype(np.float32),
                       "b": np.zeros(num_out, dtype=np.float32)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["w"] + self.params["b"]

    def backward(self, grad):
        self.grads["w"] = (self.X.T @ grad){cast}
        self.grads["b"] = np.sum(grad, axis=0)
        return grad @ self.params["w"].T
"""


def test_a_float16_cast_in_float32_code_keeps_its_fail_on_the_float64_copy(tmp_path):
    """Was PASS (tn-dense-dw-f16): the copy wrote the student's float16 cast float64 with the file's float32."""
    args = ["--input-shape", "4,5", "--init", '{"num_in": 5, "num_out": 3}']
    f = student(tmp_path, FLOAT32_DENSE.replace("{cast}", ".astype(np.float16)"))
    p = run_here("check", f"{f}::Dense", *args)
    text = both(p)
    assert p.returncode == 1, text
    assert "Dense was checked on a copy of its files with those dtypes written float64" in text, text
    assert "FAIL: Dense: gradient mismatch in dw." in text and "backward returns dw as float16" in text, text
    ok = student(tmp_path, FLOAT32_DENSE.replace("{cast}", ".astype(np.float32)"), "ok.py")
    p = run_here("check", f"{ok}::Dense", *args)
    assert p.returncode == 0 and "PASS: Dense (its float32 code checked on a float64 copy" in both(p), both(p)


def test_an_init_list_of_integers_named_like_a_kernel_size_stays_python_ints():
    """Was a float64 array: tinynn's Conv2D(kernel=[3, 3, 3, 4]) raised TypeError 'numpy.float64' object cannot be
    interpreted as an integer. Weights stay arrays: "b": [0, 0, 0], a matrix, a list holding a float."""
    from gradcheck._adapters import build, init_arrays

    got = init_arrays({"kernel": [3, 3, 3, 4], "kernel_size": [3, 3], "b": [0, 0, 0], "sizes": [4, 3],
                       "kernel_w": [[1, 0], [0, 1]], "w": [0.5, 1]})[0]
    assert got["kernel"] == [3, 3, 3, 4] and all(type(k) is int for k in got["kernel"])
    assert got["kernel_size"] == [3, 3] and got["sizes"] == [4, 3]
    for k in ("b", "kernel_w", "w"):
        assert isinstance(got[k], np.ndarray) and got[k].dtype == np.float64, k

    class Pool:
        def __init__(self, w: tuple, stride=(1, 1)):
            self.w, self.stride = w, stride

        def forward(self, X):
            return X

        def backward(self, dY):
            return dY

    made = build("class", Pool, {"w": [2, 2], "stride": [2, 2]}, 0)
    assert made.w == (2, 2) and made.stride == (2, 2) and all(type(k) is int for k in made.w + made.stride)


TINYNN_CONV = """
import numpy as np

class Conv2D:
    def __init__(self, kernel, padding="SAME"):
        self.kernel_shape = kernel
        self.padding_mode = padding
        rng = np.random.default_rng(0)
        self.params = {"w": rng.uniform(-0.5, 0.5, size=kernel), "b": rng.uniform(-0.5, 0.5, size=kernel[-1])}
        self.grads = {}

    def forward(self, X):
        k_h, k_w, _, out_c = self.kernel_shape
        if self.padding_mode == "SAME":
            ph, pw = (k_h - 1) // 2, (k_w - 1) // 2
            pad = ((0, 0), (ph, k_h - 1 - ph), (pw, k_w - 1 - pw), (0, 0))
        else:
            pad = ((0, 0),) * 4
        Xp = np.pad(X, pad)
        self.ctx = (Xp, pad)
        N, H, W, _ = Xp.shape
        Y = np.empty((N, H - k_h + 1, W - k_w + 1, out_c))
        for i in range(Y.shape[1]):
            for j in range(Y.shape[2]):
                Y[:, i, j, :] = np.tensordot(Xp[:, i:i + k_h, j:j + k_w, :], self.params["w"], axes=3)
        return Y + self.params["b"]

    def backward(self, dY):
        Xp, pad = self.ctx
        k_h, k_w = self.kernel_shape[:2]
        dXp, dw = np.zeros_like(Xp), np.zeros_like(self.params["w"])
        for i in range(dY.shape[1]):
            for j in range(dY.shape[2]):
                dw += np.tensordot(Xp[:, i:i + k_h, j:j + k_w, :], dY[:, i, j, :], axes=([0], [0]))
                dXp[:, i:i + k_h, j:j + k_w, :] += np.tensordot(dY[:, i, j, :], self.params["w"], axes=([1], [3])){bug}
        self.grads = {"w": dw, "b": dY.sum(axis=(0, 1, 2))}
        H, W = Xp.shape[1:3]
        return dXp[:, pad[1][0]:H - pad[1][1], pad[2][0]:W - pad[2][1], :]
"""


def test_a_padding_setting_given_in_init_is_checked_as_given_never_called_a_mode(tmp_path):
    """Was NOT CHECKED (exit 3): "forward reads self.padding_mode = 'SAME' ... check each value with --init", though
    the user did; with 'VALID' the header said "mode: eval (self.padding_mode = 'VALID')"."""
    f = student(tmp_path, TINYNN_CONV.replace("{bug}", ""))
    for padding in ("SAME", "VALID"):
        p = run_here("check", f"{f}::Conv2D", "--input-shape", "2,4,4,3", "--init",
                     f'{{"kernel": [2, 2, 3, 2], "padding": "{padding}"}}')
        text = both(p)
        assert p.returncode == 0, text
        assert "PASS: Conv2D: every gradient (dX, dw, db) matches" in text, text
        assert "mode: forward has no training switch: one mode" in text, text
        assert "mode: eval" not in text and "NOT CHECKED" not in text, text
        assert "forward branches on self.padding_mode, the layer's configuration as built" in text, text
    bad = student(tmp_path, TINYNN_CONV.replace("{bug}", " * 0.5"), "bad.py")
    p = run_here("check", f"{bad}::Conv2D", "--input-shape", "2,4,4,3", "--init", '{"kernel": [2, 2, 3, 2]}')
    assert p.returncode == 1 and "FAIL: Conv2D: gradient mismatch in dX." in both(p), both(p)


RASCHKA_MLP = """
import numpy as np

def sigmoid(z):
    return 1. / (1. + np.exp(-z))

class NeuralNetMLP:
    def __init__(self, num_features, num_hidden, num_classes, random_seed=123):
        rng = np.random.RandomState(random_seed)
        self.num_classes = num_classes
        self.weight_h = rng.normal(0.0, 0.1, size=(num_hidden, num_features))
        self.bias_h = np.zeros(num_hidden)
        self.weight_out = rng.normal(0.0, 0.1, size=(num_classes, num_hidden))
        self.bias_out = np.zeros(num_classes)

    def forward(self, x):
        a_h = sigmoid(x @ self.weight_h.T + self.bias_h)
        a_out = sigmoid(a_h @ self.weight_out.T + self.bias_out)
        return a_h, a_out

    def backward(self, x, a_h, a_out, y):
        y_onehot = np.eye(self.num_classes)[y]
        delta_out = 2. * (a_out - y_onehot) / y.shape[0] * a_out * (1. - a_out)
        d_loss__dw_out = delta_out.T @ a_h
        d_loss__db_out = np.sum(delta_out, axis=0)
        d_loss__a_h = delta_out @ self.weight_out
        d_z_h = d_loss__a_h * a_h * (1. - a_h)
        return d_loss__dw_out, d_loss__db_out, d_z_h.T @ x, np.sum(d_z_h, axis=0)
"""


def test_a_training_loop_model_that_fits_no_protocol_is_a_usage_error_not_a_fail(tmp_path):
    """Was "wrong result (exit 1): ... gave Y as a tuple", the FAIL code, for correct code of another protocol."""
    f = student(tmp_path, RASCHKA_MLP)
    p = run_here("check", f"{f}::NeuralNetMLP", "--input-shape", "4,6", "--init",
                 '{"num_features": 6, "num_hidden": 5, "num_classes": 3}')
    text = both(p)
    assert p.returncode == 2, text
    assert "usage error (exit 2): NeuralNetMLP.forward(x) with x of shape (4, 6) gave Y as a tuple, and " \
           "NeuralNetMLP.backward(x, a_h, a_out, y) takes 4 arguments, not the upstream gradient dY" in text, text
    assert "nothing was found wrong" in text and "--targets" in text and "few-line class" in text, text
    assert "wrong result" not in text, text
