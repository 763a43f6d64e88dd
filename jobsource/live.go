package jobsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// ScontrolCommand is the scontrol the live source runs (found on PATH);
// ScontrolTimeout bounds each of its three calls.
var (
	ScontrolCommand = "scontrol"
	ScontrolTimeout = 3 * time.Second
)

// maxScontrolOutput bounds what one scontrol call may print.
const maxScontrolOutput = slurmext.MaxConfBytes

// liveModel asks this host's slurmctld for cluster's configuration
// (`scontrol show config`, then `show nodes -o` and `show partitions -o`),
// each call bounded by ScontrolTimeout and run with the caller's
// environment. It returns the model when slurmctld answers and its
// ClusterName is cluster; else nil and the one line that says why the
// live cluster is not used ("" when quiet and no scontrol is installed).
func liveModel(cluster string, quiet bool) (*slurmext.ClusterConf, string) {
	if _, err := exec.LookPath(ScontrolCommand); err != nil && quiet {
		return nil, ""
	}
	run := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), ScontrolTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, ScontrolCommand, args...)
		var out, errb limitedBuffer
		out.max, errb.max = maxScontrolOutput, 4096
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.WaitDelay = time.Second
		err := cmd.Run()
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("no answer within %s", ScontrolTimeout)
		case out.over:
			return nil, fmt.Errorf("more than %d bytes", maxScontrolOutput)
		case err != nil:
			if msg := firstLine(errb.String()); msg != "" {
				return nil, fmt.Errorf("%v: %s", err, msg)
			}
			return nil, err
		}
		return out.Bytes(), nil
	}
	fail := func(what string, err error) (*slurmext.ClusterConf, string) {
		return nil, fmt.Sprintf("the live cluster (scontrol %s) %s: not used, the files are", what, termtext.Clean(err.Error()))
	}
	var s slurmext.ScontrolText
	var err error
	if s.Config, err = run("show", "config"); err != nil {
		return fail("show config", fmt.Errorf("failed: %w", err))
	}
	live := slurmext.ScontrolClusterName(s.Config)
	if live != cluster {
		if live == "" {
			return nil, fmt.Sprintf("the live cluster (scontrol) names no cluster, the jobs are %s's: not used, the files are", termtext.Clean(cluster))
		}
		return nil, fmt.Sprintf("the live cluster (scontrol) is cluster %s's, the jobs are %s's: not used, the files are", termtext.Clean(live), termtext.Clean(cluster))
	}
	if s.Nodes, err = run("show", "nodes", "-o"); err != nil {
		return fail("show nodes", fmt.Errorf("failed: %w", err))
	}
	if s.Partitions, err = run("show", "partitions", "-o"); err != nil {
		return fail("show partitions", fmt.Errorf("failed: %w", err))
	}
	m, err := slurmext.NewClusterConfScontrol(s)
	if err != nil {
		return fail("answer", fmt.Errorf("cannot be read (%w)", err))
	}
	if m.ClusterName != cluster {
		return fail("answer", errors.New("changed cluster while read"))
	}
	return m, ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return termtext.Short(s, 200)
}

// limitedBuffer keeps at most max bytes and says when more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		p = p[:max(0, b.max-b.Len())]
		b.Buffer.Write(p)
		return 0, errors.New("output too large")
	}
	return b.Buffer.Write(p)
}
