"""RNN, LSTM, GRU and RNNCell, LSTMCell, GRUCell against torch with torch's weights: outputs, final states,
input, state and parameter gradients, parameter names and init bounds, reprs, float64 gradchecks, errors."""
import warnings

import numpy as np
import pytest
import torch

import numgrad
from numgrad.testing import gradcheck
from helpers.nn_compare import assert_same, compare_grads, rand, twin

LAYERS = {
    "rnn": ("RNN", dict(input_size=3, hidden_size=4)),
    "rnn_relu_two_layers": ("RNN", dict(input_size=3, hidden_size=4, num_layers=2, nonlinearity="relu")),
    "rnn_bidirectional_batch_first": ("RNN", dict(input_size=3, hidden_size=4, bidirectional=True,
                                                  batch_first=True)),
    "lstm": ("LSTM", dict(input_size=3, hidden_size=4)),
    "lstm_stacked_bidirectional": ("LSTM", dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True)),
    "lstm_proj": ("LSTM", dict(input_size=3, hidden_size=5, proj_size=2, num_layers=2, bidirectional=True)),
    "lstm_no_bias_batch_first": ("LSTM", dict(input_size=3, hidden_size=4, bias=False, batch_first=True)),
    "gru": ("GRU", dict(input_size=3, hidden_size=4)),
    "gru_stacked_bidirectional": ("GRU", dict(input_size=3, hidden_size=4, num_layers=3, bidirectional=True)),
    "gru_no_bias": ("GRU", dict(input_size=3, hidden_size=4, bias=False, batch_first=True)),
}


def _states(kind, kwargs, batch, seed, dtype, batched=True):
    """h0 (and c0) of the right shape, as numpy arrays."""
    rows = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    width = kwargs.get("proj_size") or kwargs["hidden_size"]
    shape_h = (rows, batch, width) if batched else (rows, width)
    h = rand(*shape_h, seed=seed, dtype=dtype)
    if kind != "LSTM":
        return h
    shape_c = (rows, batch, kwargs["hidden_size"]) if batched else (rows, kwargs["hidden_size"])
    return (h, rand(*shape_c, seed=seed + 1, dtype=dtype))


def _to(lib, value):
    if isinstance(value, tuple):
        return tuple(lib.tensor(v, requires_grad=True) for v in value)
    return lib.tensor(value, requires_grad=True)


def _flat(value):
    return list(value) if isinstance(value, tuple) else [value]


def _run(lib, module, x, hx):
    xs = lib.tensor(x, requires_grad=True)
    h = None if hx is None else _to(lib, hx)
    out, state = module(xs, h) if h is not None else module(xs)
    loss = (out * lib.tensor(rand(*out.shape, seed=11, dtype=x.dtype))).sum()
    for i, s in enumerate(_flat(state)):
        loss = loss + (s * lib.tensor(rand(*s.shape, seed=12 + i, dtype=x.dtype))).sum()
    loss.backward()
    return [out] + _flat(state), [xs.grad] + ([] if h is None else [t.grad for t in _flat(h)])


def _compare(kind, kwargs, x, hx, dtype):
    ours, theirs = twin(lambda lib: getattr(lib.nn, kind)(**kwargs))
    if dtype == np.float64:
        ours.double()
        theirs.double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    our_values, our_grads = _run(numgrad, ours, x, hx)
    their_values, their_grads = _run(torch, theirs, x, hx)
    for a, b in zip(our_values + our_grads, their_values + their_grads, strict=True):
        assert_same(a, b, **tol)
    compare_grads(ours, theirs, **tol)


