"""A CUDA program with a known footprint, for checking gpuprof on a real GPU.

Allocates exactly --gib GiB on the current device with torch.empty (the
caching allocator may round up to its block size), then keeps the GPU busy
for a duty cycle of --duty (fraction of each 100 ms window spent in matmuls)
for --seconds. Prints what it did as one JSON line.
"""
import argparse, json, time
import torch

p = argparse.ArgumentParser()
p.add_argument("--gib", type=float, default=10)
p.add_argument("--duty", type=float, default=0.5)
p.add_argument("--seconds", type=float, default=30)
a = p.parse_args()

dev = torch.device("cuda")
hold = torch.empty(int(a.gib * (1 << 30)), dtype=torch.uint8, device=dev)
x = torch.randn(4096, 4096, device=dev)
torch.cuda.synchronize()
end = time.time() + a.seconds
busy = 0.0
while time.time() < end:
    t0 = time.time()
    while time.time() - t0 < 0.1 * a.duty:
        x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
    busy += time.time() - t0
    time.sleep(max(0.0, 0.1 * (1 - a.duty)))
print(json.dumps({
    "allocated_bytes": hold.numel(),
    "torch_reserved_bytes": torch.cuda.memory_reserved(),
    "duty": a.duty, "seconds": a.seconds,
    "device": torch.cuda.get_device_name(),
}))
