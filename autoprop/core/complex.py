"""Complex values on the tape: HIPS autograd's convention inside, TensorFlow's at the boundary.

What the user gets (:func:`public`): ``tape.gradient(L, z)`` of a real loss ``L`` for a complex
source ``z = x + iy`` is ``dL/dx + i dL/dy``, TensorFlow's and PyTorch's convention (the
steepest-ascent direction: ``w.assign_sub(lr * g)`` descends); ``output_gradients`` for a
complex target are read in it, and so are the rows of ``jacobian``/``batch_jacobian`` of a real
target and ``backward_source``'s code. The tape conjugates once there (``tape.py``); the records
never see it. ``lessons/10-gradient-tape.md`` §5b.

The convention of the records (autograd's ``docs/tutorial.md``, "Complex numbers"): the gradient
that flows into a complex value ``z = x + iy`` of a real-valued loss ``L`` is
``dL/dx - i dL/dy``. With it a holomorphic primitive's VJP is ``g * f'(z)``, the real
formula unchanged (no conjugates: ``multiply``, ``matmul``, ``exp``, ``log`` ... are
right as written), and the non-holomorphic ones say what they do: ``abs``:
``g conj(z) / |z|``; ``real``: ``g``; ``imag``: ``-i g``; ``conj``: ``conj(g)``;
``angle``: ``g conj(i z) / |z|^2``. A complex gradient arriving at a real input is its
real part (the imaginary direction does not exist there). In forward mode a tangent
``t`` pairs with a gradient ``g`` as ``dL = Re(g t)``, so a JVP is ``f'(z) t`` for a
holomorphic primitive and ``Re(conj(z) t) / |z|`` for ``abs``.

Only the primitives in :data:`COMPLEX_READY` were checked against autograd and central
differences on complex values (``tests/test_autoprop_complex.py``; the decompositions ``eigh``,
``svd``, ``svdvals``, ``qr`` also against torch, ``tests/test_autoprop_vocab20.py``, and
``eig``/``eigvals`` in ``tests/test_autoprop_vocab21.py``); any other primitive
that a tape or a ForwardAccumulator would differentiate at a complex value raises
:func:`refusal` (a clear TypeError), never a silently wrong gradient.
"""

from __future__ import annotations

import numpy as np

#: the primitives whose VJPs and JVPs are right at complex values (autograd's convention),
#: each compared in tests/test_autoprop_complex.py
COMPLEX_READY = frozenset({
    # holomorphic elementwise: g * f'(z), the real formula
    "add", "subtract", "multiply", "divide", "negative", "power", "square", "reciprocal",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arctanh",
    # the non-holomorphic ones, with their own complex rules
    "absolute", "real", "imag", "conj", "angle", "cast",
    # linear and multilinear maps (no conjugates in the convention)
    "sum", "mean", "cumsum", "norm", "reshape", "transpose", "getitem", "split_pieces", "broadcast_to", "squeeze",
    "concatenate", "stack", "flip", "pad", "where", "take_along_axis",
    "matmul", "einsum", "tensordot", "prod", "index_add", "scatter_along_axis",
    "extract_patches", "scatter_patches", "linear", "linear_at",
    # the decompositions: PyTorch's formulas (prims/linalg.py, linalg_eig.py), gauge-invariant losses
    "eigh", "eig", "svd", "svdvals", "qr", "svd_extra_vectors", "polyroots", "charpoly",
    # holomorphic matrix functions; the Fourier transforms (linear)
    "inv", "solve", "det", "sqrtm", "solve_sylvester", "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfftn",
})


#: non-differentiable records (no VJP: never recorded) whose result on complex input is
#: no piecewise constant: sign(z) = z / |z|. Refused when a tape or accumulator tracks z.
VARIES_ON_COMPLEX = frozenset({"sign"})


def check_cut(prim, args, tracked):
    """Raise :func:`refusal` for a :data:`VARIES_ON_COMPLEX` record with a complex input
    for which ``tracked(tensor)`` is true (a tape or accumulator would cut it silently)."""
    if prim.name in VARIES_ON_COMPLEX and any(is_complex(getattr(a, "_value", None)) and tracked(a)
                                              for a in args):
        raise refusal(prim, "its result varies with a complex input, but it has no gradient rule")


def is_complex(v):
    """True when ``v`` (an ndarray, Tensor, NotSaved or scalar) has a complex dtype."""
    dt = getattr(v, "dtype", None)
    return dt is not None and dt.kind == "c" or isinstance(v, complex)


def refusal(prim, where):
    """The TypeError for primitive ``prim`` met at a complex value it has no rule for."""
    return TypeError(
        f"autoprop.{prim.name}: complex values are not supported there ({where}): its "
        "gradient rule is written for real inputs and would give a wrong number at a "
        "complex one. Supported on complex values: " + ", ".join(sorted(COMPLEX_READY)) +
        ". Split the computation into real and imaginary parts (np.real, np.imag), or "
        "compute on values with ap.numpy_function (no gradient)."
    )


def check(prim, vals, out, where):
    """Raise :func:`refusal` if ``prim`` is not in :data:`COMPLEX_READY` and one of its
    inputs ``vals`` or its output ``out`` is complex."""
    if prim.name in COMPLEX_READY or prim.vjps is None:
        return
    if is_complex(out) or any(is_complex(v) for v in vals):
        raise refusal(prim, where)


def public(g):
    """A gradient crossing the public boundary (``tape.gradient``'s results and
    ``output_gradients``, a real target's Jacobian rows): conjugated when complex, between
    the internal convention (autograd's ``dL/dx - i dL/dy``) and TensorFlow's and PyTorch's
    (``dL/dx + i dL/dy``, the steepest-ascent direction); None and real values as they are.
    The map is its own inverse."""
    if g is None:
        return None
    v = g._value if hasattr(g, "_value") else np.asarray(g)
    return (np.conj(g) if hasattr(g, "_value") else np.conj(v)) if is_complex(v) else g


def fit_real(gi, v):
    """``gi``, the gradient for an input of value ``v``: its real part when ``gi`` is complex
    and ``v`` real (autograd's ``unbroadcast``; no ComplexWarning, no silent cast)."""
    if is_complex(gi) and not is_complex(v):
        return np.real(gi)
    return gi
