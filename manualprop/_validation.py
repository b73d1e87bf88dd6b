"""Input checks for manualprop, in one place (scikit-learn style).

Every layer, loss, container and optimizer calls these helpers instead of
writing its own checks, so every message has the same form::

    <where>: <tensor> must <expectation>; got <what came>

``where`` names the object and the method, e.g.
``"Linear(in_features=5, out_features=3).forward"``.

Exception types
---------------
TypeError
    wrong kind of object or dtype (integer X, list as a variable, ...).
ValueError
    right kind, wrong value: shape, NaN/inf, out-of-range hyperparameter.
RuntimeError
    wrong call order: ``backward`` before ``forward``.

Cost per call
-------------
The checks run on every call of ``forward``/``backward``/``step``, so they are
kept cheap (issue 15: on a small MLP they cost more than the arithmetic):

* the structural checks (array type, dtype, shape, number of dimensions,
  non-empty) depend only on the input's *signature* ``(shape, dtype)`` and the
  expectation, so a signature that passed once is remembered in ``_PASSED`` and
  not checked again; the most used layers (``Linear``, ``Tanh``, the element-wise
  layers, every ``dY``, softmax cross-entropy, the optimizer's array pairs) do
  without even that: their common case is a few identity and integer tests written
  inline (:func:`float_ss`, :func:`int64_labels`), and anything else runs the full
  check, which writes the message;
* the finiteness check depends on the values and runs on every call, as one
  reduction: the sum of squares ``X . X`` of a float array is finite only if every
  element is (a NaN or an inf makes it NaN or inf), and when it is not finite the full
  element-wise check runs and names the first bad index (or passes: finite
  values whose squares overflowed). The sum of squares is kept where it proves more
  (:func:`output_ss`, ``Linear.backward``): by Cauchy-Schwarz,
  ``|(A @ B)[i, j]| <= sqrt(A . A) sqrt(B . B)``, so a product of finite arrays with a
  small enough bound cannot have overflowed and needs no look;
* ``where`` may be a :class:`Where`, which builds the ``repr`` of the object only
  when a message is written.
"""

from __future__ import annotations

import difflib
import inspect
import math
import numbers

import numpy as np

from ._extremes import DOT_CHUNK, _vdot, largest, smallest  # noqa: F401  (re-exported)

__all__ = [
    "FLOAT_DTYPES",
    "KNOWN_FINITE",
    "NonFiniteError",
    "UnlookedInputError",
    "Where",
    "check_array",
    "check_axis",
    "check_class_targets",
    "check_float_dtype",
    "check_forward_done",
    "check_grad_output",
    "check_indices",
    "check_int",
    "check_keywords",
    "check_int_pair",
    "check_layer",
    "check_mask",
    "check_option",
    "check_positive_int",
    "check_scalar",
    "check_stat_count",
    "check_targets",
    "check_update",
    "check_window",
    "did_you_mean",
    "float_ss",
    "format_shape",
    "gradients_finite",
    "int64_labels",
    "largest",
    "output_ss",
    "smallest",
    "SS_LIMIT",
    "sum_of_squares",
]

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class Where:
    """The message prefix ``"<prefix><repr of obj>.<method>"``, built only when it is formatted.

    Every layer names itself in its errors; building that ``repr`` on each call
    costs more than a small layer's arithmetic, so the layers pass this instead of
    a string. ``f"{where}: ..."`` and ``str(where)`` give the string.
    """

    __slots__ = ("obj", "method", "prefix")

    def __init__(self, obj, method: str, prefix: str = ""):
        self.obj, self.method, self.prefix = obj, method, prefix

    def __str__(self) -> str:
        return f"{self.prefix}{self.obj!r}.{self.method}" if self.method else f"{self.prefix}{self.obj!r}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __add__(self, other: str) -> str:
        return str(self) + other

    def __repr__(self) -> str:
        return repr(str(self))


#: Signatures that passed the structural checks: ``(check, shape, dtype, expectation...)``.
#: A cache of a pure function of its key (cleared when it grows large), so a hit means
#: exactly that the same checks passed before for an input of the same signature.
_PASSED: set = set()
_PASSED_MAX = 4096


class _KnownFinite:
    """The one array known to be finite without a look (``array``), or None, and ``ss``, a
    bound on its sum of squares (``inf`` when none is known).

    :class:`~manualprop.Sequential` sets it, for the span of one layer's call, to that
    layer's input when the previous layer is a built-in one that cannot make a NaN or an
    inf of the finite input it checked itself (``tanh`` of a finite array is finite);
    :func:`check_array` and :func:`check_grad_output` then skip the reduction for that
    very object (an identity test, never a value test). No check that could fire is
    skipped: every error names the same layer and tensor as without it. A built-in
    ``Linear`` checks its own output (and its ``dX``), so the layer after it is handed that
    output as known too.
    """

    __slots__ = ("array", "ss", "defer")

    def __init__(self):
        self.array = None
        self.ss = math.inf
        #: True for the span of one built-in ``Linear``'s call in a ``Sequential`` that looks
        #: at that output where it ends up instead (see ``Sequential.forward``): the Linear
        #: then skips the look at its output ``Y`` (and clears the flag)
        self.defer = False


KNOWN_FINITE = _KnownFinite()


def _passed(key) -> None:
    if len(_PASSED) >= _PASSED_MAX:
        _PASSED.clear()
    _PASSED.add(key)


def format_shape(shape) -> str:
    """Format a shape spec such as ``("batch", 5)`` as ``"(batch, 5)"``."""
    parts = [str(d) for d in shape]
    if len(parts) == 1:
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


