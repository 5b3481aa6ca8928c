"""nn.modules.upsampling (being written)"""
__all__ = []
