package analysis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/internal/present"
)

// Inventory sources (Inventory.Source): where an answer's GPU nodes came
// from. A slurm.conf is always named with its cluster ("slurm.conf of
// cluster lab"), since only the slurm.conf of the jobs' own cluster is
// ever used (docs/configuration.md).
const (
	InventoryProfiles = "profiles" // the GPUs the profiles saw, per node
	InventoryFlags    = "--node"   // the nodes whatif --node gave
	InventoryNone     = "none"
)

// SlurmConfOf names a slurm.conf source: "slurm.conf of cluster X", or
// "slurm.conf" when the cluster is not known.
func SlurmConfOf(cluster string) string {
	if cluster == "" {
		return "slurm.conf"
	}
	return "slurm.conf of cluster " + cluster
}

// ScontrolOf names the live source: "scontrol of cluster X" (this host's
// slurmctld, slurm_source "scontrol" or "auto").
func ScontrolOf(cluster string) string { return "scontrol of cluster " + cluster }

// ConfName names the Slurm configuration u used: ScontrolOf(cluster) when
// it came from the live cluster, else SlurmConfOf(cluster).
func (u ConfUse) ConfName() string {
	if u.Source == "scontrol" {
		return ScontrolOf(u.Cluster)
	}
	return SlurmConfOf(u.Cluster)
}

// Inventory says what an answer's GPU inventory is and where it came
// from, so that no output attributes it to a source it did not come from.
type Inventory struct {
	// Source is InventoryProfiles, SlurmConfOf(cluster), "profiles and "
	// + SlurmConfOf(cluster), InventoryFlags or InventoryNone.
	Source string `json:"source"`
	Nodes  int    `json:"nodes"`
	GPUs   int    `json:"gpus"`
	// Misfit, when not empty, says why an inventory was found and not
	// used: the jobs held more GPU-hours in the window than its GPUs could
	// (an occupancy above 100 %), so it does not describe the cluster the
	// jobs ran on. Source is then InventoryNone, and Nodes and GPUs are
	// those of the inventory refused.
	Misfit string `json:"misfit,omitempty"`
}

// Words is the inventory as a sentence fragment: "4 GPUs on 1 node
// (from slurm.conf of cluster lab)", "none", or why the one found was not
// used.
func (v Inventory) Words() string {
	switch {
	case v.Misfit != "":
		return "none: " + v.Misfit
	case v.Source == "" || v.Source == InventoryNone || v.GPUs == 0:
		return "none"
	}
	return fmt.Sprintf("%d %s on %d %s (from %s%s)", v.GPUs, present.Plural(v.GPUs, "GPU", "GPUs"), v.Nodes, present.Plural(v.Nodes, "node", "nodes"), v.Source, v.profilesRule())
}

// ProfilesCount says how the profiles count a node's GPUs (InputBuilder):
// the outputs that show an inventory from profiles say it.
const ProfilesCount = "per node, the most GPUs in use at once"

// profilesRule is "; " + ProfilesCount when the inventory comes from
// profiles, else "".
func (v Inventory) profilesRule() string {
	if strings.HasPrefix(v.Source, InventoryProfiles) {
		return "; " + ProfilesCount
	}
	return ""
}

// ConfUse says which cluster an answer is for and which of that cluster's
// Slurm configuration files it used. The command line binds them
// (docs/configuration.md, "Which slurm.conf describes a cluster"); the
// analysis only carries them into its outputs.
type ConfUse struct {
	// Cluster is the one cluster the answer is for ("" when the jobs name
	// none).
	Cluster string `json:"cluster"`
	// SlurmConf and GresConf are the files used ("" none).
	SlurmConf string `json:"slurm_conf"`
	GresConf  string `json:"gres_conf,omitempty"`
	// Source is where the nodes, partitions and scheduler settings came
	// from when slurm_source asks for a choice: "scontrol" (this host's
	// slurmctld; SlurmConf and GresConf are then "") or "files"; "" when
	// slurm_source is "files" (the default). The two are never merged.
	Source string `json:"source,omitempty"`
	// NotUsed is the one line on a configured file that was not used
	// ("slurm.conf /etc/slurm/slurm.conf is cluster lab2's, the jobs are
	// dlrm's: not used"); "" when none was left aside.
	NotUsed string `json:"not_used,omitempty"`
}

