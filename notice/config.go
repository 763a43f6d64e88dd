package notice

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/internal/conffile"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Config is everything the agent needs to decide and deliver notices,
// built from the [notices] section by FromConfig.
type Config struct {
	Rules       Rules
	From        string
	Recipients  Recipients
	Mailer      Mailer
	Squeue      Squeue
	DailyCap    int
	OptOut      OptOut
	Exempt      Exemptions
	Queue       int
	Cancel      Canceller
	CancelParts []string // partitions where the cancel action applies; nil: off
	// Loc is the zone of times in messages (nil: local, as sacct).
	Loc *time.Location
}

// CancelIn reports whether the cancel action applies to a job of this
// partition.
func (c *Config) CancelIn(partition string) bool {
	return len(c.CancelParts) > 0 && partition != "" && slices.Contains(c.CancelParts, partition)
}

// ClusterGres is what slurm.conf's NodeName lines say about the cluster's
// GPUs (slurmext.ReadNodeGres): whether any node has gres/shard, and the
// GPU types declared. Known is false when slurm.conf could not be read.
type ClusterGres struct {
	Known  bool
	Shards bool
	Types  []string
}

// ClusterGresOf is what the bound slurm.conf (c) declares about the
// cluster's GPUs for the oversized notice: gres/shard on any node, and
// the GPU types. A nil c (no slurm.conf, an unreadable one, or one of
// another cluster) is unknown (no shards, every configured type).
func ClusterGresOf(c *slurmext.ClusterConf) ClusterGres {
	if c == nil {
		return ClusterGres{}
	}
	g := ClusterGres{Known: true}
	for _, n := range c.Nodes {
		g.Shards = g.Shards || n.Shards > 0
		for _, tc := range n.GPUsByType {
			if tc.Type != "" && !slices.Contains(g.Types, tc.Type) {
				g.Types = append(g.Types, tc.Type)
			}
		}
	}
	return g
}

// FromConfig builds the notice configuration from the file's section.
// interval is the agent's sampling interval; gres is what slurm.conf
// declares: its shards decide oversized.shards = "auto", and when it names
// GPU types, only those of oversized.gpu_types it names are suggested (a
// type the cluster does not have would be a fix that fails). It reads
// address_map, the only file read once; a missing or malformed one is an
// error.
func FromConfig(c config.NoticesConfig, interval time.Duration, gres ClusterGres) (*Config, error) {
	idle := func(r config.IdleRule) IdleRule {
		return IdleRule{Enabled: r.Enabled, Window: r.Window.D(), UtilBelow: r.UtilBelow, MemoryBelow: uint64(r.MemoryBelow)}
	}
	o := c.Oversized
	var types []GPUType
	for name, mem := range o.GPUTypes {
		if gres.Known && len(gres.Types) > 0 && !slices.Contains(gres.Types, name) {
			continue
		}
		types = append(types, GPUType{Name: name, Memory: uint64(mem)})
	}
	sort.Slice(types, func(i, j int) bool {
		if types[i].Memory != types[j].Memory {
			return types[i].Memory < types[j].Memory
		}
		return types[i].Name < types[j].Name
	})
	shards := o.Shards == "yes" || o.Shards == "auto" && gres.Shards
	// Whether a job may hold shards rather than its GPU: an unknown
	// slurm.conf may give its nodes shards.
	sharedNodes := o.Shards == "yes" || o.Shards == "auto" && (gres.Shards || !gres.Known)
	nc := &Config{
		Rules: Rules{
			Interval:   interval,
			IdleGPU:    idle(c.IdleGPU),
			IdleJob:    idle(c.IdleJob),
			UnusedGPUs: idle(c.UnusedGPUs),
			Oversized: OversizedRule{Enabled: o.Enabled, Window: o.Window.D(), UtilBelow: o.UtilBelow,
				MemoryShare: o.MemoryShare, Margin: analysis.DefaultConfig().Recommend.SharingMargin,
				Shards: shards, Types: types, SharedNodes: sharedNodes},
		},
		Recipients: Recipients{Pattern: c.Address},
		Mailer:     Mailer{Program: c.Sendmail, Timeout: c.SendTimeout.D()},
		Squeue:     Squeue{Program: c.Squeue, Timeout: min(c.SendTimeout.D(), 10*time.Second)},
		DailyCap:   c.DailyCap,
		OptOut:     OptOut{File: c.OptOutFile, HomeFile: c.HomeOptOut, Timeout: c.HomeTimeout.D()},
		Exempt:     Exemptions{Partitions: c.ExemptPartitions, QOS: c.ExemptQOS, Accounts: c.ExemptAccounts, Users: c.ExemptUsers},
		Queue:      c.Queue,
	}
	from, err := ParseFrom(c.From)
	if err != nil {
		return nil, fmt.Errorf("notices.from: %w", err)
	}
	nc.From = from
	if c.AddressMap != "" {
		b, err := conffile.Read(c.AddressMap, conffile.MaxSize)
		if err != nil {
			return nil, fmt.Errorf("notices.address_map: %w", err)
		}
		if nc.Recipients.Map, err = ReadAddressMap(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("notices.address_map %s: %w", c.AddressMap, err)
		}
	}
	if cc := c.Cancel; cc.Enabled {
		nc.Rules.CancelGrace = cc.Grace.D()
		nc.CancelParts = cc.Partitions
		nc.Cancel = Canceller{Program: cc.Scancel, Signal: cc.Signal, Wait: cc.Wait.D(), Timeout: cc.Timeout.D(), DryRun: cc.DryRun}
	}
	return nc, nil
}
