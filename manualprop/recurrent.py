"""Recurrent layers with hand-derived backpropagation through time (BPTT).

Protocol extension: ``forward(X, training=False, *, h0=None)`` (LSTM also
``c0=None``) takes an optional initial state; ``backward(dY) -> dX`` also stores
the gradient with respect to the initial state in ``self.dh0`` (and
``self.dc0``), whether or not ``h0`` was given (zeros are used by default).
All layers are ``batch_first``: ``X`` is (batch, time, features).
Sources: ``lessons/31-rnn-bptt.md``, ``lessons/32-lstm.md``, ``lessons/32b-gru.md``.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_array, check_float_dtype, check_positive_int, check_training
from .init import recurrent_params
from .layers import Layer, _sech2, _sigmoid, _sigmoid_and_grad

__all__ = ["GRU", "LSTM", "RNN"]


class _Recurrent(Layer):
    """Shared constructor, input checks and weight-gradient sums of RNN and LSTM."""

    _gates = 1

    def __init__(self, input_size, hidden_size, rng=None, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        self.input_size = check_positive_int(input_size, "input_size", name)
        self.hidden_size = check_positive_int(hidden_size, "hidden_size", name)
        self.dtype = check_float_dtype(dtype, name)
        self.params = recurrent_params(
            self.input_size, self.hidden_size, self._gates, rng, self.dtype
        )
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()
        self.dh0 = None

    def __call__(self, X, training=False, **state):
        return self.forward(X, training=training, **state)

    def _repr_args(self) -> str:
        s = f"input_size={self.input_size}, hidden_size={self.hidden_size}"
        if self.dtype != np.float64:
            s += f", dtype={self.dtype}"
        return s

    def _inputs(self, X, states, training=False):
        """Check X (N, T, D), ``training`` (a bool: PyTorch's positional ``rnn(x, h0)`` would bind h0 there) and
        each initial state (N, H) (zeros when None)."""
        where = self._where("forward")
        check_training(training, where, "; the initial state is keyword-only: forward(X, "
                       + ", ".join(f"{n}={n}" for n in states) + ")")
        X = check_array(
            X, where, shape=("batch", "time", self.input_size), dtype=self.dtype,
            nonempty=True,
        )
        N = X.shape[0]
        out = []
        for name, s in states.items():
            if s is None:
                out.append(np.zeros((N, self.hidden_size), dtype=self.dtype))
            else:
                out.append(
                    check_array(s, where, name, shape=(N, self.hidden_size), dtype=self.dtype)
                )
        return X, out

    def _weight_grads(self, X, dA, H_prev):
        """Sum the per-step outer products: the weights are shared by every step.

        ``dA`` (N, T, G*H) is dL/d(pre-activation) at every step, ``H_prev``
        (N, T, H) the hidden state each step read.
        """
        GH = dA.shape[-1]
        dA2 = dA.reshape(-1, GH)
        self.grads["W_ih"] = dA2.T @ X.reshape(-1, self.input_size)
        self.grads["W_hh"] = dA2.T @ H_prev.reshape(-1, self.hidden_size)
        self.grads["b_ih"] = dA2.sum(axis=0)
        self.grads["b_hh"] = dA2.sum(axis=0)
        return dA @ self.params["W_ih"]  # dX (N, T, D)


class RNN(_Recurrent):
    r"""Elman RNN with tanh, one layer, ``batch_first`` (PyTorch's ``nn.RNN``).

    .. math::

        h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh}),
        \qquad t = 0, \dots, T-1

    Parameters
    ----------
    input_size, hidden_size : int
        ``D`` and ``H``.
    rng : None, int or numpy.random.Generator
        Initialisation, see :func:`manualprop.init.recurrent_params`
        (all four tensors ``U(-1/sqrt(H), 1/sqrt(H))``, as PyTorch).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"W_ih"`` (H, D), ``"W_hh"`` (H, H), ``"b_ih"`` (H,), ``"b_hh"`` (H,).
    dh0 : ndarray (N, H) or None
        dL/dh0 after ``backward``.

    Notes
    -----
    Shapes: ``X`` (N, T, D), optional ``h0`` (N, H) (zeros by default)
    -> ``Y`` (N, T, H), all hidden states ``Y[:, t] = h_t``.

    Backpropagation through time, for ``t = T-1`` down to ``0``::

        dh  = dY[:, t] + dh_next         # from the output AND from step t+1
        da  = dh / cosh(a_t)**2          # (N, H), tanh'(a_t) = 1 - h_t**2
        dh_next = da @ W_hh              # carried to step t-1
        dX[:, t] = da @ W_ih

    and, the weights being shared by every step, their gradients are sums over
    steps: ``dW_ih = sum_t da_t^T x_t``, ``dW_hh = sum_t da_t^T h_{t-1}``,
    ``db_ih = db_hh = sum_t da_t.sum(0)``. Finally ``dh0 = dh_next``.
    ``tanh'`` is computed from the cached pre-activation ``a_t``, not as
    ``1 - h_t**2``, which cancels to 0 once ``h_t`` rounds to +-1 (at ``a = 20`` the
    derivative is 1.70e-17). The cache holds ``X``, ``h0`` and the pre-activations
    ``A`` (N, T, H); the hidden states are recomputed as ``tanh(A)`` in ``backward``.
    Source: ``lessons/31-rnn-bptt.md``.

    Raises
    ------
    TypeError
        ``X`` / ``h0`` / ``dY`` not float, or of a dtype other than the parameters'.
    ValueError
        ``X`` not (batch, time, input_size) or empty, ``h0`` not (batch,
        hidden_size), ``dY`` not the shape of ``Y``, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> rnn = RNN(1, 1, rng=0)
    >>> for k, v in {"W_ih": 1.0, "W_hh": 0.5, "b_ih": 0.0, "b_hh": 0.0}.items():
    ...     rnn.params[k][...] = v
    >>> Y = rnn.forward(np.array([[[1.0], [0.0]]]))   # h0 = tanh(1), h1 = tanh(h0/2)
    >>> bool(np.allclose(Y[0, :, 0], [np.tanh(1), np.tanh(np.tanh(1) / 2)]))
    True
    """

    _gates = 1

    def forward(self, X, training=False, *, h0=None):
        """Run the cell over time; X (N, T, D), h0 (N, H) or None -> Y (N, T, H)."""
        self._check_params("forward")
        X, (h,) = self._inputs(X, {"h0": h0}, training)
        W_hh = self.params["W_hh"]
        N, T, _ = X.shape
        # the input projection of every step at once: (N, T, H); step t adds
        # h_{t-1} W_hh^T in place, so A ends as the pre-activations a_t
        A = X @ self.params["W_ih"].T + self.params["b_ih"] + self.params["b_hh"]
        Y = np.empty((N, T, self.hidden_size), dtype=self.dtype)
        h_init = h
        for t in range(T):
            a = A[:, t]
            a += h @ W_hh.T
            h = np.tanh(a)
            Y[:, t] = h
        self.cache = {"X": X, "h0": h_init, "A": A, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """BPTT; fills grads, sets ``self.dh0``, returns dX (N, T, D)."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        X, A, h0 = self.cache["X"], self.cache["A"], self.cache["h0"]
        W_hh = self.params["W_hh"]
        T = X.shape[1]
        # tanh'(a_t) from the input for every step at once (one np.errstate, one pass: per step it
        # was 8 errstate contexts a call, 7% of this backward), then scaled step by step in place
        dA = _sech2(A)
        dh_next = np.zeros_like(h0)
        for t in range(T - 1, -1, -1):
            da = dA[:, t]
            da *= dY[:, t] + dh_next
            dh_next = da @ W_hh
        self.dh0 = dh_next
        H_prev = np.empty_like(A)  # h_{t-1}: h0, then tanh(a_t) recomputed
        H_prev[:, 0] = h0
        np.tanh(A[:, :-1], out=H_prev[:, 1:])
        return self._weight_grads(X, dA, H_prev)


