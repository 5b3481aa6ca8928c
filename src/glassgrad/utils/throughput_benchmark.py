"""torch.utils.throughput_benchmark: run a module under an inference-server-like load from several calling
threads and report the average latency per call and the throughput.

torch runs the loop in C++ (holding the GIL for an nn.Module); here it is Python threads calling the module:
each thread runs its warmup calls, then calls on inputs drawn from those given to add_input until the threads
together reach `num_iters` (the count may end slightly above it, as torch's).  With `profiler_output_path` the
measured phase runs under the autograd profiler and its chrome trace is written there.
"""
import random
import threading
import time

__all__ = ["ExecutionStats", "ThroughputBenchmark", "format_time"]


def format_time(time_us=None, time_ms=None, time_s=None):
    """One of the three durations, written in the largest unit (s, ms, us) it reaches."""
    if sum([time_us is not None, time_ms is not None, time_s is not None]) != 1:
        raise AssertionError("Expected only one of time_us, time_ms, time_s is given.")
    if time_us is None:
        time_us = time_ms * 1e3 if time_ms is not None else time_s * 1e6
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


class BenchmarkConfig:
    """torch._C.BenchmarkConfig: the benchmark's settings."""

    def __init__(self):
        self.num_calling_threads = 1
        self.num_warmup_iters = 1
        self.num_iters = 100
        self.profiler_output_path = ""


class BenchmarkExecutionStats:
    """torch._C.BenchmarkExecutionStats: average latency per call (ms) and the number of measured calls."""

    def __init__(self, latency_avg_ms=-1.0, num_iters=-1):
        self.latency_avg_ms = latency_avg_ms
        self.num_iters = num_iters


class ExecutionStats:
    def __init__(self, c_stats, benchmark_config):
        self._c_stats = c_stats
        self.benchmark_config = benchmark_config

    @property
    def latency_avg_ms(self):
        return self._c_stats.latency_avg_ms

    @property
    def num_iters(self):
        return self._c_stats.num_iters

    @property
    def iters_per_second(self):
        """Calls per second across all calling threads."""
        return self.num_iters / self.total_time_seconds

    @property
    def total_time_seconds(self):
        return self.num_iters * (self.latency_avg_ms / 1000.0) / self.benchmark_config.num_calling_threads

    def __str__(self):
        return "\n".join([
            "Average latency per example: " + format_time(time_ms=self.latency_avg_ms),
            f"Total number of iterations: {self.num_iters}",
            f"Total number of iterations per second (across all threads): {self.iters_per_second:.2f}",
            "Total time: " + format_time(time_s=self.total_time_seconds),
        ])


class ThroughputBenchmark:
    """Benchmark `module` (any callable) on inputs stored with add_input."""

    def __init__(self, module):
        self._module = module
        self._inputs = []

    def run_once(self, *args, **kwargs):
        """The module's output for these arguments (to check that the benchmark runs what you mean)."""
        return self._module(*args, **kwargs)

    def add_input(self, *args, **kwargs):
        """Keep one input (the call's arguments); each benchmark call picks one of them at random."""
        self._inputs.append((args, kwargs))

    def _thread(self, config, shared, lock, start):
        rng = random.Random()
        for _ in range(config.num_warmup_iters):
            args, kwargs = rng.choice(self._inputs)
            self._module(*args, **kwargs)
        start.wait()
        while True:
            with lock:
                if shared["count"] >= config.num_iters:
                    return
                shared["count"] += 1
            args, kwargs = rng.choice(self._inputs)
            t0 = time.perf_counter()
            self._module(*args, **kwargs)
            dt = time.perf_counter() - t0
            with lock:
                shared["seconds"] += dt

    def benchmark(self, num_calling_threads=1, num_warmup_iters=10, num_iters=100, profiler_output_path=""):
        """Run the benchmark: an ExecutionStats with the average latency per call (ms) and the number of calls."""
        config = BenchmarkConfig()
        config.num_calling_threads = num_calling_threads
        config.num_warmup_iters = num_warmup_iters
        config.num_iters = num_iters
        config.profiler_output_path = profiler_output_path
        if not self._inputs:
            raise RuntimeError("Please provide benchmark inputs.Did you forget to call add_input()? ")
        shared, lock = {"count": 0, "seconds": 0.0}, threading.Lock()
        start = threading.Barrier(num_calling_threads + 1) if num_calling_threads > 0 else None
        threads = [threading.Thread(target=self._thread, args=(config, shared, lock, start))
                   for _ in range(num_calling_threads)]
        for t in threads:
            t.start()
        prof = None
        if threads:
            if profiler_output_path:
                from ..autograd.profiler import profile
                prof = profile()
                prof.__enter__()
            start.wait()
            for t in threads:
                t.join()
            if prof is not None:
                prof.__exit__(None, None, None)
                prof.export_chrome_trace(profiler_output_path)
        n = shared["count"]
        if not threads:                 # (torch's answers for no calling thread and for no iteration)
            stats = BenchmarkExecutionStats(0.0, num_iters)
        else:
            stats = BenchmarkExecutionStats(shared["seconds"] * 1000.0 / n if n else float("inf"), n)
        return ExecutionStats(stats, config)
