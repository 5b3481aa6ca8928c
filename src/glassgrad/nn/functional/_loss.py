"""nn.functional: _loss (being written)"""
__all__ = []
