package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
)

// recommendDebug proposes a debug/interactive partition when short jobs
// wait longer than they run: MaxTime from their duration p95, DefaultTime
// from the p50, a higher PriorityTier and a QOS that caps each user. The
// short jobs are those of class short_debug with a known run time and
// wait, which the scheduler's record alone decides (classifyScheduler):
// sacct history without GPU readings counts as much as profiled jobs.
func recommendDebug(b *recBuilder, in *Input, f *facts) {
	rc := &b.c.Recommend
	var durs, waits []float64
	users := map[string]bool{}
	short := map[int]bool{}
	noReadings := 0
	for i := range f.jobs {
		j := &f.jobs[i]
		if j.cls != ClassShortDebug || !j.elapsedOK || !j.waitOK {
			continue
		}
		short[int(j.idx)] = true
		durs = append(durs, j.elapsed)
		waits = append(waits, j.wait)
		users[j.user] = true
		if !j.utilOK {
			noReadings++
		}
	}
	if len(durs) < rc.MinJobs {
		b.nothing(RecDebugPart, "%d short jobs with known wait (need %d): no debug partition", len(durs), rc.MinJobs)
		return
	}
	dd, wd := distOf(durs), distOf(waits)
	if wd.P50 < dd.P50 || wd.P50 <= 0 {
		b.nothing(RecDebugPart, "%d short jobs wait %s (p50), less than they run (%s): no debug partition",
			len(durs), present.Seconds(wd.P50), present.Seconds(dd.P50))
		return
	}
	// A wait of seconds is no queue, however short the runs: the same
	// floor as the queue_bound bottleneck's.
	if minWait := b.c.Bottlenecks.QueueBoundMinWait.D().Seconds(); wd.P50 < minWait {
		b.nothing(RecDebugPart, "%d short jobs wait %s (p50), under bottlenecks.queue_bound_min_wait (%s): no debug partition",
			len(durs), present.Seconds(wd.P50), present.Seconds(minWait))
		return
	}
	maxTime := roundUp(time.Duration(dd.P95*float64(time.Second)), 15*time.Minute)
	defTime := min(roundUp(time.Duration(dd.P50*float64(time.Second)), 5*time.Minute), maxTime)
	perUser := max(1, peakPercentileBy(f.jobs, func(j *jobFact) string {
		if j.cls == ClassShortDebug {
			return j.user
		}
		return ""
	}, 95))
	ratio := wd.P50 / max(dd.P50, 1)
	r := Recommendation{
		Kind:  RecDebugPart,
		Title: "Add a debug/interactive partition",
		Change: fmt.Sprintf("Create partition %q (MaxTime %s, DefaultTime %s, PriorityTier %d) with QOS %s limiting each user to %s.",
			debugPartition, slurmTime(maxTime), slurmTime(defTime), debugPriorityTie, debugQOS, present.Count(perUser, "GPU", "GPUs")),
		Evidence: []Reason{
			{Rule: "debug.jobs", Note: fmt.Sprintf("%d short jobs of %d users (%d without GPU utilisation readings)", len(durs), len(users), noReadings)},
			{Rule: "debug.duration", Note: fmt.Sprintf("run time p50 %s, p95 %s", present.Seconds(dd.P50), present.Seconds(dd.P95))},
			{Rule: "debug.wait", Checks: []Check{{MetricWaitRatio, ratio, OpGE, 1}},
				Note: fmt.Sprintf("wait p50 %s, p95 %s", present.Seconds(wd.P50), present.Seconds(wd.P95))},
			{Rule: "debug.per_user", Note: fmt.Sprintf("p95 over users of their peak concurrent short-job GPUs: %d", perUser)},
		},
		Effect: fmt.Sprintf("Short jobs start ahead of long work; their median wait (%s) should drop below their run time.", present.Seconds(wd.P50)),
		Config: []ConfigLine{
			{TargetSacctmgr, "sacctmgr -i add qos " + debugQOS},
			{TargetSacctmgr, fmt.Sprintf("sacctmgr -i modify qos %s set MaxWall=%s MaxTRESPerUser=gres/gpu=%d Priority=100 Flags=DenyOnLimit",
				debugQOS, slurmTime(maxTime), perUser)},
			{TargetSlurmConf, fmt.Sprintf("PartitionName=%s Nodes=%s MaxTime=%s DefaultTime=%s PriorityTier=%d QOS=%s State=UP",
				debugPartition, nodeList(in.Nodes), slurmTime(maxTime), slurmTime(defTime), debugPriorityTie, debugQOS)},
		},
		// Replayed: the partition on every node, and the short jobs
		// submitted with --time at its MaxTime (their runs fit), so that
		// they may start in it as well as in their own.
		Replay: &ReplaySpec{
			Changes: []Change{
				PartitionChange(debugPartition, in.Nodes, maxTime, debugPriorityTie, false),
				{Kind: ChangeJobs, Spec: "short jobs with --time=" + slurmTime(maxTime), Rewrite: &JobRewrite{Jobs: short, LimitCap: maxTime}},
			},
			Group: short, GroupName: "short jobs",
		},
	}
	b.add(r, len(durs), ratio, 1)
}

