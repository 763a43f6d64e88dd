package capacity

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/queuesim"
)

// Stopping an overloaded replay (docs/whatif.md): the purchase search and
// the breach-month search need only "meets the target" or "misses it" of
// most configurations. Their replays carry a queuesim.StopRule, and a
// configuration most of whose seeds proved a group's p95 over the target
// is a miss with the bound it proved (OverBound), never a number the
// replays did not compute.

// stopScope is what a search compares with the target, and so which
// groups an early stop may prove over it: a model's jobs in each
// partition (the purchase search of a model), or whole partitions (the
// timeline, and the search of a model no job needed, which is sized on
// its partitions).
type stopScope struct {
	// model, when set, makes the groups its jobs in each partition (the
	// scenario's cells of the model); else the groups are partitions.
	model string
	// parts, when not nil, are the only partitions that count.
	parts []string
}

// OverBound is what a replay stopped early proved: the p95 wait of Group
// is longer than the target, and in most seeds at least Jobs of its jobs
// waited longer than it. It stands in for the waits the replay did not
// compute.
type OverBound struct {
	Group  string  `json:"group"`
	Target float64 `json:"target_s"`
	Jobs   int     `json:"jobs_over"`
}

// String is the bound as every output prints it: "> 01:00:00; at least
// 812 jobs waited longer".
func (b OverBound) String() string {
	return fmt.Sprintf("> %s; at least %s %s waited longer", present.Seconds(b.Target), present.Int(b.Jobs), present.Plural(b.Jobs, "job", "jobs"))
}

// p95Limit is the count of waits over a target at which the nearest-rank
// p95 of at most n waits is certain to be over it: n − ⌈0.95·n⌉ + 1. It
// never falls as n grows, so n may be any bound on the waits counted.
func p95Limit(n int) int { return queuesim.P95Limit(n) }

// stopRule is the StopRule of seed jobs (r.jobs or their scaled set) for
// scope at the target: group g is partition g (its jobs on scope.model,
// when set). A job is listed in each group it could start in: each
// partition of its in scope (where, for a cell, a node of the model
// could hold it).
func (r *replay) stopRule(scope *stopScope, jobs []queuesim.Job, target float64) *queuesim.StopRule {
	span := r.span.Seconds()
	nn := len(r.cluster.Nodes)
	inScope := func(p int) bool {
		return scope.parts == nil || slices.Contains(scope.parts, r.simParts[p].Name)
	}
	rule := &queuesim.StopRule{
		Wait:    time.Duration(target * float64(time.Second)),
		Counted: make([]bool, len(jobs)),
		Pending: make([]int32, len(jobs)),
		Started: make([]int32, len(r.simParts)*nn),
		Groups:  len(r.simParts),
		Of:      make([]int32, len(jobs)+1),
	}
	for p := range r.simParts {
		for n := range nn {
			g := int32(-1)
			if inScope(p) && (scope.model == "" || r.simNodes[n].Model == scope.model) {
				g = int32(p)
			}
			rule.Started[p*nn+n] = g
		}
	}
	// Which partitions of a job's in scope it may enter, and where it is
	// counted while pending, follow from what it asks for: found once per
	// request (holders) and partition.
	member := make([][]bool, len(r.cluster.Partitions))
	for p := range member {
		member[p] = make([]bool, nn)
		for _, n := range r.cluster.Partitions[p].Nodes {
			if n >= 0 && n < nn {
				member[p][n] = true
			}
		}
	}
	type enter struct{ some, only bool }
	seen := map[holdKey]enter{}
	var hold []int
	for i := range jobs {
		q := &jobs[i]
		rule.Pending[i] = -1
		rule.Of[i] = int32(len(rule.In))
		if q.Running || q.Arrival < 0 || q.Arrival.Seconds() >= span {
			continue
		}
		rule.Counted[i] = true
		key, keyed := holdKeyOf(q)
		held := false
		for _, p := range q.Partitions {
			if !inScope(p) {
				continue
			}
			// The groups it may enter: its partitions' (where a node of
			// the model could hold it).
			key.p = p
			e, known := seen[key]
			if !known || !keyed {
				e = enter{only: true, some: scope.model == ""}
				if scope.model != "" {
					if !held {
						hold, held = queuesim.Holders(&r.cluster, q, hold[:0]), true
					}
					for _, n := range hold {
						if member[p][n] {
							if r.simNodes[n].Model == scope.model {
								e.some = true
							} else {
								e.only = false
							}
						}
					}
				}
				if keyed {
					seen[key] = e
				}
			}
			if !e.some {
				continue
			}
			rule.In = append(rule.In, int32(p))
			// Counted while pending only where it can start nowhere else.
			if len(q.Partitions) == 1 && e.only {
				rule.Pending[i] = int32(p)
			}
		}
	}
	rule.Of[len(jobs)] = int32(len(rule.In))
	return rule
}

