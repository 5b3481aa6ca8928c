"""FractionalMaxPool3d, ChannelShuffle, AdaptiveLogSoftmaxWithLoss, Container and F.gumbel_softmax vs torch."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def A(t):
    return t.detach().numpy()


def _catch(f):
    try:
        f()
        return None
    except Exception as e:            # noqa: BLE001
        return type(e).__name__, str(e)


def _eq(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _eq(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(a).max(initial=0))))
    else:
        assert a == b, (a, b)


@pytest.mark.parametrize("kw,shape", [(dict(kernel_size=2, output_ratio=(0.5, 0.6, 0.5)), (2, 3, 7, 6, 8)),
                                      (dict(kernel_size=(1, 3, 2), output_size=(4, 2, 3)), (2, 5, 5, 6)),
                                      (dict(kernel_size=3, output_size=1), (1, 2, 4, 4, 4))])
def test_fractional_max_pool3d(kw, shape):
    def run(T):
        T.manual_seed(31)
        m = T.nn.FractionalMaxPool3d(return_indices=True, **kw)
        x = T.randn(*shape, dtype=T.float64, requires_grad=True)
        y, i = m(x)
        (y ** 2).sum().backward()
        y2 = T.nn.functional.fractional_max_pool3d(x.detach().float(), **kw)
        return [repr(m), A(y), A(i), A(x.grad), y.grad_fn.name(), A(y2), A(T.rand(2))]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_fractional_max_pool3d_errors():
    def run(T):
        F, x = T.nn.functional, T.randn(1, 2, 5, 5, 5)
        s = T.rand(1, 2, 3)
        return [_catch(lambda: F.fractional_max_pool3d(x, 2, output_size=(4, 2, 2), _random_samples=s)),
                _catch(lambda: F.fractional_max_pool3d(x, 2, output_size=(3, 4, 2), _random_samples=s)),
                _catch(lambda: F.fractional_max_pool3d(x, 2, output_size=(3, 3, 4), _random_samples=s)),
                _catch(lambda: F.fractional_max_pool3d(x[0, 0], 2, output_size=2)),
                _catch(lambda: F.fractional_max_pool3d(x, (2, 2), output_size=2)),
                _catch(lambda: F.fractional_max_pool3d(x, 2)),
                _catch(lambda: F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=T.rand(1, 3, 3))),
                _catch(lambda: T.nn.FractionalMaxPool3d(0, output_size=2)),
                _catch(lambda: T.nn.FractionalMaxPool3d(2)),
                _catch(lambda: T.nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5)),
                _catch(lambda: T.nn.FractionalMaxPool3d(2, output_ratio=1.5))]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_channel_shuffle():
    def run(T):
        T.manual_seed(32)
        x = T.randn(2, 6, 3, 2, dtype=T.float64, requires_grad=True)
        m = T.nn.ChannelShuffle(3)
        y = m(x)
        w = T.randn(2, 6, 3, 2, dtype=T.float64)
        (y * w).sum().backward()
        x2 = T.randn(4, 4, 5, requires_grad=True)
        g, = T.autograd.grad((T.nn.functional.channel_shuffle(x2, 2) ** 2).sum(), x2, create_graph=True)
        g.sum().backward()
        F = T.nn.functional
        return [repr(m), A(y), A(x.grad), y.grad_fn.name(), y.is_contiguous(), A(x2.grad),
                A(F.native_channel_shuffle(x.detach(), 2)),
                _catch(lambda: F.channel_shuffle(x, 0)), _catch(lambda: F.channel_shuffle(x, 4)),
                _catch(lambda: F.channel_shuffle(x[0, 0], 1))]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_adaptive_log_softmax_with_loss():
    def run(T):
        T.manual_seed(33)
        m = T.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True)
        x = T.randn(9, 16, requires_grad=True)
        t = T.tensor([0, 3, 4, 9, 10, 14, 15, 19, 2])
        o = m(x, t)
        o.loss.backward()
        single = m(x[0].detach(), t[4])
        out = [repr(m), list(m.state_dict()), A(o.output), A(o.loss), A(x.grad), A(m.head.weight.grad),
               A(m.tail[1][0].weight.grad), A(m.log_prob(x)), A(m.predict(x)), A(single.output), A(single.loss),
               type(o).__name__, o._fields]
        m.reset_parameters()
        out.append(A(m.head.bias))
        out += [_catch(lambda: m(x, T.tensor([0, 20, 1, 1, 1, 1, 1, 1, 1]))),
                _catch(lambda: m(x, t[:3])), _catch(lambda: m(x[0], t)), _catch(lambda: m(x, t[None])),
                _catch(lambda: T.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])),
                _catch(lambda: T.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])),
                _catch(lambda: T.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 10]))]
        return out
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_container_and_gumbel_softmax():
    def run(T):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            c = T.nn.Container(a=T.nn.ReLU(), b=T.nn.Tanh())
        out = [repr(c), [(r.category.__name__, str(r.message)) for r in rec]]
        T.manual_seed(34)
        logits = T.randn(5, 7, requires_grad=True)
        F = T.nn.functional
        soft = F.gumbel_softmax(logits, tau=0.7)
        hard = F.gumbel_softmax(logits, tau=2.0, hard=True, dim=0)
        (soft * T.arange(7.0)).sum().backward()
        g1 = A(logits.grad)
        logits.grad = None
        (hard * T.arange(7.0)).sum().backward()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            F.gumbel_softmax(logits, eps=1e-5)
        return out + [A(soft), A(hard), g1, A(logits.grad), [str(r.message) for r in rec], A(T.rand(2))]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


@pytest.mark.parametrize("size,shape", [(3, (2, 6, 3, 4)), (5, (1, 3, 2, 2)), (2, (2, 7, 2, 3))])
def test_cross_map_lrn2d(size, shape):
    def run(T):
        T.manual_seed(35)
        x = T.randn(*shape, dtype=T.float64, requires_grad=True)
        m = T.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=2)
        y = m(x)
        (y * T.randn(*shape, dtype=T.float64)).sum().backward()
        return [repr(m), A(y), A(x.grad), _catch(lambda: m(x[0]))]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


LCE_CASES = [
    dict(bias=True, options="chunked"),
    dict(reduction="sum", ignore_index=2, options="default"),
    dict(reduction="none", weight=True),
    dict(out_features=(3,), label_smoothing=0.1, reduction="none"),
    dict(label_smoothing=0.2, options="default"),          # options ignored, with torch's warning
    dict(reduction="none", weight=True, ignore_index=1, options="default"),
    dict(options="retain"),
]


@pytest.mark.parametrize("case", LCE_CASES, ids=[str(i) for i in range(len(LCE_CASES))])
def test_linear_cross_entropy_loss(case):
    def run(T):
        T.manual_seed(36)
        kw = dict(case)
        opt = kw.pop("options", None)
        if opt == "chunked":
            kw["options"] = T.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
        elif opt == "default":
            kw["options"] = T.nn.LinearCrossEntropyOptions()
        elif opt == "retain":
            kw["options"] = T.nn.LinearCrossEntropyOptions(allow_retain_graph=True)
        if kw.pop("weight", False):
            kw["weight"] = T.rand(5)
        m = T.nn.LinearCrossEntropyLoss(8, 5, **kw)
        x = T.randn(6, 8, requires_grad=True)
        t = T.randint(0, 5, (6, *kw.get("out_features", ())))
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            loss = m(x, t)
        loss.sum().backward(retain_graph=True)
        out = [repr(m), list(m.state_dict()), A(loss), A(x.grad), A(m.linear.weight.grad),
               [str(r.message) for r in rec], loss.grad_fn.name()]
        out.append(_catch(lambda: loss.sum().backward()))            # the chunked op refuses a second backward
        return out + [A(x.grad)]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_linear_cross_entropy_errors_and_options():
    def run(T):
        F, O = T.nn.functional, T.nn.LinearCrossEntropyOptions
        x, w, t = T.randn(3, 4), T.randn(5, 4), T.tensor([0, 1, 2])
        o = O()._adjust(num_batches=64, in_features=16, num_classes=100, dtype=T.float32, device=x.device)
        xr = x.clone().requires_grad_()
        one = F.linear_cross_entropy(xr[1], w, t[1], options=O())
        one.backward()
        return [A(F.linear_cross_entropy(x[0], w, t[0])), repr(o), A(one), one.grad_fn.name(), A(xr.grad),
                A(F.linear_cross_entropy(x, w, T.full((3,), -100), options=O())),
                _catch(lambda: F.linear_cross_entropy(x[None], w, t)),
                _catch(lambda: F.linear_cross_entropy(x, w[0], t)),
                _catch(lambda: F.linear_cross_entropy(x, w[:, :3], t)),
                _catch(lambda: F.linear_cross_entropy(x, w, t, linear_bias=T.zeros(4))),
                _catch(lambda: F.linear_cross_entropy(x[0], w.reshape(5, 1, 4), t)),
                _catch(lambda: F.linear_cross_entropy(x, w, T.rand(3, 5), ignore_index=1)),
                _catch(lambda: O(acc_policy="x")), _catch(lambda: O(chunking_method="aspect_ratio:0")),
                _catch(lambda: O(batch_chunk_size=0)), _catch(lambda: O(acc_dtype=T.int32)),
                _catch(lambda: O(batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(
                    num_batches=64, in_features=16, num_classes=100, dtype=T.float32)),
                _catch(lambda: T.nn.LinearCrossEntropyLoss(4, 5, weight=T.ones(4))),
                _catch(lambda: T.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=2.0))]
    a, b = (run(T) for T in LIBS)
    _eq(a, b)
