package jobend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// ErrForeignComment means the job's AdminComment is another tool's:
// Annotate leaves it as it is.
var ErrForeignComment = errors.New("AdminComment written by another tool")

// ErrUnsafeComment means a comment would not survive sacctmgr unchanged
// (slurmext.AdminCommentSafe).
var ErrUnsafeComment = errors.New("AdminComment text sacctmgr would alter")

// Accounting reads and writes a job's AdminComment through sacct and
// sacctmgr, each run bounded by Timeout.
type Accounting struct {
	Sacct, Sacctmgr string
	Timeout         time.Duration
}

// Comment returns job id's AdminComment as sacct shows it ("" when none).
func (a Accounting) Comment(ctx context.Context, cluster, jobID string) (string, error) {
	out, err := a.run(ctx, a.Sacct, slurmext.SacctAdminComment(cluster, jobID)...)
	if err != nil {
		return "", err
	}
	return slurmext.ParseSacctAdminComment(string(out)), nil
}

// SetComment sets job id's AdminComment to text with sacctmgr.
func (a Accounting) SetComment(ctx context.Context, cluster, jobID, text string) error {
	out, err := a.run(ctx, a.Sacctmgr, slurmext.SacctmgrSetAdminComment(cluster, jobID, text)...)
	if err != nil {
		return err
	}
	// sacctmgr exits 0 and says so when no record matched (the job not
	// yet in slurmdbd).
	if s := string(out); strings.Contains(s, "Nothing modified") || strings.Contains(s, "Nothing to modify") {
		return fmt.Errorf("sacctmgr: job %s: nothing modified (not in the accounting database yet?)", jobID)
	}
	return nil
}

// Annotate writes comment as job id's AdminComment when the current one
// is empty or gpuprof's own (Ours), and returns ErrForeignComment
// otherwise, writing nothing. A comment written between the read and the
// write is the one race left: sacctmgr has no compare-and-set.
func (a Accounting) Annotate(ctx context.Context, cluster, jobID, comment string) error {
	if !slurmext.AdminCommentSafe(comment) {
		return fmt.Errorf("%w: %q", ErrUnsafeComment, comment)
	}
	cur, err := a.Comment(ctx, cluster, jobID)
	if err != nil {
		return fmt.Errorf("read the AdminComment: %w", err)
	}
	if !Ours(cur) {
		return fmt.Errorf("%w: %q", ErrForeignComment, termtext.Short(cur, 80))
	}
	if cur == comment {
		return nil
	}
	return a.SetComment(ctx, cluster, jobID, comment)
}

// run runs prog bounded by Timeout (its process group killed after) and
// returns its standard output; an error carries its output, cleaned.
func (a Accounting) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	t := a.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		out := termtext.Short(strings.TrimSpace(stderr.String()+" "+stdout.String()), 300)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: no answer within %s: killed", prog, t)
		}
		return nil, fmt.Errorf("%s: %w: %s", prog, err, out)
	}
	return stdout.Bytes(), nil
}
