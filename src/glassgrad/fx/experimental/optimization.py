"""torch.fx.experimental.optimization: inference-time graph passes: ``fuse`` (a Conv / Linear followed by a
BatchNorm becomes one module) and ``remove_dropout``."""

import copy

from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from .. import Node, Transformer, symbolic_trace
from ..graph_module import GraphModule

__all__ = ["fuse", "remove_dropout", "matches_module_pattern", "replace_node_module", "fuse_conv_bn_eval",
           "fuse_linear_bn_eval"]


def _parent_name(target):
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def matches_module_pattern(pattern, node, modules):
    """Whether `node` and its first argument are call_module nodes of exactly the module types in `pattern`
    (first argument's type first)."""
    if len(node.args) == 0:
        return False
    for expected_type, current_node in zip(pattern, (node.args[0], node)):
        if not isinstance(current_node, Node) or current_node.op != "call_module":
            return False
        if not isinstance(current_node.target, str) or current_node.target not in modules:
            return False
        if type(modules[current_node.target]) is not expected_type:
            return False
    return True


def replace_node_module(node, modules, new_module):
    """Install `new_module` where `node`'s call_module target was (in `modules` and in its parent module)."""
    if not isinstance(node.target, str):
        raise AssertionError(f"Expected node.target to be str, got {type(node.target)}")
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent_name], name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """Fold each BatchNorm that follows a Conv1d/2d/3d or a Linear (whose output nothing else uses) into it,
    for inference: the model must be in eval mode. Returns a GraphModule."""
    patterns = [(nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d), (nn.Conv3d, nn.BatchNorm3d),
                (nn.Linear, nn.BatchNorm1d)]
    if not inplace:
        model = copy.deepcopy(model)
    fx_model = model if no_trace and isinstance(model, GraphModule) else symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)
    for pattern in patterns:
        for node in new_graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            if len(node.args[0].users) > 1:      # the conv / linear output is used elsewhere too
                continue
            first_layer = modules[node.args[0].target]
            bn = modules[node.target]
            if not bn.track_running_stats:
                continue
            if pattern[0] in (nn.Conv1d, nn.Conv2d, nn.Conv3d):
                fused_layer = fuse_conv_bn_eval(first_layer, bn)
            else:
                fused_layer = fuse_linear_bn_eval(first_layer, bn)
            replace_node_module(node.args[0], modules, fused_layer)
            node.replace_all_uses_with(node.args[0])
            new_graph.erase_node(node)
    return GraphModule(fx_model, new_graph)


def remove_dropout(model):
    """The model traced, each Dropout call replaced by its input."""
    fx_model = symbolic_trace(model)

    class DropoutRemover(Transformer):
        def call_module(self, target, args, kwargs):
            if isinstance(self.submodules[target], nn.Dropout):
                if len(args) != 1:
                    raise AssertionError(f"Expected 1 arg for Dropout, got {len(args)}")
                return args[0]
            return super().call_module(target, args, kwargs)
    return DropoutRemover(fx_model).transform()
