"""torch.autograd.anomaly_mode: where torch defines detect_anomaly / set_detect_anomaly (glassgrad's are in
autograd/anomaly.py)."""
from .anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
