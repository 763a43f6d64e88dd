// Package hookcmd wires the Slurm hooks (hooks.Run) to a binary: the
// global flags and the configuration they name, the GPU backend, and the
// gpuprof binary that the prolog starts as the agent and jobcomp as the
// AdminComment writer. gpuprof's prolog, epilog and jobcomp commands and
// gpuprof-hook-full, the whole hooks alone, both run their hooks through
// Runtime, so the two run the same hook.
//
// It must not link cobra, plotting, Prometheus, the TUI or gpuprof's
// analyses (internal/archtest's TestHookPathIsSmall), nor NVML or anything
// else that needs cgo (TestHookBinaryWithoutCgo): gpuprof-hook-full links it,
// and a hook pays for every initialiser its binary links and, when cgo is
// in, for the dynamic loader (issue #41).
package hookcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/cmd/internal/hookbin"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/gpu/nvproc"
	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/hooks"
	"github.com/gpuprof/gpuprof/jobend/commentqueue"
)

// Options are the flags every gpuprof command takes, gpuprof-hook-full's too.
type Options struct {
	ConfigPath string
	DB         string
	LogLevel   string
}

// AddFlags adds --config, --db and --log-level to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigPath, "config", "", "configuration file (default $GPUPROF_CONFIG, else "+config.DefaultPath+")")
	fs.StringVar(&o.DB, "db", "", "database path (overrides the configuration)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// ConfigFile returns the file to read and whether it was asked for.
func (o *Options) ConfigFile() (string, bool) {
	return hookbin.ConfigFile(o.ConfigPath, os.Getenv, config.DefaultPath)
}

// Load reads the configuration, with --db over its database.
func (o *Options) Load() (config.Config, error) {
	c, _, err := o.LoadFile()
	return c, err
}

// LoadFile is Load with the fingerprint of the file's bytes
// (config.LoadFile).
func (o *Options) LoadFile() (config.Config, string, error) {
	path, explicit := o.ConfigFile()
	c, sum, err := config.LoadFile(path, explicit)
	if err != nil {
		return c, sum, err
	}
	if o.DB != "" {
		c.DB = o.DB
	}
	return c, sum, nil
}

// Level is --log-level's level; info when it names none (hooks.ParseLevel).
func (o *Options) Level() slog.Level {
	return hooks.ParseLevel(o.LogLevel)
}

// Runtime wires a hook run in process p to the options: their
// configuration, the GPU backend, and gpuprof, the path of the gpuprof
// binary the prolog starts as the agent and jobcomp as the AdminComment
// writer ("" when unknown: neither is started).
func Runtime(o *Options, p hooks.Process, gpuprof string) hooks.Runtime {
	path, _ := o.ConfigFile()
	return hooks.Runtime{
		Load:          o.Load,
		DB:            o.DB,
		Level:         o.Level(),
		Process:       p,
		ConfigPath:    path,
		Self:          gpuprof,
		OpenInventory: OpenInventory,
		Before:        fault(),
		AdminComment: func(cfg config.Config, cluster, jobID string) error {
			return StartAdminComment(o, cfg, cluster, jobID, gpuprof)
		},
	}
}

// OpenInventory opens the GPU inventory of the configured backend for a
// hook whose agent does not answer: the simulated node for "sim", the
// driver's /proc files (gpu/nvproc, under proc.procfs) for "nvml". A hook
// names the job's GPUs from it and reads nothing else, so it needs no NVML:
// gpuprof-hook-full is a static binary without cgo, and the gpuprof binary's
// hooks take the same inventory, so both record the same. What /proc does
// not say (the memory size, MIG instances) the agent fills when it takes
// the spooled record (docs/architecture.md).
func OpenInventory(_ context.Context, cfg config.Config, log *slog.Logger) (gpu.Inventory, error) {
	switch cfg.Agent.GPU {
	case "sim":
		return OpenSim(cfg, log)
	case "nvml":
		n, err := nvproc.Open(cfg.Proc.Procfs)
		if err != nil {
			return nil, fmt.Errorf("GPU inventory: %w (for a simulated node use --gpu sim)", err)
		}
		return n, nil
	}
	return nil, errors.New("unknown GPU backend " + cfg.Agent.GPU)
}

// OpenSim opens the simulated GPU node the configuration describes,
// creating it on first use; the agent's backend and the hooks' inventory
// for the "sim" backend.
func OpenSim(cfg config.Config, log *slog.Logger) (gpu.Sampler, error) {
	if _, err := sim.Init(cfg.Sim.Dir, SimSpec(cfg)); err != nil {
		return nil, fmt.Errorf("simulated GPU node: %w", err)
	}
	n, err := sim.Open(cfg.Sim.Dir, sim.WithProcfs(cfg.Proc.Procfs),
		sim.WithScanCache(min(cfg.Agent.Interval.D()/2, 500*time.Millisecond)))
	if err != nil {
		return nil, fmt.Errorf("simulated GPU node: %w", err)
	}
	if cfg.Sim.RealCost {
		// Benchmarks: each reading costs what NVML's calls do on an H200.
		log.Info("simulated GPU node charged a real driver's cost per call (sim.real_cost)")
		return sim.Charge(n, sim.H200Cost), nil
	}
	return n, nil
}

// SimSpec is the simulated node the configuration describes.
func SimSpec(cfg config.Config) sim.NodeSpec {
	return sim.NodeSpec{GPUs: cfg.Sim.GPUs, Model: cfg.Sim.Model, MemoryTotal: uint64(cfg.Sim.Memory), Minors: cfg.Sim.Minors}
}

// AdminCommentQueue is the queue of jobs whose AdminComment is to be
// written: spool_dir/admincomment.
func AdminCommentQueue(cfg config.Config) commentqueue.Queue {
	return commentqueue.Queue{Dir: filepath.Join(cfg.SpoolDir, "admincomment")}
}

// StartAdminComment queues job id for its AdminComment when
// jobcomp.admin_comment is on and, unless a drainer runs, starts
// `gpuprof admincomment --drain` (gpuprof the main binary's path) detached
// (its own session, no pipe shared with slurmctld) without waiting for it:
// jobcomp runs one job at a time, and the summary waits for the nodes'
// epilogs.
func StartAdminComment(o *Options, cfg config.Config, cluster, jobID, gpuprof string) error {
	if !cfg.JobComp.AdminComment {
		return nil
	}
	q := AdminCommentQueue(cfg)
	if err := q.Add(cluster, jobID); err != nil {
		return err
	}
	if q.Draining() {
		return nil
	}
	if gpuprof == "" {
		return errors.New("the gpuprof binary is not found")
	}
	args := []string{"admincomment", "--drain"}
	if p, explicit := o.ConfigFile(); explicit {
		args = append(args, "--config", p)
	}
	if o.DB != "" {
		args = append(args, "--db", o.DB)
	}
	cmd := exec.Command(gpuprof, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// No stdin, stdout or stderr: the jobcomp wrapper reads its own
	// pipe to the end, which a child holding it would keep open.
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