def _as_ndarray(X, where: str, name: str) -> np.ndarray:
    if isinstance(X, np.ndarray):
        return X
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:
        raise TypeError(
            f"{where}: {name} must be a NumPy array; got {type(X).__name__} "
            f"that NumPy cannot convert ({exc})"
        ) from None
    if arr.dtype == object:
        raise TypeError(
            f"{where}: {name} must be a NumPy array of numbers; got {type(X).__name__} "
            f"that converts to dtype object"
        )
    return arr


_F64 = np.dtype(np.float64)
# _vdot (np.vdot without its dispatch), DOT_CHUNK (the most elements one dot may take),
# smallest and largest (a whole array's extreme element by argmin/argmax): the kernels of
# ._extremes, which autoprop's core uses too


def sum_of_squares(X: np.ndarray) -> float:
    """``X . X`` of a numeric ndarray as a float, by single-threaded dots in a fixed order.

    Parameters
    ----------
    X : ndarray of any shape, float or integer dtype

    Returns
    -------
    float
        The sum of the squares; NaN or inf when ``X`` holds a NaN/inf or the squares overflow.
        Silently: ``np.vdot``, not ``np.dot`` (which costs less per call on a flat view but
        reports the overflow to numpy's error state, an error under ``np.errstate(over="raise")``),
        and the chunks are added as Python floats (whose overflow is ``inf``, not a warning).
    """
    if X.size <= DOT_CHUNK:
        return float(_vdot(X, X))
    flat, total = X.reshape(-1), 0.0
    for i in range(0, flat.size, DOT_CHUNK):  # a loop, not a generator: no frame per chunk
        part = flat[i:i + DOT_CHUNK]
        total += float(_vdot(part, part))
    return total


def _sum_is_finite(X: np.ndarray) -> bool:
    """True if one reduction of float ``X`` is finite, which proves every element finite.

    float64: the sum of squares ``X . X`` (one BLAS dot, the cheapest reduction numpy
    has at small sizes); other floats: the sum, accumulated in float64 (float32 values
    cannot overflow it). A NaN or inf anywhere makes either NaN or inf; False may also
    mean that finite values overflowed (``|x| > 1e154`` for the squares), so False calls
    for the element-wise check and True needs none. The squares are never negative, so
    they never form ``inf + -inf``; numpy's warning for that or for an overflow of the
    float64 sum, when warnings are errors (as in the test suite) or under
    ``np.errstate(all="raise")``, also means False.
    """
    if X.dtype is _F64 or X.dtype == _F64:
        return math.isfinite(sum_of_squares(X))
    if X.dtype.kind != "f":
        return False
    try:
        return math.isfinite(np.add.reduce(X, axis=None, dtype=np.float64))
    except (FloatingPointError, RuntimeWarning):
        return False


_INF = math.inf


def _finite_ss(X: np.ndarray, where: str, name: str, masked: bool = False) -> float:
    """Check float ``X`` for NaN/inf as :func:`_check_finite` does; return ``X . X``.

    One BLAS dot on the fast path. The value is ``inf`` when it is not known: finite
    values whose squares overflowed, or ``-inf`` entries that ``masked`` allows.
    """
    if X.dtype is _F64 or X.dtype in FLOAT_DTYPES:
        ss = sum_of_squares(X)
        if ss < _INF:  # False for NaN and inf
            return ss
    _check_finite(X, where, name, masked)
    return _INF


_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
_U64 = np.dtype(np.uint64)


def float_ss(X):
    """A bound on ``X . X`` if ``X`` is a float ndarray without NaN/inf, else None.

    The fast path of manualprop's most used layers, for an input that must be a float32 or
    float64 ndarray (not a subclass); they test the rest of their structural checks (dtype,
    ``ndim``, shape) themselves, inline. The bound is ``KNOWN_FINITE.ss`` when ``X`` is
    ``KNOWN_FINITE.array`` (no look; tested first: a container sets it only to the output of a
    built-in layer, a float32/float64 array that layer checked, or of its subclass when given
    one, which the full check would pass too), else the sum of squares (one BLAS dot) when it is
    finite.
    None means: not a float ndarray, or a NaN or an inf may be in it (or finite values whose
    squares overflowed): the caller then runs the full check (:func:`check_array`,
    :func:`check_grad_output`), which writes the usual message (naming the first bad index),
    or passes and returns ``inf``. numpy's dtype objects of native float32/float64 are
    singletons, so the dtype test is two identity tests; any other dtype object takes the full
    check.
    """
    known = KNOWN_FINITE
    if X is known.array and X is not None:  # (None: nothing is known)
        return known.ss
    if type(X) is not np.ndarray or not (X.dtype is _F64 or X.dtype is _F32):
        return None
    value = float(_vdot(X, X)) if X.size <= DOT_CHUNK else sum_of_squares(X)  # sum_of_squares, inline
    return value if value < _INF else None


def _check_finite(X: np.ndarray, where: str, name: str, masked: bool = False) -> None:
    if _sum_is_finite(X):  # one reduction on the fast path
        return
    finite = np.isfinite(X)
    if masked and not finite.all():
        finite |= np.isneginf(X)  # -inf: a masked logit (softmax gives it probability 0)
        if finite.all():
            rows = np.isneginf(X).reshape(X.shape[0], -1).all(axis=1) if X.ndim > 1 else None
            if rows is not None and rows.any():
                raise ValueError(
                    f"{where}: {name} masks every entry of row {int(np.argmax(rows))} with -inf; "
                    "a softmax over nothing has no value (leave at least one logit finite)"
                )
            return
    if not finite.all():
        bad = np.argwhere(~finite)
        first = tuple(int(i) for i in bad[0])
        raise ValueError(
            f"{where}: {name} must contain only finite values; got {len(bad)} NaN/inf "
            f"value(s), the first at index {first} (value {X[first].item()!r})"
        )


