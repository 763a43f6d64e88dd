package queuesim

import (
	"cmp"
	"maps"
	"slices"
	"testing"
	"time"
)

// TestFairTreeRanks: Fair Tree's factors for a small tree worked by hand
// as Slurm's fair_tree.c ranks it. Three accounts of equal shares: a (one
// user, 10 GPU-s), b (two users, 20 and 10), c (one user, none). Level
// fair-share S/U: c infinite, a (1/3)/(10/40) = 1.33, b (1/3)/(30/40) =
// 0.44; in b, (1/2)/(10/30) = 1.5 before (1/2)/(20/30) = 0.75. Ranks 4,
// 3, 2, 1 of 4 associations.
func TestFairTreeRanks(t *testing.T) {
	ft := testFairTree(map[assoc]float64{{0, 1}: 10, {1, 2}: 20, {1, 3}: 10, {2, 4}: 0})
	ft.rank()
	want := map[assoc]float64{{2, 4}: 1, {0, 1}: 0.75, {1, 3}: 0.5, {1, 2}: 0.25}
	for k, a := range ft.assocs {
		if got := ft.factor[k]; got != want[a] {
			t.Errorf("association %+v: factor %v, want %v", a, got, want[a])
		}
	}

	// No usage anywhere: every level fair-share is infinite, all tie at
	// the top.
	ft = testFairTree(map[assoc]float64{{0, 1}: 0, {1, 2}: 0, {1, 3}: 0})
	ft.rank()
	for k, f := range ft.factor {
		if f != 1 {
			t.Errorf("no usage: association %+v factor %v, want 1", ft.assocs[k], f)
		}
	}

	// An association never seen does not count: the same ranks with an
	// unseen fifth one beside them.
	ft = testFairTree(map[assoc]float64{{0, 1}: 10, {1, 2}: 20, {1, 3}: 10, {2, 4}: 0, {3, 5}: 0})
	ft.seen[ft.of[4]], ft.nSeen = false, 4
	ft.rank()
	for k, a := range ft.assocs {
		if a == (assoc{3, 5}) {
			continue
		}
		if got := ft.factor[k]; got != want[a] {
			t.Errorf("with an unseen association: %+v: factor %v, want %v", a, got, want[a])
		}
	}
}

// testFairTree is a Fair Tree whose associations, in the order of their
// users' ids, are all seen with the usage given.
func testFairTree(usage map[assoc]float64) fairTree {
	as := slices.Collect(maps.Keys(usage))
	slices.SortFunc(as, func(a, b assoc) int { return cmp.Compare(a.user, b.user) })
	jobs := make([]Job, len(as))
	for i, a := range as {
		jobs[i] = Job{Account: a.account, User: a.user}
	}
	ft := newFairTree(jobs)
	for i, a := range as {
		ft.use(ft.of[i], usage[a])
	}
	return ft
}

