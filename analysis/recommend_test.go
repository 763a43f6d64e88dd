package analysis

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const h100Model = "NVIDIA H100 80GB HBM3"

// plantNodes is a cluster of four nodes with four H100s each.
func plantNodes() []Node {
	var ns []Node
	for _, n := range []string{"gpu01", "gpu02", "gpu03", "gpu04"} {
		ns = append(ns, Node{Name: n, GPUModel: h100Model, GPUs: 4, MemoryTotal: 80 << 30})
	}
	return ns
}

// healthy is long training that uses what it asks for: 150 runs of 8 h at
// 85 % on 1 GPU with limits 1.3× the run time, no waits.
func healthy() PlantGroup {
	return PlantGroup{Users: []string{"ann", "bob", "cat"}, Account: "ml", Name: "train",
		Jobs: 150, Duration: 8 * time.Hour, Jitter: 0.1, LimitFactor: 1.3,
		VRAMFrac: 0.6, VRAMJitter: 0.1, Util: 85, UtilJitter: 5}
}

func analyseSpec(t *testing.T, groups ...PlantGroup) (Input, Findings) {
	t.Helper()
	in := Input{Jobs: Plant(PlantSpec{Days: 30, Groups: groups}, 1), Nodes: plantNodes()}
	f, err := Analyse(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return in, f
}

func recsOf(f Findings, kind string) []Recommendation {
	var out []Recommendation
	for _, r := range f.Recommendations {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

func kinds(f Findings) []string {
	var ks []string
	for _, r := range f.Recommendations {
		ks = append(ks, r.Kind+": "+r.Title)
	}
	return ks
}

func TestPlantedSharing(t *testing.T) {
	small := PlantGroup{Users: []string{"sam", "sue"}, Account: "nlp", Name: "eval",
		Jobs: 200, Duration: 3 * time.Hour, VRAMFrac: 0.06, VRAMJitter: 0.03, Util: 8, UtilJitter: 4}
	big := healthy() // 150 × 8 h = 1200 GPU-hours against 200 × 3 h = 600: small work is a third
	big.Jobs = 112   // 112 × 8 h ≈ 900 GPU-hours: small work is 40 %
	in, f := analyseSpec(t, small, big)

	// Hand calculation: the candidates are the small runs; their p95 peak
	// times the 1.2 margin divides the 80 GiB card.
	var peaks []float64
	var smallHours, allHours float64
	for _, j := range in.Jobs {
		h := j.End.Sub(j.Start).Hours()
		allHours += h
		if j.Name == "eval" {
			peaks = append(peaks, float64(j.GPUs[0].VRAMPeak))
			smallHours += h
		}
	}
	if share := smallHours / allHours; share < 0.35 || share > 0.45 {
		t.Fatalf("planted small share = %v, want about 0.4", share)
	}
	slices.Sort(peaks)
	need := math.Ceil(PercentileSorted(peaks, 95) * 1.2)
	wantShards := min(8, int(float64(80<<30)/need))

	shards := recsOf(f, RecShards)
	if len(shards) != 1 {
		t.Fatalf("shard recommendations = %d, want 1 (got %v)", len(shards), kinds(f))
	}
	r := shards[0]
	want := "Share h100 GPUs: " + itoa(wantShards) + " shards per GPU"
	if r.Title != want {
		t.Errorf("title = %q, want %q", r.Title, want)
	}
	if float64(wantShards)*PercentileSorted(peaks, 95) > float64(80<<30) {
		t.Errorf("%d shards of p95 %v do not fit the card", wantShards, PercentileSorted(peaks, 95))
	}
	joined := joinConfig(r.Config)
	for _, line := range []string{
		"GresTypes=gpu,shard",
		"NodeName=gpu01 Gres=gpu:h100:4,shard:" + itoa(4*wantShards),
		"NodeName=gpu01 Name=shard Count=" + itoa(4*wantShards),
		"PartitionName=shared Nodes=gpu01,gpu02,gpu03,gpu04",
	} {
		if !strings.Contains(joined, line) {
			t.Errorf("config lacks %q:\n%s", line, joined)
		}
	}
	if !strings.Contains(r.Change, "isolate nothing") {
		t.Errorf("change does not name the memory cap: %s", r.Change)
	}
	if r.Confidence <= 0.5 || r.Confidence > 1 {
		t.Errorf("confidence = %v, want in (0.5, 1] for 200 jobs at 2× the threshold", r.Confidence)
	}
	mig := recsOf(f, RecMIG)
	if len(mig) != 1 || !strings.Contains(mig[0].Title, "7×1g.10gb") {
		t.Errorf("MIG = %v, want 7×1g.10gb", mig)
	}
	hints := recsOf(f, RecUserShard)
	if len(hints) != 2 || !strings.Contains(hints[0].Change, "--gres=shard:1 on partition shared") {
		t.Errorf("shard hints = %v, want one for sam and one for sue", hints)
	}
}

func TestNoSharingWhenJobsNeedTheCard(t *testing.T) {
	g := healthy()
	g.VRAMFrac, g.VRAMJitter, g.Util, g.Duration = 0.85, 0.05, 20, 2*time.Hour
	_, f := analyseSpec(t, g)
	for _, k := range []string{RecShards, RecMPS, RecMIG, RecUserShard} {
		if rs := recsOf(f, k); len(rs) != 0 {
			t.Errorf("%s recommended: %v", k, rs)
		}
	}
	if !hasNoChange(f, RecShards) {
		t.Errorf("no 'no change' note for sharing: %v", f.NoChange)
	}
}

func TestPreallocatedNotTrusted(t *testing.T) {
	// Small, quiet jobs whose framework reserved 95 % of the card: their
	// need is unknown, so they are not sized for sharing, and the note
	// says why.
	g := PlantGroup{Users: []string{"tf"}, Name: "serve", Jobs: 100, Duration: 2 * time.Hour,
		VRAMFrac: 0.05, Util: 10, Preallocated: true}
	_, f := analyseSpec(t, g, healthy())
	if rs := recsOf(f, RecShards); len(rs) != 0 {
		t.Errorf("shards recommended from preallocated peaks: %v", rs)
	}
	found := false
	for _, n := range f.NoChange {
		if n.Rule == RecShards && strings.Contains(n.Note, "preallocated") {
			found = true
		}
	}
	if !found {
		t.Errorf("no note on preallocated runs: %v", f.NoChange)
	}
}

func TestVRAMNeed(t *testing.T) {
	tests := []struct {
		name string
		g    GPU
		want uint64
	}{
		{"plain peak", busy(50, 6), 6 * gib},
		{"preallocated flat", func() GPU {
			g := busy(50, 76)
			g.Preallocated, g.VRAMFloor, g.VRAMFloorValid = true, 76*gib, true
			return g
		}(), 0},
		{"preallocated with lower floor", func() GPU {
			g := busy(50, 76)
			g.Preallocated, g.VRAMFloor, g.VRAMFloorValid = true, 10*gib, true
			return g
		}(), 10 * gib},
		{"preallocated, floor not measured", func() GPU {
			g := busy(50, 76)
			g.Preallocated = true
			return g
		}(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := job(time.Hour, tt.g)
			m := Measure(j, DefaultConfig())
			if _, _, got := vramNeed(&j, &m); got != tt.want {
				t.Errorf("need = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestIOBoundUserNamed(t *testing.T) {
	io := PlantGroup{Users: []string{"ioana"}, Account: "bio", Name: "preprocess", Jobs: 60,
		Duration: 4 * time.Hour, VRAMFrac: 0.3, Util: 12, IOWait: 0.5, LimitFactor: 1.3}
	_, f := analyseSpec(t, io, healthy())
	rs := recsOf(f, RecStorage)
	if len(rs) != 1 {
		t.Fatalf("storage recommendations = %v", kinds(f))
	}
	if !strings.Contains(rs[0].Change, "ioana/preprocess") || !strings.Contains(rs[0].Change, "Users: ioana.") {
		t.Errorf("storage change does not name ioana's task: %s", rs[0].Change)
	}
}

func TestDefaultTimeForOverRequests(t *testing.T) {
	over := healthy()
	over.Partition, over.LimitFactor, over.Jobs, over.Duration = "over", 10, 50, 2*time.Hour
	_, f := analyseSpec(t, over, healthy())
	rs := recsOf(f, RecDefaultTime)
	if len(rs) != 1 {
		t.Fatalf("default-time recommendations = %v", kinds(f))
	}
	line := rs[0].Config[0].Text
	if !strings.HasPrefix(line, "scontrol update PartitionName=over DefaultTime=") {
		t.Errorf("config = %q", line)
	}
	// The run-time p95 is under 2 h 12 min: rounded up to 15 minutes it is
	// at most 02:15:00.
	if !strings.HasSuffix(line, "DefaultTime=02:15:00") {
		t.Errorf("config = %q, want DefaultTime=02:15:00", line)
	}
}

func TestIdleAccountNamed(t *testing.T) {
	idle := PlantGroup{Users: []string{"ivan"}, Account: "idlers", Name: "notebook", Jobs: 30,
		Duration: 6 * time.Hour, GPUs: 2, IdleAll: true}
	_, f := analyseSpec(t, idle, healthy())
	rs := recsOf(f, RecIdleAccount)
	if len(rs) != 1 || rs[0].Title != "Account idlers holds idle GPUs" {
		t.Errorf("idle-account recommendations = %v", kinds(f))
	}
}

func TestUserOverRequestHint(t *testing.T) {
	g := PlantGroup{Users: []string{"greedy"}, Account: "cv", Name: "ft", Jobs: 10,
		Duration: 5 * time.Hour, GPUs: 4, UsedGPUs: 1, VRAMFrac: 0.5, Util: 90}
	_, f := analyseSpec(t, g, healthy())
	rs := recsOf(f, RecUserGPUs)
	if len(rs) != 1 || rs[0].Change != "asked for 4 GPUs, used 1 → --gres=gpu:1" {
		t.Fatalf("hints = %v", rs)
	}
	if rs[0].Config[0].Text != "#SBATCH --gres=gpu:1" {
		t.Errorf("config = %v", rs[0].Config)
	}
}

// TestUserUsedNoGPU is heidi's month: every two-GPU run left both GPUs
// idle. The advice is to submit without GPUs, as each job's hint says,
// never "used 1".
func TestUserUsedNoGPU(t *testing.T) {
	heidi := PlantGroup{Users: []string{"heidi"}, Account: "bio", Name: "nb", Jobs: 12,
		Duration: 5 * time.Hour, GPUs: 2, IdleAll: true}
	in, f := analyseSpec(t, heidi, healthy())
	rs := recsOf(f, RecUserGPUs)
	if len(rs) != 1 {
		t.Fatalf("user recommendations = %v", kinds(f))
	}
	r := rs[0]
	if r.Title != "User heidi: asked for 2 GPUs, used none" ||
		r.Change != "12 of 12 runs used none of their GPUs → submit those without --gres=gpu or --gpus, to a CPU partition" {
		t.Errorf("recommendation = %q / %q", r.Title, r.Change)
	}
	if strings.Contains(r.Title+r.Change, "used 1") || len(r.Config) != 0 {
		t.Errorf("advice asks for a GPU: %+v", r)
	}
	for _, j := range in.Jobs {
		if j.User != "heidi" {
			continue
		}
		hs := Hints(j, DefaultConfig(), GPUTypes(in.Nodes))
		if len(hs) == 0 || hs[0].Rule != HintUnusedGPUs || hs[0].Option != "" {
			t.Fatalf("job %s hints = %+v, want submit without GPUs first", j.ID, hs)
		}
	}
}

// TestUserMixedRuns: half of grace's runs used none of their 4 GPUs, the
// other half one: two pieces of advice, each for its runs, each agreeing
// with the hints on those runs.
func TestUserMixedRuns(t *testing.T) {
	none := PlantGroup{Users: []string{"grace"}, Account: "cv", Name: "nb", Jobs: 8,
		Duration: 5 * time.Hour, GPUs: 4, IdleAll: true}
	one := PlantGroup{Users: []string{"grace"}, Account: "cv", Name: "ft", Jobs: 8,
		Duration: 5 * time.Hour, GPUs: 4, UsedGPUs: 1, VRAMFrac: 0.5, Util: 90}
	_, f := analyseSpec(t, none, one, healthy())
	var got []string
	for _, r := range recsOf(f, RecUserGPUs) {
		got = append(got, r.Change)
	}
	want := []string{
		"8 of 16 runs used none of their GPUs → submit those without --gres=gpu or --gpus, to a CPU partition",
		"asked for 4 GPUs, used 1 → --gres=gpu:1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q\nwant      %q", got, want)
	}
}

// TestDebugPartitionFromSacct: short jobs known only from sacct (no GPU
// readings) that wait longer than they run call for a debug partition.
func TestDebugPartitionFromSacct(t *testing.T) {
	short := PlantGroup{Users: []string{"dan", "eve"}, Account: "ml", Name: "try", Jobs: 60,
		Duration: 10 * time.Minute, Jitter: 0.3, Wait: 2 * time.Hour, GPUs: 1, NoGPUData: true}
	_, f := analyseSpec(t, short, healthy())
	rs := recsOf(f, RecDebugPart)
	if len(rs) != 1 {
		t.Fatalf("no debug partition: %v; no change %+v", kinds(f), f.NoChange)
	}
	if n := rs[0].Evidence[0].Note; n != "60 short jobs of 2 users (60 without GPU utilisation readings)" {
		t.Errorf("evidence = %q", n)
	}
}

func TestHealthyClusterNoFalseAlarms(t *testing.T) {
	in, f := analyseSpec(t, healthy())
	if len(f.Recommendations) != 0 {
		t.Errorf("healthy cluster got %v", kinds(f))
	}
	if len(f.NoChange) == 0 {
		t.Error("no 'no change' notes: the rules must say they looked")
	}
	if f.Plan.Constraint != ConstraintNone {
		t.Errorf("verdict = %s (%s), want none", f.Plan.Constraint, f.Plan.CrossCheck)
	}
	if f.Plan.CurrentGPUs != TotalGPUs(in.Nodes) {
		t.Errorf("current GPUs = %d", f.Plan.CurrentGPUs)
	}
}

func TestFindingsJSONRecommendations(t *testing.T) {
	_, f := analyseSpec(t, busyCluster()...)
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"recommendations":[{"id":"R1","kind":"gpu_shards"`, `"no_change":`, `"plan":{"params":{"growth":0.3`, `"constraint":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestPlantDeterministic(t *testing.T) {
	spec := PlantSpec{Days: 3, Groups: []PlantGroup{healthy()}}
	a, b := Plant(spec, 7), Plant(spec, 7)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different jobs")
	}
	if c := Plant(spec, 8); reflect.DeepEqual(a, c) {
		t.Error("different seeds, same jobs")
	}
	if len(a) != 150 {
		t.Errorf("jobs = %d, want 150", len(a))
	}
}

// busyCluster triggers every policy rule: quiet small work, short jobs
// that wait, long training over the cap, over-requested limits, a user
// far above the others.
func busyCluster() []PlantGroup {
	small := PlantGroup{Users: []string{"sam", "sue"}, Account: "nlp", Name: "eval",
		Jobs: 600, Duration: 3 * time.Hour, VRAMFrac: 0.15, VRAMJitter: 0.02, Util: 20, UtilJitter: 5, Wait: 30 * time.Minute, LimitFactor: 10}
	debug := PlantGroup{Users: []string{"dan", "dee", "dot"}, Account: "ml", Name: "bash",
		Jobs: 100, Duration: 10 * time.Minute, Wait: 40 * time.Minute, VRAMFrac: 0.2, Util: 40}
	long := PlantGroup{Users: []string{"lee"}, Account: "ml", Name: "pretrain", Partition: "long",
		Jobs: 10, GPUs: 8, Duration: 36 * time.Hour, VRAMFrac: 0.8, Util: 90, LimitFactor: 8, Wait: 6 * time.Hour}
	return []PlantGroup{small, debug, long, healthy()}
}

func TestBusyClusterRecommendations(t *testing.T) {
	_, f := analyseSpec(t, busyCluster()...)
	for _, k := range []string{RecShards, RecMPS, RecDebugPart, RecLongQOS, RecUserLimits, RecDefaultTime} {
		if len(recsOf(f, k)) == 0 {
			t.Errorf("no %s recommendation; got %v; no change: %v", k, kinds(f), f.NoChange)
		}
	}
	if d := recsOf(f, RecDebugPart); len(d) == 1 {
		// Short runs last 10 min ± 0: MaxTime rounds up to 15 min,
		// DefaultTime to 10 min.
		if want := "PartitionName=debug Nodes=gpu01,gpu02,gpu03,gpu04 MaxTime=00:15:00 DefaultTime=00:10:00 PriorityTier=10 QOS=gpu-debug State=UP"; d[0].Config[2].Text != want {
			t.Errorf("debug partition = %q, want %q", d[0].Config[2].Text, want)
		}
	}
	if l := recsOf(f, RecLongQOS); len(l) == 1 {
		// 36 h × 1.1 rounded up to the hour: 40 h; cap 0.75 × 16 = 12.
		if want := "sacctmgr -i modify qos gpu-long set MaxWall=1-16:00:00 GrpTRES=gres/gpu=12 PreemptMode=requeue Flags=DenyOnLimit"; l[0].Config[1].Text != want {
			t.Errorf("long QOS = %q, want %q", l[0].Config[1].Text, want)
		}
	}
}

// Strict forms of every line EmitSlurm may write, as Slurm 22.05 accepts
// them.
var (
	reTime   = `(\d+-)?\d{2}:\d{2}:\d{2}`
	reName   = `[A-Za-z0-9_.-]+`
	acceptRE = []*regexp.Regexp{
		regexp.MustCompile(`^sacctmgr -i add qos ` + reName + `$`),
		regexp.MustCompile(`^sacctmgr -i modify qos ` + reName + ` set( (MaxWall=` + reTime + `|MaxTRESPerUser=gres/(gpu|shard)=\d+|MaxTRESPerJob=gres/(gpu|shard)=\d+|GrpTRES=gres/gpu=\d+|Priority=\d+|Flags=DenyOnLimit|Preempt=` + reName + `|PreemptMode=requeue))+$`),
		regexp.MustCompile(`^PartitionName=` + reName + ` Nodes=(ALL|` + reName + `(,` + reName + `)*) MaxTime=` + reTime + ` DefaultTime=` + reTime + `( PriorityTier=\d+)? QOS=` + reName + ` State=UP$`),
		regexp.MustCompile(`^scontrol update PartitionName=` + reName + ` DefaultTime=` + reTime + `$`),
		regexp.MustCompile(`^GresTypes=gpu,shard$`),
		regexp.MustCompile(`^AccountingStorageTRES=gres/gpu,gres/shard$`),
		regexp.MustCompile(`^PriorityType=priority/multifactor$`),
		regexp.MustCompile(`^PreemptType=preempt/qos$`),
		regexp.MustCompile(`^PreemptMode=REQUEUE$`),
		regexp.MustCompile(`^NodeName=` + reName + ` Gres=gpu:[a-z0-9_]+:\d+,shard:\d+$`),
		regexp.MustCompile(`^NodeName=` + reName + ` Name=shard Count=\d+$`),
		regexp.MustCompile(`^#SBATCH --(partition|qos)=` + reName + `$`),
		regexp.MustCompile(`^#SBATCH --gres=(gpu|shard):\d+$`),
		regexp.MustCompile(`^export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=\d{1,3}$`),
		regexp.MustCompile(`^export CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=\d+G$`),
		regexp.MustCompile(`^export XLA_PYTHON_CLIENT_MEM_FRACTION=0\.\d\d$`),
	}
)

func TestEmitSlurmSyntax(t *testing.T) {
	groups := busyCluster()
	groups = append(groups,
		PlantGroup{Users: []string{"greedy"}, Account: "cv", Name: "ft", Jobs: 10, Duration: 5 * time.Hour, GPUs: 4, UsedGPUs: 1, VRAMFrac: 0.5, Util: 90},
		PlantGroup{Users: []string{"ioana"}, Account: "bio", Name: "prep", Jobs: 60, Duration: 4 * time.Hour, VRAMFrac: 0.3, Util: 12, IOWait: 0.5})
	_, f := analyseSpec(t, groups...)
	text := EmitSlurm(f.Recommendations)
	lines := 0
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "# ") {
			continue
		}
		lines++
		ok := false
		for _, re := range acceptRE {
			if re.MatchString(l) {
				ok = true
				break
			}
		}
		if !ok {
			t.Errorf("line not in the accepted syntax: %q", l)
		}
	}
	if lines < 15 {
		t.Errorf("only %d lines emitted:\n%s", lines, text)
	}
	// A QOS is created before it is modified or named by a partition.
	if strings.Index(text, "add qos gpu-long") > strings.Index(text, "modify qos gpu-long") {
		t.Error("gpu-long modified before it is added")
	}
	if strings.Count(text, "\nGresTypes=gpu,shard\n") != 1 {
		t.Error("GresTypes not written exactly once")
	}
}

func TestEmitSlurmGrouping(t *testing.T) {
	recs := []Recommendation{
		{ID: "R1", Title: "a", Config: []ConfigLine{{TargetSbatch, "#SBATCH --gres=gpu:1"}, {TargetSacctmgr, "sacctmgr -i add qos x"}}},
		{ID: "R2", Title: "b\nc", Config: []ConfigLine{{TargetSacctmgr, "sacctmgr -i add qos x"}, {"other", "ignored"}}},
	}
	want := "# sacctmgr: run as an operator (needs AccountingStorageEnforce=limits,qos)\n# R1: a\nsacctmgr -i add qos x\n\n" +
		"# sbatch: lines for users' batch scripts\n# R1: a\n#SBATCH --gres=gpu:1\n"
	if got := EmitSlurm(recs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := EmitSlurm(nil); got != "" {
		t.Errorf("no recommendations: got %q", got)
	}
}

func TestBadData(t *testing.T) {
	nan := busy(math.NaN(), 6)
	absurd := busy(250, 6)
	absurd.VRAMPeak = 500 * gib
	tests := []struct {
		name string
		jobs []Job
	}{
		{"empty month", nil},
		{"one job", []Job{job(time.Hour, busy(50, 6))}},
		{"NaN and absurd readings", []Job{job(time.Hour, nan), job(time.Hour, absurd)}},
		{"no GPU data", func() []Job {
			j := job(time.Hour)
			j.ReqGPUs = 2
			return []Job{j, j}
		}()},
		{"no times", func() []Job {
			j := job(time.Hour, busy(50, 6))
			j.Start, j.End, j.Submit = time.Time{}, time.Time{}, time.Time{}
			return []Job{j}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Jobs: tt.jobs, Nodes: plantNodes()}
			f, err := Analyse(in, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Recommendations) != 0 {
				t.Errorf("recommendations from bad data: %v", kinds(f))
			}
			if len(f.NoChange) == 0 {
				t.Error("no note saying why nothing is recommended")
			}
			if f.Plan.CrossCheck == "" || f.Plan.Constraint == "" {
				t.Errorf("plan without verdict: %+v", f.Plan)
			}
			for _, v := range []float64{f.Plan.CNow, f.Plan.CFuture} {
				if !finite(v) {
					t.Errorf("plan has non-finite numbers: %+v", f.Plan)
				}
			}
			_ = EmitSlurm(f.Recommendations)
		})
	}
}

func TestConfidence(t *testing.T) {
	tests := []struct {
		name                  string
		n                     int
		n0, effect, thr, want float64
	}{
		{"n = n0 at threshold", 50, 50, 0.2, 0.2, (1 - math.Exp(-1)) * (1 - math.Exp(-1))},
		{"many jobs, 3× effect", 500, 50, 0.6, 0.2, (1 - math.Exp(-10)) * (1 - math.Exp(-3))},
		{"no jobs", 0, 50, 1, 1, 0},
		{"NaN effect", 10, 50, math.NaN(), 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Confidence(tt.n, tt.n0, tt.effect, tt.thr); !approx(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSlurmTime(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "00:00:00"}, {90 * time.Minute, "01:30:00"}, {40 * time.Hour, "1-16:00:00"},
		{72 * time.Hour, "3-00:00:00"}, {-time.Hour, "00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := slurmTime(tt.d); got != tt.want {
				t.Errorf("slurmTime(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestRoundUp(t *testing.T) {
	q := 15 * time.Minute
	for _, tt := range []struct{ d, want time.Duration }{
		{0, q}, {time.Minute, q}, {q, q}, {q + time.Second, 2 * q}, {61 * time.Minute, 75 * time.Minute},
	} {
		if got := roundUp(tt.d, q); got != tt.want {
			t.Errorf("roundUp(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
}

func TestGresType(t *testing.T) {
	for model, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "h100", "NVIDIA A100-SXM4-80GB": "a100", "NVIDIA L40S": "l40s",
		"Tesla V100-PCIE-32GB": "v100", "": "gpu",
	} {
		if got := GRESType(model); got != want {
			t.Errorf("GRESType(%q) = %q, want %q", model, got, want)
		}
	}
}

func hasNoChange(f Findings, rule string) bool {
	for _, n := range f.NoChange {
		if n.Rule == rule {
			return true
		}
	}
	return false
}

func joinConfig(cl []ConfigLine) string {
	var b strings.Builder
	for _, l := range cl {
		b.WriteString(l.Text + "\n")
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSharingTwoModels(t *testing.T) {
	const a100 = "NVIDIA A100-SXM4-40GB"
	in := Input{Nodes: append(plantNodes(), Node{Name: "a01", GPUModel: a100, GPUs: 8, MemoryTotal: 40 << 30})}
	in.Jobs = Plant(PlantSpec{Days: 30, Groups: []PlantGroup{
		{Users: []string{"sam"}, Name: "eval", Jobs: 200, Duration: 3 * time.Hour, VRAMFrac: 0.05, Util: 8},
		{Users: []string{"al"}, Name: "eval", Jobs: 100, Duration: 3 * time.Hour, VRAMFrac: 0.05, Util: 8, Model: a100, Card: 40 << 30},
		healthy(),
	}}, 3)
	f, err := Analyse(in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	text := EmitSlurm(f.Recommendations)
	for _, want := range []string{
		// Models in name order: the A100 gets "shared", the H100 its own.
		"PartitionName=shared Nodes=a01 ",
		"PartitionName=shared-h100 Nodes=gpu01,gpu02,gpu03,gpu04 ",
		"NodeName=a01 Gres=gpu:a100:8,shard:64",
		"sacctmgr -i add qos gpu-shared-h100",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("emitted text lacks %q:\n%s", want, text)
		}
	}
	// 5 % of 40 GiB = 2 GiB: the A100 40GB's smallest profile, 1g.5gb, holds it.
	found := false
	for _, r := range recsOf(f, RecMIG) {
		if strings.Contains(r.Title, "7×1g.5gb on some a100") {
			found = true
		}
	}
	if !found {
		t.Errorf("no 1g.5gb layout for the A100 40GB: %v", kinds(f))
	}
}
