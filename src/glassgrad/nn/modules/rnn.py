"""nn.modules.rnn (being written)"""
__all__ = []
