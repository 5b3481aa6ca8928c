"""Recurrent layers: RNN (tanh / relu), LSTM (optional projection), GRU, and their single-step cells.

Parameters are registered in PyTorch's order (weight_ih_l{k}{_reverse}, weight_hh_l{k}, bias_ih_l{k},
bias_hh_l{k}, weight_hr_l{k}) and drawn uniform(-1/sqrt(hidden), 1/sqrt(hidden)) in that order, so a
seeded model equals PyTorch's.  The recurrence is a composite of differentiable glassgrad ops: the
input projection of a whole layer/direction is one matmul, then each time step does one matmul with
the recurrent weight and the gate nonlinearities (PyTorch's gate order: LSTM i,f,g,o; GRU r,z,n); the
recurrence of one layer and direction is ops/rnn.py's _run_direction.
Where PyTorch's CPU LSTM runs its oneDNN kernel (float32, padded input, no projection) each layer and
direction is instead one fused node, ops/rnn.py's MkldnnRnnLayerBackward0 (see RNNBase._fused).

Padded and packed inputs share one code path: a batch of sequences is a list of time steps, step t
holding the first batch_sizes[t] sequences (for a padded input every step holds the whole batch).
"""
import math
import numbers
import warnings

from .module import Module
from ..parameter import Parameter
from .. import init
from ..functional._attention import _at_dropout   # ATen's CPU dropout: what the RNN kernels call between layers
from ..._dtype import float32
from ...ops.creation import empty, zeros
from ...ops.rnn import lstm_layer, _run_direction, _step_rnn, _step_lstm, _step_gru
from ...ops.addmm import linear as _linear
from ...ops.shape import cat, stack

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNBase(Module):
    """Shared constructor, parameter layout, checks and the multi-layer driver of RNN/LSTM/GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        D = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        for nm, v, typ in (("bias", bias, bool), ("batch_first", batch_first, bool),
                           ("input_size", input_size, int)):
            if not isinstance(v, typ):
                raise TypeError(f"{nm} should be of type {typ.__name__}, got: {type(v).__name__}")
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
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gates is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gates * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(D):
                in_size = input_size if layer == 0 else real_hidden * D
                sfx = "_reverse" if direction == 1 else ""
                entries = [("weight_ih_l", (gate_size, in_size)), ("weight_hh_l", (gate_size, real_hidden))]
                if bias:
                    entries += [("bias_ih_l", (gate_size,)), ("bias_hh_l", (gate_size,))]
                if proj_size > 0:
                    entries += [("weight_hr_l", (proj_size, hidden_size))]
                names = []
                for base, shape in entries:
                    name = f"{base}{layer}{sfx}"
                    setattr(self, name, Parameter(empty(shape, **fk)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    def __getstate__(self):             # torch's RNNs keep the weight list in their pickled state
        state = super().__getstate__()
        state["_flat_weights"] = self._flat_weights
        return state

    def __setstate__(self, state):      # (here it is a property over _flat_weights_names)
        state = {k: v for k, v in state.items() if k not in ("_flat_weights", "_flat_weight_refs")}
        super().__setstate__(state)

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self):
        """A no-op on CPU (PyTorch flattens cuDNN weights)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

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

    # -- checks (PyTorch's messages) ------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                             f"Convert input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        D = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * D, mini_batch, h)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -- the multi-layer driver ------------------------------------------------------------------------
    def _step(self):
        return {"LSTM": _step_lstm, "GRU": _step_gru, "RNN_TANH": _step_rnn("tanh"),
                "RNN_RELU": _step_rnn("relu")}[self.mode]

    def _fused(self, x, bs, hx, cx):
        """Whether each layer/direction runs as one fused node (ops/rnn.py): where PyTorch's CPU LSTM uses its
        oneDNN kernel -- float32, padded (not packed) input, no projection, a non-empty input.  The other
        cases run the per-step composite, whose grad_fn names are then the ones torch shows."""
        if self.mode != "LSTM" or bs is not None or self.proj_size > 0 or x.numel() == 0:
            return False
        f32 = float32
        return x.dtype == f32 and hx.dtype == f32 and cx.dtype == f32 and \
            all(w.dtype == f32 for w in self._flat_weights)

    def _run(self, x, bs, hx, cx):
        """x: (T, B, I) padded, or packed rows (N, I) with bs the batch sizes; hx (L*D, B, H), cx or None."""
        D = 2 if self.bidirectional else 1
        step = self._step()
        hs, cs = [], []
        layer_in = x
        fused = self._fused(x, bs, hx, cx)
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                w = [getattr(self, n) for n in self._all_weights[k]]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size > 0 else None
                if fused:
                    out, h, c = lstm_layer(layer_in.contiguous(), hx[k], cx[k], w_ih, w_hh, b_ih, b_hh, d == 1,
                                           batch_first=self.batch_first, bidirectional=D == 2,
                                           train=self.training)
                else:
                    out, h, c = _run_direction(step, layer_in, bs, hx[k], None if cx is None else cx[k],
                                               w_ih, w_hh, b_ih, b_hh, w_hr, d == 1)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            layer_in = outs[0] if D == 1 else cat(outs, -1)
            if layer < self.num_layers - 1:
                layer_in = _at_dropout(layer_in, self.dropout, self.training)
        h_n = stack(hs, 0)
        c_n = stack(cs, 0) if cx is not None else None
        return layer_in, h_n, c_n

    def _zeros_state(self, B, size, like):
        """The default state: zeros of `like`'s dtype on its device."""
        D = 2 if self.bidirectional else 1
        return zeros((self.num_layers * D, B, size), dtype=like.dtype, device=like.device)

    def _forward_impl(self, input, hx):
        """Shared forward of RNN, LSTM and GRU.  hx: Tensor, (h, c) for LSTM, or None."""
        from ..utils.rnn import PackedSequence
        is_lstm = self.mode == "LSTM"
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        is_batched, batch_dim = True, (0 if self.batch_first else 1)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            bs = [int(b) for b in batch_sizes.tolist()]
            B = bs[0]
            if hx is None:
                hx = ((self._zeros_state(B, real_hidden, data), self._zeros_state(B, self.hidden_size, data))
                      if is_lstm else self._zeros_state(B, self.hidden_size, data))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            x = data
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                tail = " tensor instead" if name == "RNN" else " instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                if is_lstm:
                    want = 3 if is_batched else 2
                    if hx[0].dim() != want or hx[1].dim() != want:
                        kind = "batched 3-D" if is_batched else "unbatched 2-D"
                        raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    if not is_batched:
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                else:
                    if not is_batched and hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                           f"{hx.dim()}-D tensor")
                    if is_batched and hx.dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                           f"{hx.dim()}-D tensor")
                    if not is_batched:
                        hx = hx.unsqueeze(1)
            B = input.size(0) if self.batch_first else input.size(1)
            if hx is None:
                hx = ((self._zeros_state(B, real_hidden, input), self._zeros_state(B, self.hidden_size, input))
                      if is_lstm else self._zeros_state(B, self.hidden_size, input))
            x = input
        if is_lstm:
            self.check_input(x, batch_sizes)
            self.check_hidden_size(hx[0], self.get_expected_hidden_size(x, batch_sizes),
                                   "Expected hidden[0] size {}, got {}")
            exp_c = self.get_expected_hidden_size(x, batch_sizes)[:2] + (self.hidden_size,)
            self.check_hidden_size(hx[1], exp_c, "Expected hidden[1] size {}, got {}")
        else:
            self.check_forward_args(x, hx, batch_sizes)
        if not packed:
            bs = None
            if self.batch_first:
                x = x.transpose(0, 1)
        h0, c0 = (hx[0], hx[1]) if is_lstm else (hx, None)
        out, h_n, c_n = self._run(x, bs, h0, c0)
        hidden = (h_n, c_n) if is_lstm else h_n
        if packed:
            return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), \
                self._unpermute(hidden, unsorted_indices)
        if self.batch_first:       # ATen transposes RNN/GRU outputs in place, LSTM's out of place
            out = out.transpose(0, 1) if is_lstm else out.transpose_(0, 1)
        if not is_batched:
            out = out.squeeze(batch_dim)
            hidden = (h_n.squeeze(1), c_n.squeeze(1)) if is_lstm else h_n.squeeze(1)
        return out, hidden

    def _unpermute(self, hidden, perm):
        if perm is None:
            return hidden
        if isinstance(hidden, tuple):
            return tuple(h.index_select(1, perm) for h in hidden)
        return hidden.index_select(1, perm)


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act = tanh or relu."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; gates i, f, g, o; optional output projection (proj_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return self.get_expected_hidden_size(input, batch_sizes)[:2] + (self.hidden_size,)

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit; gates r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


