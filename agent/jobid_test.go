package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/hookproto"
)

// TestEnvironJobIDValidated: a process's environment is the user's to
// write; the job id and SLUID it names pass slurmext.ValidJobID or are not
// read at all, so a hostile value names no job, no cgroup directory and no
// socket pattern.
func TestEnvironJobIDValidated(t *testing.T) {
	tests := []struct {
		name             string
		environ          string
		wantJob, wantSID string
	}{
		{name: "job id", environ: "SLURM_JOB_ID=58\x00SLURM_JOB_SLUID=s5K1KKYAYG5D00\x00", wantJob: "58", wantSID: "s5K1KKYAYG5D00"},
		{name: "path", environ: "SLURM_JOB_ID=../1\x00SLURM_JOB_SLUID=../s5K1KKYAYG5D00\x00"},
		{name: "shell", environ: "SLURM_JOB_ID=1;rm\x00SLURM_JOB_SLUID=$(id)\x00"},
		{name: "glob", environ: "SLURM_JOB_ID=*\x00"},
		{name: "empty", environ: "SLURM_JOB_ID=\x00"},
		{name: "newline", environ: "SLURM_JOB_ID=1\nuser=root\x00"},
		{name: "too long", environ: "SLURM_JOB_ID=" + strings.Repeat("1", 65) + "\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			procfs := t.TempDir()
			writeFile(t, filepath.Join(procfs, "7", "stat"), "7 (train) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n")
			writeFile(t, filepath.Join(procfs, "7", "status"), statusOf("train", 1001))
			writeFile(t, filepath.Join(procfs, "7", "environ"), "PATH=/bin\x00"+tt.environ)
			f := procReader{procfs: procfs}.facts(7)
			if f.envJob != tt.wantJob || f.envSLUID != tt.wantSID {
				t.Errorf("environ %q: job %q, SLUID %q; want %q, %q", tt.environ, f.envJob, f.envSLUID, tt.wantJob, tt.wantSID)
			}
		})
	}
}

// TestRequestJobIDValidated: a start or end whose job id is not one is
// refused, and the agent holds nothing for it.
func TestRequestJobIDValidated(t *testing.T) {
	f := newFixture(t, nil)
	for _, id := range []string{"", "../1", "1;rm", "*", "1/2"} {
		var resp hookproto.Response
		if err := f.a.Handle(context.Background(), hookproto.Request{Op: hookproto.OpStart, Start: &hookproto.JobStart{JobID: id, User: "u", UID: fixtureUID, Start: f.now}}, &resp); err == nil {
			t.Errorf("start of job %q accepted", id)
		}
		if err := f.a.Handle(context.Background(), hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: hookproto.JobStart{JobID: id}, End: f.now}}, &resp); err == nil {
			t.Errorf("end of job %q accepted", id)
		}
	}
	if ids := heldJobs(f.a); len(ids) != 0 {
		t.Errorf("agent holds %v, want nothing", ids)
	}
}

// TestSpooledJobIDValidated: a spooled prolog record whose job id is not
// one is not taken for sampling.
func TestSpooledJobIDValidated(t *testing.T) {
	f := newFixture(t, nil)
	f.spoolPut(hookproto.KindHookStart, f.hookProfile("../1", f.now, 0))
	f.a.takeSpooledHooks(context.Background())
	if ids := heldJobs(f.a); len(ids) != 0 {
		t.Errorf("agent holds %v from a spooled prolog of job ../1, want nothing", ids)
	}
}
