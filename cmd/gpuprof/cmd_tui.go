package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/monthly"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/tui"
)

// tuiSource is the TUI's Source, whose month summary and the GPU types
// of the detail's hints the window pipeline reads (monthly.SummaryMonth,
// monthly.Inventories, through the caller's Scope).
type tuiSource struct {
	*jobsource.Source
	*monthly.Inventories
}

// newTUISource is src as the TUI reads it.
func newTUISource(src *jobsource.Source) tuiSource {
	return tuiSource{src, monthly.NewInventories(src.Scope())}
}

// Month implements tui.MonthSource.
func (s tuiSource) Month(ctx context.Context, user string, w analysis.Window, now time.Time, newest int) (analysis.Input, int, error) {
	r, err := monthly.SummaryMonth(ctx, s.Scope(), user, w, now, newest)
	return r.Input, r.Total, err
}

var (
	_ tui.MonthSource = tuiSource{}
	_ tui.TypeSource  = tuiSource{}
)

func newTUICommand(g *globalOptions) *cobra.Command {
	var (
		local    bool
		noColor  bool
		pageSize int
		aconf    string
		user     string
		account  string
		all      bool
		cluster  string
	)
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Browse your jobs' GPU profiles in the terminal",
		Long: `Opens a terminal UI over your jobs: the list (sort with s/S, filter with /,
state f, partition p, time window t), a job's detail (per-GPU utilisation and
memory over time, IO wait, energy, XID errors, flags, and the sbatch options
to use next time, with the task's other runs) and your month's summary (m).
? shows every key; q quits.

You see only your own jobs; members of admin_group (and root) can switch to
any user (u) or account (a). The jobs come from the collector when
"collector" is configured (munge identifies you), else from the local
database, or, when you cannot open it, through the agent's query socket
(query_socket; the kernel names you). NO_COLOR turns colours off.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pageSize < 1 {
				return usagef("--page-size %d: want at least 1 job a page", pageSize)
			}
			c, err := analysis.ConfigAt(aconf)
			if err != nil {
				return err
			}
			src, err := openSource(cmd.Context(), g, local)
			if err != nil {
				return err
			}
			defer src.Close()
			// The list shows every cluster's jobs unless --cluster keeps
			// it to one; the summary is of one (its own slurm.conf only).
			if name := slurmext.NormalClusterName(cluster); name != "" {
				if err := src.CheckCluster(cmd.Context(), name); err != nil {
					return err
				}
			}
			src.SetCluster(slurmext.NormalClusterName(cluster))
			if os.Getenv("NO_COLOR") != "" { // no-color.org: set and not empty
				noColor = true
			}
			if user != "" || account != "" || all {
				if err := src.Identity().RequireAdmin("gpuprof tui --user, --account and --all show other users' jobs"); err != nil {
					return usagef("%v", err)
				}
			}
			opts := tui.Options{PageSize: pageSize, NoColor: noColor, Config: c, User: user, Account: account, Everyone: all}
			return tui.Run(cmd.Context(), newTUISource(src), src.Identity(), opts,
				cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&local, "local", false, "read this host's jobs (the local database, or the agent's query socket) even when a collector is configured")
	fs.BoolVar(&noColor, "no-color", false, "no colours (also when NO_COLOR is set)")
	fs.IntVar(&pageSize, "page-size", 100, "jobs loaded per page")
	fs.StringVar(&user, "user", "", "admins: start on this user's jobs")
	fs.StringVar(&account, "account", "", "admins: start on this account's jobs")
	fs.BoolVar(&all, "all", false, "admins: start on everyone's jobs")
	fs.StringVar(&cluster, "cluster", "", "only this cluster's jobs (the month's summary is of one cluster: needed when the month holds jobs of several)")
	fs.StringVar(&aconf, "analysis-config", "", "analysis thresholds (TOML, see contrib/analysis.toml.example; default: built-in)")
	return cmd
}
