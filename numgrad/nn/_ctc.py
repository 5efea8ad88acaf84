"""ctc_loss: torch's CPU algorithm, the alpha recursion in log space forward and alpha-beta backward, per sample
over the host arrays (torch's CtcLossBackward0 node; its gradient assumes log-softmax inputs, as torch's does)."""
import functools

import numpy as np

from .._core import dtypes
from ..kernels import dispatch
from ..node import record
from ..ops.functional import where
from ._common import check_reduction, constant, new_tensor

_CHECKED = " (while checking arguments for ctc_loss_allocate_outputs)"


def _log_add(*terms):
    """torch's log-sum-exp of a few terms, elementwise (a maximum of -inf reads as 0)."""
    top = functools.reduce(np.maximum, terms)
    top = np.where(top == -np.inf, 0, top).astype(terms[0].dtype)
    with np.errstate(invalid="ignore"):
        return np.log(sum(np.exp(t - top) for t in terms)) + top


def _lengths(lengths, name, batch):
    if hasattr(lengths, "_data"):
        lengths = dispatch.to_host(lengths._data).reshape(-1)
    values = [int(v) for v in ([lengths] if isinstance(lengths, int) else lengths)]
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return values


def _check_targets(targets, batch, lengths):
    """torch's checks of padded (batch, S) or concatenated targets against the target lengths."""
    if targets.ndim == 1:
        if targets.shape[0] != sum(lengths):
            raise RuntimeError(f"Expected tensor to have size {sum(lengths)} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets'" + _CHECKED)
        return
    if targets.shape[0] != batch:
        raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size {targets.shape[0]} "
                           "for argument #2 'targets'" + _CHECKED)
    if targets.shape[1] < max(lengths, default=0):
        raise RuntimeError(f"Expected tensor to have size at least {max(lengths)} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets'" + _CHECKED)


def _extended(targets, offsets, lengths, b, blank):
    """The target of sample b with blanks around and between its labels (torch's l')."""
    labels = targets[b, :lengths[b]] if targets.ndim == 2 else targets[offsets[b]:offsets[b] + lengths[b]]
    ext = np.full(2 * lengths[b] + 1, blank, np.int64)
    ext[1::2] = labels
    return ext


def _skips(ext, blank):
    """Where the recursion may also come from two labels back: a label unlike the one two before it."""
    skip = np.zeros(ext.size, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    return skip


def _alpha(lp, ext, skip, length):
    neg = np.full(ext.size, -np.inf, lp.dtype)
    alpha = np.full((max(length, 1), ext.size), -np.inf, lp.dtype)
    if length:
        alpha[0, 0] = lp[0, ext[0]]
        if ext.size > 1:
            alpha[0, 1] = lp[0, ext[1]]
    for t in range(1, length):
        prev = alpha[t - 1]
        one = np.concatenate([neg[:1], prev[:-1]])
        two = np.where(skip, np.concatenate([neg[:2], prev[:-2]]), -np.inf).astype(lp.dtype)
        alpha[t] = _log_add(prev, one, two) + lp[t, ext]
    return alpha


def _beta(lp, ext, skip, length):
    neg = np.full(ext.size, -np.inf, lp.dtype)
    beta = np.full((max(length, 1), ext.size), -np.inf, lp.dtype)
    if length:
        beta[length - 1, -1] = lp[length - 1, ext[-1]]
        if ext.size > 1:
            beta[length - 1, -2] = lp[length - 1, ext[-2]]
    skip_ahead = np.zeros(ext.size, bool)  # whether s may go on to s + 2
    skip_ahead[:-2] = skip[2:]
    for t in range(length - 2, -1, -1):
        nxt = beta[t + 1]
        one = np.concatenate([nxt[1:], neg[:1]])
        two = np.where(skip_ahead, np.concatenate([nxt[2:], neg[:2]]), -np.inf).astype(lp.dtype)
        beta[t] = _log_add(nxt, one, two) + lp[t, ext]
    return beta


def _nll(alpha, length):
    last = alpha[length - 1] if length else np.full(alpha.shape[1], -np.inf, alpha.dtype)
    ends = (last[-1], last[-2] if last.size > 1 else alpha.dtype.type(-np.inf))
    return -_log_add(*(np.asarray(e) for e in ends))


def _ctc_arrays(lp, targets, input_lengths, target_lengths, blank):
    """Per-sample negative log likelihoods, and what backward needs (the alphas)."""
    offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
    losses, saved = np.empty(lp.shape[1], lp.dtype), []
    for b in range(lp.shape[1]):
        ext = _extended(targets, offsets, target_lengths, b, blank)
        skip = _skips(ext, blank)
        alpha = _alpha(lp[:, b], ext, skip, input_lengths[b])
        losses[b] = _nll(alpha, input_lengths[b])
        saved.append((ext, skip, alpha))
    return losses, saved


def _ctc_backward(node, g):
    lp, saved, lengths = node.saved("log_probs"), node.saved("saved"), node.saved("input_lengths")
    losses, zero_infinity = node.saved("losses"), node.saved("zero_infinity")
    gout = dispatch.to_host(g._data).reshape(-1)
    grad = np.zeros(lp.shape, lp.dtype)
    for b, (ext, skip, alpha) in enumerate(saved):
        length, nll = lengths[b], losses[b]
        if not length or (zero_infinity and nll == np.inf):
            continue
        beta = _beta(lp[:, b], ext, skip, length)
        lcab = np.full((length, lp.shape[2]), -np.inf, lp.dtype)
        both = alpha[:length] + beta
        for s, c in enumerate(ext):  # log-sum of alpha * beta over the positions holding class c
            lcab[:, c] = _log_add(lcab[:, c], both[:, s])
        sample = lp[:length, b]
        with np.errstate(over="ignore", invalid="ignore"):
            grad[:length, b] = (np.exp(sample) - np.exp(lcab + nll - sample)) * gout[b]
    out = constant(dispatch.place(grad, node.saved("device")))
    return (out if node.saved("batched") else out.squeeze(1),)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    check_reduction(reduction)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_lengths = _lengths(input_lengths, "input_lengths", batch)
    tg_lengths = _lengths(target_lengths, "target_lengths", batch)
    tg = dispatch.to_host(targets._data).astype(np.int64)
    _check_targets(tg if batched or tg.ndim != 1 else tg.reshape(1, -1), batch, tg_lengths)
    for length in in_lengths:
        if length > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {length}"
                               + _CHECKED)
    host = dispatch.to_host(lp._data)
    losses, saved = _ctc_arrays(host, tg if batched or tg.ndim != 1 else tg.reshape(1, -1), in_lengths, tg_lengths,
                                blank)
    device = log_probs.device  # (computed on the host: the result and the gradient go back to the input's device)
    res = new_tensor(dispatch.place(losses, device), log_probs._dtype)
    if log_probs.requires_grad:
        record("CtcLossBackward0", _ctc_backward, [log_probs], [res],
               {"log_probs": host, "saved": saved, "input_lengths": in_lengths, "losses": losses,
                "zero_infinity": zero_infinity, "batched": batched, "device": device})
    if zero_infinity:
        res = where(res == np.inf, new_tensor(dispatch.place(np.zeros((), losses.dtype), device), log_probs._dtype),
                    res)
    if reduction == "mean":
        lengths = np.maximum(np.asarray(tg_lengths, losses.dtype), 1)
        return (res / new_tensor(dispatch.place(lengths, device), dtypes.from_numpy_dtype(losses.dtype))).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)
