#!/usr/bin/env bash
# Checks the real NVML path against a real GPU load: run on a machine with an
# NVIDIA GPU, PyTorch (and pynvml, which PyTorch's utilisation calls use) and
# a gpuprof binary (built elsewhere is fine):
#
#   scripts/real-gpu-check.sh ./gpuprof OUTDIR
#
# The agent samples through NVML; the hooks run with a slurmd-like
# environment; scripts/torch_load.py runs loads of known size: VRAM under a
# known duty cycle, a loop of tiny kernels (busy by the duty cycle, idle by
# SM activity) and a bf16 matmul loop (busy by both). Prints, per job,
# expected vs recorded peak, duty cycle, SM and tensor activity (GPM), and
# the job's energy against the driver's energy counter read right before
# its prolog and after its epilog; then the agent's CPU per GPU over the
# run. Paste the output into docs/real-gpu.md.
set -euo pipefail
BIN=$(realpath "${1:?usage: real-gpu-check.sh GPUPROF_BIN OUTDIR}")
OUT=${2:-gpu-check}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
cat > "$OUT/gpuprof.toml" <<CONF
cluster = "gpucheck"
node = "gpunode"
db = "$OUT/gpuprof.db"
spool_dir = "$OUT/spool"
socket = "$OUT/agent.sock"
log_file = "$OUT/gpuprof.log"
[agent]
gpu = "nvml"
interval = "1s"
flush_interval = "2s"
CONF
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
GPUS=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | wc -l)
# GPU 0's energy counter, mJ since the driver loaded (what gpuprof corrects
# its power integral against).
energy() {
	python3 -c 'import pynvml as n; n.nvmlInit(); print(n.nvmlDeviceGetTotalEnergyConsumption(n.nvmlDeviceGetHandleByIndex(0)))'
}
# The agent's CPU time, clock ticks (utime + stime).
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

"$BIN" agent --config "$OUT/gpuprof.toml" >>"$OUT/agent.stderr" 2>&1 </dev/null &
AGENT=$!
trap 'kill $AGENT 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$OUT/agent.sock" ] && break; sleep 0.1; done
sleep 5 # past the agent's start-up
CPU0=$(cputicks $AGENT); T0=$(date +%s.%N)

run() { # id gib seconds torch_load.py-options...
	local id=$1 gib=$2 secs=$3; shift 3
	local env=(SLURM_JOB_ID="$id" SLURM_JOB_USER=check SLURM_JOB_UID=0 SLURM_JOB_GID=0
		SLURMD_NODENAME=gpunode SLURM_JOB_GPUS=0 CUDA_VISIBLE_DEVICES=0)
	energy > "$OUT/job$id.energy0"
	env -i "${env[@]}" SLURM_SCRIPT_CONTEXT=prolog_slurmd "$BIN" prolog --config "$OUT/gpuprof.toml"
	env "${env[@]}" python3 "$HERE/torch_load.py" --gib "$gib" --seconds "$secs" "$@" > "$OUT/job$id.json"
	env -i "${env[@]}" SLURM_SCRIPT_CONTEXT=epilog_slurmd SLURM_JOB_EXIT_CODE=0 "$BIN" epilog --config "$OUT/gpuprof.toml"
	energy > "$OUT/job$id.energy1"
}
# id GiB seconds load                       expected (H200): peak, duty cycle, SM, tensor
run 1 10 40 --duty 0.9                    # 10 GiB + context; ~90 %; SM below the duty cycle (4096² fp32)
run 2 20 40 --duty 0.3                    # 20 GiB + context; ~30 %
run 3 4 20 --duty 0.0                     # 4 GiB + context; 0 %; a process held it: not an idle allocation
run 4 1 60 --kernel tiny                  # 1 GiB + context; ~16 %; SM ~0.02 %, tensor 0
run 5 4 60 --kernel bf16                  # 4 GiB + 0.4 GiB of operands; ~94 %; SM ~92 %, tensor ~90 %, DRAM ~16 %
sleep 3
CPU1=$(cputicks $AGENT); T1=$(date +%s.%N)

for id in 1 2 3 4 5; do
	echo "job $id: program said $(cat "$OUT/job$id.json")"
	"$BIN" show "$id" --config "$OUT/gpuprof.toml" | sed 's/^/    /'
	"$BIN" show "$id" --config "$OUT/gpuprof.toml" --json > "$OUT/job$id.show.json"
	python3 - "$OUT/job$id.show.json" "$(cat "$OUT/job$id.energy0")" "$(cat "$OUT/job$id.energy1")" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))[0]["gpus"][0]
a = g.get("activity") or {}
counter = (int(sys.argv[3]) - int(sys.argv[2])) / 1000
rec = g.get("energy_joules")
fmt = lambda v: "unknown" if v is None else f"{v:g}"
print(f"    recorded: peak {g['mem_peak_bytes'] / 2**30:.1f} GiB, duty cycle mean {fmt(g['util_mean'])} % p95 {fmt(g['util_p95'])} %, "
      f"SM mean {fmt(a.get('sm_mean'))} % p95 {fmt(a.get('sm_p95'))} %, tensor {fmt(a.get('tensor_mean'))} %, DRAM {fmt(a.get('dram_mean'))} % ({a.get('scope', 'no GPM')})")
if rec is None:
    print(f"    energy: counter {counter:.0f} J over prolog..epilog; profile: not measured")
else:
    print(f"    energy: profile {rec:.0f} J, counter {counter:.0f} J over prolog..epilog ({100 * (rec - counter) / counter:+.2f} %)")
PY
done
python3 - "$CPU0" "$CPU1" "$T0" "$T1" "$GPUS" <<'PY'
import os, sys
c0, c1, t0, t1, n = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
pct = (c1 - c0) / os.sysconf("SC_CLK_TCK") / (t1 - t0) * 100
print(f"agent CPU: {pct:.3f} % of one core over {t1 - t0:.0f} s with {n} GPU(s): {pct / n:.3f} % per GPU (target ≤ 0.1 %)")
PY
grep -E 'VmHWM|VmRSS' "/proc/$AGENT/status" | tr -s ' \t' ' '
