package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

var t0 = time.Unix(1_800_000_000, 0)

// deps returns hook dependencies on a temp dir with no agent running.
func deps(t *testing.T, jobID string) Deps {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Cluster, cfg.Node = "c", "n1"
	cfg.DB = filepath.Join(dir, "db", "gpuprof.db")
	cfg.SpoolDir = filepath.Join(dir, "spool")
	cfg.Socket = filepath.Join(dir, "agent.sock")
	cfg.Sim.Dir = filepath.Join(dir, "sim")
	devDir := filepath.Join(dir, "dev")
	if err := os.MkdirAll(devDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"nvidia0", "nvidia1", "nvidia2", "nvidia3"} {
		if err := os.WriteFile(filepath.Join(devDir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Hooks.GresConf = filepath.Join(dir, "gres.conf")
	if err := os.WriteFile(cfg.Hooks.GresConf, []byte("Name=gpu File="+devDir+"/nvidia[0-3]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Init(cfg.Sim.Dir, sim.NodeSpec{GPUs: 4, Model: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}); err != nil {
		t.Fatal(err)
	}
	return Deps{
		Config: cfg,
		Env: slurmext.HookEnv{
			JobID: jobID, Node: "n1", User: "alice", UID: 1001, GID: 1001,
			GPUs: []int{1, 3}, HasExit: true, ExitStatus: 3,
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return t0 },
		OpenInventory: func(context.Context) (gpu.Inventory, error) {
			return sim.Open(cfg.Sim.Dir)
		},
	}
}

func withDeadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// readJob applies the spool to the database as the agent does (its
// persister drains the spool through ingest: the node database's one
// writer) and reads the job back.
func readJob(t *testing.T, d Deps) profile.Job {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, d.Config.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ingest.DrainSpool(ctx, db, spool.Dir{Path: d.Config.SpoolDir}, ingest.Options{}, d.Log); err != nil {
		t.Fatal(err)
	}
	j, err := db.GetJob(ctx, profile.Key{Cluster: "c", JobID: d.Env.JobID, Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// spooled returns the kinds of the records waiting in d's spool.
func spooled(t *testing.T, d Deps) []string {
	t.Helper()
	es, err := spool.Dir{Path: d.Config.SpoolDir}.List()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range es {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// TestNoAgentSpoolsForTheAgent: with no agent, the prolog and the epilog
// spool their records and never touch the database (the agent is its one
// writer); once applied as the agent applies them, the job is the minimal
// profile the hooks know, nothing lost.
func TestNoAgentSpoolsForTheAgent(t *testing.T) {
	d := deps(t, "77")
	out, err := Prolog(withDeadline(t, 2*time.Second), d)
	if err != nil || out != ViaSpool {
		t.Fatalf("prolog: %v via %q, want spool", err, out)
	}
	if _, err := os.Stat(d.Config.DB); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after the prolog the database exists (%v): a hook wrote SQLite", err)
	}
	if got := spooled(t, d); !slices.Equal(got, []string{hookproto.KindHookStart}) {
		t.Fatalf("spool after the prolog: %v, want one start record", got)
	}
	j := readJob(t, d)
	if j.Status != profile.StatusRunning || j.Source != profile.SourceHook || !j.Partial {
		t.Errorf("after prolog: status %s source %s partial %v", j.Status, j.Source, j.Partial)
	}
	devs, _ := sim.LoadNode(d.Config.Sim.Dir)
	if len(j.GPUs) != 2 || j.GPUs[0].UUID != devs[1].UUID || j.GPUs[1].UUID != devs[3].UUID {
		t.Fatalf("GPUs %+v; want the devices with minors 1 and 3", j.GPUs)
	}

	d.Now = func() time.Time { return t0.Add(time.Minute) }
	before, err := os.ReadFile(d.Config.DB)
	if err != nil {
		t.Fatal(err)
	}
	out, err = Epilog(withDeadline(t, 2*time.Second), d)
	if err != nil || out != ViaSpool {
		t.Fatalf("epilog: %v via %q, want spool", err, out)
	}
	if after, err := os.ReadFile(d.Config.DB); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the epilog changed the database (%v): a hook wrote SQLite", err)
	}
	if got := spooled(t, d); !slices.Equal(got, []string{hookproto.KindHookEnd}) {
		t.Fatalf("spool after the epilog: %v, want one end record", got)
	}
	j = readJob(t, d)
	if j.Status != profile.StatusFinished || !j.ExitKnown || j.ExitStatus != 3 || !j.End.Equal(t0.Add(time.Minute)) {
		t.Errorf("after epilog: status %s exit %v/%d end %v", j.Status, j.ExitKnown, j.ExitStatus, j.End)
	}
}

func TestEpilogAloneMakesMinimalProfile(t *testing.T) {
	d := deps(t, "78")
	if _, err := Epilog(withDeadline(t, 2*time.Second), d); err != nil {
		t.Fatal(err)
	}
	j := readJob(t, d)
	if j.Status != profile.StatusFinished || !j.Partial || len(j.GPUs) != 2 {
		t.Errorf("status %s partial %v gpus %d", j.Status, j.Partial, len(j.GPUs))
	}
}

func TestLockedDatabaseSpoolsWithinDeadline(t *testing.T) {
	d := deps(t, "79")
	ctx := context.Background()
	db, err := store.Open(ctx, d.Config.DB, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	locked, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.WithTx(ctx, func(*store.Tx) error { close(locked); <-release; return nil })
	}()
	<-locked

	began := time.Now()
	out, err := Epilog(withDeadline(t, time.Second), d)
	if took := time.Since(began); took > time.Second {
		t.Errorf("epilog took %s with the database locked, deadline 1s", took)
	}
	if err != nil || out != ViaSpool {
		t.Fatalf("epilog: %v via %q, want spool", err, out)
	}
	close(release)

	// Once the lock is gone, the spooled record lands: nothing lost.
	n, err := ingest.DrainSpool(ctx, db, spool.Dir{Path: d.Config.SpoolDir}, ingest.Options{}, d.Log)
	if err != nil || n != 1 {
		t.Fatalf("drain: %d records, %v", n, err)
	}
	if j := readJob(t, d); j.Status != profile.StatusFinished {
		t.Errorf("status %s after drain", j.Status)
	}
}

func TestUnwritableEverywhereReportsError(t *testing.T) {
	d := deps(t, "80")
	// A file where the database directory and the spool should be: neither
	// can be written (as on a full or read-only disk).
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.Config.DB = filepath.Join(blocker, "gpuprof.db")
	d.Config.SpoolDir = filepath.Join(blocker, "spool")
	_, err := Epilog(withDeadline(t, time.Second), d)
	if err == nil {
		t.Fatal("no error although nothing could be written")
	}
}

// standInAgent answers every request on d's socket with resp, as an agent
// would, and returns the requests it got.
func standInAgent(t *testing.T, d Deps, resp hookproto.Response) <-chan hookproto.Request {
	t.Helper()
	ln, err := net.Listen("unix", d.Config.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan hookproto.Request, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req hookproto.Request
			if json.NewDecoder(c).Decode(&req) == nil {
				got <- req
			}
			_ = json.NewEncoder(c).Encode(resp)
			c.Close()
		}
	}()
	return got
}

// Issue 25, item 8: the agent could not write the end record (disk full)
// and holds the job finished; the hook cannot write either. The hook says
// where the record is, not "record lost"; the agent got the job's SLUID.
func TestEpilogAgentHoldsUnwrittenRecord(t *testing.T) {
	d := deps(t, "81")
	d.Env.SLUID = "s5K1KKYAYG5D00"
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.Config.DB = filepath.Join(blocker, "gpuprof.db")
	d.Config.SpoolDir = filepath.Join(blocker, "spool")
	reqs := standInAgent(t, d, hookproto.Response{Error: "finish job 81: end record not written", Held: true})
	out, err := Epilog(withDeadline(t, time.Second), d)
	if out != ViaAgentMemory || err == nil || strings.Contains(err.Error(), "record lost") || !strings.Contains(err.Error(), "held by the agent") {
		t.Errorf("epilog: %v via %q; want an error saying the agent holds the record, via %q", err, out, ViaAgentMemory)
	}
	if req := <-reqs; req.End == nil || req.End.SLUID != d.Env.SLUID {
		t.Errorf("request %+v, want the end of the job with its SLUID", req)
	}

	// Without the agent's hold, the same failure is a lost record.
	d2 := deps(t, "82")
	d2.Config.DB, d2.Config.SpoolDir = d.Config.DB, d.Config.SpoolDir
	standInAgent(t, d2, hookproto.Response{Error: "finish job 82: something else"})
	if _, err := Epilog(withDeadline(t, time.Second), d2); err == nil || !strings.Contains(err.Error(), "record lost") {
		t.Errorf("epilog without the agent's hold: %v, want record lost", err)
	}
}

func TestGPURefs(t *testing.T) {
	d := deps(t, "81")
	tests := []struct {
		name  string
		env   slurmext.HookEnv
		gres  string
		wantM []int
	}{
		{"minors from gres.conf", slurmext.HookEnv{GPUs: []int{0, 2}}, d.Config.Hooks.GresConf, []int{0, 2}},
		{"no gres.conf: by PCI order", slurmext.HookEnv{GPUs: []int{1}}, filepath.Join(t.TempDir(), "none"), []int{-1}},
		{"index beyond gres.conf", slurmext.HookEnv{GPUs: []int{9}}, d.Config.Hooks.GresConf, []int{-1}},
		{"no GPUs", slurmext.HookEnv{}, d.Config.Hooks.GresConf, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs := GPURefs(tt.env, tt.gres, d.Log)
			if len(refs) != len(tt.wantM) {
				t.Fatalf("%d refs, want %d", len(refs), len(tt.wantM))
			}
			for i, r := range refs {
				if r.Minor != tt.wantM[i] || r.SlurmIndex != tt.env.GPUs[i] {
					t.Errorf("ref %d = %+v, want minor %d index %d", i, r, tt.wantM[i], tt.env.GPUs[i])
				}
			}
		})
	}
	uu := GPURefs(slurmext.HookEnv{GPUs: []int{0}, GPUUUIDs: []string{"MIG-abc"}}, d.Config.Hooks.GresConf, d.Log)
	if len(uu) != 1 || uu[0].UUID != "MIG-abc" {
		t.Errorf("MIG UUIDs: %+v", uu)
	}
}

// TestUnnamedUUIDKept: a GPU Slurm gave by UUID that the inventory does
// not list (a MIG instance: gpu/nvproc lists physical GPUs only) is kept
// under that UUID, for the agent to name when it drains the record, with
// the reason; before, it became "unresolved-slurm-gpu--1".
func TestUnnamedUUIDKept(t *testing.T) {
	const mig = "MIG-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
	d := deps(t, "83")
	d.Env.GPUs, d.Env.GPUUUIDs = []int{1}, []string{mig}
	if _, err := Prolog(withDeadline(t, 2*time.Second), d); err != nil {
		t.Fatal(err)
	}
	j := readJob(t, d)
	if len(j.GPUs) != 1 || j.GPUs[0].UUID != mig || j.GPUs[0].Minor != -1 {
		t.Fatalf("GPUs %+v, want the one MIG instance by its UUID, minor unknown", j.GPUs)
	}
	if !j.Partial || !slices.ContainsFunc(j.PartialReasons, func(r string) bool { return strings.Contains(r, mig) }) {
		t.Errorf("partial %v %q, want a reason naming %s", j.Partial, j.PartialReasons, mig)
	}
}

func TestHungBackendDoesNotBlock(t *testing.T) {
	d := deps(t, "82")
	d.OpenInventory = func(ctx context.Context) (gpu.Inventory, error) {
		<-ctx.Done() // a driver that never answers
		return nil, errors.New("hung")
	}
	began := time.Now()
	if _, err := Prolog(withDeadline(t, time.Second), d); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("prolog took %s with a hung GPU backend", took)
	}
	j := readJob(t, d)
	if len(j.GPUs) != 2 || !j.Partial {
		t.Errorf("GPUs %d partial %v; want both GPUs kept by Slurm index", len(j.GPUs), j.Partial)
	}
}

func TestGPURefsIgnoreFileOrderUnderAutoDetect(t *testing.T) {
	d := deps(t, "83")
	gres := filepath.Join(t.TempDir(), "gres.conf")
	dev := filepath.Dir(d.Config.Hooks.GresConf)
	if err := os.WriteFile(gres, []byte("AutoDetect=nvml\nName=gpu File="+dev+"/dev/nvidia[0-3]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refs := GPURefs(slurmext.HookEnv{GPUs: []int{2}}, gres, d.Log)
	if len(refs) != 1 || refs[0].Minor != -1 || refs[0].SlurmIndex != 2 {
		t.Errorf("refs %+v, want slurm index 2 by PCI order (no minor) under AutoDetect", refs)
	}
}

// TestClusterFromConfiglessCache: on a configless node (no slurm_conf
// file), the hooks name the cluster from slurmd's cached copy.
func TestClusterFromConfiglessCache(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, "spool", "conf-cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "slurm.conf"), []byte("ClusterName=Cached\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.SlurmConf = filepath.Join(root, "etc", "slurm.conf")
	var logged bytes.Buffer
	d := Deps{Config: cfg, Env: slurmext.HookEnv{JobID: "7"}, Now: time.Now,
		Log:       slog.New(slog.NewTextHandler(&logged, nil)),
		ConfRoots: &slurmext.ConfRoots{RunDir: filepath.Join(root, "run"), SpoolDirs: []string{filepath.Join(root, "spool")}}}
	if got := d.jobStart().Cluster; got != "cached" {
		t.Fatalf("cluster %q, want the cached slurm.conf's", got)
	}
	// One lookup per hook: the configless line is logged once.
	if n := strings.Count(logged.String(), "msg=slurm.conf"); n != 1 {
		t.Errorf("configless line logged %d times, want once:\n%s", n, logged.String())
	}
	if _, got := d.confFiles(); got != filepath.Join(cache, "gres.conf") {
		t.Fatalf("gres.conf %q, want the cache's", got)
	}
	// slurmd's SLURM_CONF (the roots' Env) names the gres.conf beside it.
	d.ConfRoots.Env = filepath.Join(root, "env", "slurm.conf")
	if _, got := d.confFiles(); got != filepath.Join(root, "env", "gres.conf") {
		t.Fatalf("gres.conf %q, want the one beside SLURM_CONF", got)
	}
}

// TestGPURefsFollowInclude: gres.conf's File= lines in an Include'd file
// map Slurm's indices as if written in gres.conf itself.
func TestGPURefsFollowInclude(t *testing.T) {
	d := deps(t, "84")
	text, err := os.ReadFile(d.Config.Hooks.GresConf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gres := filepath.Join(dir, "gres.conf")
	os.WriteFile(filepath.Join(dir, "gpus.conf"), text, 0o644)
	os.WriteFile(gres, []byte("# the GPUs are listed apart\nInclude gpus.conf\n"), 0o644)
	refs := GPURefs(slurmext.HookEnv{GPUs: []int{0, 2}}, gres, d.Log)
	if len(refs) != 2 || refs[0].Minor != 0 || refs[1].Minor != 2 {
		t.Errorf("refs %+v, want minors 0 and 2 from the included file", refs)
	}
}

// TestGresConfFIFODoesNotHoldProlog: a FIFO in place of gres.conf (issue
// 39, finding 9) is refused at once, never waited on: the prolog maps the
// GPUs by PCI order and says why.
func TestGresConfFIFODoesNotHoldProlog(t *testing.T) {
	d := deps(t, "83")
	fifo := filepath.Join(t.TempDir(), "gres.conf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []hookproto.GPURef, 1)
	go func() { done <- GPURefs(slurmext.HookEnv{JobID: "83", GPUs: []int{1}}, fifo, d.Log) }()
	select {
	case refs := <-done:
		if len(refs) != 1 || refs[0].Minor != -1 || refs[0].SlurmIndex != 1 {
			t.Errorf("refs %+v, want Slurm index 1 by PCI order", refs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GPURefs blocked on a FIFO in place of gres.conf")
	}
}
