"""nn.functional: _sparse (being written)"""
__all__ = []