// holdKey is what decides a job's holders (queuesim.Holders): its GPU
// type and share, its limit and its partitions (up to two; a job of more
// is not keyed), with the partition p asked about.
type holdKey struct {
	typ            string
	gpus, shards   int
	nodes          int
	limit          time.Duration
	p0, p1, nparts int
	p              int
}

// holdKeyOf is the job's holdKey, and whether it has one.
func holdKeyOf(q *queuesim.Job) (holdKey, bool) {
	k := holdKey{typ: q.Type, gpus: q.GPUs, shards: q.Shards, nodes: q.Nodes, limit: q.Limit, nparts: len(q.Partitions), p0: -1, p1: -1}
	switch len(q.Partitions) {
	case 2:
		k.p1 = q.Partitions[1]
		fallthrough
	case 1:
		k.p0 = q.Partitions[0]
		return k, true
	}
	return k, false
}

// groupName names group g of scope as the plan's words do.
func (r *replay) stopGroupName(scope *stopScope, g int) string {
	if scope.model != "" {
		return "partition " + r.simParts[g].Name + " on " + scope.model
	}
	return "partition " + r.simParts[g].Name
}

// stopVerdict decides a configuration some of whose seeds stopped, of
// n seeds in all, seeds the first of them (their answers in): the bound
// when, for some group, more than half the n seeds are among seeds that
// proved its p95 over the target (the median over the seeds is then over
// it, whatever the other seeds hold), else nil. A seed that ran to its
// end counts with its own p95.
func (r *replay) stopVerdict(scope *stopScope, seeds []seedOut, n int, target float64) *OverBound {
	models, _, _ := r.models()
	m := slices.Index(models, scope.model)
	for g := range r.simParts {
		var counts []int
		for _, so := range seeds {
			if so.stopped != nil {
				if g < len(so.stopped.Proved) && so.stopped.Proved[g] {
					counts = append(counts, so.stopped.Over[g])
				}
				continue
			}
			var w []float64
			switch {
			case scope.model != "" && m >= 0:
				w = so.stats.cells[g*len(models)+m]
			case scope.model == "":
				w = so.stats.parts[g].waits
			}
			if len(w) == 0 {
				continue
			}
			s := slices.Clone(w)
			slices.Sort(s)
			if analysis.PercentileSorted(s, 95) > target {
				over := len(s) - countAtMost(s, target)
				counts = append(counts, over)
			}
		}
		if 2*len(counts) > n {
			// At least this many in more than half the seeds.
			slices.Sort(counts)
			slices.Reverse(counts)
			return &OverBound{Group: r.stopGroupName(scope, g), Target: target, Jobs: counts[n/2]}
		}
	}
	return nil
}

// countAtMost is how many of sorted are at most x.
func countAtMost(sorted []float64, x float64) int {
	i, _ := slices.BinarySearchFunc(sorted, x, func(v, t float64) int {
		if v <= t {
			return -1
		}
		return 1
	})
	return i
}

// WaitText is a purchase size's wait as the plan's tables show it:
// computed (drawn by the caller), or "over the target" with the bound a
// replay stopped early proved — never a number it did not compute.
func (c CurvePoint) WaitText(computed string) string {
	if c.Over != nil {
		return "over the target (" + c.Over.String() + ")"
	}
	return computed
}

// WaitText is the breach month's replayed p95 wait as the plan's tables
// show it: drawn by spread (each view spells a spread its own way), or the
// bound a replay stopped early proved.
func (tl *Timeline) WaitText(spread func(analysis.Spread) string) string {
	if tl.Over != nil || tl.P95 == nil {
		return tl.P95Text()
	}
	return spread(*tl.P95)
}

// P95Text is the breach month's replayed p95 wait as the verdict prints
// it: the median over the seeds, or the bound a replay stopped early
// proved.
func (tl *Timeline) P95Text() string {
	switch {
	case tl.Over != nil:
		return tl.Over.String()
	case tl.P95 != nil:
		return present.Seconds(tl.P95.Median)
	}
	return "–"
}
