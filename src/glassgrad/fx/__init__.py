"""torch.fx: symbolic tracing of modules into graphs, graph editing, code generation and interpretation."""

from . import graph, graph_module, immutable_collections, interpreter, node, proxy, subgraph_rewriter  # noqa: F401
from . import passes  # noqa: F401  (torch.fx.passes.shape_prop.ShapeProp)
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "replace_pattern", "has_side_effect", "map_arg", "PH", "ProxyableClassMeta"]
