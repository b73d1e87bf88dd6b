"""Parameter initialisers shared by manualprop and autoprop.

autoprop's layers call these functions too, so a manual layer and its tape
twin built with the same ``rng`` (same seed) start from identical weights.
Source: ``lessons/01-linear-layer.md``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._validation import check_float_dtype, check_int_pair, check_positive_int, did_you_mean

__all__ = [
    "as_rng",
    "attention_params",
    "conv2d_params",
    "embedding_params",
    "keras_initial_value",
    "linear_params",
    "norm_params",
    "recurrent_params",
]


def as_rng(rng=None) -> np.random.Generator:
    """Turn ``rng`` into a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        ``None``: a fresh generator seeded from OS entropy (not reproducible).
        int: ``np.random.default_rng(rng)`` (reproducible).
        Generator: returned as is (the same object, so draws advance it).

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        For any other type (including ``bool``, ``float`` and the legacy
        ``np.random.RandomState``).
    ValueError
        For a negative int seed.
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"as_rng: rng seed must be a non-negative int; got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        "as_rng: rng must be None, a non-negative int seed or a numpy.random.Generator "
        f"(np.random.default_rng(...)); got {type(rng).__name__}"
    )


def linear_params(in_features, out_features, rng=None, dtype=np.float64) -> dict:
    """Initial parameters of a fully connected layer, drawn as PyTorch's ``nn.Linear`` does.

    Rule (PyTorch's ``kaiming_uniform_(a=sqrt(5))`` for W and its bias rule,
    which both reduce to the same bound)::

        k = 1 / sqrt(in_features)
        W ~ U(-k, k), shape (out_features, in_features)   # drawn first
        b ~ U(-k, k), shape (out_features,)                # then, same generator

    Both are drawn with ``rng.uniform`` in float64 and then cast to ``dtype``,
    so float32 weights are the rounding of the float64 ones. The values are
    not PyTorch's (different generator); only the distribution is.
    Source: ``lessons/01-linear-layer.md``.

    Parameters
    ----------
    in_features, out_features : int
        Positive sizes.
    rng : None, int or numpy.random.Generator
        See :func:`as_rng`.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"W": ndarray (out_features, in_features), "b": ndarray (out_features,)}``.

    Raises
    ------
    TypeError, ValueError
        Non-positive or non-int sizes, non-float ``dtype``, bad ``rng``.
    """
    in_features = check_positive_int(in_features, "in_features", "linear_params")
    out_features = check_positive_int(out_features, "out_features", "linear_params")
    dt = check_float_dtype(dtype, "linear_params")
    gen = as_rng(rng)
    k = 1.0 / math.sqrt(in_features)
    W = gen.uniform(-k, k, size=(out_features, in_features)).astype(dt, copy=False)
    b = gen.uniform(-k, k, size=(out_features,)).astype(dt, copy=False)
    return {"W": W, "b": b}


def embedding_params(num_embeddings, dim, rng=None, dtype=np.float64) -> dict:
    """Initial lookup table of an embedding layer, as PyTorch's ``nn.Embedding``.

    Rule: ``W ~ N(0, 1)``, shape ``(num_embeddings, dim)``, one
    ``rng.standard_normal`` draw in float64 then cast to ``dtype``.
    Source: ``lessons/30-embedding.md``.

    Parameters
    ----------
    num_embeddings, dim : int
        Positive sizes (rows of the table, length of each vector).
    rng : None, int or numpy.random.Generator
        See :func:`as_rng`.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"W": ndarray (num_embeddings, dim)}``.
    """
    num_embeddings = check_positive_int(num_embeddings, "num_embeddings", "embedding_params")
    dim = check_positive_int(dim, "dim", "embedding_params")
    dt = check_float_dtype(dtype, "embedding_params")
    W = as_rng(rng).standard_normal(size=(num_embeddings, dim)).astype(dt, copy=False)
    return {"W": W}


