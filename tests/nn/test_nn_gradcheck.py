"""float64 finite-difference gradient checks of whole modules, with respect to their inputs and every
parameter (the functional forms are checked in the op table; this covers the modules' own wiring:
RNN gates, attention projections, norm affine parameters, ...)."""
import numpy as np
import pytest

import glassgrad as G
from glassgrad.autograd import gradcheck

nn = G.nn


def _x(*shape, seed=0):
    return G.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=G.float64, requires_grad=True)


def _idx(high, *shape):
    return G.tensor(np.random.default_rng(1).integers(0, high, size=shape))


CASES = [
    ("Linear", lambda: nn.Linear(4, 3), lambda: (_x(2, 4),)),
    ("Bilinear", lambda: nn.Bilinear(2, 3, 2), lambda: (_x(2, 2), _x(2, 3, seed=1))),
    ("Conv2d", lambda: nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=2), lambda: (_x(1, 4, 5, 5),)),
    ("Conv1d_reflect", lambda: nn.Conv1d(2, 3, 3, padding=1, padding_mode="reflect"), lambda: (_x(2, 2, 6),)),
    ("ConvTranspose2d", lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1), lambda: (_x(1, 2, 3, 3),)),
    ("BatchNorm2d", lambda: nn.BatchNorm2d(3), lambda: (_x(4, 3, 2, 2),)),
    ("BatchNorm1d_eval", lambda: nn.BatchNorm1d(3).eval(), lambda: (_x(4, 3),)),
    ("LayerNorm", lambda: nn.LayerNorm((3, 4)), lambda: (_x(2, 3, 4),)),
    ("GroupNorm", lambda: nn.GroupNorm(2, 4), lambda: (_x(2, 4, 3),)),
    ("InstanceNorm2d", lambda: nn.InstanceNorm2d(2, affine=True), lambda: (_x(2, 2, 3, 3),)),
    ("RMSNorm", lambda: nn.RMSNorm(4), lambda: (_x(3, 4),)),
    ("PReLU", lambda: nn.PReLU(3), lambda: (_x(2, 3, 4),)),
    ("Embedding", lambda: nn.Embedding(6, 3, padding_idx=1), lambda: (_idx(6, 2, 4),)),
    ("EmbeddingBag", lambda: nn.EmbeddingBag(6, 3, mode="mean"), lambda: (_idx(6, 2, 3),)),
    ("MaxPool2d", lambda: nn.MaxPool2d(2, ceil_mode=True), lambda: (_x(1, 2, 5, 5),)),
    ("AvgPool2d", lambda: nn.AvgPool2d(3, stride=2, padding=1), lambda: (_x(1, 2, 5, 5),)),
    ("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((2, 3)), lambda: (_x(1, 2, 5, 7),)),
    ("Upsample_bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), lambda: (_x(1, 2, 3, 3),)),
    ("RNN", lambda: nn.RNN(3, 4, num_layers=2), lambda: (_x(5, 2, 3),)),
    ("LSTM_bi", lambda: nn.LSTM(3, 4, bidirectional=True, batch_first=True), lambda: (_x(2, 4, 3),)),
    ("GRU", lambda: nn.GRU(3, 4, num_layers=2), lambda: (_x(4, 2, 3), _x(2, 2, 4, seed=2))),
    ("LSTMCell", lambda: nn.LSTMCell(3, 4), lambda: (_x(2, 3),)),
    ("GRUCell", lambda: nn.GRUCell(3, 4), lambda: (_x(2, 3),)),
    ("MultiheadAttention", lambda: nn.MultiheadAttention(4, 2, batch_first=True),
     lambda: (_x(2, 3, 4), _x(2, 5, 4, seed=1), _x(2, 5, 4, seed=2))),
    ("TransformerEncoderLayer", lambda: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0),
     lambda: (_x(3, 2, 4),)),
    ("TransformerDecoderLayer", lambda: nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                                                   norm_first=True),
     lambda: (_x(3, 2, 4), _x(4, 2, 4, seed=1))),
]


def _flat_outputs(out):
    if isinstance(out, G.Tensor):
        return (out,)
    flat = []
    for o in out:
        flat.extend(_flat_outputs(o) if o is not None else ())
    return tuple(flat)


@pytest.mark.parametrize("name,make,inputs", CASES, ids=[c[0] for c in CASES])
def test_module_gradcheck_float64(name, make, inputs):
    G.manual_seed(0)
    mod = make().double()
    args = inputs()
    owners = [(m, k) for m in mod.modules() for k, p in m._parameters.items() if p is not None]
    params = [m._parameters[k].detach().clone().requires_grad_() for m, k in owners]

    def fn(*flat):
        xs, ps = flat[:len(args)], flat[len(args):]
        saved = [m._parameters[k] for m, k in owners]
        try:
            for (m, k), p in zip(owners, ps):
                m._parameters[k] = p          # run the module on these tensors
            return _flat_outputs(mod(*xs))
        finally:
            for (m, k), p in zip(owners, saved):
                m._parameters[k] = p
    assert gradcheck(fn, tuple(args) + tuple(params), eps=1e-6, atol=1e-5, rtol=1e-4)
