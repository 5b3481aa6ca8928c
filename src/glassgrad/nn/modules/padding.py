"""nn.modules.padding (being written)"""
__all__ = []
