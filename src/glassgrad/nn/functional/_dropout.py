"""nn.functional: _dropout (being written)"""
__all__ = []
