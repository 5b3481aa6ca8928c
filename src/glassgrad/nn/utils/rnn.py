"""nn.utils.rnn (being written)"""
__all__ = []
