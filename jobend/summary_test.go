package jobend

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

var t0 = time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)

// observed is a GPU read once a second for n seconds at util percent
// with memGiB in use, the job's process on it when procs.
func observed(index int, util uint32, memGiB uint64, n int, procs bool) profile.GPU {
	g := profile.NewGPU(gpu.Device{UUID: "GPU-" + string(rune('a'+index)), Name: "NVIDIA H100 80GB HBM3", Minor: index, MemoryTotal: 80 << 30},
		index, t0, time.Second, profile.DefaultMaxPoints)
	for i := range n {
		r := profile.Reading{Time: t0.Add(time.Duration(i) * time.Second), Util: gpu.Some(util), MemUsed: gpu.Some(memGiB << 30)}
		if procs {
			r.Processes = 1
		}
		g.Observe(r, time.Second)
	}
	return g
}

// twoGPUJob held two GPUs for 10 minutes and used one of them at 60 %
// with 20 GiB; the other had no process.
func twoGPUJob(finished bool) store.JobView {
	p := profile.Job{
		Key:  profile.Key{Cluster: "lab", JobID: "4242", Node: "gpu01"},
		User: "alice", UID: 1001, Account: "physics", Partition: "gpu",
		Start: t0, SampleInterval: time.Second, Status: profile.StatusRunning, Source: profile.SourceAgent,
		GPUs: []profile.GPU{observed(0, 60, 20, 600, true), observed(1, 0, 0, 600, false)},
	}
	p.LastSample = t0.Add(599 * time.Second)
	if finished {
		p.Finish(t0.Add(10 * time.Minute))
	}
	v := store.JobView{Cluster: "lab", JobID: "4242", Profiles: []profile.Job{p}}
	if finished {
		v.Sched = &slurmext.JobRecord{Cluster: "lab", JobID: "4242", DisplayID: "4242", ArrayTaskID: -1, HetOffset: -1,
			Name: "train\nBcc: victim@example.org", User: "alice", UID: 1001, State: slurmext.StateCompleted,
			Submit: t0.Add(-time.Minute), Start: t0, End: t0.Add(10 * time.Minute), TimeLimit: time.Hour, ReqGPUs: 2, NodeList: "gpu01", NodeCount: 1}
	}
	return v
}

func TestSummaryMailText(t *testing.T) {
	s := Summarise(twoGPUJob(true), analysis.DefaultConfig(), nil)
	text := s.MailText(time.UTC)
	for _, want := range []string{
		"GPU summary by gpuprof for job 4242 (cluster lab)",
		"GPUs held/used:  2/1",
		"VRAM peak:       20 of 80 GiB (25 %) on NVIDIA H100 80GB HBM3",
		"Utilisation:     mean 30 %",
		"SM activity:     unknown",
		"Idle:            50 % of the samples",
		"Hint:            #SBATCH --gres=gpu:1",
		"More: gpuprof show 4242",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("mail text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "not closed") {
		t.Errorf("a finished job's summary says it is not final:\n%s", text)
	}
	// The job's name is the user's text: the summary never carries it.
	if strings.Contains(text, "Bcc") {
		t.Errorf("the summary carries the job name:\n%s", text)
	}
	running := Summarise(twoGPUJob(false), analysis.DefaultConfig(), nil).MailText(time.UTC)
	if !strings.Contains(running, "had not closed the job's profile yet: readings up to 2026-12-03T14:09:59") {
		t.Errorf("a running profile's summary does not say how far it reads:\n%s", running)
	}
	none := Summarise(store.JobView{Cluster: "lab", JobID: "7"}, analysis.DefaultConfig(), nil).MailText(nil)
	if !strings.Contains(none, "No GPU readings") || strings.Contains(none, "GPUs held") {
		t.Errorf("a job without a profile:\n%s", none)
	}
}

func TestAdminComment(t *testing.T) {
	got := Summarise(twoGPUJob(true), analysis.DefaultConfig(), nil).AdminComment()
	want := "gpuprof:v1:gpus=2,used=1,util=30,idle=0.50,vram_gib=20.0,vram_frac=0.25,class=short_debug,hint=unused_gpus,final=1"
	if got != want {
		t.Errorf("AdminComment\n got %s\nwant %s", got, want)
	}
	if !slurmext.AdminCommentSafe(got) || len(got) > MaxComment {
		t.Errorf("%q would not survive sacctmgr, or is too long", got)
	}
	if got := Summarise(store.JobView{Cluster: "lab", JobID: "7"}, analysis.DefaultConfig(), nil).AdminComment(); got != "gpuprof:v1:profile=none" {
		t.Errorf("no profile: %q", got)
	}
}

func TestOurs(t *testing.T) {
	for c, want := range map[string]bool{
		"": true, "  ": true, "gpuprof:v1:gpus=1": true,
		"JS1:H4sIAAAA": false, "gpuprof": false, "checked by admin": false,
	} {
		if Ours(c) != want {
			t.Errorf("Ours(%q) = %v, want %v", c, !want, want)
		}
	}
}

func TestAwaitWaitsForTheEpilog(t *testing.T) {
	reads := 0
	find := func(context.Context, string, string) (store.JobView, error) {
		reads++
		switch reads {
		case 1:
			return store.JobView{}, store.ErrNotFound
		case 2, 3:
			return twoGPUJob(false), nil
		}
		return twoGPUJob(true), nil
	}
	v, found, err := Await(context.Background(), find, "lab", "4242", time.Now().Add(5*time.Second), time.Millisecond)
	if !found || err != nil || !Closed(v) || reads != 4 {
		t.Fatalf("Await: found %v, err %v, closed %v after %d reads; want the closed view on the 4th", found, err, Closed(v), reads)
	}
	// Never closed: the last view read, at the bound.
	find = func(context.Context, string, string) (store.JobView, error) { return twoGPUJob(false), nil }
	began := time.Now()
	v, found, _ = Await(context.Background(), find, "lab", "4242", began.Add(50*time.Millisecond), 10*time.Millisecond)
	if !found || Closed(v) || time.Since(began) > 2*time.Second {
		t.Errorf("Await of a job never closed: found %v, closed %v", found, Closed(v))
	}
	// Never found: the error.
	find = func(context.Context, string, string) (store.JobView, error) {
		return store.JobView{}, store.ErrNotFound
	}
	if _, found, err := Await(context.Background(), find, "lab", "1", time.Now().Add(20*time.Millisecond), 5*time.Millisecond); found || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Await of an unknown job: found %v, err %v", found, err)
	}
}