// recommendLong proposes a long-training QOS when long training was seen
// holding more than recommend.long_grp_frac of the GPUs: MaxWall from the
// long runs' p95, a GrpTRES cap, and requeue on preemption.
func recommendLong(b *recBuilder, in *Input, f *facts) {
	rc := &b.c.Recommend
	total := TotalGPUs(in.Nodes)
	var durs []float64
	long, others := map[int]bool{}, map[int]bool{}
	for i := range f.jobs {
		j := &f.jobs[i]
		if j.cls == ClassLongTraining {
			long[int(j.idx)] = true
		} else {
			others[int(j.idx)] = true
		}
		if j.cls == ClassLongTraining && j.elapsedOK {
			durs = append(durs, j.elapsed)
		}
	}
	if total == 0 || len(durs) < rc.MinJobs {
		b.nothing(RecLongQOS, "%d long-training runs that ended, %s in the inventory (need %d runs and an inventory): no long-training QOS", len(durs), present.Count(total, "GPU", "GPUs"), rc.MinJobs)
		return
	}
	// GPUs held at once by the one rule of every table (the plan's peak
	// per class): the counted parts of the runs, jobs still running up to
	// the counting end, shard jobs by their share.
	_, peaks := peaksByClass(f.jobs)
	peak := peaks[ClassLongTraining]
	capN := max(1, int(math.Floor(rc.LongGrpFrac*float64(total))))
	if peak <= float64(capN) {
		b.nothing(RecLongQOS, "long training held at most %s of %s at once (cap would be %d): no long-training QOS", present.GPUsHeld(peak), present.Count(total, "GPU", "GPUs"), capN)
		return
	}
	dd := distOf(durs)
	wall := roundUp(time.Duration(dd.P95*1.1*float64(time.Second)), time.Hour)
	frac := peak / float64(total)
	b.add(Recommendation{
		Kind:  RecLongQOS,
		Title: "Cap long training with a QOS",
		Change: fmt.Sprintf("Put long training in QOS %s: MaxWall %s, at most %d of %s together (GrpTRES), requeued when a burst job needs its GPUs.",
			longQOS, slurmTime(wall), capN, present.Count(total, "GPU", "GPUs")),
		Evidence: []Reason{
			{Rule: "long.peak", Checks: []Check{{Metric("gpu_fraction"), frac, OpGT, rc.LongGrpFrac}},
				Note: fmt.Sprintf("long training held %s of %s at its peak", present.GPUsHeld(peak), present.Count(total, "GPU", "GPUs"))},
			{Rule: "long.duration", Note: fmt.Sprintf("%d runs that ended; run time p50 %s, p95 %s, max %s", dd.N,
				present.Seconds(dd.P50), present.Seconds(dd.P95), present.Seconds(dd.Max))},
		},
		Effect: fmt.Sprintf("At least %s stay free for other work while long training runs.", present.Count(total-capN, "GPU", "GPUs")),
		Config: []ConfigLine{
			{TargetSacctmgr, "sacctmgr -i add qos " + longQOS},
			{TargetSacctmgr, fmt.Sprintf("sacctmgr -i modify qos %s set MaxWall=%s GrpTRES=gres/gpu=%d PreemptMode=requeue Flags=DenyOnLimit",
				longQOS, slurmTime(wall), capN)},
			{TargetSbatch, "#SBATCH --qos=" + longQOS},
		},
		Replay: &ReplaySpec{
			Changes: []Change{
				QOSChange(longQOS, 0, 0, capN),
				{Kind: ChangeJobs, Spec: "long training in QOS " + longQOS, Rewrite: &JobRewrite{Jobs: long, QOS: longQOS}},
			},
			Group: others, GroupName: "jobs other than long training",
		},
	}, dd.N, frac, rc.LongGrpFrac)
}

