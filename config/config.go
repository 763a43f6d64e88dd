// Package config loads gpuprof's one configuration file (TOML) and applies
// defaults. It only describes settings; it must not open databases, sockets
// or GPUs.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// DefaultPath is where every command looks for the file when --config is
// not given and GPUPROF_CONFIG is unset.
const DefaultPath = "/etc/gpuprof/gpuprof.toml"

// ErrConfig marks an invalid configuration file.
var ErrConfig = errors.New("invalid configuration")

// Config is the whole file. Field comments are the documentation; see
// docs/configuration.md for an annotated example.
type Config struct {
	// Cluster names the cluster; empty means the name Slurm gives the hook
	// (SLURM_CLUSTER_NAME, jobcomp's CLUSTER), else slurm_conf's
	// ClusterName, else "default" (slurmext.ClusterName, for every writer).
	Cluster string `toml:"cluster"`
	// Node names this host; empty means SLURMD_NODENAME from the hook
	// environment, else the short host name (slurmext.NodeName). The agent,
	// which has no hook environment, takes slurmd's name from the hooks.
	Node string `toml:"node"`
	// DB is the node-local SQLite database.
	DB string `toml:"db"`
	// SpoolDir holds records that could not be written to DB in time
	// (database locked); the agent ingests them later.
	SpoolDir string `toml:"spool_dir"`
	// Socket is the agent's unix socket for the hooks (mode 0600: root
	// only).
	Socket string `toml:"socket"`
	// QuerySocket is the agent's second unix socket, which anyone may
	// connect to (mode 0666): users who cannot open DB (everyone but root
	// and admin_group, whose members need the file's group) run jobs, show,
	// tui, report and the analysis commands through it, and the agent
	// answers each with the caller's own jobs only, the caller named by the
	// kernel (SO_PEERCRED). Users' commands look here by themselves; empty
	// turns the socket off.
	QuerySocket string `toml:"query_socket"`
	// Collector is the URL of `gpuprof serve` on the central host
	// (multi-node mode); empty means single-host mode: everything stays in
	// DB.
	Collector string `toml:"collector"`
	// LogFile receives hook and agent log lines; "syslog" sends them to the
	// local syslog; empty means stderr for the agent and syslog for hooks.
	// Hooks that can write neither log_file nor syslog append to
	// spool_dir/hooks.log; the agent creates log_file's directory.
	LogFile string `toml:"log_file"`

	// AdminGroup is the Unix group whose members see every user's jobs
	// (root always does); everyone else sees only their own.
	AdminGroup string `toml:"admin_group"`
	// SlurmConf is read for ClusterName when neither cluster nor the hook
	// environment names the cluster (and for SlurmdSpoolDir and the nodes'
	// Gres).
	SlurmConf string `toml:"slurm_conf"`

	Agent   AgentConfig   `toml:"agent"`
	Hooks   HookConfig    `toml:"hooks"`
	JobComp JobCompConfig `toml:"jobcomp"`
	Import  ImportConfig  `toml:"import"`
	Serve   ServeConfig   `toml:"serve"`
	Munge   MungeConfig   `toml:"munge"`
	Sim     SimConfig     `toml:"sim"`
	NVML    NVMLConfig    `toml:"nvml"`
	Proc    ProcConfig    `toml:"proc"`
}

// AgentConfig configures `gpuprof agent`.
type AgentConfig struct {
	// GPU selects the backend: "nvml" (real GPUs) or "sim".
	GPU string `toml:"gpu"`
	// Interval between samples.
	Interval Duration `toml:"interval"`
	// FlushInterval between writes of running profiles to the database (the
	// most an agent crash can lose).
	FlushInterval Duration `toml:"flush_interval"`
	// SeriesPoints bounds each GPU's time series.
	SeriesPoints int `toml:"series_points"`
	// CallTimeout bounds every GPU backend call (a hung driver).
	CallTimeout Duration `toml:"call_timeout"`
	// MetricsListen is where the agent serves /metrics for Prometheus
	// (docs/prometheus.md): a TCP address such as "127.0.0.1:9842", or
	// "unix:" and a socket path such as "unix:/run/gpuprof/metrics.sock".
	// Empty (the default) turns the endpoint off.
	MetricsListen string `toml:"metrics_listen"`
}

