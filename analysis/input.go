package analysis

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// InputBuilder turns stored jobs into the analysis input as they are read:
// every reader (the CLI's analysis commands, the report, the TUI summary,
// the collector) converts with it, so none can count differently. Add takes
// one job's scheduler record and profiles at a time; they are converted
// with FromView in batches on all CPUs, in their order, and dropped, so a
// month's time series are never all held at once.
//
// The GPU inventory comes from the profiles: per node, the model, the
// most distinct GPUs (by UUID) in use at one time (a replaced card brings a
// new UUID: the UUIDs ever seen would count it twice), their memory and the
// partitions its jobs ran in. A node that never ran a profiled job is not
// known from them; SetSlurmNodes adds what slurm.conf says (GPU count and
// type, shards), which also gives the shard jobs their share of a GPU.
//
// An InputBuilder is not safe for concurrent Add calls.
type InputBuilder struct {
	nodes map[string]*nodeInventory
	slurm []slurmext.NodeGres
	// conf is the cluster the answer is for and the files bound to it
	// (SetConf): slurm names its slurm.conf.
	conf  ConfUse
	batch []pending
	// jobs is the reserved result (Reserve); filled counts the jobs
	// converted into it. Batches that do not fit go to overflow, and so do
	// all batches after them, to keep the order.
	jobs     []Job
	filled   int
	added    int
	overflow []*[]Job
	workers  chan struct{}
	wg       sync.WaitGroup
}

type pending struct {
	rec      *slurmext.JobRecord
	profiles []profile.Job
}

type nodeInventory struct {
	model string
	mem   uint64
	uuids map[string]useSpan // each GPU's first and last use on the node
	parts []string
}

// useSpan is when a GPU was in use: from the start of the first profile
// that names it to the end of the last.
type useSpan struct{ from, to time.Time }

func (u useSpan) widen(from, to time.Time) useSpan {
	if u.from.IsZero() || from.Before(u.from) {
		u.from = from
	}
	if to.After(u.to) {
		u.to = to
	}
	return u
}

// heldAtOnce is the most GPUs of spans in use at one time: a node's GPU
// count, where every replaced card brings a new UUID and the count of all
// UUIDs ever seen would grow with each. Spans that only touch (one ends
// as the next begins) do not overlap; a span of no length is an instant.
func heldAtOnce(spans map[string]useSpan) int {
	type event struct {
		t    time.Time
		step int
	}
	ev := make([]event, 0, 2*len(spans))
	for _, s := range spans {
		to := s.to
		if !to.After(s.from) {
			to = s.from.Add(time.Nanosecond)
		}
		ev = append(ev, event{s.from, 1}, event{to, -1})
	}
	slices.SortFunc(ev, func(a, b event) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.step - b.step // ends first
	})
	held, most := 0, 0
	for _, e := range ev {
		held += e.step
		most = max(most, held)
	}
	return most
}

// inputBatch is how many jobs one conversion takes.
const inputBatch = 4096