// recommendLimits proposes per-user GPU limits and a small deadline-burst
// QOS when the queue is contended: queue-bound jobs at least
// recommend.queue_share_min of the GPU jobs. The per-user limit is the
// larger of the median over users of each user's peak concurrent GPUs
// (what a typical user already needs) and recommend.user_share_max of the
// GPUs; it is recommended only when some user's peak exceeded it.
func recommendLimits(b *recBuilder, in *Input, f *facts) {
	rc := &b.c.Recommend
	total := TotalGPUs(in.Nodes)
	queued := 0
	for i := range f.jobs {
		if f.jobs[i].kinds.Has(KindQueueBound) {
			queued++
		}
	}
	share := float64(queued) / float64(len(f.jobs))
	if len(f.jobs) < rc.MinJobs || share < rc.QueueShareMin || total == 0 {
		b.nothing(RecUserLimits, "%d of %d GPU jobs queue-bound (%s, threshold %s), %s in the inventory: no new limits",
			queued, len(f.jobs), present.Share(share), present.Share(rc.QueueShareMin), present.Count(total, "GPU", "GPUs"))
		return
	}
	everyone := map[int]bool{}
	for i := range f.jobs {
		everyone[int(f.jobs[i].idx)] = true
	}
	peaks := peaksBy(f.jobs, func(j *jobFact) string { return j.user })
	vals := make([]float64, 0, len(peaks))
	top, topUser := 0, ""
	for _, u := range sortedKeys(peaks) {
		vals = append(vals, float64(peaks[u]))
		if peaks[u] > top {
			top, topUser = peaks[u], u
		}
	}
	pd := distOf(vals)
	limit := max(1, int(pd.P50), int(math.Floor(rc.UserShareMax*float64(total))))
	burst := max(1, int(math.Ceil(rc.BurstFrac*float64(total))))
	if top <= limit {
		b.nothing(RecUserLimits, "queue-bound jobs are %s, but no user's peak (%s) exceeds the limit the data supports (%d): a per-user limit would bind no one",
			present.Share(share), present.Count(top, "GPU", "GPUs"), limit)
		return
	}
	b.add(Recommendation{
		Kind:  RecUserLimits,
		Title: "Limit concurrent GPUs per user and keep a burst reserve",
		Change: fmt.Sprintf("Limit every user to %s at once (QOS %s), and add a high-priority QOS %s of %s for deadlines that preempts %s.",
			present.Count(limit, "GPU", "GPUs"), defaultUserQOS, burstQOS, present.Count(burst, "GPU", "GPUs"), longQOS),
		Evidence: []Reason{
			{Rule: "limits.queue", Checks: []Check{{Metric("queue_bound_share"), share, OpGE, rc.QueueShareMin}},
				Note: fmt.Sprintf("%d of %d GPU jobs waited ≥ %s their run time", queued, len(f.jobs), present.Times(b.c.Bottlenecks.QueueBoundRatio))},
			{Rule: "limits.per_user", Note: fmt.Sprintf("peak concurrent GPUs per user over %d users: p50 %s, p95 %s, max %d (%s)",
				pd.N, present.Decimal(pd.P50), present.Decimal(pd.P95), top, topUser)},
		},
		Effect: fmt.Sprintf("No user holds more than %d of %s; deadline work can take %s at once.", limit, present.Count(total, "GPU", "GPUs"), present.Count(burst, "GPU", "GPUs")),
		Config: []ConfigLine{
			{TargetSlurmConf, "PriorityType=priority/multifactor"},
			{TargetSlurmConf, "PreemptType=preempt/qos"},
			{TargetSlurmConf, "PreemptMode=REQUEUE"},
			{TargetSacctmgr, fmt.Sprintf("sacctmgr -i modify qos %s set MaxTRESPerUser=gres/gpu=%d", defaultUserQOS, limit)},
			{TargetSacctmgr, "sacctmgr -i add qos " + longQOS},
			{TargetSacctmgr, fmt.Sprintf("sacctmgr -i modify qos %s set PreemptMode=requeue", longQOS)},
			{TargetSacctmgr, "sacctmgr -i add qos " + burstQOS},
			{TargetSacctmgr, fmt.Sprintf("sacctmgr -i modify qos %s set Priority=1000 GrpTRES=gres/gpu=%d MaxTRESPerUser=gres/gpu=%d Preempt=%s PreemptMode=requeue Flags=DenyOnLimit",
				burstQOS, burst, burst, longQOS)},
		},
		// Replayed: the per-user cap on every job; the burst QOS and its
		// preemption are not (the replay does not preempt).
		Replay: &ReplaySpec{
			Changes: []Change{
				QOSChange(defaultUserQOS, limit, 0, 0),
				{Kind: ChangeJobs, Spec: "every job in QOS " + defaultUserQOS, Rewrite: &JobRewrite{Jobs: everyone, QOS: defaultUserQOS}},
			},
			Group: everyone, GroupName: "all GPU jobs",
		},
	}, queued, share, rc.QueueShareMin)
}

