// Package commentqueue is the queue of finished jobs whose AdminComment is
// still to be written (jobcomp.admin_comment): jobcomp adds to it, and one
// `gpuprof admincomment --drain` works it. It is apart from jobend, which
// writes the summary, so that the jobcomp hook links no analysis (issue
// #41: a hook starts as fast as a small program).
//
// It must not summarise a job or talk to Slurm (jobend does).
package commentqueue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpuprof/gpuprof/internal/safefs"
)

// Queue is the jobs whose AdminComment is still to be written: one
// empty file per job in Dir (jobcomp's spool_dir/admincomment), named
// cluster.jobid, its time the job's end. jobcomp adds a job and starts one
// drainer only when none runs, so a burst of job ends costs one process
// reading the database once a second, not one process per job.
type Queue struct {
	Dir string
}

// Job is one job in the queue.
type Job struct {
	Cluster, JobID string
	Queued         time.Time // when jobcomp queued it
}

const lockName = ".lock"

// queueName is job id of cluster's file in the queue, cluster.jobid: a
// cluster of 1–64 of [a-z0-9_-], starting with a letter or a digit, and a
// numeric job id, with its array task and het component (123_4+1), so
// that the name has one '.' and nothing a path could read.
func queueName(cluster, jobID string) (string, error) {
	if !queueCluster(cluster) || !queueJobID(jobID) {
		return "", fmt.Errorf("admincomment queue: not a cluster and job id: %q %q", cluster, jobID)
	}
	return cluster + "." + jobID, nil
}

// queueCluster matches ^[a-z0-9][a-z0-9_-]{0,63}$, and queueJobID
// ^[0-9]{1,20}(_[0-9]{1,10})?(\+[0-9]{1,10})?$ (TestQueueNameRules holds
// them to those expressions): by hand, not with regexp, which would link
// unicode's category and script tables into gpuprof-hook, built before
// main in every hook (issue #41; internal/archtest's TestHookPathIsSmall).
func queueCluster(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '_' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func queueJobID(s string) bool {
	rest, ok := cutDigits(s, 20)
	if ok && strings.HasPrefix(rest, "_") {
		rest, ok = cutDigits(rest[1:], 10)
	}
	if ok && strings.HasPrefix(rest, "+") {
		rest, ok = cutDigits(rest[1:], 10)
	}
	return ok && rest == ""
}

// cutDigits returns s without its leading ASCII digits, and whether there
// were 1 to most of them.
func cutDigits(s string, most int) (string, bool) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return s[n:], n >= 1 && n <= most
}

// Add queues job id of cluster; a job already queued stays queued once.
func (q Queue) Add(cluster, jobID string) error {
	name, err := queueName(cluster, jobID)
	if err != nil {
		return err
	}
	dir, err := safefs.MkdirAll(q.Dir, 0o700)
	if err != nil {
		return err
	}
	defer dir.Close()
	f, err := dir.Create(name, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// List returns the queued jobs, oldest first. Names that are not a
// queued job (planted, or from another version) are left alone.
func (q Queue) List() ([]Job, error) {
	dir, err := safefs.OpenDir(q.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return list(dir)
}

func list(dir *safefs.Dir) ([]Job, error) {
	des, err := dir.ReadDir()
	if err != nil {
		return nil, err
	}
	var jobs []Job
	for _, de := range des {
		cluster, jobID, ok := strings.Cut(de.Name(), ".")
		if !ok || !de.Type().IsRegular() {
			continue
		}
		if _, err := queueName(cluster, jobID); err != nil {
			continue
		}
		fi, err := dir.Lstat(de.Name())
		if err != nil {
			continue // removed since
		}
		jobs = append(jobs, Job{Cluster: cluster, JobID: jobID, Queued: fi.ModTime()})
	}
	slices.SortFunc(jobs, func(a, b Job) int { return a.Queued.Compare(b.Queued) })
	return jobs, nil
}

// Draining says whether a drainer holds the queue now. jobcomp asks
// after Add: a drainer that holds it lists the queue again after it lets
// go, so the job just added is seen either way.
func (q Queue) Draining() bool {
	dir, err := safefs.OpenDir(q.Dir)
	if err != nil {
		return false
	}
	defer dir.Close()
	lock, err := dir.OpenAppend(lockName, 0o600)
	if err != nil {
		return false
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	_ = unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	return false
}

// Drain works the queue until it is empty: pass gets the queued jobs
// every `every` and returns those it is done with (written, or given up),
// which leave the queue. Only one drainer runs: when another holds the
// queue, Drain returns at once with ran false.
func (q Queue) Drain(ctx context.Context, every time.Duration, pass func(context.Context, []Job) []Job) (ran bool, err error) {
	dir, err := safefs.MkdirAll(q.Dir, 0o700)
	if err != nil {
		return false, err
	}
	defer dir.Close()
	lock, err := dir.OpenAppend(lockName, 0o600)
	if err != nil {
		return false, err
	}
	defer lock.Close()
	fd := int(lock.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	for {
		jobs, err := list(dir)
		if err != nil {
			_ = unix.Flock(fd, unix.LOCK_UN)
			return true, err
		}
		if len(jobs) == 0 {
			// Let go, then look once more: a job added while the lock
			// was held was not given a drainer of its own (Draining).
			_ = unix.Flock(fd, unix.LOCK_UN)
			if jobs, err = list(dir); err != nil || len(jobs) == 0 {
				return true, err
			}
			if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
				return true, nil // another drainer took it
			}
			continue
		}
		for _, j := range pass(ctx, jobs) {
			name, _ := queueName(j.Cluster, j.JobID)
			if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				_ = unix.Flock(fd, unix.LOCK_UN)
				return true, err
			}
		}
		select {
		case <-ctx.Done():
			_ = unix.Flock(fd, unix.LOCK_UN)
			return true, ctx.Err()
		case <-time.After(every):
		}
	}
}