// fitInventory refuses an inventory the jobs do not fit: when the GPU
// time the window's jobs held (counted by the one rule, counter) exceeds
// what the inventory's GPUs could hold in the window, the occupancy would
// be above 100 %, which cannot be; and when the jobs held more GPUs at
// one instant than the inventory has (a configuration that lacks nodes
// the jobs ran on: the GPU-hours alone may still fit). The inventory then
// describes another cluster (or part of this one). Its nodes are dropped,
// so no capacity, occupancy, limit or plan is computed from it, and
// in.Inventory says why.
func fitInventory(in *Input) {
	gpus, _ := inventory(in.Nodes)
	if gpus == 0 {
		return
	}
	held := heldGPUs(in)
	capacity := float64(gpus) * held.hours
	switch {
	case held.hours > 0 && held.gpuHours > capacity*(1+1e-9):
		in.Inventory.Misfit = fmt.Sprintf("the inventory does not fit the jobs: they held %s GPU-hours in the window, more than the %d %s of the inventory (from %s) could hold in it (%s)",
			present.GPUHours(held.gpuHours), gpus, present.Plural(gpus, "GPU", "GPUs"), in.Inventory.Source, present.GPUHours(capacity))
	case held.peak > float64(gpus)*(1+1e-9)+1e-9:
		in.Inventory.Misfit = fmt.Sprintf("the inventory does not fit the jobs: they held %s GPUs at once (%s), more than the %d %s of the inventory (from %s)",
			present.GPUsHeld(held.peak), held.peakAt.UTC().Format(time.RFC3339), gpus, present.Plural(gpus, "GPU", "GPUs"), in.Inventory.Source)
	default:
		return
	}
	in.Inventory.Source = InventoryNone
	in.Nodes = nil
}

// held is what the window's jobs held by the one counting rule (the
// shards of a node's inventory included): GPU-hours, the most GPUs held
// at one instant and when, and the window's hours.
type held struct {
	gpuHours, peak, hours float64
	peakAt                time.Time
}

func heldGPUs(in *Input) held {
	var h held
	var gpuHours ExactSum // the same in every order of the jobs
	k := newCounter(in, 0)
	var n DataNotes
	type edge struct {
		at    time.Time
		delta float64
	}
	var edges []edge
	for i := range in.Jobs {
		j := &in.Jobs[i]
		m := Metrics{Outcome: outcomeOf(j)}
		if j.Started() {
			m.Start = n.checkTime(j.Start)
		}
		if end := n.checkTime(j.End); !m.Start.IsZero() && !end.IsZero() {
			if d := end.Sub(m.Start); d >= 0 && d <= maxSpan {
				m.Elapsed, m.ElapsedValid = d, true
			}
		}
		m.GPUs = max(j.ReqGPUs, len(j.GPUs))
		if m.GPUs == 0 && j.ReqShards > 0 {
			m.GPUs = 1
		}
		k.count(j, &m)
		gpuHours.Add(m.GPUHours)
		if m.GPUHours > 0 && m.CountEnd.After(m.CountStart) {
			edges = append(edges, edge{m.CountStart, m.GPUShare}, edge{m.CountEnd, -m.GPUShare})
		}
	}
	h.gpuHours = gpuHours.Float()
	if k.to.After(k.from) {
		h.hours = k.to.Sub(k.from).Hours()
	}
	// A job that ends in the second another starts (sacct keeps whole
	// seconds) did not hold its GPUs beside it: ends first.
	sort.Slice(edges, func(a, b int) bool {
		if !edges[a].at.Equal(edges[b].at) {
			return edges[a].at.Before(edges[b].at)
		}
		return edges[a].delta < edges[b].delta
	})
	var now float64
	for _, e := range edges {
		now += e.delta
		if now > h.peak {
			h.peak, h.peakAt = now, e.at
		}
	}
	return h
}

// InventoryOf is in.Inventory, or, for an Input made without an
// InputBuilder, where its nodes came from by the replay's rule.
func InventoryOf(in *Input) Inventory {
	if in.Inventory.Source != "" {
		return in.Inventory
	}
	if len(in.Nodes) == 0 {
		return Inventory{Source: InventoryNone}
	}
	// A node with a card size was seen by profiles; one without comes
	// from slurm.conf (the replay's rule, replay.setNodes).
	profiled, conf := false, false
	for _, n := range in.Nodes {
		if n.MemoryTotal > 0 {
			profiled = true
		} else {
			conf = true
		}
	}
	v := Inventory{Source: InventoryProfiles, Nodes: len(in.Nodes), GPUs: TotalGPUs(in.Nodes)}
	switch {
	case profiled && conf:
		v.Source = InventoryProfiles + " and " + in.Conf.ConfName()
	case conf:
		v.Source = in.Conf.ConfName()
	}
	return v
}
