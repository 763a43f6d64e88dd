#!/usr/bin/env bash
# Checks the real NVML path against a real GPU load: run on a machine with an
# NVIDIA GPU, PyTorch and a gpuprof binary (built elsewhere is fine):
#
#   scripts/real-gpu-check.sh ./gpuprof OUTDIR
#
# The agent samples through NVML; the hooks run with a slurmd-like
# environment; scripts/torch_load.py allocates a known amount of VRAM under a
# known duty cycle. Prints expected vs recorded peak and utilisation.
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
"$BIN" agent --config "$OUT/gpuprof.toml" >>"$OUT/agent.stderr" 2>&1 </dev/null &
AGENT=$!
trap 'kill $AGENT 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$OUT/agent.sock" ] && break; sleep 0.1; done

run() { # id gib duty seconds
	local env=(SLURM_JOB_ID="$1" SLURM_JOB_USER=check SLURM_JOB_UID=0 SLURM_JOB_GID=0
		SLURMD_NODENAME=gpunode SLURM_JOB_GPUS=0 CUDA_VISIBLE_DEVICES=0)
	env -i "${env[@]}" SLURM_SCRIPT_CONTEXT=prolog_slurmd "$BIN" prolog --config "$OUT/gpuprof.toml"
	env "${env[@]}" python3 "$HERE/torch_load.py" --gib "$2" --duty "$3" --seconds "$4" > "$OUT/job$1.json"
	env -i "${env[@]}" SLURM_SCRIPT_CONTEXT=epilog_slurmd SLURM_JOB_EXIT_CODE=0 "$BIN" epilog --config "$OUT/gpuprof.toml"
}
run 1 10 0.9 40
run 2 20 0.3 40
run 3 4 0.0 20
sleep 3
for id in 1 2 3; do
	echo "job $id: program said $(cat "$OUT/job$id.json")"
	"$BIN" show "$id" --config "$OUT/gpuprof.toml" | sed 's/^/    /'
done
