package queuesim

import (
	"cmp"
	"math"
	"slices"
)

// priority is Slurm's multifactor sum for one pending job now:
//
//	WeightAge·min(age/MaxAge, 1) + WeightFairshare·2^(−U/S)
//	+ WeightJobSize·size + WeightPartition·factor/max + WeightQOS·prio/max
//
// where U is the user's share of all decayed usage and S the user's share
// of the shares (every user seen has one, as with no association tree:
// classic fair-share with equal shares), or with FairTree the job's
// association's Fair Tree factor; size is the job's share of the
// cluster's nodes (reversed with FavorSmall). Age counts from eligibility.
func (s *sim) priority(ji int32) float64 {
	j, in := &s.js[ji], &s.in[ji]
	p := s.pr
	var sum float64
	if p.WeightAge != 0 {
		age := float64(s.now-j.arrival) / p.MaxAge.Seconds()
		sum += p.WeightAge * min(max(age, 0), 1)
	}
	if p.WeightFairshare != 0 {
		if p.FairTree {
			sum += p.WeightFairshare * s.ft.factorOf(s.ft.of[ji])
		} else {
			sum += p.WeightFairshare * s.fairshare(in.User)
		}
	}
	if p.WeightJobSize != 0 && s.nodeCount > 0 {
		size := min(float64(in.Nodes)/float64(s.nodeCount), 1)
		if p.FavorSmall {
			size = 1 - float64(in.Nodes-1)/float64(s.nodeCount)
		}
		sum += p.WeightJobSize * size
	}
	if p.WeightPartition != 0 && s.maxPartF > 0 {
		f := 0.0
		for k := range s.parts {
			if j.parts&(1<<uint(k)) != 0 {
				f = max(f, s.parts[k].factor)
			}
		}
		sum += p.WeightPartition * f / s.maxPartF
	}
	if p.WeightQOS != 0 && s.maxQOSP > 0 && in.QOS >= 0 {
		sum += p.WeightQOS * float64(s.qos[in.QOS].Priority) / s.maxQOSP
	}
	return sum
}

// fairshare is 2^(−U/S) for the user (1 before any usage), with the
// total usage of the last recalc.
func (s *sim) fairshare(u int) float64 {
	total := s.usageTotal
	if total <= 0 || s.users == 0 {
		return 1
	}
	share := 1 / float64(s.users)
	return math.Exp2(-(s.usage[u] / total) / share)
}

// accrue adds a running job's GPU-seconds since its last accrual to its
// user's usage.
func (s *sim) accrue(ji int32, now int64) {
	j := &s.js[ji]
	if !s.pr.Multifactor || s.pr.WeightFairshare == 0 || now <= j.usageFrom {
		return
	}
	used := j.gpuEq * float64(now-j.usageFrom)
	s.usage[s.in[ji].User] += used
	if s.pr.FairTree {
		s.ft.use(s.ft.of[ji], used)
	}
	j.usageFrom = now
}

// recalc is PriorityCalcPeriod: usage decays and accrues, and every pending
// job's priority is recomputed and the queue reordered.
func (s *sim) recalc() {
	if s.pr.WeightFairshare != 0 {
		decay := math.Exp2(-float64(s.now-s.lastCalc) / s.pr.DecayHalfLife.Seconds())
		for u := range s.usage {
			s.usage[u] *= decay
		}
		for a := range s.ft.usage {
			s.ft.usage[a] *= decay
		}
		for _, ji := range s.running {
			s.accrue(ji, s.now)
		}
		s.usageTotal = 0
		for _, v := range s.usage {
			s.usageTotal += v
		}
		if s.pr.FairTree {
			s.ft.rank()
		}
	}
	s.lastCalc = s.now
	s.compact()
	for _, ji := range s.pending {
		s.js[ji].prio = s.priority(ji)
	}
	slices.SortFunc(s.pending, s.cmpQueue)
}

// assoc is a Slurm association: an account and a user in it.
type assoc struct{ account, user int }

// fairTree is Fair Tree's state: every association of the replay's jobs
// (by index), the decayed usage of each, and each one's factor as of the
// last ranking (PriorityCalcPeriod: Slurm's decay thread ranks the tree
// only then; a job submitted between takes its association's factor of
// the last one). An association counts in a ranking once seen: a job of
// it had its priority computed or accrued usage.
type fairTree struct {
	assocs []assoc
	of     []int32 // per job: its association
	usage  []float64
	factor []float64 // 1 until ranked
	seen   []bool
	nSeen  int
	// rootUsers are the user associations under the tree's root that run
	// no job here (Priority.RootUsers): ranked first, counted in n.
	rootUsers int
	// Per association, its account's index; the associations grouped by
	// account (byAcct[acctStart[k]:acctStart[k+1]]); the accounts' ids.
	acctOf    []int32
	byAcct    []int32
	acctStart []int32
	acctIDs   []int
	// Scratch for rank.
	acctUse   []float64
	acctLevel []float64
	acctUsers []int32
	order     []int32
	users     []int32
	lv        []float64
}

// newFairTree indexes the associations (account, user) of the jobs.
func newFairTree(jobs []Job) fairTree {
	var ft fairTree
	idx := map[assoc]int32{}
	accts := map[int]int32{}
	ft.of = make([]int32, len(jobs))
	for i := range jobs {
		a := assoc{jobs[i].Account, jobs[i].User}
		k, ok := idx[a]
		if !ok {
			k = int32(len(ft.assocs))
			idx[a] = k
			ft.assocs = append(ft.assocs, a)
			if _, ok := accts[a.account]; !ok {
				accts[a.account] = int32(len(ft.acctIDs))
				ft.acctIDs = append(ft.acctIDs, a.account)
			}
		}
		ft.of[i] = k
	}
	ft.init(accts)
	return ft
}

