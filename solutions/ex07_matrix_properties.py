"""Topic 7 — Matrix properties that keep deep networks sane.

You build small, careful tools for the matrix properties behind stable training: the spectral
radius and the product of Jacobians that makes RNN gradients vanish or explode, the condition
number (with an honest "singular" verdict), a positive-definiteness test by Cholesky and the Gram
matrices that are always positive semi-definite, Newton–Schulz orthogonalisation as used by the
Muon optimizer, and the sliding-window masks of sparse attention together with their density.

Lesson: docs/lessons/07-matrix-properties.md
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "bptt_jacobian",
    "condition_number",
    "gram_matrix",
    "is_positive_definite",
    "mask_density",
    "newton_schulz_orthogonalize",
    "sliding_window_mask",
    "spectral_radius",
]


def spectral_radius(W: np.ndarray) -> float:
    """Largest modulus of an eigenvalue of a square matrix: ``ρ(W) = max_i |λ_i|``.

    Eigenvalues of a real matrix may be complex (a rotation has ``e^{±iθ}``); their modulus
    counts. Powers ``W^t`` shrink to zero when ``ρ < 1`` and blow up along some direction when
    ``ρ > 1``.

    Args:
        W: square matrix of shape ``(d, d)``, d >= 1, finite; real or complex. The eigenvalues
            are computed in double precision (float64 / complex128) whatever the input dtype.

    Returns:
        ρ as a Python float ``>= 0``.

    Raises:
        ValueError: if W is not a non-empty square 2-D matrix, or holds NaN or inf.

    Source:
        Pascanu et al. 2013, "On the difficulty of training recurrent neural networks", §2;
        lesson section "Eigenvalues and the RNN gradient".

    Example:
        >>> spectral_radius(np.array([[0.5, 0.2], [0.0, 0.9]]))  # triangular: the diagonal
        0.9
        >>> spectral_radius(np.array([[0.0, -1.0], [1.0, 0.0]]))  # 90° rotation: λ = ±i
        1.0
    """
    ### BEGIN SOLUTION
    W = np.asarray(W)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.size == 0:
        raise ValueError(f"spectral_radius: W must be a non-empty square matrix (d, d), got "
                         f"shape {W.shape}")
    if not np.issubdtype(W.dtype, np.number):
        raise ValueError(f"spectral_radius: W must be numeric, got dtype {W.dtype}")
    work = W.astype(np.complex128 if np.iscomplexobj(W) else np.float64)  # (d, d)
    if not np.all(np.isfinite(work)):
        raise ValueError(f"spectral_radius: W of shape {W.shape} holds NaN or inf")
    return float(np.max(np.abs(np.linalg.eigvals(work))))
    ### END SOLUTION


def bptt_jacobian(W_hh: np.ndarray, pre_activations: np.ndarray) -> np.ndarray:
    """``∂h_T/∂h_0 = J_T ⋯ J_1`` of a tanh RNN, with ``J_t = diag(1 − tanh²(a_t)) W_hh``.

    Column-vector convention, as in the lesson: ``h_t = tanh(a_t)``, ``a_t = W_hh h_{t−1} +
    W_xh x_t + b``, so ``∂h_t/∂h_{t−1} = diag(tanh'(a_t)) W_hh`` — W_hh itself, not its
    transpose. (``W_hhᵀ`` belongs to the row-vector form ``h_t = tanh(h_{t−1} W_hh + …)``,
    where the Jacobian of the row map is ``W_hhᵀ diag(·)`` in column layout; mixing the two
    conventions transposes every step.)

    ``1 − tanh²(a)`` is evaluated as ``sech²(a) = 4e/(1 + e)²`` with ``e = exp(−2|a|)``: the
    same number, but it keeps its digits for large |a|, where ``tanh(a)`` rounds to ±1 and
    ``1 − tanh²`` would give exactly 0.

    Args:
        W_hh: recurrent weights, shape ``(d, d)``.
        pre_activations: ``a_1 … a_T`` stacked as rows, shape ``(T, d)``; T = 0 (shape
            ``(0, d)``) is allowed.

    Returns:
        Array of shape ``(d, d)`` in the result dtype of the inputs (float64 for integer
        inputs; float16 is computed in float32); T = 0 gives the identity.

    Raises:
        ValueError: if W_hh is not square 2-D, or pre_activations is not 2-D with d columns.

    Source:
        Pascanu et al. 2013, eq. (5)–(7); Bengio et al. 1994; lesson section "Eigenvalues and
        the RNN gradient".

    Example:
        W_hh = 0.5 I and a_t = 0 (so tanh' = 1): after 10 steps the gradient is 0.5¹⁰ ≈ 0.001
        — it vanishes because ρ(W_hh) < 1.

        >>> J = bptt_jacobian(0.5 * np.eye(2), np.zeros((10, 2)))
        >>> J.round(6)
        array([[0.000977, 0.      ],
               [0.      , 0.000977]])
        >>> bptt_jacobian(0.5 * np.eye(2), np.zeros((0, 2)))  # T = 0: nothing to backpropagate
        array([[1., 0.],
               [0., 1.]])
    """
    ### BEGIN SOLUTION
    W_hh = np.asarray(W_hh)
    A = np.asarray(pre_activations)
    if W_hh.ndim != 2 or W_hh.shape[0] != W_hh.shape[1]:
        raise ValueError(f"bptt_jacobian: W_hh must be square (d, d), got shape {W_hh.shape}")
    d = W_hh.shape[0]
    if A.ndim != 2 or A.shape[1] != d:
        raise ValueError(f"bptt_jacobian: pre_activations must have shape (T, {d}) to match "
                         f"W_hh of shape {W_hh.shape}, got {A.shape}")
    out_dtype = np.result_type(W_hh.dtype, A.dtype)
    if not np.issubdtype(out_dtype, np.floating):
        out_dtype = np.dtype(np.float64)
    work = np.float32 if out_dtype == np.float16 else out_dtype
    W = W_hh.astype(work)  # (d, d)
    J = np.eye(d, dtype=work)  # (d, d) ∂h_0/∂h_0
    for a_t in A.astype(work):  # (d,) each; the product is sequential in t by nature
        e = np.exp(-2.0 * np.abs(a_t))  # (d,) in (0, 1]: never overflows
        dtanh = 4.0 * e / (1.0 + e) ** 2  # (d,) sech²(a_t) = 1 − tanh²(a_t)
        J = dtanh[:, None] * (W @ J)  # (d, d) J_t @ J with J_t = diag(dtanh) W_hh
    return J.astype(out_dtype)
    ### END SOLUTION


def condition_number(A: np.ndarray) -> float:
    """2-norm condition number ``κ(A) = σ_max / σ_min``, or ``inf`` when A is singular.

    A is treated as singular when ``σ_min <= max(m, n) · eps · σ_max`` with eps the machine
    epsilon of A's float dtype (float64 for integer input): below that threshold the smallest
    singular value is indistinguishable from rounding noise, and so is the ratio. A zero matrix
    gives inf. For a non-square ``(m, n)`` matrix, σ_min is the ``min(m, n)``-th singular value
    (as ``np.linalg.cond``). The singular values are computed in float64 whatever the dtype.

    Args:
        A: matrix of shape ``(m, n)``, non-empty, finite, real or complex.

    Returns:
        κ as a Python float ``>= 1``, or ``inf``.

    Raises:
        ValueError: if A is not a non-empty 2-D matrix, or holds NaN or inf.

    Source:
        Golub & Van Loan, Matrix Computations (2013), §2.6.2; lesson section
        "Condition number".

    Example:
        >>> condition_number(np.diag([10.0, 1.0]))
        10.0
        >>> condition_number(np.array([[1.0, 2.0], [2.0, 4.0]]))  # rank 1
        inf
        >>> round(condition_number(np.array([[3.0, 2.0], [2.0, 3.0], [0.0, 0.0]])), 6)  # 5 / 1
        5.0
    """
    ### BEGIN SOLUTION
    A = np.asarray(A)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"condition_number: A must be a non-empty 2-D matrix, got shape {A.shape}")
    if not np.issubdtype(A.dtype, np.number):
        raise ValueError(f"condition_number: A must be numeric, got dtype {A.dtype}")
    # the singularity threshold uses the precision the data came in, not the one we compute in
    eps = np.finfo(A.dtype).eps if np.issubdtype(A.dtype, np.inexact) else np.finfo(np.float64).eps
    work = A.astype(np.complex128 if np.iscomplexobj(A) else np.float64)  # (m, n)
    if not np.all(np.isfinite(work)):
        raise ValueError(f"condition_number: A of shape {A.shape} holds NaN or inf")
    S = np.linalg.svd(work, compute_uv=False)  # (min(m, n),) descending
    s_max, s_min = S[0], S[-1]
    if s_min <= max(A.shape) * eps * s_max:  # also catches the zero matrix (0 <= 0)
        return float("inf")
    return float(s_max / s_min)
    ### END SOLUTION


def is_positive_definite(A: np.ndarray) -> bool:
    """True when A is symmetric and its Cholesky factorisation ``A = L Lᵀ`` exists.

    Symmetry is checked with a relative tolerance, ``max|A − Aᵀ| <= 1e-10 · max|A|``; the
    Cholesky test then runs (in float64) on the symmetric part ``(A + Aᵀ)/2``. Cholesky
    succeeds exactly when every pivot is positive, which for a symmetric matrix means every
    eigenvalue is positive. Rounding decides borderline cases: a singular PSD matrix whose zero
    pivot comes out as a tiny positive number in floating point passes (``[[1, 1], [1, 1]]``
    has an exact zero pivot and fails).

    Args:
        A: square matrix of shape ``(n, n)``, real: bool (True as 1), integers and any float
            dtype; complex input is refused.

    Returns:
        A Python bool. Non-symmetric matrices and matrices with NaN or inf give False; so does
        the zero matrix (its first pivot is 0). The empty ``(0, 0)`` matrix is vacuously
        positive definite: True.

    Raises:
        ValueError: if A is not a square 2-D matrix, or is not real-valued.

    Source:
        Golub & Van Loan, Matrix Computations (2013), §4.2 (Cholesky); lesson section
        "Positive definiteness".

    Example:
        >>> is_positive_definite(np.array([[2.0, 1.0], [1.0, 2.0]]))  # eigenvalues 3 and 1
        True
        >>> is_positive_definite(np.array([[1.0, 2.0], [2.0, 1.0]]))  # eigenvalues 3 and -1
        False
        >>> is_positive_definite(np.array([[2.0, 1.0], [0.0, 2.0]]))  # not symmetric
        False
    """
    ### BEGIN SOLUTION
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"is_positive_definite: A must be a square matrix (n, n), got shape "
                         f"{A.shape}")
    if not (np.issubdtype(A.dtype, np.integer) or np.issubdtype(A.dtype, np.floating)
            or A.dtype == np.bool_):
        raise ValueError(f"is_positive_definite: A must be real, got dtype {A.dtype}")
    work = A.astype(np.float64)  # (n, n) LAPACK has no float16; float64 decides more cases
    if not np.all(np.isfinite(work)):
        return False
    if np.max(np.abs(work - work.T), initial=0.0) > 1e-10 * np.max(np.abs(work), initial=0.0):
        return False
    try:
        np.linalg.cholesky((work + work.T) / 2.0)  # reads the symmetric part only
    except np.linalg.LinAlgError:
        return False  # a pivot was <= 0: some eigenvalue is not positive
    return True
    ### END SOLUTION


def gram_matrix(X: np.ndarray) -> np.ndarray:
    """Gram matrix ``X Xᵀ`` of the rows of X: entry (i, j) is the dot product ``x_i · x_j``.

    It is always symmetric positive semi-definite (``vᵀ X Xᵀ v = ‖Xᵀ v‖² >= 0``), and positive
    definite exactly when the rows of X are linearly independent. The score grid ``Q Kᵀ`` with
    ``K = Q`` is such a matrix.

    Args:
        X: shape ``(n, d)``, one vector per row (a leading batch ``(..., n, d)`` is also
            accepted); integers are promoted to float64, float dtypes kept.

    Returns:
        Array of shape ``(n, n)`` (``(..., n, n)`` for batched input).

    Raises:
        ValueError: if X has fewer than 2 dimensions.

    Source:
        Golub & Van Loan, Matrix Computations (2013), §2.4 and §4.2; lesson section
        "Positive definiteness".

    Example:
        cat = [0.8, 0.3] and dog = [0.6, 0.7]: the self-similarities 0.73 and 0.85 on the
        diagonal, cat·dog = 0.69 off it.

        >>> gram_matrix(np.array([[0.8, 0.3], [0.6, 0.7]])).round(2)
        array([[0.73, 0.69],
               [0.69, 0.85]])
    """
    ### BEGIN SOLUTION
    X = np.asarray(X)
    if X.ndim < 2:
        raise ValueError(f"gram_matrix: X must have shape (n, d), got {X.shape}")
    if not np.issubdtype(X.dtype, np.inexact):
        X = X.astype(np.float64)
    return X @ np.swapaxes(X, -1, -2)  # (..., n, n)
    ### END SOLUTION


def newton_schulz_orthogonalize(G: np.ndarray, n_iter: int = 30) -> np.ndarray:
    """Approximate the orthogonal polar factor ``U Vᵀ`` of ``G = U Σ Vᵀ`` by Newton–Schulz.

    Start from ``X_0 = G / ‖G‖_F`` (so every singular value is in (0, 1]) and iterate the cubic
    ``X ← 1.5 X − 0.5 X Xᵀ X``. Each step maps every singular value s to ``1.5 s − 0.5 s³``,
    which drives it to 1 (by a factor about 1.5 while s is small, then quadratically) while
    leaving the singular vectors alone: the limit replaces Σ by the identity. The Gram product
    is formed on the smaller side — ``X (XᵀX)`` for a tall X, ``(X Xᵀ) X`` for a wide one — so
    each step costs ``O(m n min(m, n))``. For condition number κ and rank r, about
    ``log_1.5(κ √r) + 5`` steps reach double precision (the default 30 covers κ √r up to
    ~25 000). Zero singular values stay zero, so a rank-deficient G gives the partial isometry
    on its range.

    G is first divided by its largest entry, then by its Frobenius norm, so the result is
    independent of scale (``1e-12 · G`` and ``1e12 · G`` give the same result as G) and the
    norm neither underflows nor overflows. The iteration runs in float64 and the result is
    returned in G's float dtype. (Muon, Jordan et al. 2024, uses a tuned quintic instead of
    this cubic: faster in bfloat16, but it only brings singular values near 1, not to 1.)

    Args:
        G: matrix of shape ``(m, n)``, finite, tall, square or wide; integers are promoted to
            float64.
        n_iter: number of iterations, an integer >= 0.

    Returns:
        Array of shape ``(m, n)`` in G's float dtype: orthonormal columns if ``m >= n`` (rows
        if ``m < n``) for a full-rank G; ``G = 0`` gives zeros.

    Raises:
        ValueError: if G is not 2-D or not finite, or n_iter is not an integer >= 0.

    Source:
        Jordan et al. 2024, "Muon: An optimizer for hidden layers in neural networks";
        Higham, Functions of Matrices (2008), §8.3 (Newton–Schulz for the polar
        decomposition); lesson section "Orthogonality and Newton–Schulz".

    Example:
        G = R(30°) · diag(3, 1) stretches a rotation; its polar factor is the rotation:

        >>> c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
        >>> G = np.array([[c, -s], [s, c]]) @ np.diag([3.0, 1.0])
        >>> newton_schulz_orthogonalize(G).round(4)
        array([[ 0.866, -0.5  ],
               [ 0.5  ,  0.866]])
        >>> Q = newton_schulz_orthogonalize(np.array([[0.8, 0.3], [0.6, 0.7], [0.1, 0.2]]))
        >>> (Q.T @ Q).round(6) + 0.0  # tall: orthonormal columns
        array([[1., 0.],
               [0., 1.]])
    """
    ### BEGIN SOLUTION
    G = np.asarray(G)
    if G.ndim != 2:
        raise ValueError(f"newton_schulz_orthogonalize: G must be a 2-D matrix, got shape "
                         f"{G.shape}")
    is_int = isinstance(n_iter, (int, np.integer)) and not isinstance(n_iter, (bool, np.bool_))
    if not is_int or n_iter < 0:
        raise ValueError(f"newton_schulz_orthogonalize: n_iter must be an integer >= 0, got "
                         f"{n_iter!r}")
    out_dtype = G.dtype if np.issubdtype(G.dtype, np.floating) else np.dtype(np.float64)
    X = G.astype(np.float64)  # (m, n)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"newton_schulz_orthogonalize: G of shape {G.shape} holds NaN or inf")
    peak = np.max(np.abs(X), initial=0.0)
    if peak == 0.0:
        return np.zeros(G.shape, dtype=out_dtype)  # no direction to orthogonalise
    X = X / peak  # largest entry 1: the squares in the Frobenius norm cannot under/overflow
    X = X / np.linalg.norm(X)  # ‖X‖_F = 1 >= ‖X‖_2, so every singular value is <= 1
    tall = X.shape[0] >= X.shape[1]
    for _ in range(n_iter):
        if tall:
            X = 1.5 * X - 0.5 * (X @ (X.T @ X))  # (m, n); X.T @ X is (n, n), the small side
        else:
            X = 1.5 * X - 0.5 * ((X @ X.T) @ X)  # (m, n); X @ X.T is (m, m), the small side
    return X.astype(out_dtype)
    ### END SOLUTION


def sliding_window_mask(n: int, window: int, causal: bool = True) -> np.ndarray:
    """Sliding-window (local) attention mask: each query sees keys within ``window`` positions.

    Causal: query i sees keys j with ``0 <= i − j < window`` (itself and the ``window − 1``
    tokens before it). Non-causal: ``|i − j| < window`` (a band ``2·window − 1`` wide). The
    cost is O(n · window) instead of O(n²); stacking L layers lets information travel
    ``L · (window − 1)`` positions. A window ``>= n`` gives the full causal (or full) mask.

    Args:
        n: sequence length, an integer >= 0.
        window: window size, an integer >= 1 (1 = each token sees only itself).
        causal: whether to hide future keys.

    Returns:
        Bool array of shape ``(n, n)``; entry (i, j) True = query i may attend to key j.

    Raises:
        ValueError: if window is not an integer >= 1, or n is not an integer >= 0.

    Source:
        Beltagy et al. 2020, "Longformer: The Long-Document Transformer", §3.1; lesson section
        "Sparsity and sliding windows".

    Example:
        >>> sliding_window_mask(5, 2).astype(int)
        array([[1, 0, 0, 0, 0],
               [1, 1, 0, 0, 0],
               [0, 1, 1, 0, 0],
               [0, 0, 1, 1, 0],
               [0, 0, 0, 1, 1]])
        >>> sliding_window_mask(4, 2, causal=False).astype(int)
        array([[1, 1, 0, 0],
               [1, 1, 1, 0],
               [0, 1, 1, 1],
               [0, 0, 1, 1]])
    """
    ### BEGIN SOLUTION
    for name, value, low in (("n", n, 0), ("window", window, 1)):
        is_int = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if not is_int or value < low:
            raise ValueError(f"sliding_window_mask: {name} must be an integer >= {low}, "
                             f"got {value!r}")
    pos = np.arange(n)
    offset = pos[:, None] - pos[None, :]  # (n, n) i − j: how far back key j lies
    if causal:
        return (offset >= 0) & (offset < window)  # (n, n)
    return np.abs(offset) < window  # (n, n)
    ### END SOLUTION


def mask_density(mask: np.ndarray) -> float:
    """Fraction of True entries in an attention mask (1.0 = dense, small = sparse).

    Args:
        mask: array of any shape ``(...)``, non-empty; usually bool. Other dtypes count their
            nonzero entries as True (NumPy's truthiness).

    Returns:
        ``count_nonzero(mask) / mask.size`` as a Python float in [0, 1].

    Raises:
        ValueError: if the mask is empty (its density is undefined).

    Source:
        Beltagy et al. 2020 (Longformer); Zaheer et al. 2020 (BigBird); lesson section
        "Sparsity and sliding windows".

    Example:
        A causal window of w over n tokens: each query sees at most w keys, so a bit under
        w/n of all pairs, since the first w - 1 queries have fewer keys behind them: the
        density is ``(w(w + 1)/2 + (n - w) w) / n²``, 0.1172 for w = 512 over n = 4096 (a bit
        under 1/8). At w = 8 over n = 64, (36 + 448)/4096:

        >>> round(mask_density(sliding_window_mask(64, 8)), 4)
        0.1182
        >>> mask_density(sliding_window_mask(5, 5))  # full causal: 15 of 25
        0.6
    """
    ### BEGIN SOLUTION
    mask = np.asarray(mask)
    if mask.size == 0:
        raise ValueError(f"mask_density: the mask of shape {mask.shape} is empty")
    return float(np.count_nonzero(mask) / mask.size)
    ### END SOLUTION
