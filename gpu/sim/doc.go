// Package sim is a simulated GPU node: a gpu.Sampler that behaves like NVML
// from the agent's point of view, fed by real processes that stand in for
// CUDA programs (`gpuprof simgpu burn`).
//
// The node lives in a state directory shared between processes:
//
//	DIR/node.json        the devices (written once by Init, never changed)
//	DIR/procs/PID.json   one file per simulated CUDA process (mode 01777, so
//	                     burns run as the job's user can register)
//	DIR/xid.log          append-only JSON lines of XID events
//
// A process file counts only while its PID is alive and has the start time
// recorded in the file, just as the driver frees a process's memory when it
// exits. See docs/sim-node.md for the formulas behind the readings.
//
// The default simulated node (config.Default's [sim] section, DefaultSpec)
// is 4 × "NVIDIA H100 80GB HBM3" with 80 GiB each and /dev/nvidia minors
// 0..3 in PCI bus order, unless sim.gpus, sim.model, sim.memory or
// sim.minors say otherwise.
//
// LoadFlags reads a burn's load as `gpuprof simgpu burn` spells it (comma
// lists of sizes and percentages, one value per GPU) into BurnOptions.
//
// This package must not import go-nvml, Slurm, SQLite or cobra code, and it
// must never make the agent fail because of what a simulated process wrote:
// bad process files are skipped, absurd values are passed through for the
// agent's gpu.Sanitize to judge.
package sim
