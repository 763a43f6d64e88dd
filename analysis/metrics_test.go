package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

func TestMeasure(t *testing.T) {
	a := busy(90, 40)
	a.UtilP50, a.UtilP95, a.UtilMax, a.IdleFraction = 95, 100, 100, 0.1
	a.EnergyJ, a.EnergyValid = 1000, true
	a = withFloor(a, 0.5) // floor 20 GiB
	b := busy(30, 60)
	b.UtilP50, b.UtilP95, b.UtilMax, b.IdleFraction = 20, 70, 90, 0.3
	b.EnergyJ, b.EnergyValid = 500, true
	b = withFloor(b, 0.75) // floor 45 GiB
	j := job(3*time.Hour, a, b)
	j.Submit = t0.Add(-90 * time.Minute)
	j.ReqGPUs = 2
	j.IOWait, j.IOWaitValid, j.IOScope = 0.05, true, profile.IOScopeProcess

	m := Measure(j, DefaultConfig())
	checks := []struct {
		name      string
		got, want any
	}{
		{"Elapsed", m.Elapsed, 3 * time.Hour},
		{"Wait", m.Wait, 90 * time.Minute},
		{"Outcome", m.Outcome, OutcomeCompleted},
		{"GPUs", m.GPUs, 2},
		{"MeasuredGPUs", m.MeasuredGPUs, 2},
		{"UnusedGPUs", m.UnusedGPUs, 0},
		{"GPUHours", m.GPUHours, 6.0},           // 2 GPUs × 3 h
		{"UtilMean", m.UtilMean, 60.0},          // (90 + 30) / 2
		{"UtilP50", m.UtilP50, 57.5},            // (95 + 20) / 2
		{"UtilP95", m.UtilP95, 85.0},            // (100 + 70) / 2
		{"UtilMax", m.UtilMax, 100.0},           // max(100, 90)
		{"IdleFraction", m.IdleFraction, 0.2},   // (0.1 + 0.3) / 2
		{"VRAMPeakFrac", m.VRAMPeakFrac, 0.75},  // max(40, 60) / 80
		{"VRAMPeak", m.VRAMPeak, 60 * gib},      // the GPU with the highest fraction
		{"VRAMCard", m.VRAMCard, card},          //
		{"VRAMSteady", m.VRAMSteady, 0.5},       // min(20/40, 45/60)
		{"Preallocated", m.Preallocated, false}, //
		{"IOWait", m.IOWait, 0.05},              //
		{"IOScope", m.IOScope, profile.IOScopeProcess},
		{"EnergyJ", m.EnergyJ, 1500.0},
		{"EnergyValid", m.EnergyValid, true},
		{"Notes", m.Notes.Total(), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !m.UtilMeanValid || !m.UtilP50Valid || !m.UtilP95Valid || !m.UtilMaxValid || !m.IdleValid ||
		!m.VRAMPeakValid || !m.VRAMPeakBytesValid || !m.VRAMSteadyValid || !m.IOWaitValid || !m.ElapsedValid || !m.WaitValid {
		t.Errorf("a validity flag is false: %+v", m)
	}
}

func TestMeasureGPUCount(t *testing.T) {
	tests := []struct {
		name      string
		reqGPUs   int
		reqShards int
		recorded  int
		want      int
		wantShare float64 // GPU-equivalents; 0: as want
	}{
		{name: "requested and recorded", reqGPUs: 4, recorded: 4, want: 4},
		{name: "a node's profile missing", reqGPUs: 8, recorded: 4, want: 8},
		{name: "profiles only", reqGPUs: 0, recorded: 2, want: 2},
		// Without an inventory, DefaultShardsPerGPU (8) shards make a GPU.
		{name: "shard job recorded", reqShards: 3, recorded: 1, want: 1, wantShare: 3.0 / 8},
		{name: "shard job without profile", reqShards: 3, want: 1, wantShare: 3.0 / 8},
		{name: "shards of two GPUs", reqShards: 12, recorded: 2, want: 2, wantShare: 12.0 / 8},
		{name: "more shards than the GPUs recorded hold", reqShards: 12, recorded: 1, want: 1, wantShare: 1},
		{name: "cpu job", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus := make([]GPU, tt.recorded)
			for i := range gpus {
				gpus[i] = busy(50, 10)
			}
			j := job(2*time.Hour, gpus...)
			j.ReqGPUs, j.ReqShards = tt.reqGPUs, tt.reqShards
			m := Measure(j, DefaultConfig())
			share := tt.wantShare
			if share == 0 {
				share = float64(tt.want)
			}
			if m.GPUs != tt.want || !approx(m.GPUShare, share) || !approx(m.GPUHours, 2*share) {
				t.Errorf("GPUs = %d (share %v), GPU-hours %v; want %d (%v), %v", m.GPUs, m.GPUShare, m.GPUHours, tt.want, share, 2*share)
			}
		})
	}
}

func TestMeasureBadData(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	with := func(f func(*GPU)) Job {
		g := busy(50, 10)
		f(&g)
		return job(time.Hour, g, busy(70, 20))
	}
	tests := []struct {
		name  string
		job   Job
		notes DataNotes
		// utilMean is the job's mean after the bad value is ignored: the
		// good GPU's 70 alone, or (50 + 70) / 2 when the mean survived.
		utilMean float64
	}{
		{name: "NaN mean", job: with(func(g *GPU) { g.UtilMean = nan }), notes: DataNotes{NaN: 1}, utilMean: 70},
		{name: "+Inf mean", job: with(func(g *GPU) { g.UtilMean = inf }), notes: DataNotes{Inf: 1}, utilMean: 70},
		{name: "-Inf mean", job: with(func(g *GPU) { g.UtilMean = -inf }), notes: DataNotes{Inf: 1}, utilMean: 70},
		{name: "negative mean", job: with(func(g *GPU) { g.UtilMean = -3 }), notes: DataNotes{Negative: 1}, utilMean: 70},
		{name: "mean above 100", job: with(func(g *GPU) { g.UtilMean = 4294967295 }), notes: DataNotes{UtilOver100: 1}, utilMean: 70},
		{name: "invalid mean is missing, not bad", job: with(func(g *GPU) { g.UtilMean, g.UtilMeanValid = nan, false }), utilMean: 70},
		{name: "p50 and p95 above 100", job: with(func(g *GPU) { g.UtilP50, g.UtilP95 = 101, 250 }), notes: DataNotes{UtilOver100: 2}, utilMean: 60},
		{name: "max NaN", job: with(func(g *GPU) { g.UtilMax = nan }), notes: DataNotes{NaN: 1}, utilMean: 60},
		{name: "idle fraction above 1", job: with(func(g *GPU) { g.IdleFraction = 1.5 }), notes: DataNotes{FracOver1: 1}, utilMean: 60},
		{name: "peak above card", job: with(func(g *GPU) { g.VRAMPeak = card + 1 }), notes: DataNotes{PeakOverCard: 1}, utilMean: 60},
		{name: "floor above peak", job: with(func(g *GPU) { g.VRAMFloor, g.VRAMFloorValid = 11*gib, true }), notes: DataNotes{Inconsistent: 1}, utilMean: 60},
		{name: "no card size", job: with(func(g *GPU) { g.MemoryTotal = 0 }), notes: DataNotes{NoCardSize: 1}, utilMean: 60},
		{name: "energy NaN", job: with(func(g *GPU) { g.EnergyJ, g.EnergyValid = nan, true }), notes: DataNotes{NaN: 1}, utilMean: 60},
		{name: "energy negative", job: with(func(g *GPU) { g.EnergyJ, g.EnergyValid = -5, true }), notes: DataNotes{Negative: 1}, utilMean: 60},
		{
			name: "io wait above 1",
			job: func() Job {
				j := job(time.Hour, busy(60, 10))
				j.IOWait, j.IOWaitValid, j.IOScope = 2, true, "cgroup"
				return j
			}(),
			notes:    DataNotes{FracOver1: 1},
			utilMean: 60,
		},
		{
			name:     "end before start",
			job:      func() Job { j := job(time.Hour, busy(60, 10)); j.End = t0.Add(-time.Second); return j }(),
			notes:    DataNotes{BadTimes: 1},
			utilMean: 60,
		},
		{
			name:     "start before submit",
			job:      func() Job { j := job(time.Hour, busy(60, 10)); j.Submit = t0.Add(time.Minute); return j }(),
			notes:    DataNotes{BadTimes: 1},
			utilMean: 60,
		},
		{
			name:     "span of years",
			job:      func() Job { j := job(time.Hour, busy(60, 10)); j.End = t0.AddDate(2, 0, 0); return j }(),
			notes:    DataNotes{BadTimes: 1},
			utilMean: 60,
		},
		{
			name: "year 1",
			job: func() Job {
				j := job(time.Hour, busy(60, 10))
				j.Submit = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
				return j
			}(),
			notes:    DataNotes{BadTimes: 1},
			utilMean: 60,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Measure(tt.job, DefaultConfig())
			if m.Notes != tt.notes {
				t.Errorf("notes = %+v, want %+v", m.Notes, tt.notes)
			}
			if !m.UtilMeanValid || !approx(m.UtilMean, tt.utilMean) {
				t.Errorf("UtilMean = %v (%v), want %v", m.UtilMean, m.UtilMeanValid, tt.utilMean)
			}
		})
	}
}

