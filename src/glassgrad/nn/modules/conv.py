"""nn.modules.conv (being written)"""
__all__ = []
