package jobsource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/store"
)

// Names are the sorted distinct users, accounts or partitions (field
// "user", "account" or "partition") of the jobs since since that the
// caller may see, as recorded (not cleaned for a terminal: the caller
// shows them): what a shell completes a --user, --account or --partition
// with. A read cut short by ctx's deadline gives the names found so far.
func (s *Source) Names(ctx context.Context, since time.Time, field string) ([]string, error) {
	idx := slices.Index([]string{"user", "account", "partition"}, field)
	if idx < 0 {
		return nil, fmt.Errorf("no job names of kind %q: want user, account or partition", field)
	}
	seen := map[string]bool{}
	err := s.Each(ctx, store.ViewFilter{Since: since, Lean: true}, func(v store.JobView) error {
		for _, n := range viewNames(v, idx) {
			if n != "" {
				seen[n] = true
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// viewNames are a job's user, account or partition (idx 0, 1, 2): from
// its scheduler view when it has one, else from its profiles, which know
// them too.
func viewNames(v store.JobView, idx int) []string {
	if s := v.Sched; s != nil {
		return []string{[3]string{s.User, s.Account, s.Partition}[idx]}
	}
	var out []string
	for _, p := range v.Profiles {
		out = append(out, [3]string{p.User, p.Account, p.Partition}[idx])
	}
	return out
}