// recommendDefaultTime proposes a DefaultTime for each partition whose
// users over-request their time limits by recommend.over_request_ratio
// (median limit / run time): the partition's run-time p95, rounded up.
func recommendDefaultTime(b *recBuilder, f *facts, fd *Findings) {
	rc := &b.c.Recommend
	durs := map[string][]float64{}
	byPart := map[string]map[int]bool{}
	for i := range f.jobs {
		j := &f.jobs[i]
		if byPart[j.partition] == nil {
			byPart[j.partition] = map[int]bool{}
		}
		byPart[j.partition][int(j.idx)] = true
		if j.elapsedOK && j.elapsed > 0 && (j.outcome == OutcomeCompleted || j.outcome == OutcomeTimeout) {
			durs[j.partition] = append(durs[j.partition], j.elapsed)
		}
	}
	for _, p := range fd.Summary.Partitions {
		lr := p.LimitRatio
		if lr.N < rc.MinJobs || !validName(p.Partition) {
			continue
		}
		if lr.P50 < rc.OverRequestRatio {
			b.nothing(RecDefaultTime, "partition %s: limit / run time p50 %s < %s: time limits are close enough",
				p.Partition, present.Times(lr.P50), present.Times(rc.OverRequestRatio))
			continue
		}
		dd := distOf(durs[p.Partition])
		if dd.N == 0 {
			continue
		}
		def := roundUp(time.Duration(dd.P95*float64(time.Second)), 15*time.Minute)
		b.add(Recommendation{
			Kind:  RecDefaultTime,
			Title: fmt.Sprintf("Set a DefaultTime on partition %s", p.Partition),
			Change: fmt.Sprintf("Set DefaultTime=%s on partition %s (its run-time p95, rounded up), and ask users to pass --time.",
				slurmTime(def), p.Partition),
			Evidence: []Reason{
				{Rule: "default_time.ratio", Checks: []Check{{Metric("limit_ratio_p50"), lr.P50, OpGE, rc.OverRequestRatio}},
					Note: fmt.Sprintf("%d finished jobs; limit / run time p95 %s", lr.N, present.Times(lr.P95))},
				{Rule: "default_time.duration", Note: fmt.Sprintf("run time p50 %s, p95 %s", present.Seconds(dd.P50), present.Seconds(dd.P95))},
			},
			Effect: "Limits close to real run times let the backfill scheduler start waiting jobs in the gaps.",
			Config: []ConfigLine{
				{TargetScontrol, fmt.Sprintf("scontrol update PartitionName=%s DefaultTime=%s", p.Partition, slurmTime(def))},
			},
			// Replayed: every job of the partition whose run fits the
			// DefaultTime gets it as its limit; longer runs keep theirs.
			Replay: &ReplaySpec{
				Changes: []Change{{Kind: ChangeJobs, Spec: "DefaultTime=" + slurmTime(def) + " on " + p.Partition,
					Rewrite: &JobRewrite{Jobs: byPart[p.Partition], LimitCap: def}}},
				Group: byPart[p.Partition], GroupName: "jobs of partition " + p.Partition,
			},
		}, lr.N, lr.P50, rc.OverRequestRatio)
	}
}

