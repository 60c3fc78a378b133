# bench/gpu_torch.py — PyTorch on the same GPU as bench/gpu.lua: matmul 8192²
# in fp32, tf32 and bf16 and the eager tiny-op cost, printed as `name: value unit`.
import time

import torch


def measure(fn, iters, runs=5):
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters)
    times.sort()
    return times[len(times) // 2]


def main():
    if not torch.cuda.is_available():
        print("gpu_torch: skipped (no GPU visible)")
        return
    dev = "cuda:0"
    n = 8192
    a = torch.rand(n, n, device=dev)
    b = torch.rand(n, n, device=dev)

    def bench(name, x, y):
        def step():
            torch.matmul(x, y)
            torch.cuda.synchronize()
        t = measure(step, 3)
        print(f"matmul_8192_{name}: {2 * n ** 3 / t / 1e12:.4g} TFLOP/s")

    torch.backends.cuda.matmul.allow_tf32 = False
    bench("fp32", a, b)
    torch.backends.cuda.matmul.allow_tf32 = True
    bench("tf32", a, b)
    torch.backends.cuda.matmul.allow_tf32 = False
    bench("bf16", a.bfloat16(), b.bfloat16())

    x = torch.tensor([1.5], device=dev)
    y = torch.tensor([2.5], device=dev)

    def tiny():
        for _ in range(100):
            x + y
        torch.cuda.synchronize()
    print(f"add_1_gpu: {measure(tiny, 100) / 100 * 1e6:.4g} us")


if __name__ == "__main__":
    main()
