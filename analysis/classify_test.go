package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

func TestClassify(t *testing.T) {
	ioJob := func(frac float64, scope string, util float64) Job {
		j := job(2*time.Hour, busy(util, 10))
		j.IOWait, j.IOWaitValid, j.IOScope = frac, true, scope
		return j
	}
	named := func(name string, j Job) Job { j.Name = name; return j }
	array := func(j Job) Job { j.ArrayJobID = "100"; return j }
	prealloc := func(g GPU) GPU { g.Preallocated, g.VRAMPeak = true, 79*gib; return g }
	noUtil := func(g GPU) GPU {
		g.UtilMeanValid, g.UtilPctValid, g.UtilMaxValid, g.IdleValid = false, false, false, false
		return g
	}
	running := func(j Job) Job { j.End, j.State = time.Time{}, "RUNNING"; return j }
	// sacct is a job known only from sacct: two GPUs requested, no
	// readings.
	sacct := func(j Job) Job { j.ReqGPUs, j.HasGPUData, j.GPUs = 2, false, nil; return j }
	nodeScope := DefaultConfig()
	nodeScope.Bottlenecks.IONodeScope = false

	tests := []struct {
		name     string
		job      Job
		cfg      *Config // nil: defaults
		want     Class
		wantRule string
		wantWhy  string // the rendered reason
	}{
		{
			name:     "cpu job",
			job:      job(time.Hour),
			want:     ClassUnknown,
			wantRule: "unknown.no_gpu",
			wantWhy:  "no GPU requested or recorded",
		},
		{
			name:     "sacct history, neither short nor long",
			job:      sacct(job(time.Hour)),
			want:     ClassUnknown,
			wantRule: "unknown.no_data",
			wantWhy:  "no GPU readings (scheduler record only): ran 01:00:00, neither short nor long; the other classes need GPU readings",
		},
		{
			name:     "sacct history, short run",
			job:      sacct(job(29*time.Minute + 59*time.Second)),
			want:     ClassShortDebug,
			wantRule: "short_debug.duration",
			wantWhy:  "ran 00:29:59 < 00:30:00; no GPU readings: decided from the scheduler view alone (run time)",
		},
		{
			name:     "sacct history, short boundary",
			job:      sacct(job(30 * time.Minute)),
			want:     ClassUnknown,
			wantRule: "unknown.no_data",
			wantWhy:  "no GPU readings (scheduler record only): ran 00:30:00, neither short nor long; the other classes need GPU readings",
		},
		{
			name:     "sacct history, short array task",
			job:      array(sacct(job(10 * time.Minute))),
			want:     ClassUnknown,
			wantRule: "unknown.no_data",
			wantWhy:  "no GPU readings (scheduler record only): a short array task (batch work, not debugging); the other classes need GPU readings",
		},
		{
			name:     "sacct history, long run",
			job:      sacct(job(4 * time.Hour)),
			want:     ClassLongTraining,
			wantRule: "long_training.duration",
			wantWhy:  "ran 04:00:00 ≥ 04:00:00; no GPU readings: decided from the scheduler view alone (run time); utilisation not measured, so an idle, IO-bound or serving run cannot be told apart",
		},
		{
			name:     "sacct history, long interactive session",
			job:      named("jupyter", sacct(job(8*time.Hour))),
			want:     ClassShortDebug,
			wantRule: "short_debug.name",
			wantWhy:  `interactive job name "jupyter"; no GPU readings: decided from the scheduler view alone (job name), an idle session cannot be told apart`,
		},
		{
			name:     "sacct history, still running",
			job:      running(sacct(job(0))),
			want:     ClassUnknown,
			wantRule: "unknown.no_data",
			wantWhy:  "no GPU readings (scheduler record only): run time unknown; the other classes need GPU readings",
		},
		{
			name:     "sacct history, shard job",
			job:      func() Job { j := job(10 * time.Minute); j.ReqShards = 2; return j }(),
			want:     ClassShortDebug,
			wantRule: "short_debug.duration",
			wantWhy:  "ran 00:10:00 < 00:30:00; no GPU readings: decided from the scheduler view alone (run time)",
		},
		{
			// NaN mean and a peak above the card: both ignored, nothing left.
			name: "only absurd readings",
			job: job(time.Hour, GPU{MemoryTotal: card, VRAMPeak: 81 * gib, VRAMPeakValid: true,
				UtilMean: math.NaN(), UtilMeanValid: true}),
			want:     ClassUnknown,
			wantRule: "unknown.bad_data",
			wantWhy:  "no usable GPU reading (2 ignored): ran 01:00:00, neither short nor long; the other classes need GPU readings",
		},
		{
			name: "only absurd readings, long run",
			job: job(5*time.Hour, GPU{MemoryTotal: card, VRAMPeak: 81 * gib, VRAMPeakValid: true,
				UtilMean: math.NaN(), UtilMeanValid: true}),
			want:     ClassLongTraining,
			wantRule: "long_training.duration",
			wantWhy:  "ran 05:00:00 ≥ 04:00:00; no usable GPU reading (2 ignored): decided from the scheduler view alone (run time); utilisation not measured, so an idle, IO-bound or serving run cannot be told apart",
		},
		{
			name:     "short",
			job:      job(29*time.Minute+59*time.Second, busy(90, 10)),
			want:     ClassShortDebug,
			wantRule: "short_debug.duration",
			wantWhy:  "ran 00:29:59 < 00:30:00",
		},
		{
			// Exactly short_job_max is not short; 30 m at 90 % matches nothing.
			name:     "short boundary",
			job:      job(30*time.Minute, busy(90, 10)),
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: ran 00:30:00, mean util 90 %",
		},
		{
			name:     "short array task is not debugging",
			job:      array(job(10*time.Minute, busy(90, 10))),
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: ran 00:10:00, mean util 90 %",
		},
		{
			name:     "short array task waiting on IO",
			job:      array(func() Job { j := ioJob(0.5, profile.IOScopeCgroup, 10); j.End = t0.Add(10 * time.Minute); return j }()),
			want:     ClassPreprocessingIO,
			wantRule: "preprocessing_io",
			wantWhy:  "IO wait 50 % of wall time ≥ 20 % and mean util 10 % < 30 %; IO wait measured per cgroup",
		},
		{
			name:     "io bound",
			job:      ioJob(0.35, profile.IOScopeCgroup, 12),
			want:     ClassPreprocessingIO,
			wantRule: "preprocessing_io",
			wantWhy:  "IO wait 35 % of wall time ≥ 20 % and mean util 12 % < 30 %; IO wait measured per cgroup",
		},
		{
			name:     "io at both boundaries",
			job:      ioJob(0.2, profile.IOScopeProcess, 29.9),
			want:     ClassPreprocessingIO,
			wantRule: "preprocessing_io",
			wantWhy:  "IO wait 20 % of wall time ≥ 20 % and mean util 29.9 % < 30 %; IO wait measured per process",
		},
		{
			name:     "io wait but utilisation not low",
			job:      ioJob(0.5, profile.IOScopeCgroup, 30),
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: ran 02:00:00, mean util 30 %",
		},
		{
			name:     "node-scope io refused by config",
			job:      ioJob(0.5, profile.IOScopeNode, 12),
			cfg:      &nodeScope,
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: ran 02:00:00, mean util 12 %",
		},
		{
			name:     "node-scope io accepted by default",
			job:      ioJob(0.5, profile.IOScopeNode, 12),
			want:     ClassPreprocessingIO,
			wantRule: "preprocessing_io",
			wantWhy:  "IO wait 50 % of wall time ≥ 20 % and mean util 12 % < 30 %; IO wait measured per node",
		},
		{
			// Mean over the GPUs: (4 + 0) / 2 = 2.
			name:     "idle allocation",
			job:      job(8*time.Hour, busy(4, 30), idleGPU()),
			want:     ClassIdleAllocation,
			wantRule: "idle_allocation",
			wantWhy:  "mean util 2 % < 5 %; over 2 GPUs, 1 never touched by a process",
		},
		{
			name:     "idle boundary",
			job:      job(8*time.Hour, busy(5, 30)),
			want:     ClassInferenceService, // 5 is not idle; 8 h at 5 % is a quiet server
			wantRule: "inference_service",
			wantWhy:  "ran 08:00:00 ≥ 04:00:00 and mean util 5 % < 30 %; memory steadiness not measured",
		},
		{
			name:     "idle interactive session is idle",
			job:      named("bash", job(3*time.Hour, busy(1, 2))),
			want:     ClassIdleAllocation,
			wantRule: "idle_allocation",
			wantWhy:  "mean util 1 % < 5 %; over 1 GPU",
		},
		{
			name: "idle where readings exist",
			job: func() Job {
				j := job(8*time.Hour, busy(1, 3))
				j.ReqGPUs = 4 // three on a node whose profile is missing
				return j
			}(),
			want:     ClassIdleAllocation,
			wantRule: "idle_allocation",
			wantWhy:  "mean util 1 % < 5 %; over the 1 of 4 held GPUs that have readings",
		},
		{
			name:     "interactive name",
			job:      named("Jupyter", job(3*time.Hour, busy(20, 12))),
			want:     ClassShortDebug,
			wantRule: "short_debug.name",
			wantWhy:  `interactive job name "Jupyter"`,
		},
		{
			name:     "steady quiet server",
			job:      job(72*time.Hour, withFloor(spread(12, 5, 30), 0.95)),
			want:     ClassInferenceService,
			wantRule: "inference_service",
			wantWhy:  "ran 3-00:00:00 ≥ 04:00:00 and memory floor 95 % of the peak ≥ 80 % and mean util 12 % < 30 %",
		},
		{
			// p95 − p50 = 90 − 20 = 70 ≥ 40: bursty, even at 45 % mean.
			name:     "bursty server",
			job:      job(10*time.Hour, spread(45, 20, 90)),
			want:     ClassInferenceService,
			wantRule: "inference_service",
			wantWhy:  "ran 10:00:00 ≥ 04:00:00 and util p95−p50 70 points ≥ 40; memory steadiness not measured",
		},
		{
			name:     "preallocated memory is steady",
			job:      job(10*time.Hour, prealloc(busy(10, 0))),
			want:     ClassInferenceService,
			wantRule: "inference_service",
			wantWhy:  "ran 10:00:00 ≥ 04:00:00 and memory floor 100 % of the peak ≥ 80 % and mean util 10 % < 30 %",
		},
		{
			name:     "quiet but memory not steady",
			job:      job(10*time.Hour, withFloor(busy(12, 40), 0.3)),
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: ran 10:00:00, mean util 12 %, memory floor 30 % of the peak",
		},
		{
			name:     "long training",
			job:      job(6*time.Hour+12*time.Minute, spread(87, 90, 95)),
			want:     ClassLongTraining,
			wantRule: "long_training",
			wantWhy:  "ran 06:12:00 ≥ 04:00:00 and mean util 87 % ≥ 30 %",
		},
		{
			name:     "long training boundaries",
			job:      job(4*time.Hour, busy(30, 40)),
			want:     ClassLongTraining,
			wantRule: "long_training",
			wantWhy:  "ran 04:00:00 ≥ 04:00:00 and mean util 30 % ≥ 30 %",
		},
		{
			// Mean over GPUs: (90 + 10) / 2 = 50.
			name:     "long training over two GPUs",
			job:      job(5*time.Hour, busy(90, 40), busy(10, 40)),
			want:     ClassLongTraining,
			wantRule: "long_training",
			wantWhy:  "ran 05:00:00 ≥ 04:00:00 and mean util 50 % ≥ 30 %",
		},
		{
			name:     "memory readings only",
			job:      job(5*time.Hour, noUtil(busy(0, 40))),
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: ran 05:00:00, no utilisation readings",
		},
		{
			name:     "running job",
			job:      running(job(0, busy(50, 40))),
			want:     ClassOther,
			wantRule: "other",
			wantWhy:  "no rule matched: run time unknown, mean util 50 %",
		},
	}
	seen := map[Class]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			if tt.cfg != nil {
				c = *tt.cfg
			}
			got, why := Classify(tt.job, c)
			seen[got] = true
			if got != tt.want {
				t.Errorf("class = %s, want %s (reasons %v)", got, tt.want, why)
			}
			if len(why) != 1 {
				t.Fatalf("got %d reasons, want 1: %v", len(why), why)
			}
			if why[0].Rule != tt.wantRule {
				t.Errorf("rule = %q, want %q", why[0].Rule, tt.wantRule)
			}
			if s := why[0].String(); s != tt.wantWhy {
				t.Errorf("reason = %q\n                want %q", s, tt.wantWhy)
			}
		})
	}
	for _, cls := range Classes() {
		if !seen[cls] {
			t.Errorf("no test case for class %s", cls)
		}
	}
}

