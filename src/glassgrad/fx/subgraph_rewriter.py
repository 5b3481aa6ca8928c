"""torch.fx.replace_pattern: find the subgraphs of a GraphModule that compute what `pattern` computes and
put `replacement`'s graph in their place."""

import copy
import itertools
from typing import NamedTuple

from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Node           # the node the match was found from (the pattern's returned node)
    nodes_map: dict        # pattern node -> graph node


class _InternalMatch:
    def __init__(self, anchors):
        self.anchors = anchors
        self.nodes_map = {}
        self.placeholder_nodes = []
        self.returning_nodes = []

    def __copy__(self):
        m = _InternalMatch(self.anchors)
        m.nodes_map = dict(self.nodes_map)
        m.placeholder_nodes = list(self.placeholder_nodes)
        m.returning_nodes = list(self.returning_nodes)
        return m


class _SubgraphMatcher:
    """Matches a pattern graph (its placeholders are wildcards, its output not matched) against a graph."""

    def __init__(self, pattern):
        self.pattern = pattern
        output = next(n for n in reversed(pattern.nodes) if n.op == "output")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        self.pattern_returning_nodes = list(output.all_input_nodes)
        self.pattern_anchors = [n for n in output.all_input_nodes if len(n.users) == 1]

    def _nodes_are_equal(self, pn, gn):
        if pn.op == "placeholder":
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "output":
            return True
        return pn.target == gn.target

    def _match_literals(self, pn, gn, match):
        is_pn_input = isinstance(pn, Node) and pn.op == "placeholder"
        if is_pn_input:
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(pn, Node) or isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn, gn, match):
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if any(v is gn for v in match.nodes_map.values()):
            return False
        if not self._nodes_are_equal(pn, gn):
            return False
        saved = copy.copy(match)
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True

        def match_args(args1, args2):
            if len(args1) != len(args2):
                return False
            for a1, a2 in zip(args1, args2):
                if isinstance(a1, Node) and isinstance(a2, Node):
                    matched = self._match_nodes(a1, a2, match)
                elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                    matched = match_args(a1, a2)
                else:
                    matched = self._match_literals(a1, a2, match)
                if not matched:
                    return False
            return True
        pn_args = list(pn.args) + list(pn.kwargs.values())
        gn_args = list(gn.args) + list(gn.kwargs.values())
        if list(pn.kwargs) != list(gn.kwargs) or not match_args(pn_args, gn_args):
            match.nodes_map = saved.nodes_map
            return False
        return True

    def _is_contained(self, nodes_map):
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            for user in gn.users:
                if user not in lookup:
                    return False
        return True

    def match(self, graph):
        match_candidates = {pn: [gn for gn in graph.nodes if self._nodes_are_equal(pn, gn)]
                            for pn in self.pattern_anchors}
        matches = []
        for combo in itertools.product(*match_candidates.values()):
            match = _InternalMatch(self.pattern_anchors)
            if all(self._match_nodes(pn, gn, match) for pn, gn in zip(self.pattern_anchors, combo)):
                matches.append(match)
        out = []
        for match in matches:
            match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
            match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
            if self._is_contained(match.nodes_map):
                out.append(match)
        kept, matched = [], set()
        for match in out:       # non-overlapping, first found first kept
            inner = {gn for pn, gn in match.nodes_map.items()
                     if pn.op not in ("placeholder", "output") and isinstance(gn, Node)}
            if inner & matched:
                continue
            matched |= inner
            kept.append(match)
        return kept


def _first_insert_point(graph, returning_nodes):
    user_nodes = set()
    for n in returning_nodes:
        user_nodes.update(n.users)
    if user_nodes:
        return next(n for n in graph.nodes if n in user_nodes)
    next_node = None
    for n in reversed(graph.nodes):
        if n in returning_nodes:
            return next_node
        next_node = n
    return None


def replace_pattern(gm, pattern, replacement):
    """Replace every non-overlapping match of `pattern`'s graph in `gm` with `replacement`'s graph (both
    callables or Modules, traced symbolically); recompile `gm` and return the matches."""
    from ._symbolic_trace import symbolic_trace
    original_graph = gm.graph
    pattern_graph = pattern.graph if hasattr(pattern, "graph") else symbolic_trace(pattern).graph
    replacement_graph = replacement.graph if hasattr(replacement, "graph") else symbolic_trace(replacement).graph
    matcher = _SubgraphMatcher(pattern_graph)
    matches = matcher.match(original_graph)
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    match_changed_node = {}
    result = []
    for match in matches:
        if len(match.placeholder_nodes) != len(replacement_placeholders):
            raise AssertionError("the pattern and the replacement must take the same number of inputs")
        val_map = {}
        for rn, gn in zip(replacement_placeholders, match.placeholder_nodes):
            val_map[rn] = match_changed_node.get(gn, gn) if isinstance(gn, Node) else gn
        insert_point = _first_insert_point(original_graph, match.returning_nodes)
        with original_graph.inserting_before(insert_point):
            copied_returning_nodes = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied_returning_nodes, Node):
            copied_returning_nodes = (copied_returning_nodes,)
        if len(match.returning_nodes) != len(copied_returning_nodes):
            raise AssertionError("the pattern and the replacement must return the same number of values")
        for gn, copied_node in zip(match.returning_nodes, copied_returning_nodes):
            gn.replace_all_uses_with(copied_node)
            match_changed_node[gn] = copied_node
        for node in reversed(pattern_graph.nodes):
            if node.op not in ("placeholder", "output"):
                original_graph.erase_node(match.nodes_map[node])
        result.append(Match(anchor=match.anchors[0], nodes_map=match.nodes_map))
    gm.recompile()
    return result