// recommendStorage names the IO-bound tasks when IO-bound jobs hold at
// least recommend.io_share_min of the GPU-hours.
func recommendStorage(b *recBuilder, f *facts) {
	rc := &b.c.Recommend
	type task struct {
		hours float64 // sum, once every job is added
		sum   ExactSum
		jobs  int
	}
	tasks := map[string]*task{}
	users := map[string]bool{}
	// The GPU-hours exact (ExactSum): the same in every order of the jobs.
	var sum ExactSum
	n := 0
	for i := range f.jobs {
		j := &f.jobs[i]
		if !j.kinds.Has(KindIOBound) {
			continue
		}
		sum.Add(j.gpuHours)
		n++
		users[j.user] = true
		k := j.user + "/" + NormaliseName(j.name)
		t := tasks[k]
		if t == nil {
			t = &task{}
			tasks[k] = t
		}
		t.sum.Add(j.gpuHours)
		t.jobs++
	}
	for _, t := range tasks {
		t.hours = t.sum.Float()
	}
	hours, all := sum.Float(), f.gpuHours.Float()
	share := 0.0
	if all > 0 {
		share = hours / all
	}
	if n < rc.MinUserJobs || share < rc.IOShareMin {
		b.nothing(RecStorage, "IO-bound jobs hold %s of the GPU-hours (threshold %s, %d jobs): storage is not the bottleneck",
			present.Share(share), present.Share(rc.IOShareMin), n)
		return
	}
	keys := sortedKeys(tasks)
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(tasks[b].hours, tasks[a].hours) })
	names := make([]string, 0, 5)
	for _, k := range keys[:min(5, len(keys))] {
		names = append(names, fmt.Sprintf("%s (%s, %s GPU-hours)", k, present.Count(tasks[k].jobs, "job", "jobs"), present.GPUHours(tasks[k].hours)))
	}
	b.add(Recommendation{
		Kind:  RecStorage,
		Title: "GPUs wait on storage",
		Change: fmt.Sprintf("Stage input data to node-local disk before the GPU work and stagger checkpoints; first for %s. Users: %s.",
			strings.Join(names, ", "), strings.Join(sortedKeys(users), ", ")),
		Evidence: []Reason{{Rule: "storage.share", Checks: []Check{{Metric("io_bound_share"), share, OpGE, rc.IOShareMin}},
			Note: fmt.Sprintf("%s, %s of %s GPU-hours", present.Count(n, "IO-bound job", "IO-bound jobs"), present.GPUHours(hours), present.GPUHours(all))}},
		Effect: fmt.Sprintf("Up to %s GPU-hours spent waiting on IO could do work.", present.GPUHours(hours)),
		Replay: &ReplaySpec{Why: "faster storage shortens runs by their IO waits; the replay takes run times as recorded"},
	}, n, share, rc.IOShareMin)
}

// recommendIdleAccounts names the accounts whose GPU-hours are mostly idle
// allocations.
func recommendIdleAccounts(b *recBuilder, f *facts) {
	rc := &b.c.Recommend
	type acc struct {
		hours, idle       float64 // sums, once every job is added
		sumHours, sumIdle ExactSum
		jobs, idles       int
		idleJobs          map[int]bool
	}
	accs := map[string]*acc{}
	everyone := map[int]bool{}
	for i := range f.jobs {
		j := &f.jobs[i]
		a := accs[j.account]
		if a == nil {
			a = &acc{idleJobs: map[int]bool{}}
			accs[j.account] = a
		}
		a.sumHours.Add(j.gpuHours)
		a.jobs++
		everyone[int(j.idx)] = true
		if j.cls == ClassIdleAllocation {
			a.sumIdle.Add(j.gpuHours)
			a.idles++
			a.idleJobs[int(j.idx)] = true
		}
	}
	named := 0
	for _, name := range sortedKeys(accs) {
		a := accs[name]
		a.hours, a.idle = a.sumHours.Float(), a.sumIdle.Float()
		if a.idles < rc.MinUserJobs || a.hours <= 0 || a.idle/a.hours < rc.IdleShareMin {
			continue
		}
		named++
		share := a.idle / a.hours
		label := present.Account(name)
		b.add(Recommendation{
			Kind:   RecIdleAccount,
			Title:  fmt.Sprintf("Account %s holds idle GPUs", label),
			Change: fmt.Sprintf("Ask account %s to release GPUs it does not use (end interactive sessions, request fewer GPUs); consider a lower MaxTRESPerUser for it.", label),
			Evidence: []Reason{{Rule: "idle_account.share", Checks: []Check{{Metric("idle_share"), share, OpGE, rc.IdleShareMin}},
				Note: fmt.Sprintf("%s of %s idle allocations, %s of %s GPU-hours", present.Int(a.idles), present.Count(a.jobs, "job", "jobs"), present.GPUHours(a.idle), present.GPUHours(a.hours))}},
			Effect: fmt.Sprintf("%s GPU-hours returned to the queue.", present.GPUHours(a.idle)),
			Replay: &ReplaySpec{
				Changes: []Change{{Kind: ChangeJobs, Spec: "account " + label + " without its idle allocations", Rewrite: &JobRewrite{Jobs: a.idleJobs, Drop: true}}},
				Group:   minus(everyone, a.idleJobs), GroupName: "the other GPU jobs",
			},
		}, a.idles, share, rc.IdleShareMin)
	}
	if named == 0 {
		b.nothing(RecIdleAccount, "no account has idle allocations over %s of its GPU-hours", present.Share(rc.IdleShareMin))
	}
}

