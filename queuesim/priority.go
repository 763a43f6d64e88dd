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
			sum += p.WeightFairshare * s.ft.factorOf(assoc{in.Account, in.User})
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
		s.ft.usage[assoc{s.in[ji].Account, s.in[ji].User}] += used
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

// fairTree is Fair Tree's state: the decayed usage of every association
// seen, and each one's factor as of the last recalc (PriorityCalcPeriod:
// Slurm's decay thread ranks the tree only then; a job submitted between
// takes its association's factor of the last one).
type fairTree struct {
	usage  map[assoc]float64
	factor map[assoc]float64
}

// factorOf returns the association's factor of the last ranking; an
// association first seen since has no usage, the highest level
// fair-share (infinite), so it ranks first: 1. Seeing it makes it count
// in the next ranking.
func (ft *fairTree) factorOf(a assoc) float64 {
	if ft.usage == nil {
		ft.usage, ft.factor = map[assoc]float64{}, map[assoc]float64{}
	}
	if _, ok := ft.usage[a]; !ok {
		ft.usage[a] = 0
	}
	if f, ok := ft.factor[a]; ok {
		return f
	}
	return 1
}

// rank is Fair Tree's ranking (Slurm's fair_tree.c, _calc_tree_fs): the
// accounts in descending order of their level fair-share S/U (S their
// share of the shares, equal; U their share of all usage; no usage is
// infinite), and within each its users in descending order of theirs
// (U the user's share of the account's usage). Ranks count down from the
// number of associations in that order; siblings with equal level
// fair-share share a rank, and so does an account's first user with the
// previous account's last when the two accounts tie. The factor is
// rank / associations.
func (ft *fairTree) rank() {
	if len(ft.usage) == 0 {
		return
	}
	type acct struct {
		id    int
		use   float64
		users []assoc
		level float64
	}
	byID := map[int]*acct{}
	var accts []*acct
	var total float64
	for a, u := range ft.usage {
		ac := byID[a.account]
		if ac == nil {
			ac = &acct{id: a.account}
			byID[a.account] = ac
			accts = append(accts, ac)
		}
		ac.use += u
		ac.users = append(ac.users, a)
		total += u
	}
	level := func(share, use, of float64) float64 {
		if use <= 0 || of <= 0 {
			return math.Inf(1)
		}
		return share / (use / of)
	}
	for _, ac := range accts {
		ac.level = level(1/float64(len(accts)), ac.use, total)
	}
	slices.SortFunc(accts, func(a, b *acct) int {
		if a.level != b.level {
			return cmp.Compare(b.level, a.level)
		}
		return cmp.Compare(a.id, b.id)
	})
	n := len(ft.usage)
	rank, next := n, n
	prevAcct, prevUser := math.NaN(), math.NaN()
	for _, ac := range accts {
		lv := make(map[assoc]float64, len(ac.users))
		for _, a := range ac.users {
			lv[a] = level(1/float64(len(ac.users)), ft.usage[a], ac.use)
		}
		slices.SortFunc(ac.users, func(a, b assoc) int {
			if lv[a] != lv[b] {
				return cmp.Compare(lv[b], lv[a])
			}
			return cmp.Compare(a.user, b.user)
		})
		for k, a := range ac.users {
			tied := k > 0 && lv[a] == prevUser || k == 0 && ac.level == prevAcct
			if !tied {
				rank = next
			}
			ft.factor[a] = float64(rank) / float64(n)
			next--
			prevUser = lv[a]
		}
		prevAcct = ac.level
	}
}
