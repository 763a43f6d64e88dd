package notice

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

const gib = 1 << 30

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// testRules: 1 s sampling, 60 s windows, utilisation below 1 % and memory
// below 1 GiB idle, every idle rule on.
func testRules() *Rules {
	idle := IdleRule{Enabled: true, Window: 60 * time.Second, UtilBelow: 1, MemoryBelow: gib}
	return &Rules{Interval: time.Second, IdleGPU: idle, IdleJob: idle, UnusedGPUs: idle}
}

// sample is one tick's readings, one per GPU; a nil entry is no reading
// (missing), lost marks a failed reading.
type sample struct {
	rd   []*profile.Reading
	lost []bool
}

func idleRd() *profile.Reading {
	return &profile.Reading{Util: gpu.Some[uint32](0), MemUsed: gpu.Some[uint64](0)}
}

func busyRd() *profile.Reading {
	return &profile.Reading{Util: gpu.Some[uint32](85), MemUsed: gpu.Some[uint64](20 * gib), Processes: 1}
}

func rdOf(util uint32, mem uint64, procs int) *profile.Reading {
	return &profile.Reading{Util: gpu.Some(util), MemUsed: gpu.Some(mem), Processes: procs}
}

// stream builds secs ticks where gpuFn gives GPU i's reading at second s.
func stream(secs, gpus int, gpuFn func(s, i int) *profile.Reading) []sample {
	out := make([]sample, secs)
	for s := range secs {
		out[s].rd = make([]*profile.Reading, gpus)
		out[s].lost = make([]bool, gpus)
		for i := range gpus {
			out[s].rd[i] = gpuFn(s, i)
		}
	}
	return out
}

type fired struct {
	at    int // seconds after t0
	rule  string
	since int
	gpus  uint64
}

// play runs a stream through a tracker, marking each finding fired as
// the agent does, and returns the findings.
func play(r *Rules, gpus []profile.GPU, ss []sample, setup func(*Tracker)) []fired {
	tr := NewTracker(r, len(gpus), nil)
	if setup != nil {
		setup(tr)
	}
	var out []fired
	for s, smp := range ss {
		now := t0.Add(time.Duration(s) * time.Second)
		for i, rd := range smp.rd {
			if rd != nil {
				x := *rd
				x.Time = now
				tr.Observe(i, x)
				gpus[i].Observe(x, r.Interval)
			}
			if smp.lost[i] {
				tr.Lost(i, now)
			}
		}
		if f, ok := tr.Evaluate(now, t0, gpus); ok {
			tr.MarkFired(f.Rule, now)
			out = append(out, fired{at: s, rule: f.Rule, since: int(f.Since.Sub(t0) / time.Second), gpus: f.GPUs})
		}
	}
	return out
}

func gpusOf(n int, mem uint64) []profile.GPU {
	gs := make([]profile.GPU, n)
	for i := range gs {
		gs[i] = profile.NewGPU(gpu.Device{UUID: "GPU-" + string(rune('a'+i)), Name: "NVIDIA H100 80GB HBM3", MemoryTotal: mem, Minor: i},
			i, t0, time.Second, 64)
	}
	return gs
}