class LSTM(_Recurrent):
    r"""Long short-term memory, one layer, ``batch_first`` (PyTorch's ``nn.LSTM``).

    With ``a_t = x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh}`` of shape
    (N, 4H), split into four blocks of H columns in PyTorch's order i, f, g, o:

    .. math::

        i = \sigma(a^i),\ f = \sigma(a^f),\ g = \tanh(a^g),\ o = \sigma(a^o),\qquad
        c_t = f \odot c_{t-1} + i \odot g,\qquad h_t = o \odot \tanh(c_t)

    Parameters
    ----------
    input_size, hidden_size : int
        ``D`` and ``H``.
    rng : None, int or numpy.random.Generator
        Initialisation, see :func:`manualprop.init.recurrent_params` with
        ``gates=4`` (all ``U(-1/sqrt(H), 1/sqrt(H))``, as PyTorch).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"W_ih"`` (4H, D), ``"W_hh"`` (4H, H), ``"b_ih"`` (4H,), ``"b_hh"`` (4H,);
        row blocks i, f, g, o.
    dh0, dc0 : ndarray (N, H) or None
        dL/dh0 and dL/dc0 after ``backward``.

    Notes
    -----
    Shapes: ``X`` (N, T, D), optional ``h0``, ``c0`` (N, H) (zeros by default)
    -> ``Y`` (N, T, H), all hidden states.

    BPTT carries TWO gradients backwards, ``dh_next`` and ``dc_next``; at
    step ``t`` (``tc = tanh(c_t)``)::

        dh = dY[:, t] + dh_next
        do = dh * tc
        dc = dc_next + dh * o * tanh'(c_t)
        di, df, dg = dc * g, dc * c_{t-1}, dc * i
        da = [di*s'(a^i), df*s'(a^f), dg*tanh'(a^g), do*s'(a^o)]   # (N, 4H)
        dh_next, dc_next = da @ W_hh, dc * f
        dX[:, t] = da @ W_ih

    with ``s'(a) = s(a) s(-a)`` (``= i (1 - i)`` for ``a = a^i``) and ``tanh'(a) =
    1 / cosh(a)**2`` (``= 1 - g**2``) computed from the pre-activations: the forms in
    the gate values cancel to 0 once a gate rounds to 0 or 1 (``s'(40)`` is 4.25e-18).
    Weight gradients are sums over steps, as in :class:`RNN`. The cache holds ``X``,
    ``h0``, ``c0``, ``Y``, the cell states ``C`` (N, T, H) and the pre-activations
    ``A`` (N, T, 4H); the gate values are recomputed from ``A`` in ``backward``.
    Source: ``lessons/32-lstm.md``.

    Raises
    ------
    TypeError
        ``X`` / ``h0`` / ``c0`` / ``dY`` not float, or of a dtype other than the
        parameters'.
    ValueError
        ``X`` not (batch, time, input_size) or empty, ``h0``/``c0`` not
        (batch, hidden_size), ``dY`` not the shape of ``Y``, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> lstm = LSTM(3, 2, rng=0)
    >>> Y = lstm.forward(np.ones((4, 5, 3)))
    >>> Y.shape, lstm.backward(np.ones_like(Y)).shape, lstm.grads["W_hh"].shape
    ((4, 5, 2), (4, 5, 3), (8, 2))
    """

    _gates = 4

    def __init__(self, input_size, hidden_size, rng=None, dtype=np.float64):
        super().__init__(input_size, hidden_size, rng=rng, dtype=dtype)
        self.dc0 = None

    def forward(self, X, training=False, *, h0=None, c0=None):
        """Run the cell over time; X (N, T, D), h0/c0 (N, H) or None -> Y (N, T, H)."""
        self._check_params("forward")
        X, (h, c) = self._inputs(X, {"h0": h0, "c0": c0}, training)
        H = self.hidden_size
        W_hh = self.params["W_hh"]
        N, T, _ = X.shape
        # input projections of every step; step t adds h_{t-1} W_hh^T in place, so A
        # ends as the pre-activations (N, T, 4H), from which backward takes derivatives
        A = X @ self.params["W_ih"].T + self.params["b_ih"] + self.params["b_hh"]
        Y = np.empty((N, T, H), dtype=self.dtype)
        C = np.empty((N, T, H), dtype=self.dtype)
        h_init, c_init = h, c
        for t in range(T):
            a = A[:, t]
            a += h @ W_hh.T
            z = _sigmoid(a)
            z[:, 2 * H : 3 * H] = np.tanh(a[:, 2 * H : 3 * H])
            i, f, g, o = z[:, :H], z[:, H : 2 * H], z[:, 2 * H : 3 * H], z[:, 3 * H :]
            c = f * c + i * g
            h = o * np.tanh(c)
            C[:, t], Y[:, t] = c, h
        self.cache = {
            "X": X, "h0": h_init, "c0": c_init, "Y": Y, "C": C, "A": A,
            "out_shape": Y.shape, "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """BPTT; fills grads, sets ``self.dh0`` and ``self.dc0``, returns dX (N, T, D)."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        cache = self.cache
        X, Y, C, A = cache["X"], cache["Y"], cache["C"], cache["A"]
        H = self.hidden_size
        W_hh = self.params["W_hh"]
        T = X.shape[1]
        dA = np.empty_like(A)
        dh_next = np.zeros_like(cache["h0"])
        dc_next = np.zeros_like(cache["c0"])
        for t in range(T - 1, -1, -1):
            # the gate values and their derivatives, from the pre-activations a
            a = A[:, t]
            z, da = _sigmoid_and_grad(a)  # s'(a) = s(a) s(-a); times dL/dz below
            z[:, 2 * H : 3 * H] = np.tanh(a[:, 2 * H : 3 * H])
            da[:, 2 * H : 3 * H] = _sech2(a[:, 2 * H : 3 * H])
            i, f, g, o = z[:, :H], z[:, H : 2 * H], z[:, 2 * H : 3 * H], z[:, 3 * H :]
            c_prev = C[:, t - 1] if t > 0 else cache["c0"]
            tc = np.tanh(C[:, t])
            dh = dY[:, t] + dh_next
            dc = dc_next + dh * o * _sech2(C[:, t])
            da[:, :H] *= dc * g
            da[:, H : 2 * H] *= dc * c_prev
            da[:, 2 * H : 3 * H] *= dc * i
            da[:, 3 * H :] *= dh * tc
            dA[:, t] = da
            dh_next = da @ W_hh
            dc_next = dc * f
        self.dh0, self.dc0 = dh_next, dc_next
        H_prev = np.concatenate([cache["h0"][:, None, :], Y[:, :-1]], axis=1)
        return self._weight_grads(X, dA, H_prev)


class GRU(_Recurrent):
    r"""Gated recurrent unit, one layer, ``batch_first``, PyTorch's convention (``nn.GRU``).

    With the input and hidden projections kept apart (the reset gate multiplies the
    hidden projection *including* its bias ``b_hn``, after the matrix product: PyTorch's
    form, which is Keras's ``reset_after=True``; Cho et al.'s original applies ``r``
    before ``W_hn``)::

        a_x = x_t W_ih^T + b_ih,   a_h = h_{t-1} W_hh^T + b_hh      (N, 3H), blocks r, z, n
        r = sigmoid(a_x^r + a_h^r),   z = sigmoid(a_x^z + a_h^z)
        n = tanh(a_x^n + r * a_h^n)
        h_t = (1 - z) * n + z * h_{t-1}

    Row blocks of ``W_ih``, ``W_hh``, ``b_ih``, ``b_hh`` in PyTorch's order **r, z, n**
    (reset, update, new). Keras orders them z, r, h.

    Parameters
    ----------
    input_size, hidden_size : int
        ``D`` and ``H``.
    rng : None, int or numpy.random.Generator
        Initialisation, see :func:`manualprop.init.recurrent_params` with
        ``gates=3`` (all ``U(-1/sqrt(H), 1/sqrt(H))``, as PyTorch).
    dtype : {np.float64, np.float32}

    Attributes
    ----------
    params, grads : dict
        ``"W_ih"`` (3H, D), ``"W_hh"`` (3H, H), ``"b_ih"`` (3H,), ``"b_hh"`` (3H,);
        row blocks r, z, n.
    dh0 : ndarray (N, H) or None
        dL/dh0 after ``backward``.

    Notes
    -----
    Shapes: ``X`` (N, T, D), optional ``h0`` (N, H) (zeros by default)
    -> ``Y`` (N, T, H), all hidden states.

    BPTT, for ``t = T-1`` down to ``0`` (``h_prev = h_{t-1}``)::

        dh   = dY[:, t] + dh_next
        dan  = dh * (1 - z) * tanh'(a^n)        # n's pre-activation a^n
        dar  = dan * a_h^n * s'(a^r)
        daz  = dh * (h_prev - n) * s'(a^z)
        da_x = [dar, daz, dan]                  # (N, 3H): to W_ih, b_ih, x_t
        da_h = [dar, daz, dan * r]              # (N, 3H): to W_hh, b_hh, h_prev
        dh_next = dh * z + da_h @ W_hh
        dX[:, t] = da_x @ W_ih

    with ``s'(a) = s(a) s(-a)`` (``= r (1 - r)``) and ``tanh'(a) = 1 / cosh(a)**2``
    (``= 1 - n**2``) computed from the pre-activations ``a^r = a_x^r + a_h^r``, ``a^z``,
    ``a^n = a_x^n + r * a_h^n``: the forms in the gate values cancel to 0 once a gate
    rounds to 0 or +-1. The two pre-activation gradients differ only in the n block, so
    ``db_ih`` and ``db_hh`` differ there (in an RNN or LSTM they are equal).
    Weight gradients are sums over steps. The cache holds ``X``, ``h0``, ``Y``, the
    pre-activations ``A`` (N, T, 3H) and ``A_hn`` (N, T, H); the gate values are
    recomputed from ``A`` in ``backward``. Source: ``lessons/32b-gru.md``.

    Raises
    ------
    TypeError
        ``X`` / ``h0`` / ``dY`` not float, or of a dtype other than the parameters'.
    ValueError
        ``X`` not (batch, time, input_size) or empty, ``h0`` not (batch,
        hidden_size), ``dY`` not the shape of ``Y``, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> gru = GRU(3, 2, rng=0)
    >>> Y = gru.forward(np.ones((4, 5, 3)))
    >>> Y.shape, gru.backward(np.ones_like(Y)).shape, gru.grads["W_hh"].shape
    ((4, 5, 2), (4, 5, 3), (6, 2))
    """

    _gates = 3

    def forward(self, X, training=False, *, h0=None):
        """Run the cell over time; X (N, T, D), h0 (N, H) or None -> Y (N, T, H)."""
        self._check_params("forward")
        X, (h,) = self._inputs(X, {"h0": h0}, training)
        H = self.hidden_size
        W_hh, b_hh = self.params["W_hh"], self.params["b_hh"]
        N, T, _ = X.shape
        # (N, T, 3H), every step at once; step t adds its hidden projection in place,
        # so A ends as the pre-activations of r, z and n
        A = X @ self.params["W_ih"].T + self.params["b_ih"]
        Y = np.empty((N, T, H), dtype=self.dtype)
        A_hn = np.empty((N, T, H), dtype=self.dtype)  # h_{t-1} W_hn^T + b_hn, read by r's gradient
        h_init = h
        for t in range(T):
            a_h = h @ W_hh.T + b_hh
            a_rz, a_n = A[:, t, : 2 * H], A[:, t, 2 * H :]
            a_rz += a_h[:, : 2 * H]
            rz = _sigmoid(a_rz)
            r, z = rz[:, :H], rz[:, H:]
            a_n += r * a_h[:, 2 * H :]
            n = np.tanh(a_n)
            h = (1 - z) * n + z * h
            A_hn[:, t], Y[:, t] = a_h[:, 2 * H :], h
        self.cache = {
            "X": X, "h0": h_init, "Y": Y, "A": A, "A_hn": A_hn,
            "out_shape": Y.shape, "dtype": Y.dtype,
        }
        return Y

    def backward(self, dY):
        """BPTT; fills grads, sets ``self.dh0``, returns dX (N, T, D)."""
        self._check_params("backward")
        dY = self._check_dY(dY)
        cache = self.cache
        X, Y, A, A_hn = cache["X"], cache["Y"], cache["A"], cache["A_hn"]
        H = self.hidden_size
        W_hh = self.params["W_hh"]
        T = X.shape[1]
        dA_x = np.empty_like(A)
        dA_h = np.empty_like(A)
        H_prev = np.concatenate([cache["h0"][:, None, :], Y[:, :-1]], axis=1)
        dh_next = np.zeros_like(cache["h0"])
        for t in range(T - 1, -1, -1):
            # the gate values and their derivatives, from the pre-activations
            a_rz, a_n = A[:, t, : 2 * H], A[:, t, 2 * H :]
            rz, drz = _sigmoid_and_grad(a_rz)  # s'(a) = s(a) s(-a)
            r, z, n = rz[:, :H], rz[:, H:], np.tanh(a_n)
            dh = dY[:, t] + dh_next
            dan = dh * (1 - z) * _sech2(a_n)
            dar = dan * A_hn[:, t] * drz[:, :H]
            daz = dh * (H_prev[:, t] - n) * drz[:, H:]
            dA_x[:, t, :H], dA_x[:, t, H : 2 * H], dA_x[:, t, 2 * H :] = dar, daz, dan
            dA_h[:, t, : 2 * H] = dA_x[:, t, : 2 * H]
            dA_h[:, t, 2 * H :] = dan * r
            dh_next = dh * z + dA_h[:, t] @ W_hh
        self.dh0 = dh_next
        dx2 = dA_x.reshape(-1, 3 * H)
        dh2 = dA_h.reshape(-1, 3 * H)
        self.grads["W_ih"] = dx2.T @ X.reshape(-1, self.input_size)
        self.grads["W_hh"] = dh2.T @ H_prev.reshape(-1, H)
        self.grads["b_ih"] = dx2.sum(axis=0)
        self.grads["b_hh"] = dh2.sum(axis=0)
        return dA_x @ self.params["W_ih"]
