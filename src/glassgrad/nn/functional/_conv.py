"""nn.functional: _conv (being written)"""
__all__ = []