// NewInputBuilder returns an empty builder.
func NewInputBuilder() *InputBuilder {
	return &InputBuilder{nodes: map[string]*nodeInventory{}, workers: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// Reserve sizes the result for n jobs before the first Add, so the jobs
// are converted into their final place and never copied: a million jobs
// then cost one array of them instead of two at the end. n is a hint
// (e.g. the store's count): more jobs than reserved still work.
func (b *InputBuilder) Reserve(n int) {
	if b.added == 0 && n > 0 {
		b.jobs = make([]Job, n)
	}
}

// SetSlurmNodes gives the nodes slurm.conf declares (slurmext.ClusterConf.Nodes, bound by jobsource):
// a node there that no profile names joins the inventory with its GPU count
// and type; every node gets its shard count.
func (b *InputBuilder) SetSlurmNodes(nodes []slurmext.NodeGres) { b.slurm = nodes }

// SetConf says which cluster the input is for and which Slurm
// configuration was bound to it (Input.Conf); nodes are its slurm.conf's
// (SetSlurmNodes), nil when none is used. The inventory's source then
// names that cluster's slurm.conf.
func (b *InputBuilder) SetConf(c ConfUse, nodes []slurmext.NodeGres) {
	b.conf, b.slurm = c, nodes
}

// Add takes one job: its scheduler record (nil when none arrived) and its
// per-node profiles. The builder keeps both until the batch is converted.
func (b *InputBuilder) Add(rec *slurmext.JobRecord, profiles []profile.Job) {
	for _, p := range profiles {
		n := b.nodes[p.Node]
		if n == nil {
			n = &nodeInventory{uuids: map[string]useSpan{}}
			b.nodes[p.Node] = n
		}
		if p.Partition != "" && !slices.Contains(n.parts, p.Partition) {
			n.parts = append(n.parts, p.Partition)
		}
		from, to := p.Start, p.End
		if to.IsZero() || to.Before(p.LastSample) {
			to = p.LastSample
		}
		if to.Before(from) {
			to = from
		}
		for _, gp := range p.GPUs {
			if gp.UUID != "" {
				n.uuids[gp.UUID] = n.uuids[gp.UUID].widen(from, to)
			}
			if gp.Model != "" {
				n.model = gp.Model
			}
			n.mem = max(n.mem, gp.MemoryTotal)
		}
	}
	b.batch = append(b.batch, pending{rec, profiles})
	if len(b.batch) == inputBatch {
		b.flush()
	}
}

// flush converts the current batch on a free CPU, into the reserved
// result while it has room.
func (b *InputBuilder) flush() {
	if len(b.batch) == 0 {
		return
	}
	batch := b.batch
	b.batch = nil
	var out []Job
	if b.filled+len(batch) <= len(b.jobs) && len(b.overflow) == 0 {
		out = b.jobs[b.filled : b.filled+len(batch)]
		b.filled += len(batch)
	} else {
		out = make([]Job, len(batch))
		b.overflow = append(b.overflow, &out)
	}
	b.added += len(batch)
	b.workers <- struct{}{}
	b.wg.Go(func() {
		defer func() { <-b.workers }()
		names := make(interner, 256)
		for i := range batch {
			out[i] = FromView(batch[i].rec, batch[i].profiles)
			names.job(&out[i])
		}
	})
}

// Input waits for the conversions and returns the jobs, in the order they
// were added, with the inventory. w and now become Input.Window and
// Input.Now. The builder is spent afterwards.
func (b *InputBuilder) Input(w Window, now time.Time) Input {
	b.flush()
	b.wg.Wait()
	in := Input{Window: w, Now: now, Jobs: b.jobs[:b.filled]}
	if len(b.overflow) > 0 {
		n := b.filled
		for _, r := range b.overflow {
			n += len(*r)
		}
		if cap(in.Jobs) < n {
			jobs := make([]Job, b.filled, n)
			copy(jobs, in.Jobs)
			in.Jobs = jobs
		}
		for _, r := range b.overflow {
			in.Jobs = append(in.Jobs, *r...)
			*r = nil
		}
	}
	if in.Jobs == nil {
		in.Jobs = []Job{}
	}
	b.jobs, b.overflow = nil, nil
	in.Conf = b.conf
	in.Nodes, in.Inventory = b.inventory()
	fitInventory(&in)
	return in
}

// inventory merges the nodes seen in profiles with slurm.conf's, and
// says where they came from.
func (b *InputBuilder) inventory() ([]Node, Inventory) {
	byName := map[string]*Node{}
	profiled, fromConf := false, false
	for name, n := range b.nodes {
		if len(n.uuids) == 0 || name == "" {
			continue
		}
		parts := slices.Clone(n.parts)
		slices.Sort(parts)
		byName[name] = &Node{Name: name, GPUModel: n.model, GPUs: heldAtOnce(n.uuids), MemoryTotal: n.mem, Partitions: parts}
		profiled = true
	}
	for _, s := range b.slurm {
		if s.GPUs <= 0 && s.Shards <= 0 {
			continue
		}
		fromConf = true
		nd := byName[s.Name]
		if nd == nil {
			// Known only from slurm.conf: the GRES type stands for the
			// model (Slurm's own name for it, e.g. "h100").
			nd = &Node{Name: s.Name, GPUModel: s.GPUType, GPUs: s.GPUs}
			byName[s.Name] = nd
		}
		nd.GPUs = max(nd.GPUs, s.GPUs)
		nd.Shards = s.Shards
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	nodes := make([]Node, 0, len(names))
	for _, name := range names {
		nodes = append(nodes, *byName[name])
	}
	inv := Inventory{Source: InventoryNone, Nodes: len(nodes), GPUs: TotalGPUs(nodes)}
	switch {
	case profiled && fromConf:
		inv.Source = InventoryProfiles + " and " + b.conf.ConfName()
	case profiled:
		inv.Source = InventoryProfiles
	case fromConf:
		inv.Source = b.conf.ConfName()
	}
	return nodes, inv
}

// interner shares the text of names that repeat from job to job (users,
// accounts, partitions, states, nodes, GPU models): each job read from the
// store brings its own copies, and a month of a million jobs would hold
// them a million times. One per batch: batches convert concurrently.
type interner map[string]string

func (m interner) of(s string) string {
	if s == "" {
		return s
	}
	if v, ok := m[s]; ok {
		return v
	}
	m[s] = s
	return s
}

func (m interner) job(j *Job) {
	j.Cluster, j.User, j.Account = m.of(j.Cluster), m.of(j.User), m.of(j.Account)
	j.Partition, j.QOS, j.State = m.of(j.Partition), m.of(j.QOS), slurmext.JobState(m.of(string(j.State)))
	j.ReqGPUType, j.IOScope, j.Reason = m.of(j.ReqGPUType), m.of(j.IOScope), m.of(j.Reason)
	for i := range j.GPUs {
		g := &j.GPUs[i]
		g.Node, g.Model = m.of(g.Node), m.of(g.Model)
	}
}
