package jobsource

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// CheckCluster returns an *UnknownClusterError when the jobs the caller
// reads are all of other clusters than cluster (a name as
// slurmext.NormalClusterName leaves it): --cluster names a cluster the
// database does not hold. With no job at all it returns nil.
func (s *Source) CheckCluster(ctx context.Context, cluster string) error {
	n, err := s.Count(ctx, store.ViewFilter{Cluster: cluster})
	if err != nil || n > 0 {
		return err
	}
	names, err := s.Clusters(ctx, store.ViewFilter{})
	if err != nil || len(names) == 0 {
		return err
	}
	return &UnknownClusterError{Asked: cluster, Names: names}
}

// UnknownClusterError refuses --cluster naming a cluster of which the
// database holds no job, naming those it holds: a usage error.
type UnknownClusterError struct {
	Asked string
	Names []string
}

func (e *UnknownClusterError) Error() string {
	clean := make([]string, len(e.Names))
	for i, n := range e.Names {
		clean[i] = termtext.Clean(n)
	}
	return fmt.Sprintf("--cluster %s: the database holds no job of that cluster; it holds jobs of %d %s (%s)",
		termtext.Clean(e.Asked), len(e.Names), present.Plural(len(e.Names), "cluster", "clusters"), strings.Join(clean, ", "))
}