// TestFairTreeOrdersUsers: on one GPU, user 0 (account 0) runs first and
// uses it; at the next PriorityCalcPeriod Fair Tree ranks account 1's
// user above it, so of the two jobs pending then, user 1's starts first
// although user 0's was submitted earlier.
func TestFairTreeOrdersUsers(t *testing.T) {
	c := Cluster{Nodes: []Node{{Name: "n", GPUs: 1}}, Partitions: []Partition{{Name: "p", Nodes: []int{0}}}}
	pr := DefaultPriority()
	pr.Multifactor, pr.FairTree = true, true
	pr.WeightFairshare = 1000
	pr.CalcPeriod = time.Minute
	sc := DefaultScheduler()
	sc.Backfill = false
	jobs := []Job{
		{Arrival: 0, Order: 0, Run: 90 * time.Second, Limit: 2 * time.Minute, Partitions: []int{0}, QOS: -1, User: 0, Account: 0, Nodes: 1, GPUs: 1},
		{Arrival: 10 * time.Second, Order: 1, Run: 10 * time.Second, Limit: time.Minute, Partitions: []int{0}, QOS: -1, User: 0, Account: 0, Nodes: 1, GPUs: 1},
		{Arrival: 20 * time.Second, Order: 2, Run: 10 * time.Second, Limit: time.Minute, Partitions: []int{0}, QOS: -1, User: 1, Account: 1, Nodes: 1, GPUs: 1},
	}
	res, err := Run(c, pr, sc, jobs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s1, s2 := res.Jobs[1].Start, res.Jobs[2].Start; !(s2 < s1) {
		t.Errorf("user 0's second job starts at %v, user 1's at %v: want user 1's first (Fair Tree ranks account 1 first after the recalc at 1 min)", s1, s2)
	}
}

// TestFairTreeRootUser: Slurm's tree has the cluster's root user
// association beside the accounts (slurmdbd creates it with the cluster),
// which runs nothing, ranks first and counts in the number the ranks are
// divided by. TestFairTreeRanks' tree with it: five associations; c's
// user, of an account without usage, ties with the root user at the top
// (1); a 3/5, b's users 2/5 and 1/5. As sshare showed on the
// counterfactual test's cluster (issue 36): three accounts of one user
// each rank 3/4, 2/4 and 1/4.
func TestFairTreeRootUser(t *testing.T) {
	ft := testFairTree(map[assoc]float64{{0, 1}: 10, {1, 2}: 20, {1, 3}: 10, {2, 4}: 0})
	ft.rootUsers = 1
	ft.rank()
	want := map[assoc]float64{{2, 4}: 1, {0, 1}: 0.6, {1, 3}: 0.4, {1, 2}: 0.2}
	for k, a := range ft.assocs {
		if got := ft.factor[k]; got != want[a] {
			t.Errorf("association %+v: factor %v, want %v", a, got, want[a])
		}
	}
	ft = testFairTree(map[assoc]float64{{0, 1}: 30, {1, 2}: 20, {2, 3}: 10})
	ft.rootUsers = 1
	ft.rank()
	want = map[assoc]float64{{2, 3}: 0.75, {1, 2}: 0.5, {0, 1}: 0.25}
	for k, a := range ft.assocs {
		if got := ft.factor[k]; got != want[a] {
			t.Errorf("three accounts: association %+v: factor %v, want %v", a, got, want[a])
		}
	}
}

// TestFairTreeRootUserOrdersJobs: the root user's association moves the
// balance of fair-share against age. On one GPU, three accounts' first
// jobs run 30, 20 and 10 s, then account 0's long job holds the GPU to
// 310 s; account 1's job X arrives at 70 s, account 2's job Y at 245 s.
// At the recalc at 300 s account 2 ranks first, 1 second, 0 last: with
// the root user their factors are 3/4, 2/4, 1/4, so X (age 230 s of
// PriorityMaxAge 300: 767 + 1000) is ahead of Y (183 + 1500) and starts at
// 310 s, as Slurm starts it. Without it (1, 2/3, 1/3: X 767 + 1333, Y
// 183 + 2000) Y went first.
func TestFairTreeRootUserOrdersJobs(t *testing.T) {
	c := Cluster{Nodes: []Node{{Name: "n", GPUs: 1}}, Partitions: []Partition{{Name: "p", Nodes: []int{0}}}}
	pr := DefaultPriority()
	pr.Multifactor, pr.FairTree = true, true
	pr.WeightAge, pr.WeightFairshare = 1000, 2000
	pr.MaxAge, pr.CalcPeriod = 5*time.Minute, time.Minute
	sc := DefaultScheduler()
	sc.Backfill = false
	job := func(arrival, run int, acct int) Job {
		return Job{Arrival: time.Duration(arrival) * time.Second, Run: time.Duration(run) * time.Second, Limit: time.Hour,
			Partitions: []int{0}, QOS: -1, User: acct, Account: acct, Nodes: 1, GPUs: 1}
	}
	jobs := []Job{job(0, 30, 0), job(0, 20, 1), job(0, 10, 2), job(55, 250, 0), job(70, 10, 1), job(245, 10, 2)}
	for i := range jobs {
		jobs[i].Order = int64(i)
	}
	res, err := Run(c, pr, sc, jobs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if x, y := res.Jobs[4].Start, res.Jobs[5].Start; x != 310*time.Second || y != 320*time.Second {
		t.Errorf("X starts at %v, Y at %v: want X at 310s, Y at 320s (with the root user, account 1's older job goes first)", x, y)
	}
	pr.RootUsers = 0
	res, err = Run(c, pr, sc, jobs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if x, y := res.Jobs[4].Start, res.Jobs[5].Start; y != 310*time.Second || x != 320*time.Second {
		t.Errorf("without the root user: X starts at %v, Y at %v: want Y at 310s, X at 320s", x, y)
	}
}
