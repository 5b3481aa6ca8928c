"""Sorting and selection: sort argsort msort topk.

(filled in by the sorting work; see reduction.py for max/min with indices)
"""
__all__ = []
