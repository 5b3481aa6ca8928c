"""torch.cuda.memory: the memory functions of torch.cuda (defined in cuda/__init__.py and cuda/_more.py).
Not here: the allocator internals (CUDAPluggableAllocator, MemPool, use_mem_pool, change_current_allocator) and memory_snapshot / memory_summary, which glassgrad does not have."""
from . import (  # noqa: F401
    get_per_process_memory_fraction, set_per_process_memory_fraction, empty_cache, memory_stats,
    memory_stats_as_nested_dict, reset_accumulated_memory_stats, reset_peak_memory_stats,
    reset_max_memory_allocated, reset_max_memory_cached, host_memory_stats, host_memory_stats_as_nested_dict,
    reset_accumulated_host_memory_stats, reset_peak_host_memory_stats, memory_allocated, max_memory_allocated,
    memory_reserved, max_memory_reserved, memory_cached, max_memory_cached, list_gpu_processes, mem_get_info,
    get_allocator_backend, caching_allocator_alloc, caching_allocator_delete, caching_allocator_enable,
    caching_allocator_disabled,
)

__all__ = ['get_per_process_memory_fraction', 'set_per_process_memory_fraction', 'empty_cache', 'memory_stats', 'memory_stats_as_nested_dict', 'reset_accumulated_memory_stats', 'reset_peak_memory_stats', 'reset_max_memory_allocated', 'reset_max_memory_cached', 'host_memory_stats', 'host_memory_stats_as_nested_dict', 'reset_accumulated_host_memory_stats', 'reset_peak_host_memory_stats', 'memory_allocated', 'max_memory_allocated', 'memory_reserved', 'max_memory_reserved', 'memory_cached', 'max_memory_cached', 'list_gpu_processes', 'mem_get_info', 'get_allocator_backend',
           'caching_allocator_alloc', 'caching_allocator_delete', 'caching_allocator_enable',
           'caching_allocator_disabled']
