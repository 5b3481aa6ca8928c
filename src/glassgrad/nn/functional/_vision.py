"""nn.functional: _vision (being written)"""
__all__ = []
