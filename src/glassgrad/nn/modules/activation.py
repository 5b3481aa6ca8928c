"""nn.modules.activation (being written)"""
__all__ = []