@pytest.mark.parametrize("with_state", [False, True], ids=["zeros", "given"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch(name, dtype, with_state):
    kind, kwargs = LAYERS[name]
    x = rand(5, 2, 3, seed=1, dtype=dtype)  # (seq, batch, features), or (batch, seq, features) with batch_first
    if kwargs.get("batch_first"):
        x = rand(2, 5, 3, seed=1, dtype=dtype)
    _compare(kind, kwargs, x, _states(kind, kwargs, 2, 3, dtype) if with_state else None, dtype)


@pytest.mark.parametrize("name", ["rnn_relu_two_layers", "lstm_proj", "gru_no_bias"])
def test_unbatched_input_matches_torch(name):
    kind, kwargs = LAYERS[name]
    x = rand(5, 3, seed=2)
    _compare(kind, kwargs, x, None, np.float32)
    _compare(kind, kwargs, x, _states(kind, kwargs, None, 4, np.float32, batched=False), np.float32)


def test_dropout_between_layers():
    """Dropout acts between layers in training only: p=1 zeroes the second layer's input; eval skips it."""
    lstm = numgrad.nn.LSTM(3, 4, num_layers=2, dropout=1.0)
    without = numgrad.nn.LSTM(3, 4, num_layers=2)
    without.load_state_dict(lstm.state_dict())
    second = numgrad.nn.LSTM(4, 4)  # the second layer alone
    second.load_state_dict({k.replace("l1", "l0"): v for k, v in lstm.state_dict().items() if "l1" in k})
    x = numgrad.tensor(rand(5, 2, 3, seed=1))
    np.testing.assert_allclose(lstm(x)[0].detach().numpy(), second(numgrad.zeros(5, 2, 4))[0].detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    lstm.eval()
    np.testing.assert_allclose(lstm(x)[0].detach().numpy(), without(x)[0].detach().numpy(), rtol=1e-6)


def test_init_bounds_and_names():
    for kind in ("RNN", "LSTM", "GRU"):
        module = getattr(numgrad.nn, kind)(3, 16, num_layers=2, bidirectional=True)
        reference = getattr(torch.nn, kind)(3, 16, num_layers=2, bidirectional=True)
        assert [(n, tuple(p.shape)) for n, p in module.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in reference.named_parameters()]
        values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
        assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24  # U(-1/sqrt(16), 1/sqrt(16))
        assert len(module.all_weights) == 4 and len(module.all_weights[0]) == 4


CELLS = {
    "rnn_cell": ("RNNCell", dict(input_size=3, hidden_size=4), 1),
    "rnn_cell_relu_no_bias": ("RNNCell", dict(input_size=3, hidden_size=4, bias=False, nonlinearity="relu"), 1),
    "lstm_cell": ("LSTMCell", dict(input_size=3, hidden_size=4), 2),
    "gru_cell": ("GRUCell", dict(input_size=3, hidden_size=4), 1),
    "gru_cell_no_bias": ("GRUCell", dict(input_size=3, hidden_size=4, bias=False), 1),
}


def _run_cell(lib, module, x, hx):
    xs = lib.tensor(x, requires_grad=True)
    h = None if hx is None else _to(lib, hx)
    out = module(xs, h) if h is not None else module(xs)
    loss = 0
    for i, s in enumerate(_flat(out)):
        loss = loss + (s * lib.tensor(rand(*s.shape, seed=20 + i, dtype=x.dtype))).sum()
    loss.backward()
    return _flat(out), [xs.grad] + ([] if h is None else [t.grad for t in _flat(h)])


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_state", [False, True], ids=["zeros", "given"])
@pytest.mark.parametrize("name", list(CELLS))
def test_cell_matches_torch(name, with_state, batched):
    kind, kwargs, count = CELLS[name]
    ours, theirs = twin(lambda lib: getattr(lib.nn, kind)(**kwargs).double())
    assert list(ours.state_dict()) == list(theirs.state_dict()) and repr(ours) == repr(theirs)
    lead = (2,) if batched else ()
    x = rand(*lead, 3, seed=1, dtype=np.float64)
    hx = None
    if with_state:
        states = tuple(rand(*lead, 4, seed=5 + i, dtype=np.float64) for i in range(count))
        hx = states if count == 2 else states[0]
    our_values, our_grads = _run_cell(numgrad, ours, x, hx)
    their_values, their_grads = _run_cell(torch, theirs, x, hx)
    for a, b in zip(our_values + our_grads, their_values + their_grads, strict=True):
        assert_same(a, b, rtol=1e-10, atol=1e-12)
    compare_grads(ours, theirs, rtol=1e-10, atol=1e-12)


def test_gradcheck():
    for kind in ("RNN", "LSTM", "GRU"):
        module = getattr(numgrad.nn, kind)(2, 3, num_layers=2, bidirectional=True).double()
        x = numgrad.tensor(rand(3, 2, 2, seed=1, dtype=np.float64), requires_grad=True)
        assert gradcheck(lambda t: module(t)[0], (x,))
    cell = numgrad.nn.LSTMCell(2, 3).double()
    h = numgrad.tensor(rand(2, 3, seed=2, dtype=np.float64), requires_grad=True)
    x = numgrad.tensor(rand(2, 2, seed=3, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda a, b: cell(a, (b, b))[1], (x, h))


ERRORS = [
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="gelu"),
    lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    lambda lib: lib.nn.LSTM(3, 0),
    lambda lib: lib.nn.LSTM(3, 4.0),
    lambda lib: lib.nn.LSTM(3, 4, num_layers=0),
    lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    lambda lib: lib.nn.LSTM(3, 4, bias=1),
    lambda lib: lib.nn.RNN(3, 4)(lib.randn(2, 3, 4, 3)),
    lambda lib: lib.nn.RNN(3, 4)(lib.randn(5, 2, 2)),
    lambda lib: lib.nn.RNN(3, 4)(lib.randn(5, 2, 3, dtype=lib.float64)),
    lambda lib: lib.nn.RNN(3, 4)(lib.randn(5, 2, 3), lib.randn(1, 3, 4)),
    lambda lib: lib.nn.RNN(3, 4)(lib.randn(5, 2, 3), lib.randn(3, 4)),
    lambda lib: lib.nn.GRU(3, 4)(lib.randn(5, 3), lib.randn(1, 1, 4)),
    lambda lib: lib.nn.LSTM(3, 4)(lib.randn(5, 2, 3), (lib.randn(1, 2, 4), lib.randn(1, 2, 3))),
    lambda lib: lib.nn.LSTM(3, 4)(lib.randn(5, 2, 3), (lib.randn(2, 4), lib.randn(1, 2, 4))),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=2)(lib.randn(5, 2, 3), (lib.randn(1, 2, 4), lib.randn(1, 2, 4))),
    lambda lib: lib.nn.LSTM(3, 4)(lib.randn(5)),
    lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 2, 3)),
    lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 3), lib.randn(2, 2, 4)),
    lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 5)),
    lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 3), lib.randn(3, 4)),
    lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(2, 4), lib.randn(2, 5))),
    lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(2, 4), lib.randn(1, 2, 4))),
    lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="gelu")(lib.randn(2, 3)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    outcomes = []
    for lib in (numgrad, torch):
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        outcomes.append((type(info.value), str(info.value)))
    assert outcomes[0] == outcomes[1]


def test_single_layer_dropout_warns_as_torch():
    messages = []
    for lib in (numgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.GRU(3, 4, dropout=0.2)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and messages[0]


def test_grad_fn_names_match_torch():
    """The outputs end in torch's nodes (a one-direction LSTM is left out: torch runs it through oneDNN, whose
    MkldnnRnnLayerBackward0 node is a backend's, not the op's)."""
    names = []
    for lib in (numgrad, torch):
        found = []
        for module in (lib.nn.RNN(3, 4), lib.nn.GRU(3, 4, num_layers=2), lib.nn.LSTM(3, 4, bidirectional=True)):
            out, state = module(lib.randn(5, 2, 3))
            found += [type(out.grad_fn).__name__, type(_flat(state)[0].grad_fn).__name__]
        for cell in (lib.nn.RNNCell(3, 4), lib.nn.LSTMCell(3, 4), lib.nn.GRUCell(3, 4)):
            found += [type(t.grad_fn).__name__ for t in _flat(cell(lib.randn(2, 3)))]
        names.append(found)
    assert names[0] == names[1]
