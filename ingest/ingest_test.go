package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

var t0 = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	return openDBAt(t, filepath.Join(t.TempDir(), "node.db"), 0)
}

func openDBAt(t *testing.T, path string, busy time.Duration) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func logger(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(t.Output(), nil)) }

var key = profile.Key{Cluster: "lab", JobID: "77", Node: "gpu01"}

// agentProfile is a profile as the agent spools it: one GPU with readings,
// running, or finished an hour after the start.
func agentProfile(finished bool) profile.Job {
	j := profile.Job{
		Key: key, User: "alice", UID: 1001, GID: 100, Start: t0,
		Status: profile.StatusRunning, Source: profile.SourceAgent, SampleInterval: time.Second,
	}
	g := profile.NewGPU(gpu.Device{UUID: "GPU-aaaa", Name: "NVIDIA H100", MemoryTotal: 80 << 30}, 0, t0, time.Second, 0)
	for i := range 10 {
		g.Observe(profile.Reading{Time: t0.Add(time.Duration(i) * time.Second), Util: gpu.Some[uint32](50),
			MemUsed: gpu.Some[uint64](8 << 30), Processes: 1}, time.Second)
	}
	j.GPUs = []profile.GPU{g}
	j.LastSample = t0.Add(9 * time.Second)
	if finished {
		j.Finish(t0.Add(time.Hour))
	}
	return j
}

// hookProfile is the minimal profile a hook builds without the agent.
func hookProfile() profile.Job {
	j := profile.Job{Key: key, User: "alice", UID: 1001, GID: 100, Start: t0,
		Status: profile.StatusRunning, Source: profile.SourceHook, SampleInterval: time.Second}
	j.GPUs = []profile.GPU{profile.NewGPU(gpu.Device{UUID: "GPU-aaaa", MemoryTotal: 80 << 30}, 0, t0, time.Second, 0)}
	j.MarkPartial("agent unreachable at job start")
	return j
}

func hookEnd() hookproto.JobEnd {
	return hookproto.JobEnd{Job: hookProfile(), End: t0.Add(2 * time.Hour), ExitKnown: true, ExitStatus: 3}
}

