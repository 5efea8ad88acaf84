"""torch's CPU batch_norm / layer_norm arithmetic, step by step, so that infinities and NaNs land where its do."""
import numpy as np

# torch 2.13's layer_norm moments use 256-bit vectors (8 float32 or 4 float64 lanes), as measured: a row of
# 8 float32s merges its lanes with c = 1 and m0 = 0 (a NaN from inf * 0) where a row of 9 does not
_VECTOR_BYTES = 32
_CHUNK = 16  # moments_utils.h's kChunkSize


def _ceil_log2(m):
    """utils::CeilLog2, which is 1 for m <= 2."""
    return 1 if m <= 2 else int(m - 1).bit_length()


def _add_moments(m0_add, m1_add, m2_add, m0, m1, m2):
    """AddMoments: merges (m0_add, m1_add, m2_add) into (m0, m1, m2) in the input's precision."""
    t = m1.dtype.type
    n = m0 + m0_add
    c = t(0) if n == 0 else t(m0_add) / t(n)
    delta = m1_add - m1
    return n, m1 + c * delta, m2 + (m2_add + delta * delta * c * t(m0))


def _vector_moments(x, n, lanes):
    """RowwiseMomentsImpl's vector part: Welford over chunks of 16 vectors, merged by a cascade stack."""
    t = x.dtype.type
    rows = x.shape[0]
    m = -(-n // _CHUNK)
    depth = _ceil_log2(m)
    zero = np.zeros((rows, lanes), x.dtype)
    stack = [[0, zero, zero] for _ in range(depth)]
    for i in range(m):
        count = min(_CHUNK, n - i * _CHUNK)
        m1, m2 = zero, zero
        for j in range(count):
            v = x[:, (i * _CHUNK + j) * lanes:(i * _CHUNK + j + 1) * lanes]
            delta = v - m1
            m1 = m1 + delta * (t(1) / t(j + 1))
            m2 = m2 + delta * (v - m1)
        # a chunk merged into an empty slot is taken as it is (measured: no 0 * inf NaN there, unlike the
        # scalar merge of the lanes below)
        stack[0] = [count, m1, m2] if stack[0][0] == 0 else list(_add_moments(count, m1, m2, *stack[0]))
        mask, j = i + 1, 1
        while j < depth and (mask & 1) == 0:
            stack[j] = list(stack[j - 1]) if stack[j][0] == 0 else list(_add_moments(*stack[j - 1], *stack[j]))
            stack[j - 1] = [0, zero, zero]
            mask >>= 1
            j += 1
    for i in range(1, depth):
        stack[0] = list(_add_moments(*stack[i], *stack[0]))
    return stack[0][1], stack[0][2]


@np.errstate(all="ignore")  # IEEE results (inf, NaN) without NumPy's warnings: torch is silent
def rowwise_moments(x):
    """RowwiseMoments over each row of a 2-d array: (mean, biased variance), as layer_norm computes them."""
    t = x.dtype.type
    rows, size = x.shape
    lanes = _VECTOR_BYTES // x.itemsize
    n = size // lanes
    m1_lanes, m2_lanes = _vector_moments(x, n, lanes) if n else (np.zeros((rows, lanes), x.dtype),) * 2
    m0, m1, m2 = 0, np.zeros(rows, x.dtype), np.zeros(rows, x.dtype)
    for i in range(n * lanes, size):  # the tail, one element at a time
        delta = x[:, i] - m1
        m0 += 1
        m1 = m1 + delta / t(m0)
        m2 = m2 + delta * (x[:, i] - m1)
    for lane in range(lanes):  # every lane merged, even with n == 0 (0 * inf there gives torch's NaN)
        m0, m1, m2 = _add_moments(n, m1_lanes[:, lane], m2_lanes[:, lane], m0, m1, m2)
    return m1, m2 / t(size)


def needs_exact_moments(x):
    """Rows whose squares may overflow (or hold inf/NaN) are where torch's Welford order shows; elsewhere a
    plain mean and variance agree with it to rounding."""
    limit = 1e15 if x.dtype == np.float32 else 1e150
    return ~(np.abs(x) < limit).all(axis=1)


@np.errstate(all="ignore")
def layer_norm_backward(dy, x, mean, rstd, gamma, want):
    """layer_norm_backward_frame over rows (2-d dy and x, 1-d mean and rstd, gamma 1-d or None); `want` is
    the (input, weight, bias) mask. Returns 2-d dx, 1-d dgamma and dbeta (or None)."""
    t = x.dtype.type
    a, mean = rstd[:, None], mean[:, None]
    dx = dgamma = dbeta = None
    if want[1]:
        dgamma = (dy * (a * x + (-a * mean))).sum(axis=0)
    if want[2]:
        dbeta = dy.sum(axis=0)
    if want[0]:
        scale = t(1) / t(x.shape[1])
        gdy = dy if gamma is None else dy * gamma
        ds = (gdy * x).sum(axis=1, keepdims=True)
        db = gdy.sum(axis=1, keepdims=True)
        b = (db * mean - ds) * a * a * a * scale
        c = -b * mean - db * a * scale
        dx = a * gdy + b * x + c
    return dx, dgamma, dbeta


@np.errstate(all="ignore")
def batch_norm_backward(dy, x, mean, invstd, weight, training, want):
    """batch_norm_cpu_backward_contiguous_impl on (batch, channel, plane) arrays; mean and invstd per channel.
    Plane sums are in the input's precision, summed over the batch in double (torch's accscalar_t)."""
    t = x.dtype.type
    count = x.shape[0] * x.shape[2]
    mean3, invstd3 = mean[None, :, None], invstd[None, :, None]
    total = dy.sum(axis=2, dtype=x.dtype).astype(np.float64).sum(axis=0)
    dotp = ((x - mean3) * dy).sum(axis=2, dtype=x.dtype).astype(np.float64).sum(axis=0)
    w = np.ones(x.shape[1], x.dtype) if weight is None else weight
    dx = None
    if want[0]:
        if training:
            k = (dotp.astype(x.dtype) * invstd * invstd / t(count))[None, :, None]
            grad_mean = (total / count).astype(x.dtype)[None, :, None]
            dx = (dy - grad_mean - (x - mean3) * k) * invstd3 * w[None, :, None]
        else:
            dx = dy * invstd3 * w[None, :, None]
    dweight = (dotp * invstd).astype(x.dtype) if want[1] else None
    dbias = total.astype(x.dtype) if want[2] else None
    return dx, dweight, dbias
