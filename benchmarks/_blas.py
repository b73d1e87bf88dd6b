"""One BLAS thread for every timed benchmark, and the line that says which BLAS ran.

numpy's BLAS (OpenBLAS, MKL, ...) starts one thread per core. A benchmark that times
numpy code with those threads measures, on a machine other jobs share, how the threads
contend (a manual MultiHeadAttention step read 417 ms beside the tape's 89 ms at load 7-10;
21.6 ms vs 23.6 ms with one thread), not the engines. Every benchmark script that times BLAS
runs its timings inside :func:`one_blas_thread` and prints :func:`blas_kernel` (torch, when
timed, is set to one thread by the script itself: ``torch.set_num_threads(1)``).

benchmarks/ is no package: the scripts import this module by name (their own folder is on
``sys.path`` when run as ``python benchmarks/<script>.py``).
"""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits


def one_blas_thread():
    """Context manager limiting every BLAS numpy links to one thread (threadpoolctl).

    Returns
    -------
    threadpoolctl.threadpool_limits
        Use as ``with one_blas_thread(): ...``; the previous limits come back on exit.
    """
    return threadpool_limits(limits=1, user_api="blas")


def blas_kernel() -> str:
    """Which BLAS numpy links and with how many threads, e.g. ``'openblas 0.3.27 SkylakeX, 1 thread(s)'``.

    Returns
    -------
    str
        One entry per BLAS library threadpoolctl finds (``internal_api version architecture,
        N thread(s)``), joined by ``'; '``; ``'no BLAS found by threadpoolctl'`` if none.
        Call it inside :func:`one_blas_thread` to print the thread count the timings ran with.
    """
    out = []
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            out.append(f"{info.get('internal_api')} {info.get('version')} "
                       f"{info.get('architecture')}, {info.get('num_threads')} thread(s)")
    return "; ".join(out) or "no BLAS found by threadpoolctl"