// HookConfig configures `gpuprof prolog` and `gpuprof epilog`.
type HookConfig struct {
	// Deadline after which a hook gives up and exits 0, whatever it was
	// doing.
	Deadline Duration `toml:"deadline"`
	// AutostartAgent makes the prolog start the agent (detached, setsid)
	// when it is not reachable.
	AutostartAgent bool `toml:"autostart_agent"`
	// AgentCommand is the command line the prolog starts; empty means this
	// binary with "agent --config <file>".
	AgentCommand []string `toml:"agent_command"`
	// GresConf is the gres.conf used to map Slurm GPU indices to device
	// files; empty means gres.conf beside SLURM_CONF.
	GresConf string `toml:"gres_conf"`
}

// JobCompConfig configures `gpuprof jobcomp` (slurmctld's jobcomp/script).
type JobCompConfig struct {
	// Deadline after which jobcomp exits 0 whatever it was doing: slurmctld
	// runs jobcomp scripts one at a time and waits for each.
	Deadline Duration `toml:"deadline"`
}

// ImportConfig configures `gpuprof import sacct`.
type ImportConfig struct {
	// Sacct is the sacct program.
	Sacct string `toml:"sacct"`
}

// ServeConfig configures `gpuprof serve`, the central collector.
type ServeConfig struct {
	// Listen is the TCP address to serve on.
	Listen string `toml:"listen"`
	// SlurmUser may push profiles besides root.
	SlurmUser string `toml:"slurm_user"`
	// Nodes, when not empty, are the only hosts (addresses as munge reports
	// them) whose pushes are accepted.
	Nodes []string `toml:"nodes"`
	// MetricsListen is where serve answers /metrics for Prometheus
	// (docs/prometheus.md), in the form of agent.metrics_listen. Empty (the
	// default) turns the endpoint off.
	MetricsListen string `toml:"metrics_listen"`
}

// MungeConfig locates munge, which authenticates nodes and users.
type MungeConfig struct {
	Munge   string `toml:"munge"`
	Unmunge string `toml:"unmunge"`
	// Socket of munged; empty means munge's default.
	Socket string `toml:"socket"`
}

// SimConfig shapes the simulated GPU node (`agent --gpu sim`, `simgpu`).
type SimConfig struct {
	// Dir holds the simulated node's state shared by the agent and the
	// simulated CUDA programs (`simgpu burn`).
	Dir string `toml:"dir"`
	// GPUs is the number of simulated GPUs.
	GPUs int `toml:"gpus"`
	// Model is the GPU name NVML would report.
	Model string `toml:"model"`
	// Memory per GPU, e.g. "80GiB".
	Memory Bytes `toml:"memory"`
	// Minors are the /dev/nvidiaN minor numbers in device (PCI) order;
	// empty means 0..GPUs-1.
	Minors []int `toml:"minors"`
}

// NVMLConfig configures the real GPU backend.
type NVMLConfig struct {
	// Library is the path of libnvidia-ml.so.1; empty means the loader's
	// default search.
	Library string `toml:"library"`
}

// ProcConfig names filesystem roots, so tests can use fixture trees.
type ProcConfig struct {
	Procfs     string `toml:"procfs"`
	CgroupRoot string `toml:"cgroup_root"`
}