func TestClassifyReasonChecks(t *testing.T) {
	// The checks carry the raw numbers in the metric's unit: seconds,
	// percent.
	_, why := Classify(job(6*time.Hour+12*time.Minute, spread(87, 90, 95)), DefaultConfig())
	want := []Check{
		{MetricElapsed, 22320, OpGE, 14400},
		{MetricUtilMean, 87, OpGE, 30},
	}
	if len(why) != 1 || len(why[0].Checks) != len(want) {
		t.Fatalf("reasons = %+v, want one with %d checks", why, len(want))
	}
	for i, c := range why[0].Checks {
		if c != want[i] {
			t.Errorf("check %d = %+v, want %+v", i, c, want[i])
		}
	}
	b, err := json.Marshal(why[0])
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"rule":"long_training","checks":[{"metric":"elapsed","value":22320,"op":"\u003e=","limit":14400},{"metric":"util_mean","value":87,"op":"\u003e=","limit":30}]}`
	if string(b) != wantJSON {
		t.Errorf("JSON = %s\nwant   %s", b, wantJSON)
	}
}

func TestClassifyConfigChangesOutcome(t *testing.T) {
	j := job(2*time.Hour, busy(60, 20))
	c := DefaultConfig()
	if got, _ := Classify(j, c); got != ClassOther {
		t.Errorf("defaults: class = %s, want other", got)
	}
	c.Classes.LongTrainingMin = Duration(time.Hour)
	if got, _ := Classify(j, c); got != ClassLongTraining {
		t.Errorf("long_training_min 1h: class = %s, want long_training", got)
	}
	c.Classes.ShortJobMax = Duration(3 * time.Hour)
	if got, _ := Classify(j, c); got != ClassShortDebug {
		t.Errorf("short_job_max 3h: class = %s, want short_debug", got)
	}
}

func TestClassText(t *testing.T) {
	for _, cls := range Classes() {
		b, err := cls.MarshalText()
		if err != nil {
			t.Fatalf("%d: %v", cls, err)
		}
		var back Class
		if err := back.UnmarshalText(b); err != nil || back != cls {
			t.Errorf("round trip of %s = %s, %v", cls, back, err)
		}
	}
	if _, err := Class(200).MarshalText(); err == nil {
		t.Error("MarshalText of an out-of-range class: no error")
	}
	var c Class
	if err := c.UnmarshalText([]byte("training")); err == nil {
		t.Error("UnmarshalText(training): no error")
	}
}

// randomJob makes a job of random, often absurd, values: the input a
// broken counter or a corrupt import could produce.
func randomJob(r *rand.Rand) Job {
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 0.5, 1, 5, 30, 99.9, 100, 100.5, 1e300, -1e300}
	f := func() float64 {
		if r.IntN(2) == 0 {
			return floats[r.IntN(len(floats))]
		}
		return r.Float64() * 120
	}
	tm := func() time.Time {
		switch r.IntN(4) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(r.Int64N(1<<40)-1<<39, 0)
		}
		return t0.Add(time.Duration(r.Int64N(int64(48 * time.Hour))))
	}
	states := []slurmext.JobState{"", "COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED", "RUNNING", "PENDING", "garbage"}
	names := []string{"", "bash", "train_%a_1", "eval-3f9a2b1c", "ñandú_42", "550e8400-e29b-41d4-a716-446655440000", "x"}
	j := Job{
		Cluster: "c", ID: "1", User: []string{"", "a", "b"}[r.IntN(3)],
		Partition: []string{"", "gpu", "debug"}[r.IntN(3)],
		Name:      names[r.IntN(len(names))], State: states[r.IntN(len(states))],
		Submit: tm(), Eligible: tm(), Start: tm(), End: tm(),
		TimeLimit: time.Duration(r.Int64N(1<<62) - 1<<61), Unlimited: r.IntN(5) == 0,
		ExitKnown: r.IntN(2) == 0, ExitStatus: r.IntN(3),
		ReqGPUs: r.IntN(10) - 1, ReqShards: r.IntN(3),
		HasGPUData: r.IntN(4) != 0, Partial: r.IntN(2) == 0,
		IOWait: f() / 50, IOWaitValid: r.IntN(2) == 0,
		IOScope: []string{"", profile.IOScopeCgroup, profile.IOScopeNode}[r.IntN(3)],
	}
	if r.IntN(3) == 0 {
		j.ArrayJobID = "77"
	}
	for range r.IntN(9) {
		mem := []uint64{0, gib, card, card + 1, 1 << 63}[r.IntN(5)]
		j.GPUs = append(j.GPUs, GPU{
			Model: h100, MemoryTotal: mem,
			VRAMPeak: r.Uint64() >> r.IntN(64), VRAMPeakValid: r.IntN(4) != 0,
			VRAMFloor: r.Uint64() >> r.IntN(64), VRAMFloorValid: r.IntN(2) == 0,
			UtilMean: f(), UtilMeanValid: r.IntN(4) != 0,
			UtilP50: f(), UtilP95: f(), UtilPctValid: r.IntN(2) == 0,
			UtilMax: f(), UtilMaxValid: r.IntN(2) == 0,
			IdleFraction: f() / 100, IdleValid: r.IntN(2) == 0,
			IdleAllocation: r.IntN(5) == 0, Preallocated: r.IntN(5) == 0, Shared: r.IntN(5) == 0,
			EnergyJ: f() * 1e4, EnergyValid: r.IntN(2) == 0,
		})
	}
	return j
}

// TestRandomJobsNeverPanic feeds random and absurd values through every
// entry point: nothing may panic, every job gets a class with a reason,
// and the findings must encode as JSON (a NaN would not).
func TestRandomJobsNeverPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	c := DefaultConfig()
	jobs := make([]Job, 5000)
	for i := range jobs {
		jobs[i] = randomJob(r)
		j := jobs[i]
		cls, why := Classify(j, c)
		if cls >= numClasses || len(why) == 0 || why[0].String() == "" {
			t.Fatalf("job %d: class %d, reasons %v", i, cls, why)
		}
		for _, b := range Diagnose(j, c) {
			if b.Reason.Rule == "" {
				t.Fatalf("job %d: bottleneck %s without a rule", i, b.Kind)
			}
			if _, err := json.Marshal(b); err != nil {
				t.Fatalf("job %d: bottleneck %s: %v", i, b.Kind, err)
			}
		}
		if _, err := json.Marshal(why); err != nil {
			t.Fatalf("job %d: reasons: %v", i, err)
		}
		m := Measure(j, c)
		for _, v := range []float64{m.UtilMean, m.UtilP50, m.UtilP95, m.UtilMax, m.IdleFraction,
			m.VRAMPeakFrac, m.VRAMSteady, m.IOWait, m.EnergyJ, m.GPUHours} {
			if !finite(v) || v < 0 {
				t.Fatalf("job %d: metric %v is not a finite non-negative number: %+v", i, v, m)
			}
		}
		if m.UtilMean > 100 || m.UtilMax > 100 || m.VRAMPeakFrac > 1 || m.IOWait > 1 || m.IdleFraction > 1 {
			t.Fatalf("job %d: metric out of range: %+v", i, m)
		}
	}
	f, err := Analyse(Input{Jobs: jobs}, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(f); err != nil {
		t.Fatalf("findings do not encode: %v", err)
	}
	if f.Summary.Notes.Total() == 0 {
		t.Error("no data notes counted from absurd input")
	}
	if !strings.Contains(f.Summary.PercentileMethod, "nearest") {
		t.Errorf("percentile method = %q", f.Summary.PercentileMethod)
	}
}

// TestClassifyRealSacct reads the test cluster's own sacct output (Slurm
// 22.05, no GPU readings): its GPU jobs are classified from the scheduler
// view, not left unknown, their requested GPUs are known and their GPUs
// used are not, and the debug-partition rule counts their short runs.
func TestClassifyRealSacct(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "slurmext", "testdata", "sacct", "22.05-P-steps-iso.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sacct.NewReader(f, nil, sacct.Options{})
	var jobs []Job
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *sacct.LineError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, FromView(&rec, nil))
	}
	c := DefaultConfig()
	gpuJobs, short := 0, 0
	for _, j := range jobs {
		m := Measure(j, c)
		cls, why := Classify(j, c)
		if m.GPUs == 0 {
			continue
		}
		gpuJobs++
		if j.HasGPUData {
			t.Fatalf("job %s has GPU data in sacct history", j.ID)
		}
		// The cluster's test jobs ran for seconds: every finished, non-array
		// GPU job is short debugging, and says why.
		if m.ElapsedValid && j.ArrayJobID == "" {
			short++
			if cls != ClassShortDebug || !strings.Contains(why[0].String(), "no GPU readings: decided from the scheduler view alone") {
				t.Errorf("job %s (%s, ran %s): class %s, %v", j.ID, j.Name, m.Elapsed, cls, why)
			}
		}
	}
	if gpuJobs == 0 || short == 0 {
		t.Fatalf("%d GPU jobs, %d short: the fixture no longer has sacct GPU jobs", gpuJobs, short)
	}

	ps := Profiles(jobs, c)
	for _, p := range ps {
		if p.GPUsRequested <= 0 || p.GPUsUsed != nil || p.UsageRuns != 0 {
			t.Errorf("profile %s: requested %v, used %v over %d runs; want requested known, used unknown", p.Name, p.GPUsRequested, p.GPUsUsed, p.UsageRuns)
		}
	}

	// With min_jobs lowered to the fixture's size, the debug rule reads
	// the short jobs: they waited about a second, no queue worth a
	// partition, and it says so with their number.
	c.Recommend.MinJobs = 1
	fd, err := Analyse(Input{Jobs: jobs}, c)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range fd.NoChange {
		if n.Rule == RecDebugPart {
			found = true
			want := fmt.Sprintf("%d short jobs wait 00:00:01 (p50), under bottlenecks.queue_bound_min_wait (00:15:00): no debug partition", short)
			if n.Note != want {
				t.Errorf("debug rule: %q, want %q", n.Note, want)
			}
		}
	}
	for _, rec := range fd.Recommendations {
		if rec.Kind == RecDebugPart {
			t.Errorf("a debug partition for waits of seconds: %s", rec.Change)
		}
	}
	if !found {
		t.Errorf("the debug rule said nothing: %+v", fd.NoChange)
	}
}

// TestClassSameRunningAndFinished: a job's class does not change when it
// ends. Ten minutes on a GPU it never used is idle_allocation while it
// runs (no end: the run-time rule cannot apply) and stays so when it
// ends after 12 minutes, under classes.short_job_max (it was short_debug
// then, before the idle rule came first); an IO-bound one stays
// preprocessing_io. A short job that used its GPU is still short_debug.
func TestClassSameRunningAndFinished(t *testing.T) {
	c := DefaultConfig()
	profiled := func(util uint32, ioStall float64, end time.Time) Job {
		utils := make([]uint32, 600)
		for i := range utils {
			utils[i] = util
		}
		g := recorded("GPU-a", utils, []uint64{1, 1, 1}, util > 0)
		p := nodeProfile("gpu-a", profile.IOWait{Scope: profile.IOScopeCgroup, StallSeconds: ioStall, Seconds: 600}, end, g)
		rec := &slurmext.JobRecord{Cluster: "c1", JobID: "101", User: "alice", State: slurmext.StateRunning,
			Submit: t0, Start: t0, TimeLimit: time.Hour, ReqGPUs: 1, NodeCount: 1, NodeList: "gpu-a"}
		if !end.IsZero() {
			r := *rec
			r.State, r.End = slurmext.StateCompleted, end
			rec = &r
		}
		return FromView(rec, []profile.Job{p})
	}
	end := t0.Add(12 * time.Minute)
	for _, tc := range []struct {
		name    string
		util    uint32
		ioStall float64
		want    Class
		endWant Class
	}{
		{"idle", 0, 0, ClassIdleAllocation, ClassIdleAllocation},
		{"waiting on IO", 1, 500, ClassPreprocessingIO, ClassPreprocessingIO},
		{"busy", 60, 0, ClassOther, ClassShortDebug},
	} {
		running, _ := Classify(profiled(tc.util, tc.ioStall, time.Time{}), c)
		finished, _ := Classify(profiled(tc.util, tc.ioStall, end), c)
		if running != tc.want || finished != tc.endWant {
			t.Errorf("%s: running %s, finished %s; want %s, %s", tc.name, running, finished, tc.want, tc.endWant)
		}
	}
}