func TestMeasureBadDataSideEffects(t *testing.T) {
	// A peak above the card leaves the GPU's other readings in use but
	// gives the job no memory figure from it.
	g := busy(50, 10)
	g.VRAMPeak = 2 * card
	m := Measure(job(time.Hour, g), DefaultConfig())
	if m.VRAMPeakValid || m.VRAMPeakBytesValid || m.MeasuredGPUs != 1 {
		t.Errorf("peak valid %v/%v, measured %d; want false/false, 1", m.VRAMPeakValid, m.VRAMPeakBytesValid, m.MeasuredGPUs)
	}
	// Without a card size, the peak stays in bytes.
	g = busy(50, 10)
	g.MemoryTotal = 0
	m = Measure(job(time.Hour, g), DefaultConfig())
	if m.VRAMPeakValid || !m.VRAMPeakBytesValid || m.VRAMPeak != 10*gib {
		t.Errorf("no card: frac valid %v, bytes %v %d; want false, true %d", m.VRAMPeakValid, m.VRAMPeakBytesValid, m.VRAMPeak, 10*gib)
	}
	// A bad end time leaves no run time and no GPU-hours.
	j := job(time.Hour, busy(50, 10))
	j.End = t0.Add(-time.Hour)
	m = Measure(j, DefaultConfig())
	if m.ElapsedValid || m.GPUHours != 0 {
		t.Errorf("end before start: elapsed valid %v, GPU-hours %v", m.ElapsedValid, m.GPUHours)
	}
	// Energy is valid only when every measured GPU has it.
	a, b := busy(50, 10), busy(50, 10)
	a.EnergyJ, a.EnergyValid = 100, true
	m = Measure(job(time.Hour, a, b), DefaultConfig())
	if m.EnergyValid {
		t.Error("energy valid with one GPU unreported")
	}
}

