"""nn.modules.attention (being written)"""
__all__ = []
