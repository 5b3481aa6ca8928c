"""The grad-mode flags every op reads (``state.enabled``, inference mode, anomaly mode, explain's watcher),
and anomaly mode's record of where each node was made.

A leaf (imports nothing from glassgrad): ``_tensor`` reads it without loading autograd, whose public face
for it is ``autograd/grad_mode.py`` (no_grad, enable_grad, set_grad_enabled, inference_mode).
"""
import traceback


class _State:
    __slots__ = ("enabled", "inference", "anomaly", "anomaly_check_nan", "watching", "profiling")

    def __init__(self):
        self.enabled = True
        self.inference = False
        self.anomaly = False
        self.anomaly_check_nan = True
        # explain.watch / explain.nan_watch: None, or the observer (glassgrad.explain._watch.HUB) that
        # ops, cuts, zero_grad and the backward engine report to while a watch is active
        self.watching = None
        # a profiler records (autograd/profiler.py): the backward engine runs every node through _run_node
        self.profiling = False


state = _State()


# Anomaly mode (autograd/anomaly.py): every node made while it is on remembers where (Tensor creation calls this).
_PKG_DIR = __file__.rsplit("_grad_state", 1)[0]   # .../glassgrad/


def record_trace(node):
    """Remember the user's forward stack (PyTorch shows it when this node's backward fails)."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PKG_DIR)]
    node._trace = "".join(traceback.format_list(frames))
