package jobsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// Conf is the Slurm configuration bound to the one cluster an
// answer is for: what the analysis may read of slurm.conf (nodes with
// their GPUs, types and shards; partitions and scheduler settings) and
// the one line on a configured file it did not use.
type Conf struct {
	Use        analysis.ConfUse
	Nodes      []slurmext.NodeGres
	Sched      slurmext.SchedConf
	SchedKnown bool
}

// WhatIf is the part of a replay's parameters the configuration gives.
func (c *Conf) WhatIf() capacity.WhatIfParams {
	if c == nil {
		return capacity.WhatIfParams{}
	}
	return capacity.WhatIfParams{SlurmNodes: c.Nodes, Sched: c.Sched, SchedKnown: c.SchedKnown}
}

// BindSlurmConf is the one rule that binds a slurm.conf to a cluster's
// jobs (docs/configuration.md, "Which slurm.conf describes a cluster"):
// the file is [clusters.NAME] slurm_conf, else slurm_conf, and it is used
// only when its ClusterName is cluster (a file without one: only when
// [clusters.NAME] names it, or for the jobs recorded as "default").
// clusterOf reads a file's ClusterName ("" when it sets none). It returns
// the file to use ("" none) and, when a configured file is not used, the
// one line that says so.
func BindSlurmConf(cluster string, cfg config.Config, clusterOf func(path string) (string, error)) (path, notUsed string) {
	path = cfg.For(cluster).SlurmConf
	named := path != ""
	if !named {
		path = cfg.SlurmConf
	}
	if path == "" {
		return "", ""
	}
	p := termtext.Clean(path)
	fileCluster, err := clusterOf(path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist) && !named:
		// The default path on a host without Slurm: nothing to say.
		return "", ""
	case err != nil:
		return "", fmt.Sprintf("slurm.conf %s cannot be read (%s): not used", p, shortErr(err))
	case fileCluster == cluster:
		return path, ""
	case fileCluster == "" && (named || cluster == slurmext.DefaultCluster):
		return path, ""
	}
	hint := ""
	if !named {
		hint = fmt.Sprintf(" ([clusters.%s] slurm_conf names the file to use)", termtext.Clean(cluster))
	}
	if fileCluster == "" {
		return "", fmt.Sprintf("slurm.conf %s names no cluster (no ClusterName), the jobs are %s's: not used%s", p, termtext.Clean(cluster), hint)
	}
	return "", fmt.Sprintf("slurm.conf %s is cluster %s's, the jobs are %s's: not used%s", p, termtext.Clean(fileCluster), termtext.Clean(cluster), hint)
}