// init sizes the per-association and per-account state.
func (ft *fairTree) init(accts map[int]int32) {
	n, na := len(ft.assocs), len(ft.acctIDs)
	ft.usage, ft.factor, ft.seen = make([]float64, n), make([]float64, n), make([]bool, n)
	for a := range ft.factor {
		ft.factor[a] = 1
	}
	ft.acctOf = make([]int32, n)
	ft.acctStart = make([]int32, na+1)
	for a, as := range ft.assocs {
		k := accts[as.account]
		ft.acctOf[a] = k
		ft.acctStart[k+1]++
	}
	for k := range na {
		ft.acctStart[k+1] += ft.acctStart[k]
	}
	ft.byAcct = make([]int32, n)
	fill := slices.Clone(ft.acctStart[:na])
	for a := range ft.assocs {
		k := ft.acctOf[a]
		ft.byAcct[fill[k]] = int32(a)
		fill[k]++
	}
	ft.acctUse, ft.acctLevel, ft.acctUsers = make([]float64, na), make([]float64, na), make([]int32, na)
	ft.lv = make([]float64, n)
}

// see counts the association in the next ranking.
func (ft *fairTree) see(a int32) {
	if !ft.seen[a] {
		ft.seen[a] = true
		ft.nSeen++
	}
}

// use adds usage to the association.
func (ft *fairTree) use(a int32, used float64) {
	ft.see(a)
	ft.usage[a] += used
}

// factorOf returns the association's factor of the last ranking; an
// association first seen since has no usage, the highest level
// fair-share (infinite), so it ranks first: 1. Seeing it makes it count
// in the next ranking.
func (ft *fairTree) factorOf(a int32) float64 {
	ft.see(a)
	return ft.factor[a]
}

// rank is Fair Tree's ranking (Slurm's fair_tree.c, _calc_tree_fs): the
// accounts in descending order of their level fair-share S/U (S their
// share of the shares, equal among the accounts and the root users; U
// their share of all usage; no usage is
// infinite), and within each its users in descending order of theirs
// (U the user's share of the account's usage). Ranks count down from the
// number of associations in that order; siblings with equal level
// fair-share share a rank, and so does an account's first user with the
// previous account's last when the two accounts tie. The factor is
// rank / associations. Only the associations seen count, and the
// rootUsers: siblings of the accounts with no usage (infinite level
// fair-share), so they take the top rank, which an account of no usage
// shares with them (fair_tree.c: a user ties with a sibling account of
// equal level fair-share). Sums run in association order, so the answer
// does not depend on map order.
func (ft *fairTree) rank() {
	if ft.nSeen == 0 {
		return
	}
	clear(ft.acctUse)
	clear(ft.acctUsers)
	var total float64
	for a, ok := range ft.seen {
		if ok {
			k := ft.acctOf[a]
			ft.acctUse[k] += ft.usage[a]
			ft.acctUsers[k]++
			total += ft.usage[a]
		}
	}
	level := func(share, use, of float64) float64 {
		if use <= 0 || of <= 0 {
			return math.Inf(1)
		}
		return share / (use / of)
	}
	ft.order = ft.order[:0]
	for k, n := range ft.acctUsers {
		if n > 0 {
			ft.order = append(ft.order, int32(k))
		}
	}
	nAcct := float64(len(ft.order) + ft.rootUsers)
	for _, k := range ft.order {
		ft.acctLevel[k] = level(1/nAcct, ft.acctUse[k], total)
	}
	slices.SortFunc(ft.order, func(a, b int32) int {
		if la, lb := ft.acctLevel[a], ft.acctLevel[b]; la != lb {
			return cmp.Compare(lb, la)
		}
		return cmp.Compare(ft.acctIDs[a], ft.acctIDs[b])
	})
	n := ft.nSeen + ft.rootUsers
	rank, next := n, n
	prevAcct, prevUser := math.NaN(), math.NaN()
	if ft.rootUsers > 0 {
		// The root users tie among themselves at the top rank.
		next -= ft.rootUsers
		prevAcct = math.Inf(1)
	}
	for _, k := range ft.order {
		ft.users = ft.users[:0]
		nu := float64(ft.acctUsers[k])
		for _, a := range ft.byAcct[ft.acctStart[k]:ft.acctStart[k+1]] {
			if ft.seen[a] {
				ft.users = append(ft.users, a)
				ft.lv[a] = level(1/nu, ft.usage[a], ft.acctUse[k])
			}
		}
		slices.SortFunc(ft.users, func(a, b int32) int {
			if la, lb := ft.lv[a], ft.lv[b]; la != lb {
				return cmp.Compare(lb, la)
			}
			return cmp.Compare(ft.assocs[a].user, ft.assocs[b].user)
		})
		lvAcct := ft.acctLevel[k]
		for i, a := range ft.users {
			tied := i > 0 && ft.lv[a] == prevUser || i == 0 && lvAcct == prevAcct
			if !tied {
				rank = next
			}
			ft.factor[a] = float64(rank) / float64(n)
			next--
			prevUser = ft.lv[a]
		}
		prevAcct = lvAcct
	}
}
