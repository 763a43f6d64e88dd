package analysis

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestFutureDemandAndGPUsNeeded(t *testing.T) {
	tests := []struct {
		name               string
		cNow, g            float64
		months             int
		newD, qSafe, wantC float64
		wantG              int
	}{
		// 10·1.3 + 2 = 15; 15 / 0.8 = 18.75 → 19.
		{"one year at 30 %", 10, 0.3, 12, 2, 0.8, 15, 19},
		// 10·1.21 = 12.1 over two years; 12.1 / 0.5 = 24.2 → 25.
		{"two years at 10 %", 10, 0.1, 24, 0, 0.5, 12.1, 25},
		// 8·(1.44)^(1/2) = 9.6 at six months; 9.6 / 0.8 = 12 exactly.
		{"half a year at 44 %", 8, 0.44, 6, 0, 0.8, 9.6, 12},
		{"no demand", 0, 0.3, 12, 0, 0.8, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FutureDemand(tt.cNow, tt.g, tt.months, tt.newD)
			if math.Abs(c-tt.wantC) > 1e-9 {
				t.Errorf("C_future = %v, want %v", c, tt.wantC)
			}
			if g := GPUsNeeded(c, tt.qSafe); g != tt.wantG {
				t.Errorf("G = %d, want %d", g, tt.wantG)
			}
		})
	}
}

func TestPeakConcurrency(t *testing.T) {
	// Intervals (GPUs): [0,10) 2, [5,15) 3, [10,20) 4, [20,30) 1.
	// At 5–10: 2+3 = 5; at 10–15: 3+4 = 7 (the first ended at 10); at 20:
	// 4 ended, 1 starts: 1.
	jobs := []jobFact{
		{cs: 100, ce: 110, gpus: 2, user: "a"},
		{cs: 105, ce: 115, gpus: 3, user: "b"},
		{cs: 110, ce: 120, gpus: 4, user: "a"},
		{cs: 120, ce: 130, gpus: 1, user: "b"},
		{cs: 0, ce: 0, gpus: 50, user: "a"}, // nothing counted: left out
	}
	// Whole GPUs: the shares are the GPUs.
	for i := range jobs {
		jobs[i].share = float64(jobs[i].gpus)
	}
	jobs[2].cls = ClassLongTraining
	all, byClass := peaksByClass(jobs)
	if all != 7 || byClass[ClassLongTraining] != 4 || byClass[ClassUnknown] != 5 {
		t.Errorf("peaksByClass = %v, %v; want 7, long 4, unknown 5", all, byClass)
	}
	peaks := peaksBy(jobs, func(j *jobFact) string { return j.user })
	if peaks["a"] != 4 || peaks["b"] != 3 {
		t.Errorf("per-user peaks = %v, want a:4 b:3", peaks)
	}
}

