"""CrossMapLRN2d's autograd Function: torch's legacy Lua-torch LRN across channels, forward and backward
(the running window sum and its asymmetric removal, ``c > pre_pad``, as torch computes them)."""
import numpy as np

from ...autograd.function import Function
from ...ops._core import make


class CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        x = input._data
        channels = x.shape[1]
        sq = x * x
        scale = np.empty_like(x)
        pre_pad = int((size - 1) / 2 + 1)
        pre_pad_crop = min(pre_pad, channels)
        scale[:, 0] = 0
        for c in range(pre_pad_crop):
            scale[:, 0] += sq[:, c]
        for c in range(1, channels):
            scale[:, c] = scale[:, c - 1]
            if c < channels - pre_pad + 1:
                scale[:, c] += sq[:, c + pre_pad - 1]
            if c > pre_pad:
                scale[:, c] -= sq[:, c - pre_pad]
        dt = x.dtype.type
        scale = scale * dt(alpha / size) + dt(k)
        out = np.power(scale, dt(-beta)) * x
        ctx.scale = scale
        out_t = make(out)
        ctx.save_for_backward(input, out_t)
        return out_t

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        x, out, g, scale = input._data, output._data, grad_output._data, ctx.scale
        dt = x.dtype.type
        N, C, H, W = x.shape
        size = ctx.size
        padded = np.zeros((C + size - 1, H, W), x.dtype, like=x)
        cache_ratio_value = dt(2 * ctx.alpha * ctx.beta / size)
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = np.power(scale, dt(-ctx.beta)) * g
        for n in range(N):
            padded[inverse_pre_pad:inverse_pre_pad + C] = g[n] * out[n] / scale[n]
            accum = padded[:size - 1].sum(0)
            for c in range(C):
                accum += padded[c + size - 1]
                grad_input[n, c] += -cache_ratio_value * x[n, c] * accum
                accum -= padded[c]
        return make(grad_input), None, None, None, None
