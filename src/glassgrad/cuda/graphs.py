"""torch.cuda.graphs: ``CUDAGraph``, ``graph`` and ``graph_pool_handle`` as torch's CPU build has them -- names
that code uses in annotations and ``isinstance`` checks (transformers' generation utilities do) and that cannot
be used without CUDA graph capture: using them raises torch's CPU-build errors.  glassgrad does not capture CUDA
graphs on CuPy either, so with a GPU they raise the CPU build's CUDAGraph error."""

__all__ = ["CUDAGraph", "graph", "graph_pool_handle"]


class CUDAGraph:
    """torch.cuda.CUDAGraph: capture and replay of CUDA work; not available (torch's CPU-build error)."""

    def __new__(cls, keep_graph=False):
        raise RuntimeError("Tried to instantiate dummy base class CUDAGraph")


def graph_pool_handle():
    raise RuntimeError("Tried to instantiate dummy base class _graph_pool_handle")


class graph:  # noqa: N801  (torch's name)
    """torch.cuda.graph(cuda_graph, pool=None, stream=None, capture_error_mode="global"): the capture context;
    making one needs a CUDA stream (torch's CPU-build error without one)."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        from . import _cp
        if _cp() is None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        raise RuntimeError("Tried to instantiate dummy base class CUDAGraph")