// Default returns the configuration used when no file exists.
func Default() Config {
	return Config{
		DB:       "/var/lib/gpuprof/gpuprof.db",
		SpoolDir: "/var/lib/gpuprof/spool",
		Socket:   "/run/gpuprof/agent.sock",
		// Beside the hooks' socket: the agent creates /run/gpuprof 0755.
		QuerySocket: "/run/gpuprof/query.sock",
		Agent: AgentConfig{
			GPU:           "nvml",
			Interval:      Duration(time.Second),
			FlushInterval: Duration(10 * time.Second),
			SeriesPoints:  1024,
			CallTimeout:   Duration(2 * time.Second),
		},
		SlurmConf: "/etc/slurm/slurm.conf",
		Hooks:     HookConfig{Deadline: Duration(2 * time.Second)},
		JobComp:   JobCompConfig{Deadline: Duration(time.Second)},
		Import:    ImportConfig{Sacct: "/usr/bin/sacct"},
		Serve:     ServeConfig{Listen: "127.0.0.1:8642", SlurmUser: "slurm"},
		Munge:     MungeConfig{Munge: "/usr/bin/munge", Unmunge: "/usr/bin/unmunge"},
		Sim: SimConfig{
			Dir:    "/run/gpuprof/sim",
			GPUs:   4,
			Model:  "NVIDIA H100 80GB HBM3",
			Memory: Bytes(80 << 30),
		},
		Proc: ProcConfig{Procfs: "/proc", CgroupRoot: "/sys/fs/cgroup"},
	}
}

// Load reads path over the defaults. A missing file at the default path is
// not an error (defaults apply); a missing file that was asked for is.
func Load(path string, explicit bool) (Config, error) {
	c := Default()
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return c, nil
		}
		return c, fmt.Errorf("read config: %w", err)
	}
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return c, fmt.Errorf("%w: %s: unknown key %q", ErrConfig, path, undec[0].String())
	}
	return c, c.Validate()
}

// Validate checks values that would make a command misbehave.
func (c Config) Validate() error {
	switch {
	case c.Agent.GPU != "nvml" && c.Agent.GPU != "sim":
		return fmt.Errorf("%w: agent.gpu must be \"nvml\" or \"sim\", not %q", ErrConfig, c.Agent.GPU)
	case c.Agent.Interval.D() < 10*time.Millisecond:
		return fmt.Errorf("%w: agent.interval %s is below 10ms", ErrConfig, c.Agent.Interval.D())
	case c.Agent.FlushInterval.D() <= 0:
		return fmt.Errorf("%w: agent.flush_interval must be positive", ErrConfig)
	case c.Agent.CallTimeout.D() <= 0:
		// A zero timer fires at once: every GPU call would time out.
		return fmt.Errorf("%w: agent.call_timeout must be positive", ErrConfig)
	case validListen(c.Agent.MetricsListen) != nil:
		return fmt.Errorf("%w: agent.metrics_listen: %v", ErrConfig, validListen(c.Agent.MetricsListen))
	case validListen(c.Serve.MetricsListen) != nil:
		return fmt.Errorf("%w: serve.metrics_listen: %v", ErrConfig, validListen(c.Serve.MetricsListen))
	case c.Agent.SeriesPoints < 16:
		return fmt.Errorf("%w: agent.series_points must be at least 16", ErrConfig)
	case c.Hooks.Deadline.D() <= 0 || c.Hooks.Deadline.D() > time.Minute:
		return fmt.Errorf("%w: hooks.deadline must be in (0, 1m]", ErrConfig)
	case c.JobComp.Deadline.D() <= 0 || c.JobComp.Deadline.D() > time.Minute:
		return fmt.Errorf("%w: jobcomp.deadline must be in (0, 1m]", ErrConfig)
	case c.Sim.GPUs < 1 || c.Sim.GPUs > 64:
		return fmt.Errorf("%w: sim.gpus must be 1..64", ErrConfig)
	case len(c.Sim.Minors) > 0 && len(c.Sim.Minors) != c.Sim.GPUs:
		return fmt.Errorf("%w: sim.minors has %d entries for %d GPUs", ErrConfig, len(c.Sim.Minors), c.Sim.GPUs)
	case c.DB == "":
		return fmt.Errorf("%w: db must be set", ErrConfig)
	}
	return nil
}

// validListen checks a listen address of the form agent.metrics_listen
// takes: empty, "unix:" and an absolute path, or host:port with a numeric
// port (the host may be empty for every address).
func validListen(addr string) error {
	if addr == "" {
		return nil
	}
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if !filepath.IsAbs(path) {
			return fmt.Errorf("%q: a unix socket needs an absolute path", addr)
		}
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port or unix:/path: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number in 0..65535", addr, port)
	}
	return nil
}
