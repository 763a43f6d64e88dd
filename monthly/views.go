package monthly

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
)

// Digest reads the day w of every user's jobs (lean: the sums read no
// TRES text, node list or reason) with the clock at now and, from the
// same pass, the notices decided in it, and sums them
// (notice.SummariseDay, the notices oldest first): what gpuprof notices
// digest mails. It names every user's idle GPUs, so it is for admins
// only (store.Caller.RequireAdmin).
func Digest(ctx context.Context, sc jobsource.Scope, w analysis.Window, now time.Time, c analysis.Config) (notice.Digest, error) {
	if err := sc.Caller.RequireAdmin("gpuprof notices digest names every user's idle GPUs"); err != nil {
		return notice.Digest{}, err
	}
	in, rows, err := sc.InputAndNotices(ctx, jobsource.Query{Window: w, Lean: true, Now: now})
	if err != nil {
		return notice.Digest{}, err
	}
	// Read newest first; oldest first in a day's account.
	slices.Reverse(rows)
	return notice.SummariseDay(in, w, now, rows, c), nil
}

// MonthRead is the jobs of a month as the TUI's summary reads them.
type MonthRead struct {
	// Input holds the newest jobs read, with the Slurm configuration of
	// the one cluster they are of (none when they are of several).
	Input analysis.Input
	// Total is how many jobs the window selects: more than Input holds
	// when the read stopped at its newest.
	Total int
}

// SummaryMonth reads user's jobs ("": every job the caller may read) of the
// window w, the newest newest of them (0: all), with the clock at now,
// and binds the Slurm configuration of the one cluster they are of
// (jobsource.Query.ConfOfRead): the terminal UI's month summary, which
// refuses a month of several clusters itself.
func SummaryMonth(ctx context.Context, sc jobsource.Scope, user string, w analysis.Window, now time.Time, newest int) (MonthRead, error) {
	q := jobsource.Query{User: user, Window: w, Now: now}
	total, err := sc.Count(ctx, q)
	if err != nil {
		return MonthRead{}, fmt.Errorf("count this month's jobs: %w", err)
	}
	q.Jobs, q.Newest, q.ConfOfRead = total, newest, true
	in, err := sc.Input(ctx, q, nil)
	if err != nil {
		return MonthRead{}, fmt.Errorf("load this month's jobs: %w", err)
	}
	return MonthRead{Input: in, Total: total}, nil
}