// recommendUsers writes per-user hints: users whose runs on several GPUs
// used none of them, users who request more GPUs than they use, and users
// whose runs would fit a shard of a model for which shards were
// recommended. Only runs with utilisation readings count, and GPUs are
// counted used as Hints counts them (gpusUsed), so that a user's advice
// and the hints on their jobs never say opposite things:
//
//   - user_gpus, none used: in at least half of the runs, and in at least
//     recommend.min_user_jobs of them, a job on two or more GPUs used none
//     → submit those without GPUs;
//   - user_gpus, fewer: the same share of runs on two or more GPUs used
//     some but left half or more unused → ask for the p95 of the GPUs
//     those runs used (never fewer than one: each used one);
//   - user_shard: half or more of the runs on a model with shards were
//     sharing candidates that used their GPU, all fit a shard, and no run
//     of the user filled a GPU's memory (its hint asks for a larger GPU).
//
// Single-GPU runs are left out of user_gpus: the facts do not say whether
// a single GPU was a shard's or shared, where Hints gives no count advice.
//
// It stays one function: one pass over the jobs fills each user's
// accumulator (its runs with readings on whole GPUs, and its runs that
// filled a GPU's memory), and the three pieces of advice read that same
// accumulator, with its run count as their denominator; split, the
// accumulator type would leave the function for three helpers that each
// read a part of it.
func recommendUsers(b *recBuilder, f *facts, shared map[string]sharingPlan) {
	rc := &b.c.Recommend
	type acc struct {
		runs, idle, over int       // idle: no GPU used; over: ≥ 2 GPUs, half unused
		req, used        []float64 // of the over runs
		idleReq          []float64
		needs            map[string][]float64
		full             int // runs that filled a GPU's memory
		// The runs each piece of advice would change.
		idleJobs, overJobs map[int]bool
		shardJobs          map[string]map[int]bool
	}
	users := map[string]*acc{}
	everyone := map[int]bool{}
	for i := range f.jobs {
		j := &f.jobs[i]
		everyone[int(j.idx)] = true
		a := users[j.user]
		if a == nil {
			a = &acc{needs: map[string][]float64{}, idleJobs: map[int]bool{}, overJobs: map[int]bool{}, shardJobs: map[string]map[int]bool{}}
			users[j.user] = a
		}
		// A memory peak alone (no utilisation) still asks for a larger GPU.
		vramBound := j.kinds.Has(KindVRAMBound)
		if vramBound {
			a.full++
		}
		// Runs on shards or on GPUs other jobs used too have readings of
		// their part of a GPU: neither the hints nor this count them.
		if !j.utilOK || !j.whole {
			continue
		}
		a.runs++
		gpus, unused := int(j.gpus), int(j.unused)
		used := gpusUsed(gpus, unused, int(j.memHeld), vramBound)
		switch {
		case gpus < 1 || unused == 0:
		case used == 0:
			a.idle++
			a.idleReq = append(a.idleReq, float64(gpus))
			a.idleJobs[int(j.idx)] = true
		case gpus >= 2 && (gpus-used)*2 >= gpus:
			a.over++
			a.req = append(a.req, float64(gpus))
			a.used = append(a.used, float64(used))
			a.overJobs[int(j.idx)] = true
		}
		if _, ok := shared[j.model]; ok && gpus == 1 && used == 1 && j.need > 0 && j.compute < b.c.Classes.LowUtilMax {
			a.needs[j.model] = append(a.needs[j.model], float64(j.need))
			if a.shardJobs[j.model] == nil {
				a.shardJobs[j.model] = map[int]bool{}
			}
			a.shardJobs[j.model][int(j.idx)] = true
		}
	}
	for _, u := range sortedKeys(users) {
		a := users[u]
		if !validName(u) {
			continue
		}
		if a.runs == 0 {
			continue
		}
		if a.idle >= rc.MinUserJobs && a.idle*2 >= a.runs {
			share := float64(a.idle) / float64(a.runs)
			b.add(Recommendation{
				Kind:   RecUserGPUs,
				Title:  fmt.Sprintf("User %s: asked for %s, used none", u, present.Count(int(distOf(a.idleReq).P50), "GPU", "GPUs")),
				Change: fmt.Sprintf("%d of %d runs used none of their GPUs → submit those without --gres=gpu or --gpus, to a CPU partition", a.idle, a.runs),
				Evidence: []Reason{{Rule: "user.no_gpu_used", Checks: []Check{{Metric("unused_share"), share, OpGE, 0.5}},
					Note: fmt.Sprintf("%d of %d runs with utilisation readings had every GPU below %s mean utilisation or never touched",
						a.idle, a.runs, formatPercent(b.c.Classes.IdleUtilMax))}},
				Effect: "The GPUs go to jobs that use them.",
				Replay: &ReplaySpec{
					Changes: []Change{{Kind: ChangeJobs, Spec: "user " + u + " without the runs that used no GPU", Rewrite: &JobRewrite{Jobs: a.idleJobs, Drop: true}}},
					Group:   minus(everyone, a.idleJobs), GroupName: "the other GPU jobs",
				},
			}, a.idle, share, 0.5)
		}
		if a.over >= rc.MinUserJobs && a.over*2 >= a.runs {
			rd, ud := distOf(a.req), distOf(a.used)
			use := max(1, int(ud.P95))
			if use >= int(rd.P50) {
				// Runs of different sizes: what the large ones used is
				// no fewer than what the typical one asks for.
				b.nothing(RecUserGPUs, "user %s: %d runs left half their GPUs unused, but they differ in size (asked p50 %d, used p95 %d): no single GPU count to advise",
					u, a.over, int(rd.P50), use)
			} else {
				b.add(Recommendation{
					Kind:   RecUserGPUs,
					Title:  fmt.Sprintf("User %s: asked for %d GPUs, used %d", u, int(rd.P50), use),
					Change: fmt.Sprintf("asked for %d GPUs, used %d → --gres=gpu:%d", int(rd.P50), use, use),
					Evidence: []Reason{{Rule: "user.over_request", Checks: []Check{{Metric("over_request_share"), float64(a.over) / float64(a.runs), OpGE, 0.5}},
						Note: fmt.Sprintf("%d of %d runs left at least half their GPUs unused; used p95 %d, max %d", a.over, a.runs, int(ud.P95), int(ud.Max))}},
					Effect: "The unused GPUs go to other jobs.",
					Config: []ConfigLine{{TargetSbatch, fmt.Sprintf("#SBATCH --gres=gpu:%d", use)}},
					Replay: &ReplaySpec{
						Changes: []Change{{Kind: ChangeJobs, Spec: fmt.Sprintf("user %s asking for %s", u, present.Count(use, "GPU", "GPUs")), Rewrite: &JobRewrite{Jobs: a.overJobs, GPUs: use}}},
						Group:   everyone, GroupName: "all GPU jobs",
					},
				}, a.over, float64(a.over)/float64(a.runs), 0.5)
			}
		}
		for _, model := range sortedKeys(a.needs) {
			needs := a.needs[model]
			sp := shared[model]
			if len(needs) < rc.MinUserJobs || len(needs)*2 < a.runs {
				continue
			}
			if a.full > 0 {
				b.nothing(RecUserShard, "user %s: %d runs on %s would fit a shard, but %d runs filled a GPU's memory: no shard advice",
					u, len(needs), model, a.full)
				continue
			}
			nd := distOf(needs)
			if uint64(nd.Max) > sp.need {
				continue
			}
			b.add(Recommendation{
				Kind:  RecUserShard,
				Title: fmt.Sprintf("User %s: use a shard", u),
				Change: fmt.Sprintf("peak %s of %s → --gres=shard:1 on partition %s",
					present.GiB(uint64(nd.Max))+" GiB", present.GiB(sp.card)+" GiB", sp.partition),
				Evidence: []Reason{{Rule: "user.shard", Note: fmt.Sprintf("%d of %d runs on %s needed at most %s (a shard holds %s)",
					len(needs), a.runs, model, present.GiB(uint64(nd.Max))+" GiB", present.GiB(sp.need)+" GiB")}},
				Effect: fmt.Sprintf("%d jobs share a card instead of holding one each.", sp.shards),
				Config: []ConfigLine{
					{TargetSbatch, "#SBATCH --partition=" + sp.partition},
					{TargetSbatch, "#SBATCH --gres=shard:1"},
				},
				Replay: &ReplaySpec{
					Changes: append(slices.Clone(sp.changes), Change{Kind: ChangeJobs, Spec: fmt.Sprintf("user %s on shard:1", u),
						Rewrite: &JobRewrite{Jobs: a.shardJobs[model], Shards: 1, Partition: sp.partition}}),
					Group: minus(everyone, a.shardJobs[model]), GroupName: "the other GPU jobs",
				},
			}, len(needs), float64(len(needs))/float64(a.runs), 0.5)
		}
	}
}