def recurrent_params(input_size, hidden_size, gates=1, rng=None, dtype=np.float64) -> dict:
    """Initial parameters of a recurrent cell, as PyTorch's ``nn.RNN`` / ``nn.LSTM``.

    Rule (``RNNBase.reset_parameters``: every parameter uniform)::

        k = 1 / sqrt(hidden_size)
        W_ih ~ U(-k, k), shape (gates * hidden_size, input_size)    # drawn 1st
        W_hh ~ U(-k, k), shape (gates * hidden_size, hidden_size)   # 2nd
        b_ih ~ U(-k, k), shape (gates * hidden_size,)               # 3rd
        b_hh ~ U(-k, k), shape (gates * hidden_size,)               # 4th

    ``gates = 1`` for a tanh RNN, ``4`` for an LSTM (row blocks in PyTorch's
    order i, f, g, o). Drawn in float64, then cast to ``dtype``.
    Source: ``lessons/31-rnn-bptt.md``, ``lessons/32-lstm.md``.

    Parameters
    ----------
    input_size, hidden_size, gates : int
        Positive sizes.
    rng : None, int or numpy.random.Generator
        See :func:`as_rng`.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"W_ih", "W_hh", "b_ih", "b_hh"}`` with the shapes above.
    """
    D = check_positive_int(input_size, "input_size", "recurrent_params")
    H = check_positive_int(hidden_size, "hidden_size", "recurrent_params")
    G = check_positive_int(gates, "gates", "recurrent_params")
    dt = check_float_dtype(dtype, "recurrent_params")
    gen = as_rng(rng)
    k = 1.0 / math.sqrt(H)
    shapes = {"W_ih": (G * H, D), "W_hh": (G * H, H), "b_ih": (G * H,), "b_hh": (G * H,)}
    return {name: gen.uniform(-k, k, size=s).astype(dt, copy=False) for name, s in shapes.items()}


def attention_params(embed_dim, rng=None, dtype=np.float64) -> dict:
    """Initial parameters of multi-head self-attention, as ``nn.MultiheadAttention``.

    Rule (PyTorch's ``_reset_parameters``)::

        a = sqrt(6 / (E + 3E))                       # xavier_uniform_ on in_proj (3E, E)
        [W_q; W_k; W_v] ~ U(-a, a), one (3E, E) draw  # drawn 1st, rows split q, k, v
        k = 1 / sqrt(E)
        W_o ~ U(-k, k), shape (E, E)                  # drawn 2nd (out_proj, nn.Linear rule)
        b_q = b_k = b_v = b_o = 0                     # PyTorch zeroes all biases

    Drawn in float64, then cast to ``dtype``. (PyTorch draws ``out_proj``
    before ``in_proj``; the order here is documented and fixed, the values are
    not PyTorch's anyway.) Source: ``lessons/34-multi-head-attention.md``.

    Parameters
    ----------
    embed_dim : int
        ``E``, the model width.
    rng : None, int or numpy.random.Generator
        See :func:`as_rng`.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``W_q, W_k, W_v, W_o`` of shape (E, E); ``b_q, b_k, b_v, b_o`` of shape (E,).
    """
    E = check_positive_int(embed_dim, "embed_dim", "attention_params")
    dt = check_float_dtype(dtype, "attention_params")
    gen = as_rng(rng)
    a = math.sqrt(6.0 / (4 * E))
    W_in = gen.uniform(-a, a, size=(3 * E, E))
    k = 1.0 / math.sqrt(E)
    W_o = gen.uniform(-k, k, size=(E, E))
    out = {"W_q": W_in[:E], "W_k": W_in[E : 2 * E], "W_v": W_in[2 * E :], "W_o": W_o}
    out = {name: np.array(W, dtype=dt) for name, W in out.items()}
    for name in ("b_q", "b_k", "b_v", "b_o"):
        out[name] = np.zeros(E, dtype=dt)
    return out


