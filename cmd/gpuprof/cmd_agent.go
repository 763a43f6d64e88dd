package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/agent"
	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/nvml"
	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/internal/conffile"
	"github.com/gpuprof/gpuprof/internal/metricsrv"
	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
	"github.com/gpuprof/gpuprof/store"
)

type agentOptions struct {
	GPU      string
	Interval time.Duration
	Socket   string
}

func (o *agentOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.GPU, "gpu", "", `GPU backend: "nvml" or "sim" (default from agent.gpu)`)
	fs.DurationVar(&o.Interval, "interval", 0, "sampling interval (default from agent.interval, 1s)")
	fs.StringVar(&o.Socket, "socket", "", "unix socket for the hooks (default from socket)")
}

func newAgentCommand(g *globalOptions) *cobra.Command {
	o := &agentOptions{}
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Node agent: sample GPUs and keep per-job profiles (runs as root)",
		Long: `Samples every GPU of this node on a fixed interval, attributes the readings to
Slurm jobs and keeps each job's profile in the node database. The prolog and
epilog talk to it over a unix socket. Runs in the foreground until SIGTERM;
restarting it resumes the profiles of running jobs.

--gpu sim runs on the simulated GPU node described by the [sim] section of
the configuration (see docs/sim-node.md).

With agent.metrics_listen set it also serves /metrics for Prometheus (see
docs/prometheus.md). With notices.enabled it mails a job's user about idle
and oversized GPUs while the job runs, and may cancel a wholly idle job
(see docs/notices.md).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, sum, err := g.LoadFile()
			if err != nil {
				return err
			}
			path, _ := g.ConfigFile()
			// The file's configuration, as a hook that reads it has it:
			// before this command's flags and runAgent's slurm.conf lookup.
			hooksFile := hooks.Forwarder{Config: cfg, ConfigPath: path, Sum: sum}
			if o.GPU != "" {
				cfg.Agent.GPU = o.GPU
			}
			if o.Interval > 0 {
				cfg.Agent.Interval = config.Duration(o.Interval)
			}
			if o.Socket != "" {
				cfg.Socket = o.Socket
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			log, closeLog := newLogger(cfg.LogFile, os.Stderr, g.Level(), "component", "agent")
			defer closeLog()
			err = runAgent(cmd.Context(), cfg, hooksFile, log)
			if err != nil {
				log.Error("agent stopped on error", "err", err)
			}
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runAgent(ctx context.Context, cfg config.Config, forwarded hooks.Forwarder, log *slog.Logger) error {
	// One P: the agent's goroutines (sampling, persisting, the sockets)
	// take turns and never need two cores, while handing work between
	// threads wakes parked ones (futex, a context switch) every tick: 26 %
	// of the agent's CPU on a busy node (docs/benchmarks.md). cgo calls
	// into SQLite or NVML still run on threads of their own. GOMAXPROCS
	// in the environment overrides this.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	sampler, err := openSampler(cfg, log)
	if err != nil {
		return err
	}
	sampler = gpu.WithTimeout(sampler, cfg.Agent.CallTimeout.D())
	defer sampler.Close()
	db, err := store.Open(ctx, cfg.DB, store.Options{BusyTimeout: 500 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	// The agent has no hook environment: it starts from the configuration,
	// slurm.conf and the host name, and takes slurmd's names from the
	// first hook that reaches it (Agent.learnNames).
	node := slurmext.NodeName(cfg.Node, "", os.Hostname)
	// On a configless node slurm.conf is slurmd's cached copy: say which
	// file is read.
	slurmConf, src := slurmext.FindSlurmConf(cfg.SlurmConf, slurmext.DefaultConfRoots())
	log.Info("slurm.conf", "file", slurmConf, "source", string(src))
	cfg.SlurmConf = slurmConf
	cluster := slurmext.ClusterName(cfg.Cluster, "", cfg.SlurmConf)
	var pusher agent.Pusher
	if cfg.Collector != "" {
		pusher = collect.Client{URL: cfg.Collector, Munge: collect.MungeOf(cfg.Munge)}
	}
	var metrics net.Listener
	if cfg.Agent.MetricsListen != "" {
		metrics, err = metricsrv.Listen(cfg.Agent.MetricsListen)
		if err != nil {
			return err
		}
		defer metrics.Close()
	}
	metricsToken, err := readMetricsToken(cfg.Agent.MetricsJobsTokenFile)
	if err != nil {
		return err
	}
	var notices *notice.Config
	if cfg.Notices.Enabled {
		conf, notUsed := jobsource.BindModel(cluster, cfg)
		if notUsed != "" {
			log.Warn("notices: " + notUsed)
		}
		notices, err = notice.FromConfig(cfg.Notices, cfg.Agent.Interval.D(), notice.ClusterGresOf(conf))
		if err != nil {
			return fmt.Errorf("%w: %v", config.ErrConfig, err)
		}
		notices.Cancel.Log = log
	}
	refusals := collect.NewQueryRefusals(log.With("query_socket", cfg.QuerySocket))
	a, err := agent.New(ctx, agent.Options{
		Cluster:          cluster,
		Node:             node,
		Socket:           cfg.Socket,
		Interval:         cfg.Agent.Interval.D(),
		FlushInterval:    cfg.Agent.FlushInterval.D(),
		SeriesPoints:     cfg.Agent.SeriesPoints,
		EnergyEvery:      cfg.Agent.EnergyEvery.D(),
		Procfs:           cfg.Proc.Procfs,
		CgroupRoot:       cfg.Proc.CgroupRoot,
		Collector:        pusher,
		Outbox:           pusher != nil,
		SlurmdSpoolDir:   slurmext.SlurmdSpoolDir(cfg.SlurmConf),
		MetricsListener:  metrics,
		MetricsJobsToken: metricsToken,
		Notices:          notices,
		Collectors:       []prometheus.Collector{refusals.Collector()},
		Retention: store.Retention{
			LocalAge:  cfg.Retention.LocalJobAge.D(),
			SeriesAge: cfg.Retention.SeriesAge.D(),
			JobAge:    cfg.Retention.DeliveredJobAge.D(),
			MaxSize:   int64(min(uint64(cfg.Retention.MaxSize), 1<<62)),
		},
		RetentionEvery: cfg.Retention.Every.D(),
		ConvertBelow:   int64(min(uint64(cfg.Retention.ConvertBelow), 1<<62)),
		Forwarded:      forwarded.Request,
	}, sampler, db, spool.Dir{Path: cfg.SpoolDir}, log)
	if err != nil {
		return err
	}
	stopQueries := startQueryServer(ctx, cfg, refusals, log)
	defer stopQueries()
	return a.Run(ctx)
}

// readMetricsToken reads agent.metrics_jobs_token_file: the scraper's
// bearer token for the per-job series ("" when unset: none served).
func readMetricsToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := conffile.Read(path, 4096)
	if err != nil {
		return "", fmt.Errorf("agent.metrics_jobs_token_file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < 16 || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("agent.metrics_jobs_token_file %s: the token must be one word of at least 16 characters", path)
	}
	return token, nil
}

// openSampler opens the agent's GPU backend: NVML for "nvml" (a missing
// library is a clear error that names the driver), the simulated node for
// "sim". The hooks take an inventory only (hookcmd.OpenInventory).
func openSampler(cfg config.Config, log *slog.Logger) (gpu.Sampler, error) {
	switch cfg.Agent.GPU {
	case "sim":
		return hookcmd.OpenSim(cfg, log)
	case "nvml":
		s, err := nvml.Open(cfg.NVML.Library, log)
		if err != nil {
			return nil, fmt.Errorf("NVML: %w (is the NVIDIA driver installed? for a simulated node use --gpu sim)", err)
		}
		return s, nil
	}
	return nil, errors.New("unknown GPU backend " + cfg.Agent.GPU)
}