def _convert_words(X: np.ndarray, name: str, dtype: np.dtype) -> str:
    """How to give ``X`` (named ``name``) the real ``dtype`` a layer takes: ``convert with X.astype(np.float64)``,
    or, for a complex X, what keeps its imaginary part (newuser35 L3: astype drops it, numpy only warns)."""
    if X.dtype.kind == "c":
        return (f"the layers work on real values, and {name}.astype(np.{dtype}) would drop the imaginary part "
                f"(numpy only warns): pass the real and imaginary parts as real values "
                f"(e.g. np.concatenate([np.real({name}), np.imag({name})], axis=-1), twice the features), or, if the imaginary part is meant to be dropped, say so "
                f"with np.real({name}).astype(np.{dtype})")
    return f"convert with {name}.astype(np.{dtype})"


def _check_float(X: np.ndarray, where: str, name: str) -> None:
    if X.dtype not in FLOAT_DTYPES:
        if X.dtype.kind == "c":  # .astype(np.float64) would drop the imaginary part silently
            raise TypeError(
                f"{where}: {name} must have dtype float32 or float64; got {X.dtype}: the layers and "
                "optimizers work on real values. For a complex parameter, keep its real and "
                "imaginary parts as two real Variables (w = wr + 1j * wi), or step it by hand, "
                "w.assign_sub(lr * g): autoprop's complex gradient is dL/dx + i dL/dy (TensorFlow's "
                "and PyTorch's), so that step descends"
            )
        hint = f"{name}.astype(np.float64)" if name.isidentifier() else "x.astype(np.float64)"
        raise TypeError(
            f"{where}: {name} must have dtype float32 or float64; got {X.dtype} "
            f"(convert with {hint})"
        )


def _shape_matches(actual: tuple, spec: tuple) -> bool:
    if len(actual) != len(spec):
        return False
    return all(isinstance(s, str) or a == s for a, s in zip(actual, spec, strict=True))


def check_array(
    X,
    where: str,
    name: str = "X",
    *,
    shape: tuple | None = None,
    min_ndim: int | None = None,
    dtype=None,
    nonempty: bool = False,
    masked: bool = False,
    ss: bool = False,
):
    """Check a forward input and return it as an ndarray (never copied if already one).

    Parameters
    ----------
    X : array_like
        The tensor to check.
    where : str
        ``"<repr of the object>.<method>"``, used as the message prefix.
    name : str
        Name of the tensor in messages (``"X"``, ``"y_pred"``, ...).
    shape : tuple of int or str, optional
        Expected shape; strings are free dimensions named in the message,
        e.g. ``("batch", 5)``.
    min_ndim : int, optional
        Minimum number of dimensions.
    dtype : dtype, optional
        Required exact dtype (the parameters' dtype for layers with weights).
    nonempty : bool
        Require at least one element.
    masked : bool
        Logits: accept -inf (a masked entry, as TensorFlow's softmax losses do), but not
        NaN, +inf, or a row masked entirely.
    ss : bool
        Also return a bound on ``X . X`` (its value, or ``KNOWN_FINITE.ss`` for the known
        array; ``inf`` when the squares overflowed).

    Returns
    -------
    ndarray, or (ndarray, float) with ``ss``
        float32 or float64, finite (or -inf where ``masked``).

    Raises
    ------
    TypeError
        Not convertible, or dtype not float32/float64, or not ``dtype``.
    ValueError
        Wrong shape/ndim, empty when ``nonempty``, or NaN/inf present.
    """
    if type(X) is np.ndarray and (shape is None or type(shape) is tuple):
        key = ("array", X.shape, X.dtype, shape, min_ndim, dtype, nonempty)
        if key in _PASSED:
            known = KNOWN_FINITE
            if X is known.array:
                return (X, known.ss) if ss else X
            value = _finite_ss(X, where, name, masked)
            return (X, value) if ss else X
    else:
        key = None
    X = _as_ndarray(X, where, name)
    if dtype is not None and X.dtype != np.dtype(dtype):  # say the one dtype that fits
        raise TypeError(
            f"{where}: {name} must have dtype {np.dtype(dtype)} (the dtype of the "
            f"parameters); got {X.dtype} ({_convert_words(X, name, np.dtype(dtype))})"
        )
    _check_float(X, where, name)
    if shape is not None and not _shape_matches(X.shape, tuple(shape)):
        raise ValueError(f"{where}: {name} must have shape {format_shape(shape)}; got {X.shape}")
    if min_ndim is not None and X.ndim < min_ndim:
        raise ValueError(
            f"{where}: {name} must have at least {min_ndim} dimension(s); got shape {X.shape}"
        )
    if nonempty and X.size == 0:
        raise ValueError(f"{where}: {name} must not be empty; got shape {X.shape}")
    value = _finite_ss(X, where, name, masked)
    if key is not None:
        _passed(key)
    return (X, value) if ss else X


def check_forward_done(cache, where: str) -> None:
    """Raise RuntimeError if ``forward`` has not been run (``cache is None``)."""
    if cache is None:
        raise RuntimeError(
            f"{where}: must be called after forward(); got no cache "
            f"(forward has not been run on this object)"
        )