// peaksBy returns each key's peak concurrent GPUs (jobs with key "" left
// out), in one sort of all the jobs' events: O(n log n). It sweeps the
// counted part of each run, as every table does (Metrics.CountStart and
// CountEnd: clipped to the window, a job still running up to the
// counting end), in whole GPUs, as Slurm's per-user limits count them.
func peaksBy(jobs []jobFact, key func(*jobFact) string) map[string]int {
	type ev struct {
		k string
		t int64
		d int32
	}
	var evs []ev
	for i := range jobs {
		j := &jobs[i]
		k := key(j)
		if k == "" || j.cs == 0 || j.ce < j.cs {
			continue
		}
		evs = append(evs, ev{k, j.cs, j.gpus}, ev{k, j.ce, -j.gpus})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.d, b.d)
	})
	out := map[string]int{}
	cur := 0
	for i, e := range evs {
		if i == 0 || evs[i-1].k != e.k {
			cur = 0
		}
		cur += int(e.d)
		out[e.k] = max(out[e.k], cur)
	}
	return out
}

// peakPercentileBy is the p-th percentile over keys of their peak
// concurrent GPUs; 0 when no key has jobs.
func peakPercentileBy(jobs []jobFact, key func(*jobFact) string, p float64) int {
	peaks := peaksBy(jobs, key)
	if len(peaks) == 0 {
		return 0
	}
	vs := make([]float64, 0, len(peaks))
	for _, v := range peaks {
		vs = append(vs, float64(v))
	}
	slices.Sort(vs)
	return int(PercentileSorted(vs, p))
}

