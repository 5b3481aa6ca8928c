"""torch.optim (being written)"""
