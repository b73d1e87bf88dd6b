"""Session 33 (left33): review32's surviving mutants of the eig rule's rounding model (``linalg_eig.lapack_coupling``).

``no_colmix`` and ``no_rowmix`` drop the terms for the orthogonal factor of LAPACK's reduction mixing the active
rows of the columns right of the active block and the active columns of the rows above it (dgehrd applies its
reflectors to ``A(ilo:ihi, i+1:n)`` from the left and ``A(1:ihi, i+1:ihi)`` from the right, and dhseqr's Schur
factor with WANTT to the same rows and columns: Anderson et al., *LAPACK Users' Guide*, 3rd ed., 1999, the
routines' documentation), so a zero of A there is no longer exact. On every matrix family scanned (left33: a
Jordan- or close-pair active block beside isolated eigenvalues, ~5,000 matrices, /work/wt/left33_scratch/
mixscan*.py) the first-order bound never changed sides of the threshold with either term dropped: the active
block's normwise term and the other off-block path are of the same order there. So they are pinned here on the
bound itself, against a hand computation of the documented formula. ``tx_only`` (drop the left eigenvector's
term ``ty`` from the first look) still survives: on the transpose of session 31's one-sided triangular pair, below,
``tx`` sees the pair too, through the huge row of ``V^-1`` in its coupling, and so does the per-row ``V^-1`` term
(``eps |y| |V| |V^-1| / |y|``); no case was found where ``ty`` alone decides.
"""

import numpy as np

import autoprop as ap
from autoprop.core.prims.linalg_eig import lapack_coupling


def test_lapack_coupling_on_a_matrix_gebal_splits():
    # gebal: column 0 isolates 7 (top), row 3 isolates -5 (bottom), the active block rows/columns 1-2 (symmetric:
    # no scaling, T = I). c_ji = |e_j E e_i| / eps bound: |B| entrywise; + ||B_act||_F = sqrt(10) in the active
    # block (its normwise backward error); + the column norm of B[1:3, 3] = ||(0, 3)|| = 3 in rows 1-2 of column 3
    # (A[1, 3] = 0 is not exact after the reflectors: no_colmix gives 0 there); + the row norm of B[0, 1:3] =
    # ||(4, 0)|| = 4 in columns 1-2 of row 0 (A[0, 2] = 0 likewise: no_rowmix gives 0).
    a = np.array([[7.0, 4.0, 0.0, 0.5], [0.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, -5.0]])
    r = np.sqrt(10.0)
    want = np.array([[7.0, 4.0 + 4.0, 0.0 + 4.0, 0.5],
                     [0.0, 2.0 + r, 1.0 + r, 0.0 + 3.0],
                     [0.0, 1.0 + r, 2.0 + r, 3.0 + 3.0],
                     [0.0, 0.0, 0.0, 5.0]])
    eye = np.eye(4)
    np.testing.assert_allclose(lapack_coupling(a, eye, eye), want, rtol=1e-15)
    # for other y, x: |y| (|B| + the mixing terms) |x| + ||B_act|| ||y_act|| ||x_act|| (the block's normwise part),
    # and the same for a permuted copy (gebal undoes it: T a permutation)
    y, x = np.array([[0.5, -1.0, 2.0, 0.25]]), np.array([[1.0], [0.0], [-3.0], [2.0]])
    entry = want - r * np.pad(np.ones((2, 2)), 1)[:4, :4]
    expect = np.abs(y) @ entry @ np.abs(x) + r * np.linalg.norm(y[0, 1:3]) * np.linalg.norm(x[1:3, 0])
    np.testing.assert_allclose(lapack_coupling(a, y, x), expect, rtol=1e-14)
    p = np.array([2, 0, 3, 1])
    np.testing.assert_allclose(lapack_coupling(a[p][:, p], y[:, p], x[p]), expect, rtol=1e-14)


def _grad(f, x):
    t = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = f(t)
    return tape.gradient(y, t).numpy()


def test_a_lower_triangular_close_pair_one_sided_coupling():
    # the transpose of session 31's [[1, 1], [0, 1 + s]]: now the left eigenvector moves (y_2 = (1, s)), the right
    # one (x_2 = e_2) does not: s = 1e-8 (bound ~2e-8) finite and exact, [[0, 1/s], [0, 1]] (y x^T / (y x),
    # y x = s); s = 1e-11 (~2e-5) NaN, after the second look too (the reduced resolvent ~ 1/s).
    def top(t):
        return np.max(np.real(np.linalg.eigvals(t)))

    a = np.array([[1.0, 0.0], [1.0, 1.0 + 1e-8]])
    s = a[1, 1] - 1.0  # (exact: Sterbenz)
    np.testing.assert_allclose(_grad(top, a), [[0.0, 1.0 / s], [0.0, 1.0]], rtol=1e-6, atol=1e-6)
    assert np.all(np.isnan(_grad(top, np.array([[1.0, 0.0], [1.0, 1.0 + 1e-11]]))))


def test_a_batch_is_bounded_matrix_by_matrix():
    # session 33 batched lapack_coupling (gebal still per matrix): each matrix of a stack gets what it gets alone,
    # with its own isolated parts (triangular, permuted, scaled, dense mixed in one stack). rtol 1e-14: the same
    # sums, possibly grouped differently by the BLAS (left33: 29 of 61 stacks bitwise, the rest within 5.8e-16).
    rng = np.random.default_rng(4)
    n = 4
    dense = rng.standard_normal((3, n, n))
    upper = np.triu(rng.standard_normal((3, n, n)))
    p = rng.permutation(n)
    d = 10.0 ** rng.uniform(-4, 4, (3, n))
    a = np.concatenate([dense, upper, upper[:, p][:, :, p], dense * d[:, :, None] / d[:, None, :]])
    w, v = np.linalg.eig(a)
    vi = np.linalg.inv(v)
    got = lapack_coupling(a, vi, v)
    assert got.shape == (12, n, n)
    for k in range(12):
        np.testing.assert_allclose(got[k], lapack_coupling(a[k], vi[k], v[k]), rtol=1e-14)
    two = lapack_coupling(a.reshape(3, 4, n, n), vi.reshape(3, 4, n, n), v.reshape(3, 4, n, n))
    np.testing.assert_allclose(two.reshape(12, n, n), got, rtol=1e-14)


def test_the_linalg_eig_benchmark_runs_with_few_repeats():
    # (its figures are not looked at here: no timed tests; only that every row is printed)
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "linalg_eig.py"
    p = subprocess.run([sys.executable, str(script), "--repeats", "1"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [line.strip() for line in p.stdout.splitlines()]
    for row in ("(2000, 3, 3)", "(200, 3, 3)", "(200, 8, 8)", "(20, 30, 30)", "2000 x Jordan"):
        assert any(r.startswith(row + " ") for r in rows), p.stdout
    p = subprocess.run([sys.executable, str(script), "--repeats", "0"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--repeats must be at least 1" in p.stderr
