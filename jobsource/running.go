package jobsource

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// squeueTimeout bounds the one squeue a read of running jobs makes: a
// slurmctld that does not answer costs the names, not the listing.
const squeueTimeout = 2 * time.Second

// nameRunning gives the running jobs of vs without a scheduler record
// their name, from one `squeue --jobs=…` (notices.squeue), since slurmd
// gives the prolog none: only for the jobs of the cluster this host's
// Slurm commands reach (slurmext.ClusterName of the configuration), and
// only where squeue's user is the profile's, so that a job id Slurm
// reused (or another cluster's) never lends a name. Any failure leaves
// the names unknown.
func (s *Source) nameRunning(ctx context.Context, vs []store.JobView) {
	prog := s.cfg.Notices.Squeue
	if prog == "" || len(vs) == 0 {
		return
	}
	local := ""
	var ids []string
	for i := range vs {
		r := vs[i].RunningRecord()
		if r == nil {
			continue
		}
		if local == "" {
			local = slurmext.ClusterName(s.cfg.Cluster, "", s.cfg.SlurmConf)
		}
		if vs[i].Cluster == local {
			ids = append(ids, vs[i].JobID)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.SortFunc(ids, slurmext.CompareJobIDs)
	ctx, cancel := context.WithTimeout(ctx, squeueTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "--noheader", "--jobs="+strings.Join(ids, ","), "--format="+slurmext.SqueueIDUserName)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 500 * time.Millisecond
	// squeue fails when one id of several is unknown to it on some
	// versions, yet prints the others: what it printed is read either way.
	_ = cmd.Run()
	jobs := slurmext.ParseSqueueIDUserName(out.String())
	for i := range vs {
		r := vs[i].RunningRecord()
		if r == nil || vs[i].Cluster != local {
			continue
		}
		if j, ok := jobs[vs[i].JobID]; ok && j.User != "" && j.User == r.User {
			vs[i].RunningName = j.Name
		}
	}
}
