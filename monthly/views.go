package monthly

import (
	"context"
	"fmt"
	"slices"
	"sync"
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

// inventoryWindow is how far back GPUTypes looks for the GPUs of a
// cluster, from its newest job: a month of profiles names the models in
// use without reading a whole history.
const inventoryWindow = 31 * 24 * time.Hour

// GPUTypes is the GPU types of cluster's inventory (analysis.GPUTypes)
// that show's and the TUI detail's hints may suggest, built as the
// analysis commands build it (with the cluster's own Slurm
// configuration, Scope.Bind) from the jobs sc lets its caller read in
// the inventoryWindow before the newest one's start — so a user's
// inventory is the GPUs their own jobs ran on, an admin's the cluster's;
// the newest job, not the clock, ends the window, so that a database of
// last year's jobs still names last year's GPUs. A configuration that
// cannot be read is left out (the jobs' own GPUs then make the
// inventory, as the analysis says of it). nil when none is known or the
// jobs cannot be read: the hints then name no GPU type.
func GPUTypes(ctx context.Context, sc jobsource.Scope, cluster string) []analysis.GPUType {
	last, err := sc.Newest(ctx, jobsource.Query{Cluster: cluster})
	if err != nil || last.IsZero() {
		return nil
	}
	q := jobsource.Query{Cluster: cluster, Window: analysis.Window{From: last.Add(-inventoryWindow)}, Lean: true}
	bound, err := sc.Bind(ctx, q, cluster)
	if err != nil {
		bound.Cluster, bound.Conf = cluster, nil
	}
	in, err := bound.Input(ctx, q, nil)
	if err != nil {
		return nil
	}
	return analysis.GPUTypes(in.Nodes)
}

// Inventories are the GPU types of each cluster a scope reads
// (GPUTypes), each read once: the TUI's detail asks on every job, show
// once per cluster of a job.
type Inventories struct {
	sc    jobsource.Scope
	mu    sync.Mutex
	types map[string][]analysis.GPUType
}

// NewInventories reads through sc.
func NewInventories(sc jobsource.Scope) *Inventories {
	return &Inventories{sc: sc, types: map[string][]analysis.GPUType{}}
}

// GPUTypes is GPUTypes of the cluster, read the first time it is asked;
// it implements tui.TypeSource.
func (v *Inventories) GPUTypes(ctx context.Context, cluster string) []analysis.GPUType {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t, ok := v.types[cluster]; ok {
		return t
	}
	t := GPUTypes(ctx, v.sc, cluster)
	v.types[cluster] = t
	return t
}
