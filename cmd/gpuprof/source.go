package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/jobsource"
)

// openSource opens the configured job source (jobsource.Open) for whoever
// runs the command. local reads this host's jobs (its database, or the
// agent's query socket) even when a collector is configured.
func openSource(ctx context.Context, g *globalOptions, local bool) (*jobsource.Source, error) {
	cfg, err := g.Load()
	if err != nil {
		return nil, err
	}
	s, err := jobsource.Open(ctx, cfg, jobsource.Options{Local: local, DBFlag: g.DB != "", UID: callerUID(), Munge: collect.MungeOf(cfg.Munge)})
	if err == nil && s.AdminWarning() != nil {
		fmt.Fprintf(os.Stderr, "gpuprof: warning: %v\n", s.AdminWarning())
	}
	if err == nil && sourceOpened != nil {
		if err = sourceOpened(s); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, err
}

// callerUID is who runs the command; TestCommandsReadScoped runs them as
// another uid.
var callerUID = os.Getuid

// sourceOpened, when set (TestCommandsReadScoped), sees each source a
// command opens once its caller is decided; its error ends the command.
var sourceOpened func(*jobsource.Source) error

// clusterHelp is the --cluster flag's help, the same for every analysis
// command.
const clusterHelp = "the cluster to answer for (default: the one whose jobs the window holds; needed when it holds several)"
