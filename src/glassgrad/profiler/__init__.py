"""torch.profiler: `profile` (activities, schedule, on_trace_ready, record_shapes, profile_memory, with_stack),
`schedule`, `ProfilerActivity`, `ProfilerAction`, `tensorboard_trace_handler`, `record_function`,
`supported_activities`.  Built on autograd/profiler.py's recorder (see there for where ops are timed)."""
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,
                       tensorboard_trace_handler, _KinetoProfile)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "record_function", "_KinetoProfile", "DeviceType", "kineto_available"]


def kineto_available():
    """False: glassgrad records with its own recorder, not Kineto."""
    return False