// shortErr is an error without the path the sentence already names.
func shortErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// BindConf reads what the analysis uses of cluster's Slurm configuration:
// the slurm.conf BindSlurmConf chooses (its nodes and scheduler settings)
// and the gres.conf beside it or named for the cluster (the GPU types of
// nodes whose Gres= names none). A slurm.conf that is used and cannot be
// parsed is an error: refused, not guessed.
func BindConf(cluster string, cfg config.Config) (*Conf, error) {
	c := &Conf{Use: analysis.ConfUse{Cluster: cluster}}
	path, notUsed := BindSlurmConf(cluster, cfg, slurmext.ConfClusterName)
	c.Use.NotUsed = notUsed
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if c.Nodes, err = slurmext.ReadNodeGres(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if c.Sched, err = slurmext.ReadSchedConf(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	c.SchedKnown = true
	c.Use.SlurmConf = path
	gres := cfg.For(cluster).GresConf
	if gres == "" {
		gres = filepath.Join(filepath.Dir(path), "gres.conf")
	}
	if typed, err := gresTypes(gres, c.Nodes); err == nil {
		c.Use.GresConf = gres
		c.Nodes = typed
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", gres, err)
	}
	return c, nil
}

// gresTypes gives each node whose Gres= names no GPU type the type
// gres.conf gives all of its GPUs, when it gives them one.
func gresTypes(path string, nodes []slurmext.NodeGres) ([]slurmext.NodeGres, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(nodes)
	for i := range out {
		n := &out[i]
		if n.GPUs <= 0 || n.GPUType != "" {
			continue
		}
		gc, err := slurmext.ReadGresConf(bytes.NewReader(b), n.Name)
		if err != nil {
			return nil, err
		}
		t := ""
		for k, d := range gc.Devices {
			if k == 0 {
				t = strings.ToLower(d.Type)
			} else if !strings.EqualFold(d.Type, t) {
				t = ""
				break
			}
		}
		if t != "" && len(gc.Devices) == n.GPUs {
			n.GPUType = t
			n.GPUsByType = []slurmext.TypeCount{{Type: t, Count: n.GPUs}}
		}
	}
	return out, nil
}

// Clusters names the clusters of the jobs f selects, sorted: one job and
// two counts when they are all of one cluster, else one lean pass.
func (s *Source) Clusters(ctx context.Context, f store.ViewFilter) ([]string, error) {
	names, _, err := s.clusters(ctx, f)
	return names, err
}

// clusters is Clusters with, when the jobs are all of one cluster, how
// many they are (0 else): counted to tell, and read again by no one.
func (s *Source) clusters(ctx context.Context, f store.ViewFilter) ([]string, int, error) {
	one := f
	one.Limit, one.Offset, one.WithSeries, one.Lean = 1, 0, false, true
	vs, err := s.Jobs(ctx, one)
	if err != nil || len(vs) == 0 {
		return nil, 0, err
	}
	c := vs[0].Cluster
	all, err := s.Count(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	of := f
	of.Cluster = c
	n, err := s.Count(ctx, of)
	if err != nil {
		return nil, 0, err
	}
	if n == all {
		return []string{c}, n, nil
	}
	seen := map[string]bool{}
	lean := f
	lean.Lean, lean.WithSeries = true, false
	err = s.Each(ctx, lean, func(v store.JobView) error {
		seen[v.Cluster] = true
		return nil
	})
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, 0, err
}

// ForCluster chooses the one cluster an answer is for and binds its Slurm
// configuration to the source (BindConf): flag (--cluster) when given,
// else the one cluster of the jobs f selects; without jobs in f's window,
// the database's one cluster, else this host's (the cluster setting, else
// slurm_conf's ClusterName). Jobs of several clusters are refused, naming
// them (SeveralClustersError). f.Cluster becomes the cluster, so only its
// jobs are read.
func (s *Source) ForCluster(ctx context.Context, f *store.ViewFilter, flag string) error {
	_, err := s.forCluster(ctx, f, flag)
	return err
}

// forCluster is ForCluster with how many jobs of the cluster f selects,
// when they were counted to choose it (0: not counted).
func (s *Source) forCluster(ctx context.Context, f *store.ViewFilter, flag string) (int, error) {
	cluster := slurmext.NormalClusterName(flag)
	counted := 0
	if cluster != "" {
		if err := s.CheckCluster(ctx, cluster); err != nil {
			return 0, err
		}
	}
	if cluster == "" {
		names, n, err := s.clusters(ctx, *f)
		if err != nil {
			return 0, err
		}
		counted = n
		if len(names) == 0 {
			// No job in the window: the database's one cluster (a report
			// of an empty month still compares it with earlier ones), else
			// this host's when the database has it or no job at all.
			all := *f
			all.Since, all.Until = time.Time{}, time.Time{}
			if names, err = s.Clusters(ctx, all); err != nil {
				return 0, err
			}
			if host := slurmext.ClusterName(s.cfg.Cluster, "", s.cfg.SlurmConf); len(names) != 1 && (len(names) == 0 || slices.Contains(names, host)) {
				names = []string{host}
			}
		}
		if len(names) > 1 {
			return 0, &SeveralClustersError{Names: names}
		}
		cluster = names[0]
	}
	f.Cluster = cluster
	conf, err := BindConf(cluster, s.cfg)
	if err != nil {
		return 0, err
	}
	s.conf = conf
	return counted, nil
}

// SeveralClustersError refuses an answer asked of the jobs of several
// clusters, naming them: a usage error (the caller chooses one).
type SeveralClustersError struct{ Names []string }

func (e *SeveralClustersError) Error() string {
	clean := make([]string, len(e.Names))
	for i, n := range e.Names {
		clean[i] = termtext.Clean(n)
	}
	return fmt.Sprintf("the jobs of the window belong to %d clusters (%s): an answer is for one cluster, its slurm.conf and its inventory; choose it with --cluster",
		len(e.Names), strings.Join(clean, ", "))
}
