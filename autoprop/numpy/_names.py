"""numpy's own names for what ``autoprop.numpy`` and its submodules do not define.

``autograd.numpy`` re-exports every numpy name; ``autoprop.numpy`` (and ``.linalg``, ``.fft``,
``.random``) resolve a name they do not define to numpy's own object through a module
``__getattr__``: ``anp.zeros is np.zeros``. A Tensor given to such a function meets numpy's
dispatch (``Tensor.__array_function__`` / ``__array_ufunc__``), so it is recorded or refused
exactly as through plain numpy, and a function that does not dispatch converts the Tensor with
``__array__`` (a ``TapeEscapeWarning``; ``tape.gradient`` refuses a target it may have fed).
"""


def numpy_attr(module, ours, name):
    """numpy's ``module.name`` for the module named ``ours``, or AttributeError naming both.

    Parameters
    ----------
    module : module
        ``numpy``, ``numpy.linalg``, ``numpy.fft`` or ``numpy.random``.
    ours : str
        The name of the autoprop module asking (``"autoprop.numpy"``).
    name : str

    Returns
    -------
    object
        numpy's own object.

    Raises
    ------
    AttributeError
        For a dunder name (``__path__``, ``__wrapped__``: module machinery is not numpy's) or a
        name numpy does not have either.
    """
    if not (name.startswith("__") and name.endswith("__")):
        try:
            return getattr(module, name)
        except AttributeError:
            pass
        raise AttributeError(f"module {ours!r} has no attribute {name!r}, and neither has "
                             f"{module.__name__} (whose names it offers too)")
    raise AttributeError(f"module {ours!r} has no attribute {name!r}")


def numpy_dir(module, names):
    """``dir()`` of an autoprop module: its own ``names`` and ``module``'s public ones."""
    return sorted(set(names) | {n for n in dir(module) if not n.startswith("_")})
