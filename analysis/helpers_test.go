package analysis

import (
	"math"
	"time"
)

// t0 is the start of every test job unless a test says otherwise.
var t0 = time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)

const (
	gib  = uint64(1) << 30
	card = 80 * gib // an H100's memory
	h100 = "NVIDIA H100 80GB HBM3"
)

// busy returns a GPU whose utilisation statistics are all u percent, with
// a memory peak of peakGiB on an 80 GiB card.
func busy(u float64, peakGiB uint64) GPU {
	return GPU{
		Node: "gpu01", Model: h100, MemoryTotal: card,
		VRAMPeak: peakGiB * gib, VRAMPeakValid: true,
		UtilMean: u, UtilMeanValid: true,
		UtilP50: u, UtilP95: u, UtilPctValid: true,
		UtilMax: u, UtilMaxValid: true,
		IdleFraction: 0, IdleValid: true,
	}
}

// spread returns a GPU with the given mean, median and 95th percentile.
func spread(mean, p50, p95 float64) GPU {
	g := busy(mean, 20)
	g.UtilP50, g.UtilP95, g.UtilMax = p50, p95, max(p95, mean)
	return g
}

// idleGPU is a GPU held and never touched (the recorder's flag).
func idleGPU() GPU {
	g := busy(0, 0)
	g.IdleAllocation = true
	g.IdleFraction = 1
	return g
}

// withFloor sets a measured memory floor as a fraction of the peak.
func withFloor(g GPU, frac float64) GPU {
	g.VRAMFloor, g.VRAMFloorValid = uint64(frac*float64(g.VRAMPeak)), true
	return g
}

// job returns a completed job that was submitted, started at t0 and ran
// for elapsed on gpus (one requested GPU per entry).
func job(elapsed time.Duration, gpus ...GPU) Job {
	return Job{
		Cluster: "c1", ID: "1", User: "alice", Account: "lab", Partition: "gpu",
		Name: "train", State: "COMPLETED",
		Submit: t0, Start: t0, End: t0.Add(elapsed),
		TimeLimit: 24 * time.Hour, ExitKnown: true,
		ReqGPUs: len(gpus), HasGPUData: len(gpus) > 0,
		GPUs: gpus,
	}
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
