"""torch.norm_except_dim and torch._weight_norm, composed of differentiable ops (weight_norm's two forms)."""


def norm_except_dim(v, pow=2, dim=0):
    if dim == -1:
        return v.norm(pow)
    keep = [d for d in range(v.dim()) if d != dim]
    return v.norm(pow, dim=keep, keepdim=True)


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))
