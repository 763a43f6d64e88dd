package analysis

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

func TestDiagnose(t *testing.T) {
	prealloc := func(g GPU) GPU { g.Preallocated = true; return g }
	waited := func(wait time.Duration, j Job) Job {
		run := j.End.Sub(j.Start)
		j.Submit = t0.Add(-wait)
		j.Start, j.End = t0, t0.Add(run)
		return j
	}
	state := func(s slurmext.JobState, j Job) Job { j.State = s; return j }
	io := func(frac float64, j Job) Job {
		j.IOWait, j.IOWaitValid, j.IOScope = frac, true, profile.IOScopeCgroup
		return j
	}
	sched := func(j Job) Job { j.ReqGPUs, j.HasGPUData = 1, false; return j }

	type want struct {
		kind Kind
		rule string
		why  string
	}
	tests := []struct {
		name string
		job  Job
		want []want
	}{
		{
			name: "nothing",
			job:  job(2*time.Hour, busy(50, 40)),
		},
		{
			// 76/80 = 0.95.
			name: "vram peak",
			job:  job(2*time.Hour, busy(50, 76)),
			want: []want{{KindVRAMBound, "vram_bound.peak", "VRAM peak 95 % of the card ≥ 90 %; 76 GiB of 80 GiB on " + h100}},
		},
		{
			// 72/80 is exactly 0.9.
			name: "vram peak at the threshold",
			job:  job(2*time.Hour, busy(50, 72)),
			want: []want{{KindVRAMBound, "vram_bound.peak", "VRAM peak 90 % of the card ≥ 90 %; 72 GiB of 80 GiB on " + h100}},
		},
		{
			name: "vram peak below the threshold",
			job:  job(2*time.Hour, busy(50, 71)),
		},
		{
			name: "preallocated peak is not a need",
			job:  job(2*time.Hour, prealloc(busy(50, 79))),
		},
		{
			// The other GPU's 75/80 = 0.9375 is a need.
			name: "preallocated and needed",
			job:  job(2*time.Hour, prealloc(busy(50, 79)), busy(50, 75)),
			want: []want{{KindVRAMBound, "vram_bound.peak", "VRAM peak 93.8 % of the card ≥ 90 %; 75 GiB of 80 GiB on " + h100}},
		},
		{
			name: "host out of memory",
			job:  state("OUT_OF_MEMORY", job(time.Hour, busy(50, 10))),
			want: []want{{KindHostMemoryBound, "host_memory_bound", "state OUT_OF_MEMORY: the host-memory limit (--mem), not GPU memory"}},
		},
		{
			name: "compute bound",
			job:  job(2*time.Hour, spread(82, 85, 99)),
			want: []want{{KindComputeBound, "compute_bound", "median util 85 % ≥ 80 %"}},
		},
		{
			name: "compute bound at the threshold",
			job:  job(2*time.Hour, busy(80, 10)),
			want: []want{{KindComputeBound, "compute_bound", "median util 80 % ≥ 80 %"}},
		},
		{
			// Median over GPUs: (100 + 58) / 2 = 79.
			name: "compute below the threshold",
			job:  job(2*time.Hour, busy(100, 10), busy(58, 10)),
		},
		{
			name: "io bound",
			job:  io(0.4, job(2*time.Hour, busy(15, 10))),
			want: []want{{KindIOBound, "io_bound", "IO wait 40 % of wall time ≥ 20 % and mean util 15 % < 30 %; IO wait measured per cgroup"}},
		},
		{
			name: "io wait with busy GPUs",
			job:  io(0.4, job(2*time.Hour, busy(60, 10))),
		},
		{
			// One idle allocation and one at 3 % < 5 %: two of four unused.
			name: "underused",
			job:  job(5*time.Hour, busy(60, 10), busy(60, 10), idleGPU(), busy(3, 10)),
			want: []want{{KindUnderused, "underused", "unused GPUs 2 ≥ 1; 2 of 4 GPUs unused (mean util < 5 % or never touched)"}},
		},
		{
			// 2 h wait = 4 × 30 m run, and ≥ 15 m.
			name: "queue bound",
			job:  waited(2*time.Hour, job(30*time.Minute, busy(50, 10))),
			want: []want{{KindQueueBound, "queue_bound", "wait/run 4× ≥ 4× and waited 02:00:00 ≥ 00:15:00"}},
		},
		{
			name: "queue just below the ratio",
			job:  waited(2*time.Hour-time.Second, job(30*time.Minute, busy(50, 10))),
		},
		{
			// Ratio 10, but a 10-minute wait is no queueing problem.
			name: "short wait of a short job",
			job:  waited(10*time.Minute, job(time.Minute, busy(50, 10))),
		},
		{
			name: "queue bound job that ran no time",
			job: func() Job {
				j := waited(20*time.Minute, job(0, busy(50, 10)))
				j.NodeList = "gpu01" // it ran there, under a second (slurmext.Started)
				return j
			}(),
			want: []want{{KindQueueBound, "queue_bound", "waited 00:20:00 ≥ 00:15:00; ran 00:00:00"}},
		},
		{
			name: "eligible time counts, not submit",
			job: func() Job {
				j := waited(5*time.Hour, job(30*time.Minute, busy(50, 10)))
				j.Eligible = t0.Add(-time.Hour) // held until then: 1 h wait
				return j
			}(),
		},
		{
			name: "scheduler history can be queue bound",
			job:  sched(waited(3*time.Hour, job(30*time.Minute))),
			want: []want{{KindQueueBound, "queue_bound", "wait/run 6× ≥ 4× and waited 03:00:00 ≥ 00:15:00"}},
		},
		{
			name: "several at once",
			job:  state("OUT_OF_MEMORY", waited(9*time.Hour, job(2*time.Hour, busy(95, 78), idleGPU()))),
			want: []want{
				{KindVRAMBound, "vram_bound.peak", "VRAM peak 97.5 % of the card ≥ 90 %; 78 GiB of 80 GiB on " + h100},
				{KindHostMemoryBound, "host_memory_bound", "state OUT_OF_MEMORY: the host-memory limit (--mem), not GPU memory"},
				{KindUnderused, "underused", "unused GPUs 1 ≥ 1; 1 of 2 GPUs unused (mean util < 5 % or never touched)"},
				{KindQueueBound, "queue_bound", "wait/run 4.5× ≥ 4× and waited 09:00:00 ≥ 00:15:00"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diagnose(tt.job, DefaultConfig())
			if len(got) != len(tt.want) {
				t.Fatalf("got %d bottlenecks %+v, want %d", len(got), got, len(tt.want))
			}
			var set Kinds
			for i, b := range got {
				w := tt.want[i]
				set = set.With(w.kind)
				if b.Kind != w.kind || b.Reason.Rule != w.rule {
					t.Errorf("[%d] = %s (%s), want %s (%s)", i, b.Kind, b.Reason.Rule, w.kind, w.rule)
				}
				if s := b.Reason.String(); s != w.why {
					t.Errorf("[%d] reason = %q\n            want %q", i, s, w.why)
				}
			}
			// The bulk path must agree with the one that explains.
			c := DefaultConfig()
			m := Measure(tt.job, c)
			if bulk := diagnose(&tt.job, &m, &c, nil); bulk != set {
				t.Errorf("bulk set = %v, want %v", bulk.List(), set.List())
			}
		})
	}
}

func TestKinds(t *testing.T) {
	var s Kinds
	s = s.With(KindQueueBound).With(KindVRAMBound).With(KindQueueBound)
	if !s.Has(KindVRAMBound) || !s.Has(KindQueueBound) || s.Has(KindIOBound) || s.Has(Kind(99)) {
		t.Errorf("Has on %b wrong", s)
	}
	if got, want := s.List(), []Kind{KindVRAMBound, KindQueueBound}; !reflect.DeepEqual(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	b, err := json.Marshal(struct{ A, B Kinds }{s, 0})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"A":["vram_bound","queue_bound"],"B":[]}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	for _, k := range AllKinds() {
		text, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Kind
		if err := back.UnmarshalText(text); err != nil || back != k {
			t.Errorf("round trip of %s = %s, %v", k, back, err)
		}
	}
	if _, err := Kind(50).MarshalText(); err == nil {
		t.Error("MarshalText of an out-of-range kind: no error")
	}
}
