package notice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// ErrJobGone means squeue no longer knows the job (it ended).
var ErrJobGone = errors.New("job not known to squeue")

// JobInfo is what the prolog cannot tell about a job: its name and QOS.
type JobInfo struct {
	Name string
	QOS  string
}

// Squeue looks up a job's name and QOS with `squeue --noheader
// --jobs=ID --format=%q|%j` (slurmext.SqueueQOSName, read by
// slurmext.ParseSqueueQOSName).
type Squeue struct {
	Program string
	Timeout time.Duration
}

// Lookup returns the job's name and QOS, ErrJobGone when squeue printed
// nothing (the job ended), or the program's error.
func (s Squeue) Lookup(ctx context.Context, jobID string) (JobInfo, error) {
	out, err := output(ctx, s.Timeout, nil, s.Program, "--noheader", "--jobs="+jobID, "--format="+slurmext.SqueueQOSName)
	if err != nil {
		return JobInfo{}, err
	}
	return parseSqueue(string(out))
}

// Allocation returns what the job holds on each of its nodes, whole GPUs
// or shards of a GPU, from `squeue --noheader --jobs=ID --format=%b`
// (slurmext.ParseSqueueTRESPerNode): slurmctld's word, which the prolog's
// environment lacks for a shard job. ErrJobGone when squeue printed
// nothing.
func (s Squeue) Allocation(ctx context.Context, jobID string) (slurmext.JobGres, error) {
	out, err := output(ctx, s.Timeout, nil, s.Program, "--noheader", "--jobs="+jobID, "--format="+slurmext.SqueueTRESPerNode)
	if err != nil {
		return slurmext.JobGres{}, err
	}
	g, err := slurmext.ParseSqueueTRESPerNode(string(out))
	if errors.Is(err, slurmext.ErrNoSqueueLine) {
		return g, ErrJobGone
	}
	return g, err
}

// parseSqueue turns squeue's line into a JobInfo; no line is ErrJobGone.
func parseSqueue(out string) (JobInfo, error) {
	qos, name, err := slurmext.ParseSqueueQOSName(out)
	if errors.Is(err, slurmext.ErrNoSqueueLine) {
		return JobInfo{}, ErrJobGone
	}
	if err != nil {
		return JobInfo{}, err
	}
	return JobInfo{QOS: qos, Name: name}, nil
}

// Canceller is the cancel action: `scancel --signal=SIGNAL JOBID`, a wait,
// then `scancel JOBID`, each bounded by Timeout. The signal reaches the
// job's steps (srun), not its batch script: a script that traps it would
// end the job as COMPLETED before the cancel (Slurm 22.05, seen in
// e2e/notices_test.go with --full). A program run in the script itself
// gets SIGTERM from the cancel, then SIGKILL after slurm.conf's KillWait.
type Canceller struct {
	Program string
	Signal  string // TERM, INT, …; "SIG" prefix allowed
	Wait    time.Duration
	Timeout time.Duration
	DryRun  bool
	Log     *slog.Logger
}

// Cancel acts on a job with the evidence that called for it and returns
// what it did, in words, for the record. With DryRun it runs nothing and
// says what it would have run. Every call is logged with the evidence.
func (c Canceller) Cancel(ctx context.Context, jobID, evidence string) (string, error) {
	sig := strings.TrimPrefix(c.Signal, "SIG")
	first := []string{"--signal=" + sig, jobID}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.DryRun {
		what := fmt.Sprintf("dry run: would run %s %s, wait %s, then %s %s", c.Program, strings.Join(first, " "), c.Wait, c.Program, jobID)
		log.Warn("idle job: cancel (dry run, nothing done)", "job", jobID, "evidence", evidence, "would", what)
		return what, nil
	}
	log.Warn("idle job: cancelling", "job", jobID, "evidence", evidence, "signal", sig)
	if err := run(ctx, c.Timeout, nil, c.Program, first...); err != nil {
		log.Error("idle job: scancel --signal failed", "job", jobID, "err", err)
		return "", fmt.Errorf("scancel --signal=%s: %w", sig, err)
	}
	if c.Wait > 0 {
		t := time.NewTimer(c.Wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("signalled %s; stopped before cancelling: %w", sig, ctx.Err())
		}
	}
	if err := run(ctx, c.Timeout, nil, c.Program, jobID); err != nil {
		// The signal may have ended the job: scancel then says so and
		// fails, which is the outcome wanted.
		if msg := err.Error(); strings.Contains(msg, "already completing or completed") || strings.Contains(msg, "Invalid job id") {
			what := fmt.Sprintf("ran %s --signal=%s %s; the job ended before %s %s", c.Program, sig, jobID, c.Program, jobID)
			log.Warn("idle job: cancelled", "job", jobID, "evidence", evidence, "done", what)
			return what, nil
		}
		log.Error("idle job: scancel failed", "job", jobID, "err", err)
		return "", fmt.Errorf("signalled %s; scancel: %w", sig, err)
	}
	what := fmt.Sprintf("ran %s --signal=%s %s, waited %s, ran %s %s", c.Program, sig, jobID, c.Wait, c.Program, jobID)
	log.Warn("idle job: cancelled", "job", jobID, "evidence", evidence, "done", what)
	return what, nil
}
