package queuesim

import (
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
// classic fair-share with equal shares); size is the job's share of the
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
		sum += p.WeightFairshare * s.fairshare(in.User)
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
	s.usage[s.in[ji].User] += j.gpuEq * float64(now-j.usageFrom)
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
		for _, ji := range s.running {
			s.accrue(ji, s.now)
		}
		s.usageTotal = 0
		for _, v := range s.usage {
			s.usageTotal += v
		}
	}
	s.lastCalc = s.now
	s.compact()
	for _, ji := range s.pending {
		s.js[ji].prio = s.priority(ji)
	}
	slices.SortFunc(s.pending, s.cmpQueue)
}
