package queuesim

import "slices"

// UnfitKind says what a job asks for that none of its partitions has.
// The kinds are in the order a partition is checked: a later kind came
// closer to fitting.
type UnfitKind uint8

// Unfit kinds.
const (
	// Fits: some partition of the job could hold it.
	Fits UnfitKind = iota
	// UnfitPartition: the job names no partition of the cluster.
	UnfitPartition
	// UnfitQOS: more GPUs than its QOS lets one user (MaxTRESPerUser) or
	// all (GrpTRES) hold; Have is the limit.
	UnfitQOS
	// UnfitTimeLimit: a time limit above the partition's MaxTime; Have is
	// MaxTime in seconds.
	UnfitTimeLimit
	// UnfitType: no node of the partition has the GPU type asked for.
	UnfitType
	// UnfitShards: more shards than a GPU of the type in the partition
	// has; Have is the most shards per GPU there (0: none has shards).
	UnfitShards
	// UnfitGPUs: more GPUs on one node than a node of the type in the
	// partition has; Have is the most GPUs of one node there.
	UnfitGPUs
	// UnfitNodes: more nodes large enough for the job's share than the
	// partition has; Have is how many it has.
	UnfitNodes
)

func (k UnfitKind) String() string {
	switch k {
	case Fits:
		return "fits"
	case UnfitPartition:
		return "no partition"
	case UnfitQOS:
		return "QOS limit"
	case UnfitTimeLimit:
		return "time limit"
	case UnfitType:
		return "GPU type"
	case UnfitShards:
		return "shards"
	case UnfitGPUs:
		return "GPUs per node"
	case UnfitNodes:
		return "nodes"
	}
	return "unknown"
}

// Unfit is whether a job could ever start on a cluster, and if not, why:
// what it asks for, in the partition that came closest (Partition, an
// index into Cluster.Partitions; -1 when the reason is not a
// partition's), and what that partition has (Have, by Kind).
type Unfit struct {
	Kind      UnfitKind
	Partition int
	Have      int
}

// CheckFit says whether the job could ever start on the cluster, ignoring
// what else runs: whether some partition of the job has nodes of its GPU
// type, with enough GPUs (or shards per GPU) on enough of them, a MaxTime
// that admits its limit, and whether its QOS admits its GPUs. It is the
// rule the simulator applies when a job arrives (a job that fails it is
// Unrunnable, with this reason); a caller asks it to count and explain
// the jobs a replay cannot take. For a job that fits, Partition is the
// first partition that holds it.
func CheckFit(c *Cluster, j *Job) Unfit {
	if j.QOS >= 0 && j.QOS < len(c.QOS) {
		q := &c.QOS[j.QOS]
		gpus := j.GPUs * j.Nodes
		switch {
		case q.MaxGPUsPerUser > 0 && gpus > q.MaxGPUsPerUser:
			return Unfit{Kind: UnfitQOS, Partition: -1, Have: q.MaxGPUsPerUser}
		case q.GrpGPUs > 0 && gpus > q.GrpGPUs:
			return Unfit{Kind: UnfitQOS, Partition: -1, Have: q.GrpGPUs}
		}
	}
	best := Unfit{Kind: UnfitPartition, Partition: -1}
	for _, p := range j.Partitions {
		if p < 0 || p >= len(c.Partitions) {
			continue
		}
		u := partitionFit(c, j, p)
		if u.Kind == Fits {
			return u
		}
		if u.Kind > best.Kind || u.Kind == best.Kind && u.Have > best.Have {
			best = u
		}
	}
	return best
}

// Holders appends to dst the nodes the job could ever run on, ignoring
// what else runs: those of its partitions whose MaxTime admits its limit
// that hold its share alone (its GPU type, GPUs or shards per GPU
// enough), each once (dst empty, or a buffer cut to [:0]), in the order
// of its partitions and their nodes.
// They are the nodes CheckFit counts; a caller asks them to tell what a
// job needs (a node of one kind only) from where a replay placed it (one
// of several that could hold it, the first that fits).
func Holders(c *Cluster, j *Job, dst []int) []int {
	for _, p := range j.Partitions {
		if p < 0 || p >= len(c.Partitions) || !admits(&c.Partitions[p], j) {
			continue
		}
		for _, k := range c.Partitions[p].Nodes {
			if k >= 0 && k < len(c.Nodes) && holds(&c.Nodes[k], j) && (len(j.Partitions) == 1 || !slices.Contains(dst, k)) {
				dst = append(dst, k)
			}
		}
	}
	return dst
}

// admits reports whether the partition's MaxTime admits the job's limit.
func admits(part *Partition, j *Job) bool {
	return part.MaxTime <= 0 || j.Limit <= 0 || max(secs(j.Limit), 1) <= secs(part.MaxTime)
}

// typeOf reports whether the node has the GPU type the job asks for.
func typeOf(n *Node, j *Job) bool { return j.Type == "" || n.Type == j.Type }

// sized reports whether the node has GPUs (or shards per GPU) enough for
// one node's share of the job.
func sized(n *Node, j *Job) bool {
	if j.Shards > 0 {
		return n.ShardsPerGPU >= j.Shards
	}
	return n.GPUs >= j.GPUs
}

// holds reports whether the node could hold one node's share of the job
// by itself.
func holds(n *Node, j *Job) bool { return typeOf(n, j) && sized(n, j) }

// partitionFit checks one partition, in the order of UnfitKind.
func partitionFit(c *Cluster, j *Job, p int) Unfit {
	part := &c.Partitions[p]
	u := Unfit{Partition: p}
	if !admits(part, j) {
		u.Kind, u.Have = UnfitTimeLimit, int(secs(part.MaxTime))
		return u
	}
	typed, big, have := 0, 0, 0
	for _, k := range part.Nodes {
		if k < 0 || k >= len(c.Nodes) {
			continue
		}
		n := &c.Nodes[k]
		if !typeOf(n, j) {
			continue
		}
		typed++
		if j.Shards > 0 {
			have = max(have, n.ShardsPerGPU)
		} else {
			have = max(have, n.GPUs)
		}
		if sized(n, j) {
			big++
		}
	}
	switch {
	case typed == 0:
		u.Kind = UnfitType
	case big == 0 && j.Shards > 0:
		u.Kind, u.Have = UnfitShards, have
	case big == 0:
		u.Kind, u.Have = UnfitGPUs, have
	case big < max(j.Nodes, 1):
		u.Kind, u.Have = UnfitNodes, big
	}
	return u
}
