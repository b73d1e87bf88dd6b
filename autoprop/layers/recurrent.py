"""Recurrent layers, forward only.

Twins of :mod:`manualprop.recurrent` (same constructors, same initial parameters
for the same ``rng`` via :func:`manualprop.init.recurrent_params`). The LSTM and GRU
are a Python loop over time steps on the tape, which records every step, so its
reverse walk IS backpropagation through time (the LSTM's step is two records: its gates,
``lstm_gates_at``, and its cell, ``lstm_cell``); the RNN records its whole recurrence
as one primitive, ``rnn_tanh``, whose VJP is that loop written out (as PyTorch's and
TensorFlow's recurrent kernels).
``layer(x, training=False, h0=None)`` (LSTM also ``c0=None``).
Sources: ``lessons/31-rnn-bptt.md``, ``lessons/32-lstm.md``.
"""

from __future__ import annotations

import numpy as np

import manualprop as mp
from manualprop._validation import check_array

from .. import numpy as ap_numpy
from ..core import registry as R
from ..core.observe import own
from ..core.tape import replayed
from ..core.tensor import _TRACERS, Tensor
from .base import Layer, check_at_replay

__all__ = ["GRU", "LSTM", "RNN"]


class _Recurrent(Layer):
    _gates = 1
    _training_hint = "; the initial state is keyword-only: layer(x, h0=h0) (LSTM: h0=h0, c0=c0)"

    def __call__(self, x, training=None, **state):
        return Layer.__call__(self, x, training=training, **state)  # the call context

    def _inputs(self, x, states):
        x = self._input(
            x, shape=("batch", "time", self.input_size), dtype=self.dtype, nonempty=True
        )
        N = x.shape[0]
        out = []
        for name, s in states.items():
            if s is None:
                shape = (N, self.hidden_size)  # the layer's own zeros (made again at an autoprop.function replay)
                out.append(replayed(lambda shape=shape: own(np.zeros(shape, dtype=self.dtype))))
            else:
                value = s._value if isinstance(s, Tensor) else s
                where = f"autoprop.layers.{self!r}.__call__"  # (the layer's repr: only for a given state)
                check_array(value, where, name, shape=(N, self.hidden_size), dtype=self.dtype)
                if _TRACERS:  # (autoprop.function: the values checked again at each replay)
                    check_at_replay(where, s, name)
                out.append(s if isinstance(s, Tensor) else Tensor(s))
        return x, out

    def _input_projection(self, x, b):
        """``x_t W_ih^T + b`` for every step at once, as manualprop: one fused ``linear``
        record on ``x`` seen as (N*T, D), back to A (N, T, G*H).

        One matrix product instead of T small ones, forward and backward (``dW_ih`` is one
        ``g^T x``, ``dX`` one ``g W_ih``). The GRU's step t reads ``A[:, t]`` as a slice (RNN
        and LSTM read their rows inside their step's record: :meth:`_steps`); the reverse walk writes the
        steps' gradients into one (N, T, G*H) array (``tape.Scatter``), not a zero-filled
        array per step.
        """
        N, T, D = x.shape
        A = R.linear(R.reshape(x, shape=(N * T, D)), self.variables["W_ih"], b)
        return R.reshape(A, shape=(N, T, A.shape[1]))

    def _steps(self, x):
        """``(A, key_t for t)``: :meth:`_input_projection` with both biases, ``b_ih + b_hh``
        (RNN, LSTM), left as (N*T, G*H), and the key of each step's rows, ``t::T`` (sample n's
        step t is row ``n*T + t``: the same numbers as ``A.reshape(N, T, -1)[:, t]``), for
        ``linear_at(h, W_hh, A, key)`` (``h W_hh^T + A[t::T]``: one record per step, no slice
        record, and no record to reshape A)."""
        v = self.variables
        N, T, D = x.shape
        b = v["b_ih"] + v["b_hh"]  # (recorded first, as before)
        A = R.linear(R.reshape(x, shape=(N * T, D)), v["W_ih"], b)
        return A, [slice(t, None, T) for t in range(T)]