# -- cells ---------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **fk))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **fk))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **fk))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _prep(self, input, hx, name, n_states):
        """Validate, add the batch dim to unbatched inputs, default the states to zeros."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            states = hx if n_states == 2 else (hx,)
            for i, v in enumerate(states):
                if v.dim() not in (1, 2):
                    what = f"hx[{i}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {v.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            states = (z, z) if n_states == 2 else (z,)
        else:
            states = tuple(hx) if n_states == 2 else (hx,)
            if not batched:
                states = tuple(s.unsqueeze(0) for s in states)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                               f"{self.input_size}")
        for i, s in enumerate(states):
            if input.size(0) != s.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size "
                                   f"{s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, states, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), batched = self._prep(input, hx, "RNNCell", 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        g = _linear(input, self.weight_ih, self.bias_ih) + _linear(h, self.weight_hh, self.bias_hh)
        ret = g.tanh() if self.nonlinearity == "tanh" else g.relu()
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._prep(input, hx, "LSTMCell", 2)
        h2, c2 = _step_lstm(_linear(input, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh,
                            None)
        return (h2, c2) if batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prep(input, hx, "GRUCell", 1)
        ret, _ = _step_gru(_linear(input, self.weight_ih, self.bias_ih), h, None, self.weight_hh, self.bias_hh,
                           None)
        return ret if batched else ret.squeeze(0)


