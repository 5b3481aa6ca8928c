"""nn.modules.transformer (being written)"""
__all__ = []
