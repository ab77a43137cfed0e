"""The graph timing every H200 Python script shares, as `blockfp8 bench` times the crate: warm-up
on a side stream, one CUDA graph of `pass_fn()`, and each timed replay behind an untimed one (the
GPU is still busy when the start event comes up, so the host's submission of the timed replay
is not counted); the median of the repeats in microseconds per replay."""

import torch


def cuda_graph_us(pass_fn, device, warmup=3, repeats=15):
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(warmup):
            pass_fn()
    torch.cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        pass_fn()
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        graph.replay()
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    del graph
    return sorted(times)[len(times) // 2]
