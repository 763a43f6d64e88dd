package tui

import (
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// query is what the job list shows: the filters and the order the user
// chose. It becomes a store.ViewFilter for each page.
type query struct {
	user, account, partition string
	state                    slurmext.JobState // "" for all
	window                   time.Duration
	text                     string // substring of name, job id, user, account or partition
	sort                     string // one of store.SortKeys; "" is newest first
	reverse                  bool   // reverses the sort key's default direction
}

// states is the cycle of the state filter (f); "" shows every state.
var states = []slurmext.JobState{"", slurmext.StateRunning, slurmext.StateCompleted, slurmext.StateFailed,
	slurmext.StateTimeout, slurmext.StateCancelled, slurmext.StateOutOfMemory}

// windows is the cycle of the time window (t); 0 shows all time.
var windows = []time.Duration{0, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

// windowName names a time window for the title bar.
func windowName(d time.Duration) string {
	switch d {
	case 0:
		return "all"
	case 24 * time.Hour:
		return "24h"
	case 7 * 24 * time.Hour:
		return "7d"
	case 30 * 24 * time.Hour:
		return "30d"
	}
	return present.Duration(d)
}

// sortName names the order for the title bar: the key and an arrow,
// ↓ for descending (newest, largest first), ↑ for ascending.
func (q query) sortName() string {
	key := q.sort
	if key == "" {
		key = store.SortStart
	}
	desc, _ := store.SortDescending(key)
	if desc != q.reverse {
		return key + "↓"
	}
	return key + "↑"
}

// next returns the element after cur in the cycle xs (the first when cur is
// not in it).
func next[T comparable](xs []T, cur T) T {
	for i, x := range xs {
		if x == cur {
			return xs[(i+1)%len(xs)]
		}
	}
	return xs[0]
}

// filter returns the store filter of one page of q.
func (q query) filter(now time.Time, offset, limit int) store.ViewFilter {
	f := store.ViewFilter{
		User:      q.user,
		Account:   q.account,
		Partition: q.partition,
		State:     string(q.state),
		Offset:    offset,
		Limit:     limit,
	}
	if q.window > 0 {
		f.Since = now.Add(-q.window)
	}
	f.Text, f.Sort, f.Asc, f.Now = q.text, q.sort, q.reverse, now
	return f
}
