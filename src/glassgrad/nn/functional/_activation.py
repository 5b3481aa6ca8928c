"""nn.functional: _activation (being written)"""
__all__ = []
