"""nn.functional: _attention (being written)"""
__all__ = []
