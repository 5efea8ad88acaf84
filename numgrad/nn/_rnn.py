"""The recurrent cells' step functions (one time step each, from linear and elementwise ops) and the layer loop
shared by RNN, LSTM and GRU: layers, directions, inter-layer dropout."""
from ..ops import creation
from ..ops.join import cat, stack
from ._dropout import dropout
from ._linear import linear


def rnn_tanh_cell(x_proj, h, w_hh, b_hh):
    return (x_proj + linear(h, w_hh, b_hh)).tanh()


def rnn_relu_cell(x_proj, h, w_hh, b_hh):
    return (x_proj + linear(h, w_hh, b_hh)).relu()


def lstm_cell(x_proj, state, w_hh, b_hh, w_hr=None):
    """x_proj: the input's projection (x W_ih^T + b_ih); state: (h, c). Gates in torch's order i, f, g, o."""
    h, c = state
    i, f, g, o = (x_proj + linear(h, w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else linear(h, w_hr)), c


def gru_cell(x_proj, h, w_hh, b_hh):
    """Gates in torch's order r, z, n; the reset gate scales the hidden state's projection, bias included."""
    x_r, x_z, x_n = x_proj.chunk(3, -1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, -1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return (1 - z) * n + z * h


CELLS = {"RNN_TANH": rnn_tanh_cell, "RNN_RELU": rnn_relu_cell, "LSTM": lstm_cell, "GRU": gru_cell}


def _run_direction(mode, inputs, state, weights, reverse):
    """One layer in one direction over (T, B, F) inputs: the per-step outputs (T, B, H) and the final state."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    projected = linear(inputs, w_ih, b_ih).unbind(0)  # every step's input projection in one product
    cell = CELLS[mode]
    extra = (w_hr,) if mode == "LSTM" else ()
    outputs = [None] * len(projected)
    for t in (reversed(range(len(projected))) if reverse else range(len(projected))):
        state = cell(projected[t], state, w_hh, b_hh, *extra)
        outputs[t] = state[0] if mode == "LSTM" else state
    return stack(outputs, 0), state


def run_layers(mode, inputs, hidden, weights, num_layers, num_directions, dropout_p, training):
    """The stacked recurrence over (T, B, F) inputs. `hidden` is h0 (layers * directions, B, H), or (h0, c0) for an
    LSTM; `weights[layer * num_directions + direction]` is (w_ih, w_hh, b_ih, b_hh, w_hr). Returns the last
    layer's outputs and the final states in h0's layout."""
    lstm = mode == "LSTM"
    final_h, final_c = [], []
    layer_input = inputs
    for layer in range(num_layers):
        outputs = []
        for direction in range(num_directions):
            k = layer * num_directions + direction
            state = (hidden[0][k], hidden[1][k]) if lstm else hidden[k]
            out, state = _run_direction(mode, layer_input, state, weights[k], direction == 1)
            outputs.append(out)
            if lstm:
                final_h.append(state[0])
                final_c.append(state[1])
            else:
                final_h.append(state)
        layer_input = outputs[0] if num_directions == 1 else cat(outputs, -1)
        if dropout_p > 0 and training and layer < num_layers - 1:
            layer_input = dropout(layer_input, dropout_p, True)
    h_n = stack(final_h, 0)
    return layer_input, ((h_n, stack(final_c, 0)) if lstm else h_n)


def zeros_state(rows, batch, size, like):
    return creation.zeros(rows, batch, size, dtype=like.dtype, device=like.device)
