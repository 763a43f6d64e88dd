"""A CUDA program with a known footprint, for checking gpuprof on a real GPU.

Allocates exactly --gib GiB on the current device with torch.empty (the
caching allocator may round up to its block size), then keeps the GPU busy
for --seconds with one of three loads:

  --kernel matmul (default): float32 4096² matmuls for a duty cycle of
      --duty (fraction of each 100 ms window spent in them);
  --kernel bf16: back-to-back bf16 8192² matmuls (no pause): on an H200,
      NVML utilisation 94 %, SM activity 92 %, tensor 90 %, DRAM 16 %;
  --kernel tiny: a loop of 1,024-element adds, each followed by a
      synchronize: the GPU is "busy" by NVML's duty cycle (16 % on an
      H200) while its SMs are idle (0.02 % SM activity).

Prints what it did as one JSON line.
"""
import argparse, json, time
import torch

p = argparse.ArgumentParser()
p.add_argument("--gib", type=float, default=10)
p.add_argument("--duty", type=float, default=0.5)
p.add_argument("--seconds", type=float, default=30)
p.add_argument("--kernel", choices=["matmul", "bf16", "tiny"], default="matmul")
a = p.parse_args()

dev = torch.device("cuda")
hold = torch.empty(int(a.gib * (1 << 30)), dtype=torch.uint8, device=dev)
torch.cuda.synchronize()
end = time.time() + a.seconds
launches = 0
if a.kernel == "matmul":
    x = torch.randn(4096, 4096, device=dev)
    while time.time() < end:
        t0 = time.time()
        while time.time() - t0 < 0.1 * a.duty:
            x = (x @ x).clamp_(-1, 1)
            torch.cuda.synchronize()
            launches += 2
        time.sleep(max(0.0, 0.1 * (1 - a.duty)))
elif a.kernel == "bf16":
    x = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    y = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    while time.time() < end:
        for _ in range(10):
            z = x @ y
            launches += 1
        torch.cuda.synchronize()
else:  # tiny
    x = torch.zeros(1024, device=dev)
    while time.time() < end:
        x.add_(1.0)
        torch.cuda.synchronize()
        launches += 1
print(json.dumps({
    "allocated_bytes": hold.numel(),
    "torch_reserved_bytes": torch.cuda.memory_reserved(),
    "kernel": a.kernel, "duty": a.duty if a.kernel == "matmul" else None,
    "seconds": a.seconds, "launches": launches,
    "device": torch.cuda.get_device_name(),
}))
