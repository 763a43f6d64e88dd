package capacity

import (
	"math"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// The test GPU and job, as analysis's tests have them.
const (
	gib  = uint64(1) << 30
	card = 80 * gib // an H100's memory
	h100 = "NVIDIA H100 80GB HBM3"
)

// busy returns an H100 whose utilisation statistics are all u percent,
// with a memory peak of peakGiB.
func busy(u float64, peakGiB uint64) analysis.GPU {
	return analysis.GPU{Node: "gpu01", Model: h100, MemoryTotal: card, VRAMPeak: peakGiB * gib, VRAMPeakValid: true,
		UtilMean: u, UtilMeanValid: true, UtilP50: u, UtilP95: u, UtilPctValid: true, UtilMax: u, UtilMaxValid: true, IdleValid: true}
}

// withFloor sets a measured memory floor as a fraction of the peak.
func withFloor(g analysis.GPU, frac float64) analysis.GPU {
	g.VRAMFloor, g.VRAMFloorValid = uint64(frac*float64(g.VRAMPeak)), true
	return g
}

// job returns a completed job of alice that ran for elapsed on gpus (one
// requested GPU per entry), from 2025-03-01 08:00 UTC.
func job(elapsed time.Duration, gpus ...analysis.GPU) analysis.Job {
	t0 := time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)
	return analysis.Job{Cluster: "c1", ID: "1", User: "alice", Account: "lab", Partition: "gpu", Name: "train", State: "COMPLETED",
		Submit: t0, Start: t0, End: t0.Add(elapsed), TimeLimit: 24 * time.Hour, ExitKnown: true,
		ReqGPUs: len(gpus), HasGPUData: len(gpus) > 0, GPUs: gpus}
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