func TestPlanLittlesLaw(t *testing.T) {
	// Over 100 hours (first start to last end): 10 long runs of 10 h on 2
	// GPUs, and 50 runs of 1 h on 1 GPU. Long: λ = 10/100 = 0.1 per hour,
	// S = 10 h, 2 GPUs → L = 0.1·10·2 = 2 GPUs. Other: λ = 0.5, S = 1 →
	// L = 0.5. C_now = 2.5; C_future = 2.5·1.5 + 1 = 4.75; G =
	// ceil(4.75 / 0.5) = 10.
	var jobs []Job
	for i := range 10 {
		j := job(10*time.Hour, busy(90, 40), busy(90, 40))
		j.Start = t0.Add(time.Duration(i*9) * time.Hour)
		j.Submit, j.End = j.Start, j.Start.Add(10*time.Hour)
		jobs = append(jobs, j)
	}
	for i := range 50 {
		j := job(time.Hour, busy(60, 10))
		j.Start = t0.Add(time.Duration(i) * time.Hour)
		j.Submit, j.End = j.Start, j.Start.Add(time.Hour)
		jobs = append(jobs, j)
	}
	// The last long run ends at 81 + 10 = 91 h; stretch the period to 100 h.
	last := job(time.Hour, busy(60, 10))
	last.Start = t0.Add(99 * time.Hour)
	last.Submit, last.End = last.Start, last.Start.Add(time.Hour)
	jobs[len(jobs)-1] = last
	in := Input{Jobs: jobs, Nodes: []Node{{Name: "n1", GPUModel: h100, GPUs: 4}}}
	f, err := Analyse(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan(in, f, PlanParams{Growth: 0.5, Months: 12, NewDemand: 1, Headroom: 0.5}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !approx(p.PeriodHours, 100) {
		t.Fatalf("period = %v h, want 100", p.PeriodHours)
	}
	var long ClassLoad
	for _, l := range p.Classes {
		if l.Class == ClassLongTraining {
			long = l
		}
	}
	if !approx(long.ArrivalRate, 0.1) || !approx(long.ServiceTime, 10) || !approx(long.MeanGPUs, 2) || !approx(long.Concurrency, 2) {
		t.Errorf("long training load = %+v, want λ 0.1, S 10, 2 GPUs, L 2", long)
	}
	if !approx(p.CNow, 2.5) || !approx(p.CFuture, 4.75) || p.GPUsNeeded != 10 {
		t.Errorf("C_now %v, C_future %v, G %d; want 2.5, 4.75, 10", p.CNow, p.CFuture, p.GPUsNeeded)
	}
	// Long runs start 9 h apart and last 10 h: two overlap (4 GPUs) plus
	// the 1-GPU run of the hour.
	if p.PeakGPUs != 5 {
		t.Errorf("peak = %v, want 5", p.PeakGPUs)
	}
	if p.Constraint != ConstraintGPUs || !strings.Contains(p.CrossCheck, "10 GPUs are needed") {
		t.Errorf("verdict = %s (%s), want more GPUs", p.Constraint, p.CrossCheck)
	}
	if _, err := Plan(in, f, PlanParams{Headroom: 1}, DefaultConfig()); err == nil {
		t.Error("headroom 1 accepted")
	}
}

func TestPlanScaling(t *testing.T) {
	// One task run on 1 GPU at 80 % and on 4 GPUs at 40 %: efficiency 0.5.
	one := job(time.Hour, busy(80, 10))
	four := job(time.Hour, busy(40, 10), busy(40, 10), busy(40, 10), busy(40, 10))
	f, _ := collect(&Input{Jobs: []Job{one, four}}, func() *Config { c := DefaultConfig(); return &c }())
	s := scaling(f)
	if !s.Valid || s.Tasks != 1 || !approx(s.Efficiency, 0.5) {
		t.Errorf("scaling = %+v, want 1 task at 0.5", s)
	}
}

func TestPlanVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		groups []PlantGroup
		want   string
	}{
		{"idle allocations", []PlantGroup{healthy(), {Users: []string{"i"}, Jobs: 60, Duration: 10 * time.Hour, GPUs: 2, IdleAll: true}}, ConstraintScheduling},
		{"IO waits", []PlantGroup{healthy(), {Users: []string{"io"}, Jobs: 100, Duration: 6 * time.Hour, Util: 10, VRAMFrac: 0.3, IOWait: 0.6}}, ConstraintStorage},
		{"memory", []PlantGroup{{Users: []string{"big"}, Jobs: 100, Duration: 8 * time.Hour, Util: 90, VRAMFrac: 0.97, VRAMJitter: 0.02}}, ConstraintMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, f := analyseSpec(t, tt.groups...)
			if f.Plan.Constraint != tt.want {
				t.Errorf("verdict = %s (%s), want %s; evidence %v", f.Plan.Constraint, f.Plan.CrossCheck, tt.want, f.Plan.Evidence)
			}
		})
	}
}

func TestPackMIG(t *testing.T) {
	h, _ := MIGTable("NVIDIA H100 80GB HBM3", 80<<30)
	h200, _ := MIGTable("NVIDIA H200", 141<<30)
	a40, _ := MIGTable("NVIDIA A100-SXM4-40GB", 40<<30)
	a40bySize, _ := MIGTable("NVIDIA A100-PCIE", 40<<30)
	tests := []struct {
		name  string
		t     MIGModel
		need  uint64
		want  string
		count int
		ok    bool
	}{
		// 10 GB × 0.95 = 9.5 GiB usable: 6 GiB fits 1g.10gb, 7 per card.
		{"6 GiB on H100", h, 6 << 30, "1g.10gb", 7, true},
		// 12 GiB needs 20 GB: 1g.20gb (4) beats 2g.20gb (3).
		{"12 GiB on H100", h, 12 << 30, "1g.20gb", 4, true},
		{"30 GiB on H100", h, 30 << 30, "3g.40gb", 2, true},
		// 50 GiB fits only 7g.80gb (one instance): MIG gains nothing.
		{"50 GiB on H100", h, 50 << 30, "", 0, false},
		{"15 GiB on H200", h200, 15 << 30, "1g.18gb", 7, true},
		{"4 GiB on A100 40GB", a40, 4 << 30, "1g.5gb", 7, true},
		{"A100 40GB by size", a40bySize, 4 << 30, "1g.5gb", 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := PackMIG(tt.t, tt.need)
			if ok != tt.ok || l.Profile.Name != tt.want || l.Count != tt.count {
				t.Errorf("got %v %d %v, want %s %d %v", l.Profile.Name, l.Count, ok, tt.want, tt.count, tt.ok)
			}
		})
	}
	if _, ok := MIGTable("NVIDIA L40S", 48<<30); ok {
		t.Error("L40S has no MIG")
	}
}
