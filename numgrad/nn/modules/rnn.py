"""RNN, LSTM, GRU and their cells: torch's parameter names, initialisation, checks and shapes; the recurrence
runs step by step from tensor ops (nn/_rnn.py), so autograd gives the gradients."""
import math
import numbers
import warnings

from .. import init
from .._rnn import CELLS, run_layers, zeros_state
from .._linear import linear
from ..module import Module
from ._factory import empty_parameter

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_sizes(dropout, num_layers, bias, batch_first, input_size, hidden_size, proj_size):
    """RNNBase's argument checks, in torch's order."""
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        _check_sizes(dropout, num_layers, bias, batch_first, input_size, hidden_size, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input)), ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, empty_parameter(*shape, dtype=dtype, device=device))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer_weights(self):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) per layer and direction, None where absent."""
        directions = 2 if self.bidirectional else 1
        out = []
        for layer in range(self.num_layers):
            for direction in range(directions):
                suffix = f"{layer}{'_reverse' if direction else ''}"
                out.append(tuple(self._parameters.get(f"{kind}_l{suffix}")
                                 for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")))
        return out

    def check_input(self, input):
        weight_dtype = self._parameters[self._flat_weights_names[0]].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert "
                             f"input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def get_expected_hidden_size(self, input):
        mini_batch = input.shape[0] if self.batch_first else input.shape[1]
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, mini_batch, self.proj_size if self.proj_size > 0 else self.hidden_size)

    @staticmethod
    def check_hidden_size(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _prepare(self, input, hx, name):
        """The input made batched; hx checked for rank and made batched (None stays None)."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             f"{'tensor ' if name == 'RNN' else ''}instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            if not is_batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not is_batched:
                hx = hx.unsqueeze(1)
        return input, hx, is_batched

    def _run(self, input, hidden):
        """The stacked recurrence on a batched input in the module's layout."""
        seq_first = input.transpose(0, 1) if self.batch_first else input
        output, hidden = run_layers(self.mode, seq_first, hidden, self._layer_weights(), self.num_layers,
                                    2 if self.bidirectional else 1, self.dropout, self.training)
        return (output.transpose(0, 1) if self.batch_first else output), hidden

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare(input, hx, "RNN" if self.mode.startswith("RNN") else self.mode)
        if hx is None:
            rows = self.num_layers * (2 if self.bidirectional else 1)
            hx = zeros_state(rows, input.shape[0 if self.batch_first else 1], self.hidden_size, input)
        self.check_input(input)
        self.check_hidden_size(hx, self.get_expected_hidden_size(input))
        output, hidden = self._run(input, hx)
        if not is_batched:
            output, hidden = output.squeeze(0 if self.batch_first else 1), hidden.squeeze(1)
        return output, hidden

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        rows = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            batch = input.shape[batch_dim]
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (zeros_state(rows, batch, real_hidden, input), zeros_state(rows, batch, self.hidden_size, input))
        else:
            want = 3 if is_batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D input, hx and cx should also be 3-D" if is_batched else \
                    "unbatched 2-D input, hx and cx should also be 2-D"
                raise RuntimeError(f"For {kind} but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_input(input)
        self.check_hidden_size(hx[0], self.get_expected_hidden_size(input), "Expected hidden[0] size {}, got {}")
        cell_size = (rows, input.shape[batch_dim], self.hidden_size)
        self.check_hidden_size(hx[1], cell_size, "Expected hidden[1] size {}, got {}")
        output, (h, c) = self._run(input, hx)
        if not is_batched:
            output, h, c = output.squeeze(batch_dim), h.squeeze(1), c.squeeze(1)
        return output, (h, c)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = empty_parameter(num_chunks * hidden_size, input_size, dtype=dtype, device=device)
        self.weight_hh = empty_parameter(num_chunks * hidden_size, hidden_size, dtype=dtype, device=device)
        if bias:
            self.bias_ih = empty_parameter(num_chunks * hidden_size, dtype=dtype, device=device)
            self.bias_hh = empty_parameter(num_chunks * hidden_size, dtype=dtype, device=device)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, states):
        """torch's cell checks: the input's width, then each state's batch and width."""
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        for i, state in enumerate(states):
            if input.shape[0] != state.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{state.shape[0]}")
            if state.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {state.shape[1]}, expected "
                                   f"{self.hidden_size}")

    def _batched(self, name, input, hx, count):
        """The input and states made 2-D (zeros where hx is None), and whether the input was batched."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = None if hx is None else ((hx,) if count == 1 else tuple(hx))
        for i, state in enumerate(states or ()):
            if state.dim() not in (1, 2):
                what = "hidden" if count == 1 else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {state.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if states is None:
            zeros = zeros_state(1, input.shape[0], self.hidden_size, input)[0]
            states = (zeros,) * count
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        self._check(input, states)
        return input, states, is_batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._batched("RNNCell", input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        cell = CELLS["RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"]
        out = cell(linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, state, is_batched = self._batched("LSTMCell", input, hx, 2)
        h, c = CELLS["LSTM"](linear(input, self.weight_ih, self.bias_ih), state, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._batched("GRUCell", input, hx, 1)
        out = CELLS["GRU"](linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)
