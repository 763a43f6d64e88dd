package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/ingest"
	"github.com/gpuprof/gpuprof/internal/metricsrv"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

func newServeCommand(g *globalOptions) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Central collector: receive node profiles, answer job queries (multi-node mode)",
		Long: `Runs on the central host (usually the slurmctld host, next to jobcomp) in
multi-node mode. Node agents configured with "collector" push finished
profiles here; every push must carry a munge credential of root or the
SlurmUser, bound to that request, and is accepted only for the node that
sent it: a node of this collector's cluster whose name resolves here to the
address munge reports for the pushing host, or one serve.node_hosts lists
for that host; and (serve.placement = "slurm", the default) only once
Slurm's records here (jobcomp, sacct imports) place the job on that node:
until then the profile is held and the node pushes it again. Users' commands query jobs here with their own munge
credential: a user sees only their own jobs, members of
admin_group see all. Queries and pushes are admitted in lanes of their
own (serve.max_queries, query_decodes; push_decodes, max_uploads), so a
burst of nodes' pushes never queues a user's query. Records jobcomp spooled while the database was busy are
ingested here too. Not needed in single-host mode.

With serve.metrics_listen set it also serves /metrics for Prometheus:
finished jobs and GPU-seconds by account, partition and GPU model (totals
over the database, so a restart resets nothing), delivery lag and refused
pushes (see docs/prometheus.md).

Every hour it thins the series of profiles that ended more than
serve.series_age ago (default 30 days) to serve.series_points points per
GPU (default 128): the job's figures stay what they were, its charts
coarser.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			if listen != "" {
				cfg.Serve.Listen = listen
			}
			log, closeLog := newLogger(cfg.LogFile, os.Stderr, g.Level(), "component", "serve")
			defer closeLog()
			return runServe(cmd.Context(), cfg, log)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "TCP address (default from serve.listen)")
	return cmd
}

func runServe(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	isAdmin, err := store.Admins(cfg.AdminGroup, cfg.Serve.SlurmUser)
	if err != nil {
		// store.Admins's one policy: only root is an admin.
		log.Warn("serve: "+err.Error(), "admin_group", cfg.AdminGroup)
	}
	push := collect.PushUIDs(cfg.Serve.SlurmUser, log)
	db, err := store.Open(ctx, cfg.DB, store.Options{BusyTimeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	var metrics *collect.Metrics
	if cfg.Serve.MetricsListen != "" {
		metrics = collect.NewMetrics(nil)
		start := time.Now()
		if err := metrics.Load(ctx, db); err != nil {
			return err
		}
		log.Info("metrics totals loaded from the database", "took", time.Since(start).Round(time.Millisecond))
	}
	refusals := collect.NewServeRefusals(log)
	if metrics != nil {
		if err := metrics.Register(refusals.Collector()); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	own := slurmext.ClusterName(cfg.Cluster, "", cfg.SlurmConf)
	nodes := collect.NodeHosts(cfg.Serve.NodeHosts, own)
	log.Info("pushes bound to their sender: a profile is accepted for a node of this cluster whose name resolves here to "+
		"the address munge reports for the pushing host, or for the nodes serve.node_hosts lists for that host",
		"cluster", own, "node_hosts", len(nodes), "placement", cfg.Serve.Placement)
	srv := collect.NewServer(db, collect.MungeOf(cfg.Munge), collect.ServerOptions{
		PushUIDs: push, PushHosts: cfg.Serve.Nodes, NodeHosts: nodes, Cluster: own, IsAdmin: isAdmin, Metrics: metrics,
		Refusals: refusals, Limits: collect.LimitsOf(cfg.Serve),
		Placement: collect.Placement(cfg.Serve.Placement), HeldPerNode: cfg.Serve.HeldPerNode, HoldFor: cfg.Serve.HoldFor.D(),
	}, log)
	ln, err := net.Listen("tcp", cfg.Serve.Listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if metrics != nil {
		mln, err := metricsrv.Listen(cfg.Serve.MetricsListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("serve: %w", err)
		}
		go func() {
			if err := metrics.Serve(ctx, mln); err != nil {
				log.Error("metrics endpoint stopped", "err", err)
			}
		}()
		log.Info("metrics endpoint", "addr", mln.Addr().String())
	}
	go ingest.DrainEvery(ctx, db, spool.Dir{Path: cfg.SpoolDir}, 2*time.Second, ingest.Options{}, log)
	go collect.ThinEvery(ctx, db, collect.Thinning{Age: cfg.Serve.SeriesAge.D(), Points: cfg.Serve.SeriesPoints}, log)
	log.Info("collector listening", "addr", ln.Addr().String(), "push_uids", push)
	return srv.Serve(ctx, ln)
}