func TestIdleRules(t *testing.T) {
	only := func(mut func(*Rules)) *Rules {
		r := testRules()
		mut(r)
		return r
	}
	tests := []struct {
		name  string
		rules *Rules
		gpus  int
		ss    []sample
		want  []fired
	}{
		{
			// The run from second 0 to 60 spans the window exactly: that
			// counts. One notice, idle_job, not idle_gpu as well.
			name: "one GPU idle from the start: idle_job exactly at the window", rules: testRules(), gpus: 1,
			ss:   stream(200, 1, func(int, int) *profile.Reading { return idleRd() }),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, since: 0, gpus: 1}},
		},
		{
			name: "one second short of the window: nothing", rules: testRules(), gpus: 1,
			ss:   stream(60, 1, func(int, int) *profile.Reading { return idleRd() }),
			want: nil,
		},
		{
			name: "idle_job off: idle_gpu takes the single GPU", rules: only(func(r *Rules) { r.IdleJob.Enabled = false }), gpus: 1,
			ss:   stream(200, 1, func(int, int) *profile.Reading { return idleRd() }),
			want: []fired{{at: 60, rule: profile.RuleIdleGPU, since: 0, gpus: 1}},
		},
		{
			name: "utilisation at the threshold is busy", rules: testRules(), gpus: 1,
			ss:   stream(200, 1, func(int, int) *profile.Reading { return rdOf(1, 0, 0) }),
			want: nil,
		},
		{
			name: "utilisation just below the threshold is idle", rules: only(func(r *Rules) { r.IdleJob.UtilBelow = 5 }), gpus: 1,
			ss:   stream(200, 1, func(int, int) *profile.Reading { return rdOf(4, 0, 0) }),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, since: 0, gpus: 1}},
		},
		{
			name: "a process holding memory at the threshold is busy", rules: testRules(), gpus: 1,
			ss:   stream(200, 1, func(int, int) *profile.Reading { return rdOf(0, gib, 1) }),
			want: nil,
		},
		{
			name: "a process holding memory below the threshold is idle", rules: testRules(), gpus: 1,
			ss:   stream(200, 1, func(int, int) *profile.Reading { return rdOf(0, gib-1, 1) }),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, since: 0, gpus: 1}},
		},
		{
			name: "no utilisation reading is never idle", rules: testRules(), gpus: 1,
			ss: stream(200, 1, func(int, int) *profile.Reading {
				return &profile.Reading{MemUsed: gpu.Some[uint64](0)}
			}),
			want: nil,
		},
		{
			// Busy for two minutes, then idle: the sliding window catches
			// it a window after the work stopped.
			name: "busy then idle", rules: testRules(), gpus: 1,
			ss: stream(400, 1, func(s, _ int) *profile.Reading {
				if s < 120 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 180, rule: profile.RuleIdleJob, since: 120, gpus: 1}},
		},
		{
			name: "a busy moment restarts the window", rules: testRules(), gpus: 1,
			ss: stream(400, 1, func(s, _ int) *profile.Reading {
				if s == 50 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 111, rule: profile.RuleIdleJob, since: 51, gpus: 1}},
		},
		{
			// Readings missing for 4 s (more than MaxGap intervals): the
			// run restarts at the next reading.
			name: "readings missing for a while restart the window", rules: testRules(), gpus: 1,
			ss: stream(400, 1, func(s, _ int) *profile.Reading {
				if s >= 30 && s < 34 {
					return nil
				}
				return idleRd()
			}),
			want: []fired{{at: 94, rule: profile.RuleIdleJob, since: 34, gpus: 1}},
		},
		{
			// Exactly MaxGap intervals between two readings is no gap.
			name: "a gap of three intervals keeps the window", rules: testRules(), gpus: 1,
			ss: stream(400, 1, func(s, _ int) *profile.Reading {
				if s == 30 || s == 31 {
					return nil
				}
				return idleRd()
			}),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, since: 0, gpus: 1}},
		},
		{
			name: "two GPUs, one busy: unused_gpus, not idle_gpu", rules: testRules(), gpus: 2,
			ss: stream(400, 2, func(_, i int) *profile.Reading {
				if i == 0 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 60, rule: profile.RuleUnusedGPUs, since: 0, gpus: 2}},
		},
		{
			name: "two GPUs, one busy, unused_gpus off: idle_gpu", rules: only(func(r *Rules) { r.UnusedGPUs.Enabled = false }), gpus: 2,
			ss: stream(400, 2, func(_, i int) *profile.Reading {
				if i == 0 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 60, rule: profile.RuleIdleGPU, since: 0, gpus: 2}},
		},
		{
			// Both GPUs idle: one notice for the whole job, and after it
			// neither idle_gpu nor unused_gpus.
			name: "two GPUs idle: idle_job supersedes", rules: testRules(), gpus: 2,
			ss:   stream(400, 2, func(int, int) *profile.Reading { return idleRd() }),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, since: 0, gpus: 3}},
		},
		{
			// GPU 1 idles first (unused_gpus), then GPU 0 too: the whole
			// job is a new finding.
			name: "one GPU idles, then the other", rules: testRules(), gpus: 2,
			ss: stream(400, 2, func(s, i int) *profile.Reading {
				if i == 0 && s < 100 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 60, rule: profile.RuleUnusedGPUs, since: 0, gpus: 2}, {at: 160, rule: profile.RuleIdleJob, since: 100, gpus: 3}},
		},
		{
			name: "four GPUs, two idle: idle_gpu", rules: testRules(), gpus: 4,
			ss: stream(400, 4, func(_, i int) *profile.Reading {
				if i < 2 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 60, rule: profile.RuleIdleGPU, since: 0, gpus: 0b1100}},
		},
		{
			// A shared GPU's reading is the job's own processes: none of
			// them is idle, whatever the other jobs on the card do.
			name: "shared GPU without the job's processes", rules: testRules(), gpus: 1,
			ss: stream(200, 1, func(int, int) *profile.Reading {
				return &profile.Reading{Util: gpu.Some[uint32](0), MemUsed: gpu.Some[uint64](0), Shared: true}
			}),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, since: 0, gpus: 1}},
		},
		{
			name: "shared GPU with the job's busy process", rules: testRules(), gpus: 1,
			ss: stream(200, 1, func(int, int) *profile.Reading {
				return &profile.Reading{Util: gpu.Some[uint32](40), MemUsed: gpu.Some[uint64](3 * gib), Processes: 1, Shared: true}
			}),
			want: nil,
		},
		{
			name: "busy job", rules: testRules(), gpus: 2,
			ss:   stream(400, 2, func(int, int) *profile.Reading { return busyRd() }),
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := play(tt.rules, gpusOf(tt.gpus, 80*gib), tt.ss, nil)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fired %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLostGPURestartsWindow(t *testing.T) {
	ss := stream(300, 1, func(int, int) *profile.Reading { return idleRd() })
	// The GPU's reading fails at second 40 (a partial reading came, but
	// the agent reports the error): unknown is never idle.
	ss[40].lost[0] = true
	got := play(testRules(), gpusOf(1, 80*gib), ss, nil)
	want := []fired{{at: 101, rule: profile.RuleIdleJob, since: 41, gpus: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fired %+v, want %+v", got, want)
	}
}

func TestCancelStep(t *testing.T) {
	r := testRules()
	r.CancelGrace = 30 * time.Second
	idle := stream(400, 1, func(int, int) *profile.Reading { return idleRd() })
	tests := []struct {
		name  string
		allow bool
		ss    []sample
		want  []fired
	}{
		{name: "after the grace", allow: true, ss: idle,
			want: []fired{{at: 60, rule: profile.RuleIdleJob, gpus: 1}, {at: 90, rule: profile.RuleCancel, gpus: 1}}},
		{name: "not in a cancel partition", allow: false, ss: idle,
			want: []fired{{at: 60, rule: profile.RuleIdleJob, gpus: 1}}},
		{
			// Busy at 80, within the grace: the job is not idle
			// continuously; the step needs a full window and grace again.
			name: "work during the grace", allow: true,
			ss: stream(400, 1, func(s, _ int) *profile.Reading {
				if s == 80 {
					return busyRd()
				}
				return idleRd()
			}),
			want: []fired{{at: 60, rule: profile.RuleIdleJob, gpus: 1}, {at: 171, rule: profile.RuleCancel, since: 81, gpus: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := play(r, gpusOf(1, 80*gib), tt.ss, func(tr *Tracker) {
				if tt.allow {
					tr.AllowCancel()
				}
			})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fired %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOversized(t *testing.T) {
	base := func() *Rules {
		r := testRules()
		r.IdleGPU.Enabled, r.IdleJob.Enabled, r.UnusedGPUs.Enabled = false, false, false
		r.Oversized = OversizedRule{Enabled: true, Window: 100 * time.Second, UtilBelow: 30, MemoryShare: 0.25, Margin: 1.2, Shards: true}
		return r
	}
	small := func(int, int) *profile.Reading { return rdOf(10, 4*gib, 1) }
	tests := []struct {
		name   string
		mut    func(*Rules)
		gpus   int
		rd     func(int, int) *profile.Reading
		want   []fired
		target string
		alloc  func(*Tracker) // what slurmctld allocated, when told
	}{
		{name: "fits a shard at the window", gpus: 1, rd: small, want: []fired{{at: 100, rule: profile.RuleOversized, gpus: 1}}, target: "shard"},
		{name: "no shards: a smaller type", gpus: 1, rd: small,
			mut: func(r *Rules) {
				r.Oversized.Shards = false
				r.Oversized.Types = []GPUType{{"l4", 24 * gib}, {"a100", 80 * gib}}
			},
			want: []fired{{at: 100, rule: profile.RuleOversized, gpus: 1}}, target: "l4"},
		{name: "no shards, no smaller type", gpus: 1, rd: small,
			mut: func(r *Rules) { r.Oversized.Shards = false; r.Oversized.Types = []GPUType{{"h100", 80 * gib}} }},
		{name: "busy enough", gpus: 1, rd: func(int, int) *profile.Reading { return rdOf(30, 4*gib, 1) }},
		{name: "memory need above the share", gpus: 1, rd: func(int, int) *profile.Reading { return rdOf(10, 17*gib, 1) }},
		{name: "two GPUs are not this rule", gpus: 2, rd: small},
		// Issue #38: a --gres=shard:2 job alone on its GPU is not told it
		// holds a whole GPU, nor to ask for shard:1.
		{name: "a shard job", gpus: 1, rd: small, alloc: func(t *Tracker) { t.SetAllocation(2, true) }},
		{name: "shards possible, allocation unknown", gpus: 1, rd: small,
			mut: func(r *Rules) { r.Oversized.SharedNodes = true }},
		{name: "shards possible, whole GPU confirmed", gpus: 1, rd: small,
			mut:   func(r *Rules) { r.Oversized.SharedNodes = true },
			alloc: func(t *Tracker) { t.SetAllocation(0, true) },
			want:  []fired{{at: 100, rule: profile.RuleOversized, gpus: 1}}, target: "shard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			if tt.mut != nil {
				tt.mut(r)
			}
			gpus := gpusOf(tt.gpus, 80*gib)
			tr := NewTracker(r, tt.gpus, nil)
			if tt.alloc != nil {
				tt.alloc(tr)
			}
			var got []fired
			var target string
			for s := range 300 {
				now := t0.Add(time.Duration(s) * time.Second)
				for i := range gpus {
					x := *tt.rd(s, i)
					x.Time = now
					tr.Observe(i, x)
					gpus[i].Observe(x, time.Second)
				}
				if f, ok := tr.Evaluate(now, t0, gpus); ok {
					tr.MarkFired(f.Rule, now)
					got = append(got, fired{at: s, rule: f.Rule, gpus: f.GPUs})
					target = f.Target
					j := profile.Job{Start: t0, GPUs: gpus}
					n := tr.Describe(f, now, &j, time.UTC)
					if !strings.Contains(n.Evidence, "memory peak 4 GiB") || !strings.Contains(n.Fix, tt.target) {
						t.Errorf("notice = %+v", n)
					}
				}
			}
			if !reflect.DeepEqual(got, tt.want) || target != tt.target {
				t.Errorf("fired %+v (target %q), want %+v (%q)", got, target, tt.want, tt.target)
			}
		})
	}
}

func TestResumedTrackerDoesNotRefire(t *testing.T) {
	r := testRules()
	done := []profile.Notice{{Rule: profile.RuleIdleJob, Time: t0.Add(-time.Hour), Status: profile.NoticeSent}}
	tr := NewTracker(r, 1, done)
	gpus := gpusOf(1, 80*gib)
	for s := range 300 {
		now := t0.Add(time.Duration(s) * time.Second)
		x := *idleRd()
		x.Time = now
		tr.Observe(0, x)
		if f, ok := tr.Evaluate(now, t0, gpus); ok {
			t.Fatalf("second %d: %s fired again after a restart", s, f.Rule)
		}
	}
}

func TestDescribe(t *testing.T) {
	r := testRules()
	gpus := gpusOf(2, 80*gib)
	gpus[1].SlurmIndex = 3
	j := profile.Job{Start: t0, GPUs: gpus}
	ss := stream(200, 2, func(s, i int) *profile.Reading {
		if s < 100 {
			return busyRd()
		}
		return idleRd()
	})
	tr := NewTracker(r, 2, nil)
	for s, smp := range ss {
		now := t0.Add(time.Duration(s) * time.Second)
		for i, rd := range smp.rd {
			x := *rd
			x.Time = now
			tr.Observe(i, x)
		}
		f, ok := tr.Evaluate(now, t0, gpus)
		if !ok {
			continue
		}
		n := tr.Describe(f, now, &j, time.UTC)
		want := profile.Notice{
			Rule: profile.RuleIdleJob, Time: now, Since: t0.Add(100 * time.Second), GPUs: []int{0, 3},
			Status:   profile.NoticePending,
			Evidence: "all 2 GPUs of the job idle for 00:01:00 (since 2026-12-03T09:01:40): GPU 0: no process, utilisation 0 %, memory 0 B; GPU 3: no process, utilisation 0 %, memory 0 B",
			// Worked 100 s: × 1.5 = 150 s, up to 5 minutes.
			Fix: "--time=00:05:00",
		}
		if !reflect.DeepEqual(n, want) {
			t.Errorf("Describe =\n%+v\nwant\n%+v", n, want)
		}
		return
	}
	t.Fatal("nothing fired")
}

func TestTrackerDoesNotAllocate(t *testing.T) {
	r := testRules()
	r.Oversized = OversizedRule{Enabled: true, Window: time.Hour, UtilBelow: 30, MemoryShare: 0.25, Margin: 1.2, Shards: true}
	gpus := gpusOf(8, 80*gib)
	tr := NewTracker(r, 8, nil)
	now := t0
	rd := *busyRd()
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Second)
		rd.Time = now
		for i := range gpus {
			tr.Observe(i, rd)
		}
		tr.Evaluate(now, t0, gpus)
	})
	if allocs != 0 {
		t.Errorf("Observe and Evaluate of 8 GPUs allocate %v times per tick, want 0", allocs)
	}
}

// TestIdleBySMActivity: where the reading has the job's own SM activity
// (GPM), the idle rules read it: a GPU kept nominally busy by tiny
// kernels (duty cycle 90 %, SM activity 0.02 %) is idle; a shared GPU's
// activity, the whole device's, is not the job's, and the duty cycle
// decides. The evidence says the SM activity.
func TestIdleBySMActivity(t *testing.T) {
	r := IdleRule{Enabled: true, Window: time.Hour, UtilBelow: 1, MemoryBelow: 1 << 30}
	act := func(sm float64) gpu.Opt[gpu.Activity] {
		return gpu.Some(gpu.Activity{Interval: time.Second, SM: gpu.Some(sm)})
	}
	tests := []struct {
		name string
		rd   profile.Reading
		want bool
	}{
		{"tiny kernels", profile.Reading{Util: gpu.Some(uint32(90)), Activity: act(0.02), ActivityScope: profile.ActivityScopeGPU}, true},
		{"busy SMs", profile.Reading{Util: gpu.Some(uint32(0)), Activity: act(40), ActivityScope: profile.ActivityScopeGPU}, false},
		{"no GPM, busy duty cycle", profile.Reading{Util: gpu.Some(uint32(90))}, false},
		{"no GPM, idle duty cycle", profile.Reading{Util: gpu.Some(uint32(0))}, true},
		{"shared GPU's device activity", profile.Reading{Util: gpu.Some(uint32(90)), Shared: true, Activity: act(0.02), ActivityScope: profile.ActivityScopeGPU}, false},
		{"MIG instance", profile.Reading{Activity: act(0.02), ActivityScope: profile.ActivityScopeMIG}, true},
		{"SM reading missing", profile.Reading{Util: gpu.Some(uint32(90)), Activity: gpu.Some(gpu.Activity{Interval: time.Second})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.idle(&tt.rd); got != tt.want {
				t.Errorf("idle = %v, want %v", got, tt.want)
			}
		})
	}

	rules := Rules{Interval: time.Second, IdleJob: r}
	tr := NewTracker(&rules, 1, nil)
	start := time.Date(2026, 10, 5, 8, 0, 0, 0, time.UTC)
	g := profile.GPU{SlurmIndex: 0, XIDs: []profile.XID{{Code: 79, Time: start}}, XIDCount: 1}
	j := &profile.Job{Start: start, GPUs: []profile.GPU{g}}
	tr.Observe(0, profile.Reading{Time: start, Util: gpu.Some(uint32(90)), Processes: 1, MemUsed: gpu.Some(uint64(500 << 20)),
		Activity: act(0.02), ActivityScope: profile.ActivityScopeGPU})
	words := tr.gpuWords(j, 0, analysis.SheetGPU(j.Node, &j.GPUs[0]).XIDs)
	for _, want := range []string{"utilisation 90 %", "SM activity 0.02 %", "XIDs 79 GPU has fallen off the bus (hardware)"} {
		if !strings.Contains(words, want) {
			t.Errorf("evidence %q lacks %q", words, want)
		}
	}
}

// TestOversizedEvidenceWords pins the oversized notice's evidence: the
// GPU's model, card, memory peak and mean utilisation — or the job's own
// mean SM activity where GPM measured it on a GPU the job held alone —
// as the job's fact sheet has them (analysis.SheetGPU), and the XIDs of
// an idle GPU as the sheet lists them. The same words as before the
// mail drew the sheet (issue #41: byte-identical).
func TestOversizedEvidenceWords(t *testing.T) {
	r := testRules()
	r.Oversized = OversizedRule{Enabled: true, Window: 100 * time.Second, UtilBelow: 30, MemoryShare: 0.25, Margin: 1.2, Shards: true}
	sm := func(v float64, scope string) func(*profile.Reading) {
		return func(rd *profile.Reading) {
			rd.Activity, rd.ActivityScope = gpu.Some(gpu.Activity{Interval: time.Second, SM: gpu.Some(v)}), scope
		}
	}
	for _, tt := range []struct {
		name string
		set  func(*profile.Reading)
		want string
	}{
		{"utilisation", nil, "GPU 0 (NVIDIA H100 80GB HBM3, 80 GiB) for 00:02:00: memory peak 4 GiB (a need of 4.8 GiB with the 1.2× margin), mean utilisation 10 %"},
		{"SM activity", sm(3.25, profile.ActivityScopeGPU), "GPU 0 (NVIDIA H100 80GB HBM3, 80 GiB) for 00:02:00: memory peak 4 GiB (a need of 4.8 GiB with the 1.2× margin), mean SM activity 3.2 %"},
		{"shared GPU's activity", sm(3.25, profile.ActivityScopeSharedGPU), "GPU 0 (NVIDIA H100 80GB HBM3, 80 GiB) for 00:02:00: memory peak 4 GiB (a need of 4.8 GiB with the 1.2× margin), mean utilisation 10 %"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gpus := gpusOf(1, 80*gib)
			tr := NewTracker(r, 1, nil)
			for s := range 120 {
				rd := rdOf(10, 4*gib, 1)
				rd.Time = t0.Add(time.Duration(s) * time.Second)
				if tt.set != nil {
					tt.set(rd)
				}
				tr.Observe(0, *rd)
				gpus[0].Observe(*rd, time.Second)
			}
			f := Finding{Rule: profile.RuleOversized, Since: t0, GPUs: 1, Need: 48 * gib / 10, Target: "shard"}
			n := tr.Describe(f, t0.Add(2*time.Minute), &profile.Job{Start: t0, GPUs: gpus}, time.UTC)
			if want := tt.want + ": fits a shard (at most 25 % of the card)"; n.Evidence != want {
				t.Errorf("evidence\n%q\nwant\n%q", n.Evidence, want)
			}
		})
	}
	gpus := gpusOf(2, 80*gib)
	gpus[1].XIDs, gpus[1].XIDCount = []profile.XID{{Code: 13, Time: t0}, {Code: 79, Time: t0}, {Code: 13, Time: t0}}, 3
	tr := NewTracker(r, 2, nil)
	tr.Observe(1, profile.Reading{Time: t0, Util: gpu.Some(uint32(0)), MemUsed: gpu.Some(uint64(gib))})
	n := tr.Describe(Finding{Rule: profile.RuleIdleGPU, Since: t0, GPUs: 2}, t0.Add(time.Minute), &profile.Job{Start: t0, GPUs: gpus}, time.UTC)
	if want := "1 of 2 GPUs idle for 00:01:00 (since 2026-12-03T09:00:00): GPU 1: no process, utilisation 0 %, memory 1 GiB, XIDs " +
		analysis.XIDsOf(3, gpus[1].XIDs).Codes[0].String() + " and " + analysis.XIDsOf(3, gpus[1].XIDs).Codes[1].String(); n.Evidence != want {
		t.Errorf("idle GPU's evidence\n%q\nwant\n%q", n.Evidence, want)
	}
}