func TestMeasurePreallocated(t *testing.T) {
	p := busy(50, 79)
	p.Preallocated = true
	m := Measure(job(time.Hour, p, busy(50, 20)), DefaultConfig())
	// The reserved 79 GiB says nothing about need: the job's peak is the
	// other GPU's 20/80.
	if !m.Preallocated || m.VRAMReservedFrac != 79.0/80 || m.VRAMPeakFrac != 0.25 || m.VRAMSteady != 1 {
		t.Errorf("prealloc %v reserved %v peak %v steady %v; want true 0.9875 0.25 1",
			m.Preallocated, m.VRAMReservedFrac, m.VRAMPeakFrac, m.VRAMSteady)
	}
	m = Measure(job(time.Hour, p), DefaultConfig())
	if m.VRAMPeakValid || !m.Preallocated || m.MeasuredGPUs != 1 {
		t.Errorf("only preallocated: peak valid %v prealloc %v measured %d", m.VRAMPeakValid, m.Preallocated, m.MeasuredGPUs)
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		state     slurmext.JobState
		exitKnown bool
		status    int
		signal    int
		want      Outcome
	}{
		{state: "COMPLETED", want: OutcomeCompleted},
		{state: "FAILED", want: OutcomeFailed},
		{state: "OUT_OF_MEMORY", want: OutcomeFailed},
		{state: "NODE_FAIL", want: OutcomeFailed},
		{state: "BOOT_FAIL", want: OutcomeFailed},
		{state: "TIMEOUT", want: OutcomeTimeout},
		{state: "DEADLINE", want: OutcomeTimeout},
		{state: "CANCELLED", want: OutcomeCancelled},
		{state: "PREEMPTED", want: OutcomeCancelled},
		{state: "RUNNING", want: OutcomeRunning},
		{state: "PENDING", want: OutcomeRunning},
		{state: "REQUEUED", want: OutcomeRunning},
		{state: "NONSENSE", want: OutcomeUnknown},
		{state: "", want: OutcomeUnknown},
		{state: "", exitKnown: true, want: OutcomeCompleted},
		{state: "", exitKnown: true, status: 1, want: OutcomeFailed},
		{state: "", exitKnown: true, signal: 9, want: OutcomeFailed},
		{state: "COMPLETED", exitKnown: true, status: 3, want: OutcomeCompleted}, // the state decides
	}
	for _, tt := range tests {
		j := Job{State: tt.state, ExitKnown: tt.exitKnown, ExitStatus: tt.status, ExitSignal: tt.signal}
		if got := outcomeOf(&j); got != tt.want {
			t.Errorf("outcome(%q, known %v, %d:%d) = %s, want %s", tt.state, tt.exitKnown, tt.status, tt.signal, got, tt.want)
		}
	}
}

func TestDataNotesAddTotal(t *testing.T) {
	a := DataNotes{NaN: 1, Inf: 2, Negative: 3, UtilOver100: 4, FracOver1: 5, PeakOverCard: 6, Inconsistent: 7, NoCardSize: 8, BadTimes: 9}
	var s DataNotes
	s.Add(a)
	s.Add(a)
	if s.Total() != 90 || s.BadTimes != 18 || s.NaN != 2 {
		t.Errorf("sum = %+v (total %d), want every field doubled, total 90", s, s.Total())
	}
}