def check_indices(
    X, where: str, name: str = "X", *, high: int, min_ndim: int | None = None
) -> np.ndarray:
    """Check an array of integer indices into a table of ``high`` rows (Embedding).

    Indices carry no gradient, so no float dtype is accepted (not even whole
    numbers stored as floats: that is almost always a bug upstream).

    Parameters
    ----------
    X : array_like
        The indices, any shape.
    where, name : str
        Message prefix and tensor name, as in :func:`check_array`.
    high : int
        Number of rows; valid indices are ``0 <= i < high`` (negative indices,
        which numpy would wrap around, are rejected).
    min_ndim : int, optional
        Minimum number of dimensions.

    Returns
    -------
    ndarray
        The indices (int64 view or copy of ``X``).

    Raises
    ------
    TypeError
        Not an integer dtype (float, bool, object).
    ValueError
        Too few dimensions, or an index outside ``[0, high)``.
    """
    X = _as_ndarray(X, where, name)
    if not np.issubdtype(X.dtype, np.integer):
        hint = f" (convert with {name}.astype(np.int64))" if X.dtype.kind == "f" else ""
        raise TypeError(
            f"{where}: {name} must be an array of integer indices; got dtype {X.dtype}{hint}"
        )
    if min_ndim is not None and X.ndim < min_ndim:
        raise ValueError(
            f"{where}: {name} must have at least {min_ndim} dimension(s); got shape {X.shape}"
        )
    if X.size:
        bad = np.argwhere((X < 0) | (X >= high))
        if len(bad):
            first = tuple(int(i) for i in bad[0])
            raise ValueError(
                f"{where}: {name} must contain indices in [0, {high}); got {len(bad)} "
                f"out-of-range value(s), the first at index {first} (value {int(X[first])})"
            )
    return X.astype(np.int64, copy=False)


def check_grad_output(dY, where: str, *, shape: tuple, dtype, name: str = "dY", ss: bool = False):
    """Check an upstream gradient against the forward output.

    ``dY`` must be a finite float array with exactly the forward output's
    ``shape``. It is returned cast to ``dtype`` (the forward dtype), so a
    float64 ``dY`` may be fed to a float32 layer. With ``ss``, ``(dY, bound on dY . dY)``
    is returned, as :func:`check_array` does.

    Raises
    ------
    TypeError
        Non-float dtype.
    ValueError
        Shape differs from ``shape`` or NaN/inf present.
    """
    if type(dY) is np.ndarray and type(shape) is tuple and ("grad", dY.shape, dY.dtype, shape) in _PASSED:
        known = KNOWN_FINITE
        value = known.ss if dY is known.array else _finite_ss(dY, where, name)
        if dY.dtype != dtype:
            dY = dY.astype(dtype)
        return (dY, value) if ss else dY
    dY = _as_ndarray(dY, where, name)
    _check_float(dY, where, name)
    if dY.shape != tuple(shape):
        raise ValueError(
            f"{where}: {name} must have the shape of the forward output, "
            f"{tuple(shape)}; got {dY.shape}"
        )
    value = _finite_ss(dY, where, name)
    if type(dY) is np.ndarray and type(shape) is tuple:
        _passed(("grad", dY.shape, dY.dtype, shape))
    dY = dY.astype(dtype, copy=False)
    return (dY, value) if ss else dY


def check_targets(
    y_true,
    where: str,
    *,
    shape: tuple,
    dtype,
    name: str = "y_true",
    low: float | None = None,
    high: float | None = None,
) -> np.ndarray:
    """Check regression/binary targets and return them cast to ``dtype``.

    Targets may be bool, integer or float (they carry no gradient); they must
    have exactly ``shape``, be finite, and lie in ``[low, high]`` if given.

    Raises
    ------
    TypeError
        Not numeric.
    ValueError
        Wrong shape, NaN/inf, or out of range.
    """
    y = _as_ndarray(y_true, where, name)
    if not (np.issubdtype(y.dtype, np.number) or y.dtype == np.bool_) or np.iscomplexobj(y):
        raise TypeError(f"{where}: {name} must be a real numeric array; got dtype {y.dtype}")
    if y.shape != tuple(shape):
        raise ValueError(
            f"{where}: {name} must have the shape of y_pred, {tuple(shape)}; got {y.shape}"
        )
    y = y.astype(dtype, copy=False)
    _check_finite(y, where, name)
    if low is not None and y.size and y.min() < low:
        raise ValueError(f"{where}: {name} must be in [{low}, {high}]; got min {y.min().item()!r}")
    if high is not None and y.size and y.max() > high:
        raise ValueError(f"{where}: {name} must be in [{low}, {high}]; got max {y.max().item()!r}")
    return y