def conv2d_params(in_channels, out_channels, kernel_size, bias=True, rng=None, dtype=np.float64) -> dict:
    """Initial parameters of a 2-D convolution, drawn as PyTorch's ``nn.Conv2d`` does.

    Rule (PyTorch's default, the same bound for W and b)::

        k = 1 / sqrt(in_channels * kh * kw)
        W ~ U(-k, k), shape (out_channels, in_channels, kh, kw)   # drawn first
        b ~ U(-k, k), shape (out_channels,)                        # then, if bias

    Drawn with ``rng.uniform`` in float64, then cast to ``dtype``.
    Source: ``lessons/20-conv2d.md``.

    Parameters
    ----------
    in_channels, out_channels : int
        Positive sizes.
    kernel_size : int or (int, int)
        ``(kh, kw)``; an int means a square kernel.
    bias : bool
        Without bias only W is drawn (and returned).
    rng : None, int or numpy.random.Generator
        See :func:`as_rng`.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"W": (out, in, kh, kw), "b": (out,)}`` (no ``"b"`` when ``bias=False``).

    Raises
    ------
    TypeError, ValueError
        Non-positive or non-int sizes, non-float ``dtype``, bad ``rng``.
    """
    return _conv_params(in_channels, out_channels, kernel_size, bias, rng, dtype, "conv2d_params",
                        transposed=False)


def conv_transpose2d_params(in_channels, out_channels, kernel_size, bias=True, rng=None,
                            dtype=np.float64) -> dict:
    """Initial parameters of a transposed convolution, as PyTorch's ``nn.ConvTranspose2d``.

    The weight has the shape of the convolution it transposes, in and out swapped, and
    PyTorch's fan-in is read from its second axis::

        k = 1 / sqrt(out_channels * kh * kw)
        W ~ U(-k, k), shape (in_channels, out_channels, kh, kw)   # drawn first
        b ~ U(-k, k), shape (out_channels,)                        # then, if bias

    Source: ``lessons/20b-conv-transpose.md``.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or (int, int)
    bias : bool
    rng : None, int or numpy.random.Generator
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"W": (in, out, kh, kw), "b": (out,)}`` (no ``"b"`` when ``bias=False``).

    Raises
    ------
    TypeError, ValueError
        Non-positive or non-int sizes, non-float ``dtype``, bad ``rng``.
    """
    return _conv_params(in_channels, out_channels, kernel_size, bias, rng, dtype,
                        "conv_transpose2d_params", transposed=True)


def _conv_params(in_channels, out_channels, kernel_size, bias, rng, dtype, where, *, transposed):
    """The one draw of both convolutions: W first, then b, both U(-k, k)."""
    in_channels = check_positive_int(in_channels, "in_channels", where)
    out_channels = check_positive_int(out_channels, "out_channels", where)
    kh, kw = check_int_pair(kernel_size, "kernel_size", where, low=1)
    dt = check_float_dtype(dtype, where)
    gen = as_rng(rng)
    fan_in = (out_channels if transposed else in_channels) * kh * kw
    w_shape = (in_channels, out_channels, kh, kw) if transposed else (out_channels, in_channels, kh, kw)
    k = 1.0 / math.sqrt(fan_in)
    params = {"W": gen.uniform(-k, k, size=w_shape).astype(dt, copy=False)}
    if bias:
        params["b"] = gen.uniform(-k, k, size=(out_channels,)).astype(dt, copy=False)
    return params


def norm_params(shape, dtype=np.float64) -> dict:
    """Initial affine parameters of a normalisation layer: ``gamma = 1``, ``beta = 0``.

    As PyTorch's ``weight``/``bias`` of BatchNorm and LayerNorm (named ``gamma``
    and ``beta`` here, as in CS231n and Keras). Deterministic: no ``rng``.
    Source: ``lessons/22-batchnorm.md``.

    Parameters
    ----------
    shape : int or tuple of int
        ``(num_features,)`` for batch norm, ``normalized_shape`` for layer norm.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"gamma": ones(shape), "beta": zeros(shape)}``.
    """
    dt = check_float_dtype(dtype, "norm_params")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return {"gamma": np.ones(shape, dt), "beta": np.zeros(shape, dt)}


#: Keras's built-in initializer names: ``(distribution, scale, fan mode)``; a scaled one
#: has variance ``scale / fan`` (Keras's ``VarianceScaling``), the others a fixed spread.
KERAS_INITIALIZERS = {
    "zeros": ("zeros", None, None),
    "ones": ("ones", None, None),
    "random_normal": ("normal", 0.05, None),
    "random_uniform": ("uniform", 0.05, None),
    "truncated_normal": ("truncated", 0.05, None),
    "glorot_uniform": ("uniform", 1.0, "fan_avg"),
    "glorot_normal": ("truncated", 1.0, "fan_avg"),
    "he_uniform": ("uniform", 2.0, "fan_in"),
    "he_normal": ("truncated", 2.0, "fan_in"),
    "lecun_uniform": ("uniform", 1.0, "fan_in"),
    "lecun_normal": ("truncated", 1.0, "fan_in"),
}


