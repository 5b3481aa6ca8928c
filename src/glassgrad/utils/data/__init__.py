"""torch.utils.data (being written)"""