_UNSIGNED = {np.dtype(f"i{n}"): np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def int64_labels(y_true, n_samples: int, n_classes: int) -> bool:
    """True if ``y_true`` is an int64 ndarray of ``n_samples >= 1`` labels in ``[0, n_classes)``.

    The common case of :func:`check_class_targets`, checked in full in one reduction: a
    negative label read as unsigned is huge. False means: let ``check_class_targets`` decide
    (other dtypes, probabilities) or say what is wrong.
    """
    if type(y_true) is not np.ndarray or y_true.dtype is not _I64 or y_true.shape != (n_samples,) or not n_samples:
        return False
    u = y_true.view(_U64)
    return u.item(u.argmax()) < n_classes  # largest(u), inline


def check_class_targets(y_true, where: str, *, n_samples: int, n_classes: int, dtype):
    """Check classification targets for logits of shape ``(n_samples, n_classes)``.

    Integer labels of shape ``(n_samples, 1)`` are squeezed to ``(n_samples,)``, as Keras's
    ``SparseCategoricalCrossentropy`` does; any other integer shape is an error.

    Returns
    -------
    kind : {"labels", "probs"}
    y : ndarray
        ``"labels"``: int64 array of shape ``(n_samples,)`` with values in
        ``[0, n_classes)``. ``"probs"``: float array of shape
        ``(n_samples, n_classes)`` cast to ``dtype``, finite and non-negative.

    Raises
    ------
    TypeError
        Neither integer nor float dtype.
    ValueError
        Wrong shape, label out of range, negative or non-finite probability.
    """
    if int64_labels(y_true, n_samples, n_classes):
        return "labels", y_true
    if type(y_true) is np.ndarray and y_true.dtype.kind in "iu" and y_true.shape == (n_samples, 1):
        y_true = y_true[:, 0]  # a column of labels, squeezed (Keras's SparseCategoricalCrossentropy)
        if int64_labels(y_true, n_samples, n_classes):
            return "labels", y_true
    key = ("classes", y_true.shape, y_true.dtype, n_samples, n_classes) if type(y_true) is np.ndarray else None
    if key in _PASSED:  # shape and dtype passed before: only the values are checked
        y = y_true
        if y.dtype.kind in "iu":
            # 0 <= y < n_classes in one reduction: a negative label read as unsigned is huge
            u = y.view(_UNSIGNED.get(y.dtype, y.dtype))
            if not y.size or (u.dtype.kind == "u" and np.maximum.reduce(u, axis=None) < n_classes):
                return "labels", y.astype(np.int64, copy=False)
        elif _sum_is_finite(y) and not (y.size and y.min() < 0):
            return "probs", y.astype(dtype, copy=False)
        # a bad value: the full checks below name it
    y = _as_ndarray(y_true, where, "y_true")
    expected = (
        f"integer class labels of shape ({n_samples},) or float probabilities of "
        f"shape ({n_samples}, {n_classes})"
    )
    if np.issubdtype(y.dtype, np.integer):
        if y.shape == (n_samples, 1):  # a list of one-label rows: the column squeezed, as above
            y = y[:, 0]
        if y.shape != (n_samples,):
            raise ValueError(
                f"{where}: y_true must be {expected}; got integer array of shape {y.shape} "
                f"(a column of labels, shape ({n_samples}, 1), is accepted too)"
            )
        if y.size and (y.min() < 0 or y.max() >= n_classes):
            raise ValueError(
                f"{where}: y_true labels must be in [0, {n_classes}); "
                f"got min {int(y.min())}, max {int(y.max())}"
            )
        if key is not None:
            _passed(key)
        return "labels", y.astype(np.int64, copy=False)
    if np.issubdtype(y.dtype, np.floating) and y.dtype in FLOAT_DTYPES:
        if y.shape != (n_samples, n_classes):
            hint = (
                " (float labels? convert with y_true.astype(int))"
                if y.shape == (n_samples,)
                else ""
            )
            raise ValueError(
                f"{where}: y_true must be {expected}; got float array of shape {y.shape}{hint}"
            )
        _check_finite(y, where, "y_true")
        if y.size and y.min() < 0:
            raise ValueError(
                f"{where}: y_true probabilities must be >= 0; got min {y.min().item()!r}"
            )
        if key is not None:
            _passed(key)
        return "probs", y.astype(dtype, copy=False)
    raise TypeError(f"{where}: y_true must be {expected}; got dtype {y.dtype}")


#: check_training's hint for an attention layer or block given PyTorch's positional mask.
MASK_HINT = "; a mask is not an argument: build the layer with causal=True for a causal mask"


def check_training(training, where: str, hint: str = "") -> None:
    """Refuse a ``training`` flag that is not a bool (nor None, 0 or 1, a 0-d bool array).

    An array, tuple or list there is PyTorch's positional state or mask (``gru(x, h0)``,
    ``lstm(x, (h0, c0))``, ``layer(x, src_mask)``): bound to ``training``, it would switch the
    mode by its truth and be dropped, the layer running from a zero state or without the mask
    (verify41 H3). ``hint`` says where the value belongs (``"; the initial state is keyword-only:
    forward(X, h0=h0)"``).

    Raises
    ------
    TypeError
        Naming ``where``, what came (its type and shape) and ``hint``.
    """
    if training is None or isinstance(training, (bool, np.bool_)):
        return
    if isinstance(training, (int, np.integer)) and training in (0, 1):
        return
    if isinstance(training, np.ndarray) and training.shape == () and training.dtype == bool:
        return
    shape = getattr(training, "shape", None)
    if shape is not None:
        got = f"{type(training).__name__} of shape {format_shape(tuple(shape))}"
    elif isinstance(training, (tuple, list)):
        got = f"a {type(training).__name__} of {len(training)}"
    else:
        got = f"{type(training).__name__} {training!r}"[:80]
    raise TypeError(f"{where}: training must be True or False; got {got}{hint}")


def check_positive_int(value, name: str, where: str) -> int:
    """Return ``value`` as int if it is an integer >= 1 (bool rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{where}: {name} must be a positive int; got {type(value).__name__} {value!r}"
        )
    if value < 1:
        raise ValueError(f"{where}: {name} must be a positive int; got {int(value)}")
    return int(value)


def check_int(value, name: str, where: str) -> int:
    """Return ``value`` as int if it is an integer (bool rejected); TypeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be an int; got {type(value).__name__} {value!r}")
    return int(value)


def check_scalar(
    value,
    name: str,
    where: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as float if it is a real number in the given interval.

    Raises
    ------
    TypeError
        Not a real number (bool rejected).
    ValueError
        Not finite, or outside the interval.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{where}: {name} must be a real number; got {type(value).__name__} {value!r}"
        )
    value = float(value)
    lo = "(-inf" if low is None else ("[" if low_inclusive else "(") + repr(float(low))
    hi = "inf)" if high is None else repr(float(high)) + ("]" if high_inclusive else ")")
    bad = not np.isfinite(value)
    if low is not None and (value < low or (not low_inclusive and value == low)):
        bad = True
    if high is not None and (value > high or (not high_inclusive and value == high)):
        bad = True
    if bad:
        raise ValueError(f"{where}: {name} must be in {lo}, {hi}; got {value!r}")
    return value


def check_option(value, name: str, where: str, options: tuple) -> str:
    """Return ``value`` if it is one of ``options``; ValueError otherwise."""
    if value not in options:
        allowed = ", ".join(repr(o) for o in options)
        raise ValueError(f"{where}: {name} must be one of {allowed}; got {value!r}")
    return value


#: PyTorch's names of options that Keras, and so this library, names otherwise
#: (``torch.optim.Adam(lr, betas, eps)``, ``RMSprop(alpha)``).
PYTORCH_NAMES = {"lr": ("learning_rate",), "eps": ("epsilon",), "betas": ("beta_1", "beta_2"),
                 "alpha": ("rho",)}


def did_you_mean(value, options) -> str:
    """``" (did you mean 'rng'?)"`` for the option closest to ``value`` (difflib's ratio at
    least 0.6), ``" (PyTorch's name; here it is 'learning_rate')"`` for PyTorch's name of an
    option in ``options`` (:data:`PYTORCH_NAMES`), or ``""`` when none is close."""
    ours = [o for o in PYTORCH_NAMES.get(str(value), ()) if o in options]
    if ours:
        return f" (PyTorch's name; here it is {' and '.join(map(repr, ours))})"
    close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_keywords(kwargs, accepted, where: str) -> None:
    """Refuse keyword arguments not in ``accepted``, naming each (with the close match, a
    typo's likely meaning) and listing what is accepted, as Keras refuses a layer's
    unknown keywords (``Dense(10, activaton='relu')``).

    Parameters
    ----------
    kwargs : iterable of str
        The keywords given.
    accepted : sequence of str
        The keywords the callable takes.
    where : str
        The callable as the message names it (``"Linear()"``).

    Raises
    ------
    TypeError
        ``Linear() got an unexpected keyword argument 'rgn' (did you mean 'rng'?); it
        takes in_features, out_features, rng, dtype``.
    """
    unknown = [k for k in kwargs if k not in accepted]
    if unknown:
        words = ", ".join(f"{k!r}{did_you_mean(k, accepted)}" for k in unknown)
        plural = "s" if len(unknown) > 1 else ""
        takes = ", ".join(accepted) if accepted else "no keyword arguments"
        raise TypeError(f"{where} got an unexpected keyword argument{plural} {words}; "
                        f"it takes {takes}")



def check_init_keywords(cls, kwargs) -> None:
    """:func:`check_keywords` for a constructor call ``cls(..., **kwargs)``: the keywords
    its ``__init__`` takes by name are accepted (nothing is checked when it takes
    ``**kwargs``, or has no signature to read). The one check of the keywords of
    autoprop's layers and of the optimizers, called from their ``__new__``, so a
    subclass's own ``__init__`` is checked too.

    Raises
    ------
    TypeError
        ``SGD() got an unexpected keyword argument 'momentun' (did you mean
        'momentum'?); it takes learning_rate, momentum, ...``.
    """
    if not kwargs:
        return
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]  # not self
    except (TypeError, ValueError):  # pragma: no cover - a builtin __init__
        return
    if not any(p.kind is p.VAR_KEYWORD for p in params):
        check_keywords(kwargs, [p.name for p in params if p.kind in (
            p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)], f"{cls.__name__}()")