class RNN(_Recurrent):
    """tanh RNN ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (twin of
    :class:`manualprop.RNN`).

    Parameters
    ----------
    input_size, hidden_size : int
        ``D`` and ``H``.
    rng : None, int or numpy.random.Generator
        Same initialisation as manualprop (:func:`manualprop.init.recurrent_params`).
    dtype : {np.float64, np.float32}

    Notes
    -----
    Shapes: x (N, T, D), h0 (N, H) or None (zeros) -> y (N, T, H), all hidden
    states. Variables ``W_ih`` (H, D), ``W_hh`` (H, H), ``b_ih``, ``b_hh`` (H,).
    Call ``layer(x, h0=None)``; ``tape.gradient`` w.r.t. a watched ``h0`` is the
    manual layer's ``dh0``. Source: ``lessons/31-rnn-bptt.md``.
    """

    manual_class = mp.RNN

    _gates = 1

    def call(self, x, training=False, *, h0=None):
        """Forward pass of the twin of ``manualprop.RNN``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x, (h,) = self._inputs(x, {"h0": h0})
        v = self.variables
        # the whole layer as one record, as PyTorch's and TensorFlow's RNN kernels: its VJP is
        # backpropagation through time (manualprop.RNN.backward's loop)
        return R.rnn_tanh(x, h, v["W_ih"], v["W_hh"], v["b_ih"], v["b_hh"])


class LSTM(_Recurrent):
    """One-layer LSTM, gate order i, f, g, o (twin of :class:`manualprop.LSTM`).

    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` with
    ``[i, f, g, o] = [sigmoid, sigmoid, tanh, sigmoid](x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    Parameters
    ----------
    input_size, hidden_size : int
        ``D`` and ``H``.
    rng : None, int or numpy.random.Generator
        Same initialisation as manualprop
        (:func:`manualprop.init.recurrent_params` with ``gates=4``).
    dtype : {np.float64, np.float32}

    Notes
    -----
    Shapes: x (N, T, D), h0, c0 (N, H) or None -> y (N, T, H). Variables
    ``W_ih`` (4H, D), ``W_hh`` (4H, H), ``b_ih``, ``b_hh`` (4H,).
    Source: ``lessons/32-lstm.md``.
    """

    manual_class = mp.LSTM

    _gates = 4

    def call(self, x, training=False, *, h0=None, c0=None):
        """Forward pass of the twin of ``manualprop.LSTM``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x, (h, c) = self._inputs(x, {"h0": h0, "c0": c0})
        W_hh = self.variables["W_hh"]
        hs = []
        A, keys = self._steps(x)
        for key in keys:
            # the gates of h W_hh^T + A[t::T] (N, 4H), sigmoid on blocks i, f, o, tanh on g, as
            # four outputs: one record (linear_at, lstm_gates and split in one)
            i, f, g, o = R.lstm_gates_at(h, W_hh, A, key=key)
            # the cell, c = f * c + i * g and h = o * tanh(c), as one record with two outputs
            # (lstm_cell: the bits of those five recorded operations, one walk step for them)
            h, c = R.lstm_cell(c, i, f, g, o)
            hs.append(h)
        return R.stack(hs, axis=1)  # (N, T, H): one record


class GRU(_Recurrent):
    """One-layer GRU, PyTorch's convention (twin of :class:`manualprop.GRU`).

    Gate blocks r, z, n; the reset gate multiplies the hidden projection after the
    matrix product (``reset_after``)::

        r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
        z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
        n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
        h' = (1 - z) * n + z * h

    Parameters
    ----------
    input_size, hidden_size : int
        ``D`` and ``H``.
    rng : None, int or numpy.random.Generator
        Same initialisation as manualprop
        (:func:`manualprop.init.recurrent_params` with ``gates=3``).
    dtype : {np.float64, np.float32}

    Notes
    -----
    Shapes: x (N, T, D), h0 (N, H) or None -> y (N, T, H). Variables
    ``W_ih`` (3H, D), ``W_hh`` (3H, H), ``b_ih``, ``b_hh`` (3H,). Written forward
    only with public autoprop operations; the tape's reverse walk is BPTT.
    Source: ``lessons/32b-gru.md``.
    """

    manual_class = mp.GRU

    _gates = 3

    def call(self, x, training=False, *, h0=None):
        """Forward pass of the twin of ``manualprop.GRU``, recorded on any open tape;
        shapes, formula and lesson: see the class docstring. Returns a Tensor."""
        x, (h,) = self._inputs(x, {"h0": h0})
        H = self.hidden_size
        v = self.variables
        W_hh, b_hh = v["W_hh"], v["b_hh"]
        hs = []
        A = self._input_projection(x, v["b_ih"])
        for t in range(x.shape[1]):
            a_x = A[:, t]
            a_h = R.linear(h, W_hh, b_hh)
            rz = R.sigmoid(a_x[:, : 2 * H] + a_h[:, : 2 * H])  # r and z at once, as manualprop
            r, z = rz[:, :H], rz[:, H:]
            n = R.tanh(a_x[:, 2 * H :] + r * a_h[:, 2 * H :])
            h = (1 - z) * n + z * h
            hs.append(h)
        return ap_numpy.stack(hs, axis=1)  # (N, T, H)