func schedRecord() slurmext.JobRecord {
	return slurmext.JobRecord{
		Cluster: "lab", JobID: "77", DisplayID: "77", ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		Name: "train", User: "alice", UID: 1001, State: "COMPLETED", Partition: "gpu",
		Submit: t0.Add(-time.Minute), Start: t0, End: t0.Add(time.Hour), NodeList: "gpu01", NodeCount: 1,
		Source: "jobcomp",
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func apply(t *testing.T, db *store.DB, kind string, v any, opts ingest.Options) error {
	t.Helper()
	data := mustJSON(t, v)
	return db.WithTx(context.Background(), func(tx *store.Tx) error {
		return ingest.Apply(context.Background(), tx, kind, data, opts)
	})
}

func getJob(t *testing.T, db *store.DB) profile.Job {
	t.Helper()
	j, err := db.GetJob(context.Background(), key)
	if err != nil {
		t.Fatalf("GetJob: %v", err)
	}
	return j
}

func outboxLen(t *testing.T, db *store.DB) int {
	t.Helper()
	n, err := db.OutboxLen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestApplyProfile(t *testing.T) {
	for _, finished := range []bool{false, true} {
		t.Run(map[bool]string{false: "running", true: "finished"}[finished], func(t *testing.T) {
			db := openDB(t)
			j := agentProfile(finished)
			for i := range 2 {
				if err := apply(t, db, hookproto.KindProfile, j, ingest.Options{}); err != nil {
					t.Fatalf("apply %d: %v", i+1, err)
				}
				if got, want := getJob(t, db), store.Normalize(j); !reflect.DeepEqual(got, want) {
					t.Errorf("after apply %d:\n got %+v\nwant %+v", i+1, got, want)
				}
			}
		})
	}
}

func TestApplyRunningAfterFinished(t *testing.T) {
	db := openDB(t)
	finished := agentProfile(true)
	if err := apply(t, db, hookproto.KindProfile, finished, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	// A running snapshot spooled before the finish and drained after it:
	// applied without error (the record is done with) and without effect.
	if err := apply(t, db, hookproto.KindProfile, agentProfile(false), ingest.Options{}); err != nil {
		t.Fatalf("running after finished: %v, want nil", err)
	}
	if got, want := getJob(t, db), store.Normalize(finished); !reflect.DeepEqual(got, want) {
		t.Errorf("stored:\n got %+v\nwant the finished profile %+v", got, want)
	}
}

func TestApplyHookStart(t *testing.T) {
	t.Run("unknown job", func(t *testing.T) {
		db := openDB(t)
		for i := range 2 {
			if err := apply(t, db, hookproto.KindHookStart, hookProfile(), ingest.Options{}); err != nil {
				t.Fatalf("apply %d: %v", i+1, err)
			}
		}
		if got, want := getJob(t, db), store.Normalize(hookProfile()); !reflect.DeepEqual(got, want) {
			t.Errorf("stored:\n got %+v\nwant %+v", got, want)
		}
	})
	t.Run("agent was first", func(t *testing.T) {
		db := openDB(t)
		rich := agentProfile(false)
		if err := db.PutJob(context.Background(), rich); err != nil {
			t.Fatal(err)
		}
		if err := apply(t, db, hookproto.KindHookStart, hookProfile(), ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		if got, want := getJob(t, db), store.Normalize(rich); !reflect.DeepEqual(got, want) {
			t.Errorf("the hook's record replaced the agent's profile:\n got %+v\nwant %+v", got, want)
		}
	})
}

func TestApplyHookEnd(t *testing.T) {
	tests := []struct {
		name       string
		before     *profile.Job // in the database first
		wantSource string
		wantReason string // a partial reason that must be there; empty: not partial
		wantEnd    time.Time
		wantExit   int
	}{
		{name: "job unknown", wantSource: profile.SourceHook, wantReason: "no readings: the agent never saw this job",
			wantEnd: t0.Add(2 * time.Hour), wantExit: 3},
		{name: "agent flushed readings, then died", before: ptr(agentProfile(false)), wantSource: profile.SourceAgent,
			wantReason: "agent unreachable at job end: readings stop at 2026-11-03T10:00:09Z", wantEnd: t0.Add(2 * time.Hour), wantExit: 3},
		{name: "hook-only job", before: ptr(hookProfile()), wantSource: profile.SourceHook,
			wantReason: "no readings: the agent never sampled this job", wantEnd: t0.Add(2 * time.Hour), wantExit: 3},
		{name: "agent already finished it", before: ptr(agentProfile(true)), wantSource: profile.SourceAgent,
			wantEnd: t0.Add(time.Hour), wantExit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			if tt.before != nil {
				if err := db.PutJob(context.Background(), *tt.before); err != nil {
					t.Fatal(err)
				}
			}
			if err := apply(t, db, hookproto.KindHookEnd, hookEnd(), ingest.Options{}); err != nil {
				t.Fatalf("apply: %v", err)
			}
			once := getJob(t, db)
			if once.Status != profile.StatusFinished || !once.End.Equal(tt.wantEnd) || once.Source != tt.wantSource || once.ExitStatus != tt.wantExit {
				t.Errorf("stored = %s end %v source %s exit %d, want finished %v %s %d",
					once.Status, once.End, once.Source, once.ExitStatus, tt.wantEnd, tt.wantSource, tt.wantExit)
			}
			if tt.wantReason != "" && (!once.Partial || !slices.Contains(once.PartialReasons, tt.wantReason)) {
				t.Errorf("partial %v reasons %q, want %q among them", once.Partial, once.PartialReasons, tt.wantReason)
			}
			if tt.wantReason == "" && tt.before != nil && !reflect.DeepEqual(once, store.Normalize(*tt.before)) {
				t.Errorf("a finished profile was changed:\n got %+v\nwant %+v", once, store.Normalize(*tt.before))
			}
			if err := apply(t, db, hookproto.KindHookEnd, hookEnd(), ingest.Options{}); err != nil {
				t.Fatalf("second apply: %v", err)
			}
			if twice := getJob(t, db); !reflect.DeepEqual(twice, once) {
				t.Errorf("applying twice differs from once:\n got %+v\nwant %+v", twice, once)
			}
		})
	}
}

// TestApplyHookCompletesGPUs: a hook that named its GPUs from the driver's
// /proc files (gpu/nvproc: no memory size) is stored with the memory size
// of the writer's inventory, as when the hook read NVML itself; what the
// hook read stays.
func TestApplyHookCompletesGPUs(t *testing.T) {
	procGPU := func() profile.Job {
		j := hookProfile()
		j.GPUs = []profile.GPU{profile.NewGPU(gpu.Device{UUID: "GPU-aaaa", Name: "NVIDIA H100 80GB HBM3", Minor: 2}, 0, t0, time.Second, 0)}
		return j
	}
	migGPU := func() profile.Job {
		j := hookProfile()
		j.GPUs = []profile.GPU{profile.NewGPU(gpu.Device{UUID: "MIG-aaaa", Minor: -1}, -1, t0, time.Second, 0)}
		return j
	}
	migInventory := []gpu.Device{{UUID: "GPU-cccc", Name: "NVIDIA A100-SXM4-40GB", Minor: 2, MemoryTotal: 40 << 30,
		MIGEnabled: true, MIG: []gpu.MIGDevice{{UUID: "MIG-aaaa", ParentUUID: "GPU-cccc", Profile: "1g.10gb", MemoryTotal: 10 << 30}}}}
	inventory := []gpu.Device{
		{UUID: "GPU-bbbb", Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30},
		{UUID: "GPU-aaaa", Name: "NVIDIA H100 80GB HBM3 (NVML)", Minor: 2, MemoryTotal: 81559 << 20},
	}
	tests := []struct {
		name      string
		kind      string
		job       profile.Job
		devices   []gpu.Device
		wantMem   uint64
		wantModel string
		wantMinor int
	}{
		{"start, from /proc", hookproto.KindHookStart, procGPU(), inventory, 81559 << 20, "NVIDIA H100 80GB HBM3", 2},
		{"end, from /proc", hookproto.KindHookEnd, procGPU(), inventory, 81559 << 20, "NVIDIA H100 80GB HBM3", 2},
		{"no inventory: unknown stays unknown", hookproto.KindHookStart, procGPU(), nil, 0, "NVIDIA H100 80GB HBM3", 2},
		{"the hook's own reading stays", hookproto.KindHookStart, hookProfile(), inventory, 80 << 30, "NVIDIA H100 80GB HBM3 (NVML)", 0},
		{"a GPU the inventory does not know", hookproto.KindHookStart, procGPU(), inventory[:1], 0, "NVIDIA H100 80GB HBM3", 2},
		{"a MIG instance kept by UUID", hookproto.KindHookStart, migGPU(), migInventory, 10 << 30, "NVIDIA A100-SXM4-40GB MIG 1g.10gb", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			var v any = tt.job
			if tt.kind == hookproto.KindHookEnd {
				v = hookproto.JobEnd{Job: tt.job, End: t0.Add(time.Hour)}
			}
			if err := apply(t, db, tt.kind, v, ingest.Options{Devices: tt.devices}); err != nil {
				t.Fatalf("apply: %v", err)
			}
			g := getJob(t, db).GPUs[0]
			if g.MemoryTotal != tt.wantMem || g.Model != tt.wantModel || g.Minor != tt.wantMinor {
				t.Errorf("GPU stored with memory %d, model %q, minor %d; want %d, %q, %d", g.MemoryTotal, g.Model, g.Minor, tt.wantMem, tt.wantModel, tt.wantMinor)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestApplySchedJob(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	for i := range 2 {
		if err := apply(t, db, hookproto.KindSchedJob, schedRecord(), ingest.Options{}); err != nil {
			t.Fatalf("apply %d: %v", i+1, err)
		}
		got, err := db.GetSchedJob(ctx, "lab", "77")
		if err != nil {
			t.Fatal(err)
		}
		if want := store.NormalizeRecord(schedRecord()); !reflect.DeepEqual(got, want) {
			t.Errorf("after apply %d:\n got %+v\nwant %+v", i+1, got, want)
		}
	}
}

func TestApplyUnreadable(t *testing.T) {
	noCluster := schedRecord()
	noCluster.Cluster = ""
	tests := []struct {
		name string
		kind string
		data string
	}{
		{name: "unknown kind", kind: "mystery", data: `{}`},
		{name: "profile not JSON", kind: hookproto.KindProfile, data: `{"cluster":`},
		{name: "profile of the wrong type", kind: hookproto.KindProfile, data: `"a string"`},
		{name: "hookstart not JSON", kind: hookproto.KindHookStart, data: `[`},
		{name: "hookend not JSON", kind: hookproto.KindHookEnd, data: `{"job":7}`},
		{name: "schedjob not JSON", kind: hookproto.KindSchedJob, data: `nope`},
		{name: "schedjob without cluster", kind: hookproto.KindSchedJob, data: string(mustJSON(t, noCluster))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			err := db.WithTx(context.Background(), func(tx *store.Tx) error {
				return ingest.Apply(context.Background(), tx, tt.kind, []byte(tt.data), ingest.Options{})
			})
			if err == nil {
				t.Fatal("no error")
			}
			if views, _ := db.ReaderFor(store.System).ListViews(context.Background(), store.ViewFilter{}); len(views) != 0 {
				t.Errorf("%d jobs stored from an unreadable record", len(views))
			}
		})
	}
}

func TestApplyOutbox(t *testing.T) {
	tests := []struct {
		name   string
		before *profile.Job
		kind   string
		v      any
		want   int
	}{
		{name: "finished profile", kind: hookproto.KindProfile, v: agentProfile(true), want: 1},
		{name: "running profile", kind: hookproto.KindProfile, v: agentProfile(false), want: 0},
		{name: "running after finished", before: ptr(agentProfile(true)), kind: hookproto.KindProfile, v: agentProfile(false), want: 0},
		{name: "hook start", kind: hookproto.KindHookStart, v: hookProfile(), want: 0},
		{name: "hook end of an unknown job", kind: hookproto.KindHookEnd, v: hookEnd(), want: 1},
		{name: "hook end of a running job", before: ptr(agentProfile(false)), kind: hookproto.KindHookEnd, v: hookEnd(), want: 1},
		{name: "sched job", kind: hookproto.KindSchedJob, v: schedRecord(), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			if tt.before != nil {
				if err := db.PutJob(context.Background(), *tt.before); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2 {
				if err := apply(t, db, tt.kind, tt.v, ingest.Options{Outbox: true}); err != nil {
					t.Fatalf("apply %d: %v", i+1, err)
				}
				if got := outboxLen(t, db); got != tt.want {
					t.Errorf("after apply %d: outbox holds %d, want %d", i+1, got, tt.want)
				}
			}
			if tt.want == 0 {
				return
			}
			items, err := db.DueOutbox(context.Background(), time.Now().Add(time.Hour), 0)
			if err != nil || len(items) != 1 {
				t.Fatalf("DueOutbox = %d items, %v", len(items), err)
			}
			queued, err := items[0].Job()
			if err != nil {
				t.Fatal(err)
			}
			if stored := getJob(t, db); !reflect.DeepEqual(queued, stored) || queued.Status != profile.StatusFinished {
				t.Errorf("queued profile differs from the stored one or is not finished:\n got %+v\nwant %+v", queued, stored)
			}
		})
	}
	t.Run("without the option", func(t *testing.T) {
		db := openDB(t)
		if err := apply(t, db, hookproto.KindProfile, agentProfile(true), ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		if err := apply(t, db, hookproto.KindHookEnd, hookEnd(), ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		if got := outboxLen(t, db); got != 0 {
			t.Errorf("outbox holds %d without Options.Outbox, want 0", got)
		}
	})
}

// writeRecord puts a file with a valid record name and the given content,
// as a crash or a foreign writer may leave one.
func writeRecord(t *testing.T, dir spool.Dir, nano int, kind, content string) string {
	t.Helper()
	name := strings.Repeat("0", 19) + string(rune('0'+nano)) + "-1-00000000000000ab." + kind + ".json"
	if err := os.MkdirAll(dir.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir.Path, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestDrainSpool(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	dir := spool.Dir{Path: filepath.Join(t.TempDir(), "spool")}

	invalid := agentProfile(true)
	invalid.Node = "" // the store refuses it for good
	var bad []string
	// Oldest first: the broken records come before the good ones and must
	// not stop them.
	bad = append(bad, writeRecord(t, dir, 1, hookproto.KindProfile, `{"cluster":"lab","job_id":`))
	bad = append(bad, writeRecord(t, dir, 2, "mystery", `{}`))
	for _, p := range []struct {
		kind string
		v    any
		bad  bool
	}{
		{kind: hookproto.KindProfile, v: "not a profile", bad: true},
		{kind: hookproto.KindSchedJob, v: schedRecord()},
		{kind: hookproto.KindHookStart, v: invalid, bad: true},
		{kind: hookproto.KindProfile, v: agentProfile(true)},
		{kind: hookproto.KindHookEnd, v: hookEnd()},
	} {
		name, err := dir.Put(p.kind, p.v)
		if err != nil {
			t.Fatal(err)
		}
		if p.bad {
			bad = append(bad, name)
		}
	}

	n, err := ingest.DrainSpool(ctx, db, dir, ingest.Options{}, logger(t))
	if err != nil || n != 3 {
		t.Fatalf("DrainSpool = %d, %v; want 3 applied, nil", n, err)
	}
	if es, err := dir.List(); err != nil || len(es) != 0 {
		t.Errorf("spool after draining: %d records, %v; want none", len(es), err)
	}
	for _, name := range bad {
		if _, err := os.Stat(filepath.Join(dir.Path, spool.BadDir, name)); err != nil {
			t.Errorf("record %s not quarantined: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir.Path, spool.BadDir, name+".reason")); err != nil {
			t.Errorf("record %s has no reason file: %v", name, err)
		}
	}
	// The agent's finished profile came before the epilog's hookend, which
	// leaves it alone.
	if got, want := getJob(t, db), store.Normalize(agentProfile(true)); !reflect.DeepEqual(got, want) {
		t.Errorf("stored:\n got %+v\nwant %+v", got, want)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "77"); err != nil {
		t.Errorf("sched record: %v", err)
	}

	// Nothing left: a second pass does nothing.
	if n, err := ingest.DrainSpool(ctx, db, dir, ingest.Options{}, logger(t)); n != 0 || err != nil {
		t.Errorf("second DrainSpool = %d, %v; want 0, nil", n, err)
	}
}

// DrainEvery drains the spool at each tick until its context ends.
func TestDrainEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	db := openDB(t)
	dir := spool.Dir{Path: filepath.Join(t.TempDir(), "spool")}
	if _, err := dir.Put(hookproto.KindSchedJob, schedRecord()); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ingest.DrainEvery(ctx, db, dir, 10*time.Millisecond, ingest.Options{}, logger(t))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := db.GetSchedJob(context.Background(), "lab", "77"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the spooled record was not drained")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestDrainSpoolMissingDir(t *testing.T) {
	n, err := ingest.DrainSpool(context.Background(), openDB(t), spool.Dir{Path: filepath.Join(t.TempDir(), "none")}, ingest.Options{}, logger(t))
	if n != 0 || err != nil {
		t.Errorf("DrainSpool of a missing spool = %d, %v; want 0, nil", n, err)
	}
}

// TestDrainSpoolLocked: a database held by another writer stops the pass
// with ErrLocked and leaves every record for the next one.
func TestDrainSpoolLocked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.db")
	holder := openDBAt(t, path, 0)
	db := openDBAt(t, path, 100*time.Millisecond)
	dir := spool.Dir{Path: filepath.Join(t.TempDir(), "spool")}
	for _, p := range []struct {
		kind string
		v    any
	}{
		{hookproto.KindSchedJob, schedRecord()},
		{hookproto.KindProfile, agentProfile(true)},
		{hookproto.KindHookEnd, hookEnd()},
	} {
		if _, err := dir.Put(p.kind, p.v); err != nil {
			t.Fatal(err)
		}
	}

	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- holder.WithTx(ctx, func(*store.Tx) error {
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	n, err := ingest.DrainSpool(ctx, db, dir, ingest.Options{}, logger(t))
	close(release)
	if herr := <-done; herr != nil {
		t.Fatal(herr)
	}
	if n != 0 || !errors.Is(err, store.ErrLocked) {
		t.Errorf("DrainSpool while locked = %d, %v; want 0, ErrLocked", n, err)
	}
	if es, _ := dir.List(); len(es) != 3 {
		t.Errorf("spool holds %d records after a locked pass, want all 3", len(es))
	}
	if bad, _ := os.ReadDir(filepath.Join(dir.Path, spool.BadDir)); len(bad) != 0 {
		t.Errorf("a locked database quarantined %d files", len(bad))
	}

	n, err = ingest.DrainSpool(ctx, db, dir, ingest.Options{}, logger(t))
	if n != 3 || err != nil {
		t.Errorf("DrainSpool after release = %d, %v; want 3, nil", n, err)
	}
}

// lockOnQuarantine is a log handler that, at the first quarantine DrainSpool
// logs, has another connection take the write lock and hold it until
// release is closed: the pass then meets a locked database halfway.
type lockOnQuarantine struct {
	slog.Handler
	holder  *store.DB
	release chan struct{}
	done    chan error
}

func (h *lockOnQuarantine) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "quarantined") && h.done == nil {
		h.done = make(chan error, 1)
		locked := make(chan struct{})
		go func() {
			h.done <- h.holder.WithTx(context.Background(), func(*store.Tx) error {
				close(locked)
				<-h.release
				return nil
			})
		}()
		<-locked
	}
	return h.Handler.Handle(ctx, r)
}

// TestDrainSpoolLockedMidway: the records applied before the lock are
// removed, the one that met it and those after it stay.
func TestDrainSpoolLockedMidway(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.db")
	db := openDBAt(t, path, 100*time.Millisecond)
	dir := spool.Dir{Path: filepath.Join(t.TempDir(), "spool")}
	var names []string
	for _, p := range []struct {
		kind string
		v    any
	}{
		{hookproto.KindSchedJob, schedRecord()},
		{hookproto.KindProfile, "garbage"},
		{hookproto.KindProfile, agentProfile(true)},
		{hookproto.KindHookEnd, hookEnd()},
	} {
		name, err := dir.Put(p.kind, p.v)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	h := &lockOnQuarantine{Handler: slog.NewTextHandler(t.Output(), nil), holder: openDBAt(t, path, 0), release: make(chan struct{})}
	n, err := ingest.DrainSpool(ctx, db, dir, ingest.Options{}, slog.New(h))
	close(h.release)
	if h.done == nil {
		t.Fatal("DrainSpool logged no quarantine")
	}
	if herr := <-h.done; herr != nil {
		t.Fatal(herr)
	}
	if n != 1 || !errors.Is(err, store.ErrLocked) {
		t.Errorf("DrainSpool = %d, %v; want 1, ErrLocked", n, err)
	}
	es, _ := dir.List()
	var left []string
	for _, e := range es {
		left = append(left, e.Name)
	}
	if want := names[2:]; !slices.Equal(left, want) {
		t.Errorf("spool holds %q, want %q", left, want)
	}
	if _, err := db.GetSchedJob(ctx, "lab", "77"); err != nil {
		t.Errorf("the record applied before the lock: %v", err)
	}
}

// TestDrainSpoolOldHookEnd: an epilog's end record spooled by gpuprof
// before hookproto.JobEnd (hookproto/testdata) finishes its job.
func TestDrainSpoolOldHookEnd(t *testing.T) {
	db := openDB(t)
	dir := spool.Dir{Path: t.TempDir()}
	b, err := os.ReadFile("../hookproto/testdata/hookend-before-hookproto.json")
	if err != nil {
		t.Fatal(err)
	}
	writeRecord(t, dir, 1, hookproto.KindHookEnd, string(b))
	if n, err := ingest.DrainSpool(context.Background(), db, dir, ingest.Options{}, logger(t)); n != 1 || err != nil {
		t.Fatalf("DrainSpool = %d, %v; want 1, nil", n, err)
	}
	j, err := db.GetJob(context.Background(), profile.Key{Cluster: "lab", JobID: "4242", Node: "gpu01"})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != profile.StatusFinished || !j.ExitKnown || j.ExitStatus != 3 ||
		!j.End.Equal(time.Date(2026, 3, 2, 11, 30, 0, 0, time.UTC)) || len(j.GPUs) != 2 {
		t.Errorf("job = status %s exit %v/%d end %v gpus %d; want finished, exit 3 at 11:30, 2 GPUs",
			j.Status, j.ExitKnown, j.ExitStatus, j.End, len(j.GPUs))
	}
}