def check_float_dtype(dtype, where: str) -> np.dtype:
    """Return ``np.dtype(dtype)`` if it is float32 or float64; TypeError otherwise."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in FLOAT_DTYPES:
        raise TypeError(f"{where}: dtype must be float32 or float64; got {dtype!r}")
    return dt


def check_axis(axis, ndim: int, where: str, name: str = "X") -> int:
    """Return ``axis`` normalised to ``[0, ndim)``; ValueError if out of range."""
    if ndim == 0:
        raise ValueError(f"{where}: {name} must have at least 1 dimension; got a 0-d array")
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{where}: axis must be in [{-ndim}, {ndim}) for {name} with "
            f"{ndim} dimension(s); got {axis}"
        )
    return axis % ndim


def check_layer(layer, index: int, where: str) -> None:
    """Check that ``layer`` follows the manualprop protocol.

    It needs callable ``forward`` and ``backward`` and, if present, dict
    ``params``/``grads`` with the same keys.
    """
    for method in ("forward", "backward"):
        if not callable(getattr(layer, method, None)):
            raise TypeError(
                f"{where}: layer {index} must have callable forward() and backward(); "
                f"got {type(layer).__name__} without {method}()"
            )
    params = getattr(layer, "params", {})
    grads = getattr(layer, "grads", {})
    if not isinstance(params, dict) or not isinstance(grads, dict):
        raise TypeError(
            f"{where}: layer {index} ({type(layer).__name__}) must have dict params and grads; "
            f"got {type(params).__name__} and {type(grads).__name__}"
        )


def check_update(grad, value: np.ndarray, where: str, label: str) -> np.ndarray:
    """Check an optimizer gradient against its variable's value.

    Returns the gradient as an ndarray of ``value.dtype``.

    Raises
    ------
    TypeError
        Gradient not float, or the variable an integer or bool array (it would round
        every update away).
    ValueError
        Shape differs from the variable's or NaN/inf present.
    """
    if value.dtype.kind in "biu":
        raise TypeError(
            f"{where}: {label} has dtype {value.dtype}; an optimizer updates floating-point "
            f"variables only (an integer variable would round every step away): make it "
            f"float, e.g. with .astype(np.float64)"
        )
    if type(grad) is np.ndarray and ("update", grad.shape, grad.dtype, value.shape) in _PASSED:
        if not _sum_is_finite(grad):
            _check_finite(grad, where, f"gradient for {label}")
        return grad if grad.dtype == value.dtype else grad.astype(value.dtype)
    g = _as_ndarray(grad, where, f"gradient for {label}")
    _check_float(g, where, f"gradient for {label}")
    if g.shape != value.shape:
        raise ValueError(
            f"{where}: gradient for {label} must have the variable's shape {value.shape}; "
            f"got {g.shape}"
        )
    _check_finite(g, where, f"gradient for {label}")
    if type(grad) is np.ndarray:
        _passed(("update", g.shape, g.dtype, value.shape))
    return g.astype(value.dtype, copy=False)


def check_int_pair(value, name: str, where: str, *, low: int = 1) -> tuple[int, int]:
    """Return ``value`` as a pair of ints >= ``low`` (an int ``n`` means ``(n, n)``).

    For the (height, width) hyperparameters of 2-D layers: ``kernel_size``,
    ``stride`` (``low=1``), ``padding`` (``low=0``), ``dilation`` (``low=1``).

    Raises
    ------
    TypeError
        Neither an int nor a tuple/list of two ints (bool rejected).
    ValueError
        A pair of the wrong length, or an entry below ``low``.
    """
    def bad_type():
        return TypeError(
            f"{where}: {name} must be an int or a pair of ints (height, width); "
            f"got {type(value).__name__} {value!r}"
        )

    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        pair = (int(value), int(value))
    elif isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(
                f"{where}: {name} must be an int or a pair of ints (height, width); "
                f"got {len(value)} values {tuple(value)!r}"
            )
        if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in value):
            raise bad_type()
        pair = (int(value[0]), int(value[1]))
    else:
        raise bad_type()
    if min(pair) < low:
        raise ValueError(f"{where}: {name} must be >= {low}; got {value!r}")
    return pair


def check_window(
    spatial: tuple,
    where: str,
    name: str = "X",
    *,
    kernel_size: tuple,
    stride: tuple = (1, 1),
    padding: tuple = (0, 0),
    dilation: tuple = (1, 1),
) -> tuple[int, int]:
    """Check that a (dilated) kernel fits the (padded) input; return the output size.

    ``out = (size + 2 padding - dilation (k - 1) - 1) // stride + 1`` per axis,
    as PyTorch's Conv2d/MaxPool2d.

    Parameters
    ----------
    spatial : (int, int)
        ``(H, W)`` of the input ``name``.
    kernel_size, stride, padding, dilation : (int, int)
        Already checked with :func:`check_int_pair`.

    Returns
    -------
    (int, int)
        ``(H_out, W_out)``, both >= 1.

    Raises
    ------
    ValueError
        The dilated kernel is larger than the padded input along an axis.
    """
    out = []
    for axis, size, k, s, p, d in zip(("height", "width"), spatial, kernel_size, stride, padding, dilation):
        span = d * (k - 1) + 1
        if size + 2 * p < span:
            extra = f" (kernel {k} with dilation {d})" if d != 1 else ""
            raise ValueError(
                f"{where}: the kernel must fit into {name} along its {axis}: {name} has "
                f"{axis} {size}, {size + 2 * p} with padding {p}, smaller than the kernel "
                f"span {span}{extra}; got {name} of spatial size {tuple(spatial)}"
            )
        out.append((size + 2 * p - span) // s + 1)
    return out[0], out[1]


def check_transposed_window(
    spatial: tuple,
    where: str,
    *,
    kernel_size: tuple,
    stride: tuple,
    padding: tuple,
    output_padding: tuple,
    dilation: tuple,
) -> tuple[int, int]:
    """Output size of a transposed convolution (PyTorch's ``ConvTranspose2d`` formula).

    ``out = (size - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``
    per axis: the input size of the convolution whose backward it is.

    Returns
    -------
    (int, int)
        ``(H_out, W_out)``, both >= 1.

    Raises
    ------
    ValueError
        The output would be empty (too much padding for this input).
    """
    out = []
    for axis, size, k, s, p, op, d in zip(("height", "width"), spatial, kernel_size, stride, padding,
                                         output_padding, dilation):
        o = (size - 1) * s - 2 * p + d * (k - 1) + op + 1
        if o < 1:
            raise ValueError(
                f"{where}: the output would be empty along its {axis}: (X {axis} {size} - 1) * "
                f"stride {s} - 2 * padding {p} + dilation {d} * (kernel {k} - 1) + output_padding "
                f"{op} + 1 = {o}; use less padding or a larger input; got X of spatial size {tuple(spatial)}"
            )
        out.append(o)
    return out[0], out[1]


def check_stat_count(shape: tuple, axes: tuple, where: str, name: str = "X") -> int:
    """Return how many values each batch statistic averages; ValueError if fewer than 2.

    Batch normalisation in training needs at least 2 values per channel: with
    one, ``x - mean`` is 0 and the unbiased variance divides by ``n - 1 = 0``
    (PyTorch refuses it too).
    """
    count = 1
    for a in axes:
        count *= shape[a]
    if count < 2:
        raise ValueError(
            f"{where}: {name} must have more than 1 value per channel in training (the "
            f"batch statistics average over axes {tuple(axes)}); got shape {tuple(shape)}"
        )
    return count


def check_mask(mask, where: str, name: str = "mask", *, shape: tuple | None = None) -> np.ndarray:
    """Check a keep-mask (bool, or 0/1 numbers) and return it as a bool array.

    Raises
    ------
    TypeError
        Not numeric/bool.
    ValueError
        Values other than 0/1, or a shape different from ``shape``.
    """
    m = _as_ndarray(mask, where, name)
    if not (m.dtype == np.bool_ or np.issubdtype(m.dtype, np.number)) or np.iscomplexobj(m):
        raise TypeError(f"{where}: {name} must be a bool (or 0/1) array; got dtype {m.dtype}")
    if m.dtype != np.bool_:
        if m.size and not np.isin(m, (0, 1)).all():
            raise ValueError(f"{where}: {name} must contain only 0 and 1 (keep/drop); got other values")
        m = m.astype(bool)
    if shape is not None and m.shape != tuple(shape):
        raise ValueError(
            f"{where}: {name} must have the shape of X, {tuple(shape)}; got {m.shape} "
            f"(a fixed mask only fits inputs of its own shape)"
        )
    return m


# ---------------------------------------------------------------------------- non-finite outputs
class NonFiniteError(ValueError):
    """A layer made NaN/inf from finite input: names the layer, the tensor and the cause.

    The cause is the first non-finite parameter of the layer, or, with every parameter
    finite, an overflow. :class:`~manualprop.Sequential` adds the layer's position
    (``"Sequential layer 0 (Linear(...)).forward: ..."``; ``"1.0"`` inside a nested one)
    with :meth:`at`.

    Parameters
    ----------
    layer : object
        The layer that made the values (its ``repr`` is in the message).
    method : str
        ``"forward"`` or ``"backward"``.
    detail : str
        The message after the prefix.
    """

    def __init__(self, layer, method: str, detail: str):
        self.layer, self.method, self.detail, self.path = layer, method, detail, []
        super().__init__(self._text())

    def _text(self) -> str:
        if self.path:
            where = f"Sequential layer {'.'.join(map(str, self.path))} ({self.layer!r})"
        else:
            where = repr(self.layer)
        return f"{where}.{self.method}: {self.detail}"

    def at(self, index: int) -> NonFiniteError:
        """Prepend the position ``index`` of the layer (or of its container) and return self."""
        self.path.insert(0, index)
        self.args = (self._text(),)
        return self


class UnlookedInputError(NonFiniteError):
    """A NaN/inf in a layer's forward input that nobody looked at, found later by the layer.

    :class:`~manualprop.Sequential` leaves a built-in ``Linear``'s output unlooked when a
    ``Tanh`` follows (``Sequential.forward``): a NaN there reaches a later look, but
    ``tanh(+-inf) = +-1`` hides an infinity until the ``Tanh``'s backward meets it in its
    saturated entries and raises this; the ``Sequential`` replaces it by the ``Linear``'s own
    message (the one its look at ``Y`` would have given in the forward pass).
    """

    def __init__(self, layer, method: str, X):
        count, first, value = _first_bad(np.asarray(X)) or (0, (), None)
        super().__init__(layer, method, (
            f"X, the input of forward (not looked at inside a Sequential), has {count} NaN/inf "
            f"value(s), the first at index {first} (value {value!r})"))
        self.array = X


def _first_bad(A: np.ndarray):
    """``(count, first index, first value)`` of the NaN/inf entries of ``A``, or None."""
    bad = np.argwhere(~np.isfinite(A))
    if not len(bad):
        return None
    first = tuple(int(i) for i in bad[0])
    return len(bad), first, A[first].item()


def nonfinite_output(layer, method: str, out, name: str, inputs: str, params=None,
                     ours: bool = True) -> NonFiniteError:
    """The :class:`NonFiniteError` for ``out`` (NaN/inf somewhere), made from finite ``inputs``.

    A non-finite entry of ``params`` (a dict of arrays; the layer's ``params`` when None) is
    named as the cause; with every parameter finite, the values overflowed (said only of
    ``ours``, manualprop's own layers: a layer of your own may make a NaN in other ways).
    """
    out = np.asarray(out)
    count, first, value = _first_bad(out) or (0, (), None)
    made = f"{name} has {count} NaN/inf value(s), the first at index {first} (value {value!r})"
    if params is None:
        params = getattr(layer, "params", None)
    for key, p in (params.items() if isinstance(params, dict) else ()):
        if isinstance(p, np.ndarray) and p.dtype.kind in "fc":
            bad = _first_bad(p)
            if bad is not None:
                return NonFiniteError(layer, method, (
                    f"parameter {key} contains {bad[0]} NaN/inf value(s), the first at index "
                    f"{bad[1]} (value {bad[2]!r}); from finite {inputs}, {made}"))
    also = " and finite parameters" if params else ""
    if not ours:
        return NonFiniteError(layer, method, f"from finite {inputs}{also}, {made}")
    return NonFiniteError(layer, method, (
        f"{name} overflowed: from finite {inputs}{also}, {made}; the values are "
        f"too large for {out.dtype} (scale the inputs or the weights down, or lower the learning rate)"))


def output_ss(Y: np.ndarray, layer, method: str, name: str, inputs: str, params=None) -> float:
    """``Y . Y`` of a layer's output made from finite ``inputs``; NonFiniteError if it has NaN/inf.

    One BLAS dot on the fast path; ``inf`` when the squares of finite values overflowed.
    ``params``: the parameters ``Y`` depends on (default: the layer's ``params``).

    Raises
    ------
    NonFiniteError
        ``Y`` has a NaN or an inf: names the layer's non-finite parameter, or the overflow.
    """
    value = float(_vdot(Y, Y)) if Y.size <= DOT_CHUNK else sum_of_squares(Y)  # sum_of_squares, inline
    if value < _INF:
        return value
    if np.isfinite(Y).all():
        return _INF
    raise nonfinite_output(layer, method, Y, name, inputs, params)


#: A product of sums of squares below which a matrix product cannot overflow, per dtype (other
#: dtypes: prove nothing, ``.get(dtype, 0.0)``): sqrt(1e300) = 1e150
#: (float64), sqrt(1e70) = 1e35 (float32), far below the largest value, whatever the
#: rounding of the sums (Cauchy-Schwarz bounds every partial sum of |a||b| too).
SS_LIMIT = {np.dtype(np.float64): 1e300, np.dtype(np.float32): 1e70}


def gradients_finite(layer, grads, inputs: str) -> None:
    """Raise :class:`NonFiniteError` for the first of ``grads`` (``(name, array)`` pairs) with NaN/inf.

    For a backward that could not prove its gradients finite from the sums of squares of
    its finite inputs (the rare case: huge values); each array is looked at in full. The
    gradients of parameters do not depend on the parameters, so none is blamed: an overflow.
    """
    for name, g in grads:
        if not np.isfinite(g).all():
            raise nonfinite_output(layer, "backward", g, name, inputs, {})
