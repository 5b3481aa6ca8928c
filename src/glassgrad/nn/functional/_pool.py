"""nn.functional: _pool (being written)"""
__all__ = []
