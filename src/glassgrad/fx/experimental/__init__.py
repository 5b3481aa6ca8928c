"""torch.fx.experimental: graph passes built on torch.fx (optimization: conv/linear + batch-norm fusion,
dropout removal)."""