def keras_fans(shape) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of ``shape`` as Keras computes them: ``()`` 1, 1;
    ``(n,)`` n, n; ``(n_in, n_out)`` as is; a kernel ``(..., in, out)`` times the
    receptive field ``prod(shape[:-2])``."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


def _truncated_normal(gen, std, shape):
    """N(0, std^2) restricted to [-2 std, 2 std] (Keras's truncation), by redrawing."""
    z = gen.standard_normal(shape)
    bad = np.abs(z) > 2
    while bad.any():
        z[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(z) > 2
    return std * z


def keras_initial_value(initializer, shape, dtype, rng=None, where="add_weight"):
    """The initial value of a weight from a Keras initializer, as ``layer.add_weight`` uses.

    Parameters
    ----------
    initializer : str or callable
        A name in :data:`KERAS_INITIALIZERS` (``"glorot_uniform"``, ``"zeros"``,
        ``"he_normal"``, ...), drawn as Keras draws it: ``random_*`` with spread 0.05,
        ``*_uniform`` from U(-l, l) with ``l = sqrt(3 scale / fan)``, ``*_normal`` and
        ``truncated_normal`` from a normal truncated at two standard deviations whose
        standard deviation is ``sqrt(scale / fan) / 0.87962566103423978`` (so the kept
        values have variance ``scale / fan``), with glorot ``fan = (fan_in + fan_out) / 2``
        and scale 1, he ``fan_in`` and 2, lecun ``fan_in`` and 1 (:func:`keras_fans`).
        Or a callable ``initializer(shape, dtype=dtype)`` returning an array of ``shape``
        (a Keras initializer object is one).
    shape : tuple of int
    dtype : numpy dtype
    rng : None, int or numpy.random.Generator
        For the random names; see :func:`as_rng`. The values are not Keras's (another
        generator); the distribution is.
    where : str
        The caller, as error messages name it.

    Returns
    -------
    ndarray of ``shape`` and ``dtype``

    Raises
    ------
    ValueError
        An unknown name (with the close match), or a callable's result of another shape.
    TypeError
        An initializer that is neither a string nor callable.
    """
    if callable(initializer):
        value = np.asarray(initializer(shape, dtype=dtype))
        if value.shape != tuple(shape):
            raise ValueError(f"{where}: initializer {initializer!r} returned shape {value.shape}; "
                             f"the weight has shape {tuple(shape)}")
        return value.astype(dtype, copy=True)
    if not isinstance(initializer, str):
        raise TypeError(f"{where}: initializer must be a name such as 'glorot_uniform' or a "
                        f"callable initializer(shape, dtype=...); got {type(initializer).__name__}")
    if initializer not in KERAS_INITIALIZERS:
        raise ValueError(f"{where}: unknown initializer {initializer!r}"
                         f"{did_you_mean(initializer, KERAS_INITIALIZERS)}; the names are "
                         f"{', '.join(KERAS_INITIALIZERS)}, or pass a callable")
    kind, spread, mode = KERAS_INITIALIZERS[initializer]
    if kind in ("zeros", "ones"):
        return (np.zeros if kind == "zeros" else np.ones)(shape, dtype)
    if mode is not None:
        fan_in, fan_out = keras_fans(shape)
        fan = (fan_in + fan_out) / 2 if mode == "fan_avg" else fan_in
        variance = spread / max(1.0, fan)
        spread = (math.sqrt(3 * variance) if kind == "uniform" else
                  math.sqrt(variance) / 0.87962566103423978)
    gen = as_rng(rng)
    if kind == "uniform":
        value = gen.uniform(-spread, spread, size=shape)
    elif kind == "normal":
        value = spread * gen.standard_normal(shape)
    else:
        value = _truncated_normal(gen, spread, shape)
    return value.astype(dtype, copy=False)
