"""The graph timing every H200 Python script shares, as `blockfp8 bench` times the crate: warm-up
on a side stream, one CUDA graph of `pass_fn()`, and each timed replay behind an untimed one (the
GPU is still busy when the start event comes up, so the host's submission of the timed replay
is not counted); the median of the repeats in microseconds per replay. `GraphTimer` keeps the
graph so that several contenders can be timed in alternating rounds (drift then spreads over all
of them, as the crate's bench does with its paths)."""

import torch


class GraphTimer:
    def __init__(self, pass_fn, device, warmup=3):
        self.device, self.warmup = device, warmup
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(warmup):
                pass_fn()
        torch.cuda.current_stream(device).wait_stream(side)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            pass_fn()

    def times_us(self, repeats, warmup=None):
        """`repeats` timed replays (after `warmup` untimed ones, default the constructor's),
        microseconds each."""
        for _ in range(self.warmup if warmup is None else warmup):
            self.graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.graph.replay()
            start.record()
            self.graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
        return times


def median(times):
    return sorted(times)[len(times) // 2]


def cuda_graph_us(pass_fn, device, warmup=3, repeats=15):
    timer = GraphTimer(pass_fn, device, warmup)
    times = timer.times_us(repeats)
    del timer
    return median(times)