// minus is the set a without the members of b.
func minus(a, b map[int]bool) map[int]bool {
	out := make(map[int]bool, len(a))
	for k := range a {
		if !b[k] {
			out[k] = true
		}
	}
	return out
}

// PartitionChange is a new partition on the nodes, as the replay applies
// it; jobsOnly keeps it to the jobs a rewrite sends there.
func PartitionChange(name string, nodes []Node, maxTime time.Duration, tier int, jobsOnly bool) Change {
	pc := slurmext.PartitionConf{Name: name, MaxTime: maxTime, PriorityTier: tier}
	for _, n := range nodes {
		pc.Nodes = append(pc.Nodes, n.Name)
	}
	set := map[string]bool{"nodes": true, "maxtime": maxTime > 0, "prioritytier": tier > 0}
	if maxTime <= 0 {
		pc.MaxTimeUnlimited = true
	}
	return Change{Kind: ChangePartition, PartitionConf: pc, PartitionSet: set, JobsOnly: jobsOnly,
		Spec: fmt.Sprintf("partition %s", name)}
}

// QOSChange is a QOS with a per-user GPU cap, a per-user job cap and a
// cap on its GPUs together (0: none).
func QOSChange(name string, perUserGPUs, perUserJobs, grpGPUs int) Change {
	q := slurmext.QOSLimits{Name: name, Set: map[string]bool{}}
	if perUserGPUs > 0 {
		q.MaxGPUsPerUser, q.Set["maxtresperuser"] = perUserGPUs, true
	}
	if perUserJobs > 0 {
		q.MaxJobsPerUser, q.Set["maxjobsperuser"] = perUserJobs, true
	}
	if grpGPUs > 0 {
		q.GrpGPUs, q.Set["grptres"] = grpGPUs, true
	}
	return Change{Kind: ChangeQOS, QOS: q, Spec: "QOS " + name}
}
