package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/store"
)

// LookbackDays is how far before its end a live import starts when
// neither a start nor an earlier import's mark says where.
const LookbackDays = 90

// ResumeOverlap is how far before the last import's mark a resumed import
// starts: jobs end out of order, and re-importing is harmless.
const ResumeOverlap = time.Hour

// ErrEmptyWindow is a live import's start that is not before its end:
// there is nothing to import.
var ErrEmptyWindow = errors.New("the start is not before the end: nothing to import")

// Window is the window a live import of cluster asks sacct for: until
// (zero: now) and since, when zero where the last import of cluster
// stopped (its mark, less ResumeOverlap), else LookbackDays before until.
// A since given that is not before until is ErrEmptyWindow.
func Window(ctx context.Context, db *store.DB, cluster string, since, until, now time.Time) (from, to time.Time, err error) {
	if until.IsZero() {
		until = now
	}
	if !since.IsZero() && !since.Before(until) {
		return since, until, ErrEmptyWindow
	}
	if since.IsZero() {
		mark, err := db.GetImportMark(ctx, cluster, Source)
		if err != nil {
			return since, until, err
		}
		since = until.AddDate(0, 0, -LookbackDays)
		if !mark.IsZero() {
			since = mark.Add(-ResumeOverlap)
		}
	}
	return since, until, nil
}

// StartSacct starts sacct (SacctCommand) for the window and returns its
// output and a wait that ends it: wait's error carries what sacct wrote
// to its standard error.
func StartSacct(ctx context.Context, sacct string, since, until time.Time) (out io.Reader, wait func() error, err error) {
	cmd := SacctCommand(ctx, sacct, since, until)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("run sacct: %w", err)
	}
	wait = func() error {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("sacct: %w: %s", err, strings.TrimSpace(errb.String()))
		}
		return nil
	}
	return stdout, wait, nil
}

// Live is a live import's input: sacct's output over the window From..To
// and the wait for its exit (StartSacct).
type Live struct {
	Out      io.Reader
	Wait     func() error
	From, To time.Time
}

// StartLive starts sacct over the window of a live import of cluster
// (Window: since, else where the last import stopped; until, else now).
// A since not before until is ErrEmptyWindow, and sacct is not run.
func StartLive(ctx context.Context, sacct string, db *store.DB, cluster string, since, until, now time.Time) (Live, error) {
	from, to, err := Window(ctx, db, cluster, since, until, now)
	if err != nil {
		return Live{}, err
	}
	out, wait, err := StartSacct(ctx, sacct, from, to)
	if err != nil {
		return Live{}, err
	}
	return Live{Out: out, Wait: wait, From: from, To: to}, nil
}
