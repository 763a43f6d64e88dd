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

	"github.com/gpuprof/gpuprof/internal/conffile"
	"github.com/gpuprof/gpuprof/slurmext"
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
	// SubuidFile is subuid(5), the subordinate uids each user owns: the
	// query socket's shares are per person, a user's subordinate uids
	// counting as that user (collect.Persons). Empty: per uid.
	SubuidFile string `toml:"subuid_file"`
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
	// (root and Serve.SlurmUser always do: store.Admins); everyone else
	// sees only their own.
	AdminGroup string `toml:"admin_group"`
	// SlurmConf is read for ClusterName when neither cluster nor the hook
	// environment names the cluster (and for SlurmdSpoolDir and the nodes'
	// Gres). The analysis uses it for a cluster's jobs only when its
	// ClusterName is that cluster's (docs/configuration.md, "Which
	// slurm.conf describes a cluster").
	SlurmConf string `toml:"slurm_conf"`
	// SlurmSource is where the analysis takes a cluster's nodes,
	// partitions and scheduler settings from: "files" (slurm.conf and
	// gres.conf, the default), "scontrol" (this host's slurmctld, asked
	// with scontrol, when its ClusterName is the answer's cluster; else
	// the files, with a line that says why) or "auto" (as "scontrol", but
	// a host without scontrol uses the files without a word). The two are never merged (docs/configuration.md, "The
	// live cluster as a source").
	SlurmSource string `toml:"slurm_source"`
	// Clusters are per-cluster settings by cluster name ([clusters.NAME]):
	// the Slurm configuration that describes that cluster's jobs in the
	// analysis, in place of slurm_conf.
	Clusters map[string]ClusterConfig `toml:"clusters"`

	Agent   AgentConfig   `toml:"agent"`
	Hooks   HookConfig    `toml:"hooks"`
	JobComp JobCompConfig `toml:"jobcomp"`
	// MailProg configures Slurm's MailProg wrapper.
	MailProg MailProgConfig `toml:"mail_prog"`
	Import   ImportConfig   `toml:"import"`
	Serve    ServeConfig    `toml:"serve"`
	Munge    MungeConfig    `toml:"munge"`
	Sim      SimConfig      `toml:"sim"`
	NVML     NVMLConfig     `toml:"nvml"`
	Proc     ProcConfig     `toml:"proc"`
	Notices  NoticesConfig  `toml:"notices"`
	Carbon   CarbonConfig   `toml:"carbon"`
	// Retention bounds the node database (the agent prunes it).
	Retention RetentionConfig `toml:"retention"`
}

// RetentionConfig is what the agent keeps in the node database
// (store.Retention; docs/configuration.md, "Retention", says the disk
// each default costs). A job is pruned only once finished and, on a node
// with a collector, delivered (out of the outbox); on a single-host node
// only after local_job_age, which is off by default (the node database is
// the only copy there).
type RetentionConfig struct {
	// SeriesAge: a delivered job's series is removed this long after its
	// end, its summary kept; 0 keeps series.
	SeriesAge Duration `toml:"series_age"`
	// DeliveredJobAge: a delivered job is removed whole this long after
	// its end; 0 keeps jobs.
	DeliveredJobAge Duration `toml:"delivered_job_age"`
	// LocalJobAge: on a node without a collector, a finished job is
	// prunable (by the two ages above and max_size) this long after its
	// end; 0 (the default) never.
	LocalJobAge Duration `toml:"local_job_age"`
	// MaxSize: while the database's pages in use pass it, the oldest
	// prunable jobs lose their series, then are removed; 0: no bound.
	MaxSize Bytes `toml:"max_size"`
	// Every is how often the agent prunes (and once at start); 0 turns
	// pruning off.
	Every Duration `toml:"every"`
	// ConvertBelow: a database made before incremental vacuum (gpuprof
	// before issue #42) is converted by a VACUUM at the agent's start when
	// its file is smaller than this; a larger one keeps its size, its
	// free pages reused. 0: never.
	ConvertBelow Bytes `toml:"convert_below"`
}

// CarbonConfig is the emission factor of the electricity the GPUs drew:
// with one, CO2e stands beside kWh in show, the report and JSON; without
// one (the default) it is absent, never a guessed factor.
type CarbonConfig struct {
	// Factor is a fixed emission factor in gCO2e per kWh; 0: none.
	Factor float64 `toml:"factor"`
	// FactorsCSV is a file of hourly factors (analysis.ParseCarbonCSV):
	// "hour,gco2e_per_kwh" lines, each hour the RFC 3339 time of its start.
	// Energy drawn in an hour the file does not list takes Factor, and
	// without one has no CO2e.
	FactorsCSV string `toml:"factors_csv"`
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
	// EnergyEvery is how often a GPU's energy counter is read between a
	// job's start and end, which always read it (agent.Options.EnergyEvery):
	// each read costs ~4 ms of CPU on a real driver, and power is
	// integrated in between. Below Interval: with every sample, as
	// the agent did before issue #28.
	EnergyEvery Duration `toml:"energy_every"`
	// MetricsListen is where the agent serves /metrics for Prometheus
	// (docs/prometheus.md): a TCP address such as "127.0.0.1:9842", or
	// "unix:" and a socket path such as "unix:/run/gpuprof/metrics.sock".
	// Empty (the default) turns the endpoint off.
	MetricsListen string `toml:"metrics_listen"`
	// MetricsJobsTokenFile names a file holding the bearer token of the
	// scraper allowed the per-job series (job id, user, account and each
	// job's use: docs/prometheus.md). Empty (the default): the endpoint
	// serves the node-level series only, to anyone who can reach it.
	MetricsJobsTokenFile string `toml:"metrics_jobs_token_file"`
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

// ClusterConfig is one [clusters.NAME] section: the files that describe
// the cluster NAME's jobs to the analysis (profiles, recommend, plan,
// whatif, report, the TUI summary).
type ClusterConfig struct {
	// SlurmConf is the cluster's slurm.conf (its nodes, partitions and
	// scheduler settings); used only when its ClusterName is NAME (or it
	// names none). Empty: slurm_conf, under the same condition.
	SlurmConf string `toml:"slurm_conf"`
	// GresConf is the cluster's gres.conf, read for the GPU types of the
	// nodes whose Gres= in slurm.conf names none; used only together with
	// a slurm.conf that is used. Empty: gres.conf beside that slurm.conf.
	GresConf string `toml:"gres_conf"`
}

// JobCompConfig configures `gpuprof jobcomp` (slurmctld's jobcomp/script).
type JobCompConfig struct {
	// Deadline after which jobcomp exits 0 whatever it was doing: slurmctld
	// runs jobcomp scripts one at a time and waits for each.
	Deadline Duration `toml:"deadline"`
	// AdminComment, when true, has jobcomp start (detached, so that
	// slurmctld does not wait) `gpuprof admincomment` for every job: it
	// waits up to AdminCommentWait for the nodes to close the job's
	// profile, then writes the job's GPU summary as its AdminComment in
	// Slurm's accounting (sacctmgr), unless another tool wrote one.
	// Off by default.
	AdminComment bool `toml:"admin_comment"`
	// AdminCommentWait bounds that wait and the sacct and sacctmgr runs
	// after it.
	AdminCommentWait Duration `toml:"admin_comment_wait"`
	// Sacctmgr is the sacctmgr program.
	Sacctmgr string `toml:"sacctmgr"`
}

// MailProgConfig configures `gpuprof mailprog`, Slurm's MailProg
// (contrib/slurm/mailprog.sh).
type MailProgConfig struct {
	// Mailer is the site's mailer, which gets every mail with Slurm's own
	// arguments (default /usr/bin/mail, Slurm's default MailProg).
	Mailer string `toml:"mailer"`
	// Deadline bounds the summary: past it the mail goes out unchanged.
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
	// SlurmUser may push profiles besides root, and reads every job
	// (store.Admins): it runs MailProg and jobcomp.
	SlurmUser string `toml:"slurm_user"`
	// Nodes, when not empty, are the only hosts (addresses as munge reports
	// them) whose pushes are accepted.
	Nodes []string `toml:"nodes"`
	// NodeHosts overrides, for the hosts it lists, the rule that binds a
	// push to the node that sent it. By default serve accepts a profile
	// only for a node of its own cluster (cluster, else slurm_conf's
	// ClusterName) whose name resolves, on the collector host (/etc/hosts,
	// DNS), to the address munge reports for the credential's host
	// (ENCODE_HOST). A key here is such an address, its value the Slurm
	// nodes that host runs, "gpu01" for a node of this cluster or
	// "other/gpu01" for one of another cluster (SplitNode): a listed host
	// pushes profiles of exactly those nodes (list all of them); hosts not
	// listed stay under the default rule. For nodes whose names do not
	// resolve to the address munge reports: NAT, several slurmd on one
	// host, simulated nodes, other clusters.
	NodeHosts map[string][]string `toml:"node_hosts"`
	// ConnsPerHost is how many connections one host may hold open at
	// once; a host at that share that opens another loses its oldest idle
	// one. Users behind one login node or NAT share their host's.
	ConnsPerHost int `toml:"conns_per_host"`
	// FailuresPerSecond and FailureBurst are each source's budget of
	// failed requests (answered 4xx but 409): a remote host, or a uid on
	// the collector's own host, may fail FailureBurst requests at once and
	// FailuresPerSecond a second after that; beyond, serve stops reading
	// its connections and refuses what it already read with 429 before
	// decoding a credential (docs/security.md). Honest nodes and users
	// fail almost never and are not slowed.
	FailuresPerSecond int `toml:"failures_per_second"`
	FailureBurst      int `toml:"failure_burst"`
	// MaxConns is how many connections serve holds open at once; more
	// wait in the kernel's listen backlog.
	MaxConns int `toml:"max_conns"`
	// Users' queries and nodes' pushes are admitted in lanes of their own
	// (neither takes the other's slots): MaxQueries queries are answered
	// at once, QueriesPerUser of one user's, QueryDecodes queries'
	// credentials decoded at once; PushDecodes pushes' credentials are
	// decoded at once, MaxUploads pushes' bodies read at once,
	// UploadsPerHost of one node's. One host takes at most a quarter of
	// each lane's decodes. A request that waits QueueWait for its slot is
	// answered 503 with Retry-After (a node keeps its profile and pushes it
	// again).
	MaxQueries     int      `toml:"max_queries"`
	QueriesPerUser int      `toml:"queries_per_user"`
	QueryDecodes   int      `toml:"query_decodes"`
	PushDecodes    int      `toml:"push_decodes"`
	MaxUploads     int      `toml:"max_uploads"`
	UploadsPerHost int      `toml:"uploads_per_host"`
	QueueWait      Duration `toml:"queue_wait"`
	// Placement decides when a pushed profile's job counts as its node's:
	// "slurm" (the default) once Slurm's records in the collector's
	// database (jobcomp's reports, sacct imports) place the job on that
	// node, the profile held until then; "sender" at once, on the word of
	// the authenticated node, for a collector that gets no jobcomp
	// records nor sacct imports (docs/security.md).
	Placement string `toml:"placement"`
	// HeldPerNode bounds the profiles held for one node while they wait
	// for Slurm's records; HoldFor how long each is held (the node keeps
	// it and pushes it again either way).
	HeldPerNode int      `toml:"held_per_node"`
	HoldFor     Duration `toml:"hold_for"`
	// MetricsListen is where serve answers /metrics for Prometheus
	// (docs/prometheus.md), in the form of agent.metrics_listen. Empty (the
	// default) turns the endpoint off.
	MetricsListen string `toml:"metrics_listen"`
	// SeriesAge is how long a finished profile's series is kept as the
	// node recorded it (up to agent.series_points points per GPU); after
	// that serve thins it to SeriesPoints, every figure of the job
	// unchanged. Zero keeps every series as recorded.
	SeriesAge Duration `toml:"series_age"`
	// SeriesPoints is the bound SeriesAge thins old series to, per GPU.
	SeriesPoints int `toml:"series_points"`
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
	// RealCost charges each reading the agent takes of the simulated node
	// the CPU its NVML calls cost on a real H200 (sim.Charged: the energy
	// counter 4 ms, GPM 56 µs, the rest ≤ 12 µs), and gives the node an
	// energy counter: for benchmarks of the agent's cost without a GPU.
	RealCost bool `toml:"real_cost"`
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

// NoticesConfig configures the agent's notices to a job's user about idle
// and oversized GPU allocations while the job runs, and the optional cancel
// action (docs/notices.md). Everything is off until enabled is true.
type NoticesConfig struct {
	// Enabled turns notices on for this node's agent.
	Enabled bool `toml:"enabled"`
	// From is the From header of every notice.
	From string `toml:"from"`
	// Address is the recipient pattern: "{user}" stands for the job's user
	// name. AddressMap, when set, is a file of "user address" lines that
	// wins over the pattern for the users it lists; a user neither names
	// gets no mail (status no_mail). Address may be empty when AddressMap
	// is set.
	Address    string `toml:"address"`
	AddressMap string `toml:"address_map"`
	// Sendmail is the sendmail-compatible program (like Slurm's MailProg),
	// run as `sendmail -i -- ADDRESS` with the message on stdin and killed
	// after SendTimeout.
	Sendmail    string   `toml:"sendmail"`
	SendTimeout Duration `toml:"send_timeout"`
	// Squeue looks up the job's name and QOS, which slurmd's prolog never
	// tells (`squeue -h -j ID -o %q|%j`, bounded by SendTimeout).
	Squeue string `toml:"squeue"`
	// DailyCap is the most notices a user is sent per calendar day (local
	// time) from this node (the cap is per node: each agent counts its own
	// database); 0 means no cap. Notices over it are recorded as capped.
	DailyCap int `toml:"daily_cap"`
	// OptOutFile lists users (one per line, # comments) who get no notice;
	// HomeOptOut is a file name in the user's home directory whose presence
	// does the same (stat with HomeTimeout: homes may be on NFS). Either
	// empty is off.
	OptOutFile  string   `toml:"opt_out_file"`
	HomeOptOut  string   `toml:"home_opt_out"`
	HomeTimeout Duration `toml:"home_timeout"`
	// Jobs in these partitions, QOS, accounts or of these users are never
	// noticed (nor cancelled).
	ExemptPartitions []string `toml:"exempt_partitions"`
	ExemptQOS        []string `toml:"exempt_qos"`
	ExemptAccounts   []string `toml:"exempt_accounts"`
	ExemptUsers      []string `toml:"exempt_users"`
	// Queue bounds the notices waiting for delivery; a full queue delays a
	// notice to a later sample, never the sampling.
	Queue int `toml:"queue"`

	// The rules: (a) an idle GPU, (b) every GPU of the job idle, (d)
	// several GPUs asked for and one used, (c) a small share of a large
	// card.
	IdleGPU    IdleRule      `toml:"idle_gpu"`
	IdleJob    IdleRule      `toml:"idle_job"`
	UnusedGPUs IdleRule      `toml:"unused_gpus"`
	Oversized  OversizedRule `toml:"oversized"`
	Cancel     CancelConfig  `toml:"cancel"`
}

// IdleRule is a rule over idle readings: a reading is idle when its
// utilisation is below UtilBelow percent and either no process of the job
// is on the GPU or its memory is below MemoryBelow; the rule fires when
// the readings were idle for at least Window without a break.
type IdleRule struct {
	Enabled     bool     `toml:"enabled"`
	Window      Duration `toml:"window"`
	UtilBelow   float64  `toml:"util_below"`
	MemoryBelow Bytes    `toml:"memory_below"`
}

// OversizedRule is rule (c): a single-GPU job that for at least Window
// used below UtilBelow percent on average and whose memory peak (times
// the analysis' sharing margin) fits MemoryShare of its card as a shard,
// or a smaller GPU type of GPUTypes.
type OversizedRule struct {
	Enabled     bool     `toml:"enabled"`
	Window      Duration `toml:"window"`
	UtilBelow   float64  `toml:"util_below"`
	MemoryShare float64  `toml:"memory_share"`
	// Shards says whether the cluster offers gres/shard: "auto" reads
	// slurm_conf's NodeName lines, "yes" or "no" decide.
	Shards string `toml:"shards"`
	// GPUTypes are the cluster's GPU types (gres type names, as users
	// write --gres=gpu:TYPE:1) with their memory, for "a smaller type
	// would do".
	GPUTypes map[string]Bytes `toml:"gpu_types"`
}

// CancelConfig is the optional action on rule (b): after the idle-job
// notice and Grace more of idleness, a second notice, then `scancel
// --signal=Signal JOBID`, Wait, and `scancel JOBID`. Only jobs in
// Partitions, never exempt ones; DryRun records what would be done.
type CancelConfig struct {
	Enabled    bool     `toml:"enabled"`
	Partitions []string `toml:"partitions"`
	Grace      Duration `toml:"grace"`
	Signal     string   `toml:"signal"`
	Wait       Duration `toml:"wait"`
	Scancel    string   `toml:"scancel"`
	Timeout    Duration `toml:"timeout"`
	DryRun     bool     `toml:"dry_run"`
}

// Default returns the configuration used when no file exists.
func Default() Config {
	return Config{
		DB:       "/var/lib/gpuprof/gpuprof.db",
		SpoolDir: "/var/lib/gpuprof/spool",
		Socket:   "/run/gpuprof/agent.sock",
		// Beside the hooks' socket: the agent creates /run/gpuprof 0755.
		QuerySocket: "/run/gpuprof/query.sock",
		SubuidFile:  "/etc/subuid",
		Agent: AgentConfig{
			GPU:           "nvml",
			Interval:      Duration(time.Second),
			FlushInterval: Duration(10 * time.Second),
			SeriesPoints:  1024,
			CallTimeout:   Duration(2 * time.Second),
			EnergyEvery:   Duration(time.Minute),
		},
		SlurmConf:   "/etc/slurm/slurm.conf",
		SlurmSource: "files",
		Hooks:       HookConfig{Deadline: Duration(2 * time.Second)},
		JobComp: JobCompConfig{Deadline: Duration(time.Second), AdminCommentWait: Duration(45 * time.Second),
			Sacctmgr: "/usr/bin/sacctmgr"},
		MailProg: MailProgConfig{Mailer: "/usr/bin/mail", Deadline: Duration(5 * time.Second)},
		Import:   ImportConfig{Sacct: "/usr/bin/sacct"},
		Serve: ServeConfig{Listen: "127.0.0.1:8642", SlurmUser: "slurm", ConnsPerHost: 1024, MaxConns: 4096,
			FailuresPerSecond: 10, FailureBurst: 100,
			MaxQueries: 8, QueriesPerUser: 2, QueryDecodes: 8, PushDecodes: 8, MaxUploads: 4, UploadsPerHost: 1, QueueWait: Duration(5 * time.Second),
			SeriesAge: Duration(30 * 24 * time.Hour), SeriesPoints: 128,
			Placement: "slurm", HeldPerNode: 1000, HoldFor: Duration(time.Hour)},
		Munge: MungeConfig{Munge: "/usr/bin/munge", Unmunge: "/usr/bin/unmunge"},
		Sim: SimConfig{
			Dir:    "/run/gpuprof/sim",
			GPUs:   4,
			Model:  "NVIDIA H100 80GB HBM3",
			Memory: Bytes(80 << 30),
		},
		Proc: ProcConfig{Procfs: "/proc", CgroupRoot: "/sys/fs/cgroup"},
		Retention: RetentionConfig{
			SeriesAge:       Duration(14 * 24 * time.Hour),
			DeliveredJobAge: Duration(90 * 24 * time.Hour),
			MaxSize:         Bytes(4 << 30),
			Every:           Duration(time.Hour),
			ConvertBelow:    Bytes(512 << 20),
		},
		Notices: NoticesConfig{
			From:        "gpuprof <root@localhost>",
			Address:     "{user}@localhost",
			Sendmail:    "/usr/sbin/sendmail",
			SendTimeout: Duration(30 * time.Second),
			Squeue:      "/usr/bin/squeue",
			DailyCap:    5,
			HomeOptOut:  ".gpuprof-no-notices",
			HomeTimeout: Duration(2 * time.Second),
			Queue:       64,
			IdleGPU:     IdleRule{Enabled: true, Window: Duration(time.Hour), UtilBelow: 1, MemoryBelow: Bytes(1 << 30)},
			IdleJob:     IdleRule{Enabled: true, Window: Duration(time.Hour), UtilBelow: 1, MemoryBelow: Bytes(1 << 30)},
			UnusedGPUs:  IdleRule{Enabled: true, Window: Duration(2 * time.Hour), UtilBelow: 1, MemoryBelow: Bytes(1 << 30)},
			Oversized: OversizedRule{Enabled: true, Window: Duration(4 * time.Hour), UtilBelow: 30,
				MemoryShare: 0.25, Shards: "auto"},
			Cancel: CancelConfig{Grace: Duration(time.Hour), Signal: "TERM", Wait: Duration(time.Minute),
				Scancel: "/usr/bin/scancel", Timeout: Duration(10 * time.Second)},
		},
	}
}

// Load reads path over the defaults. A missing file at the default path is
// not an error (defaults apply); a missing file that was asked for is.
func Load(path string, explicit bool) (Config, error) {
	c, _, err := LoadFile(path, explicit)
	return c, err
}

// LoadFile is Load with the fingerprint of the bytes it read
// (conffile.Sum; "" when it read no file): the agent's, which takes the
// hooks gpuprof-hook forwards only from a hook that read the same bytes
// (hooks.Forwarder).
func LoadFile(path string, explicit bool) (Config, string, error) {
	c := Default()
	// Root's own file: never waited on (a FIFO in its place), bounded.
	data, err := conffile.Read(path, conffile.MaxSize)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			return c, "", nil
		}
		return c, "", fmt.Errorf("read config: %w", err)
	}
	sum := conffile.Sum(data)
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return c, sum, fmt.Errorf("%w: %s: %v", ErrConfig, path, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return c, sum, fmt.Errorf("%w: %s: unknown key %q", ErrConfig, path, undec[0].String())
	}
	return c, sum, c.Validate()
}

// Validate checks values that would make a command misbehave.
func (c Config) Validate() error {
	switch {
	case c.SlurmSource != "" && c.SlurmSource != "files" && c.SlurmSource != "scontrol" && c.SlurmSource != "auto":
		return fmt.Errorf("%w: slurm_source must be \"files\", \"scontrol\" or \"auto\", not %q", ErrConfig, c.SlurmSource)
	case c.Agent.GPU != "nvml" && c.Agent.GPU != "sim":
		return fmt.Errorf("%w: agent.gpu must be \"nvml\" or \"sim\", not %q", ErrConfig, c.Agent.GPU)
	case c.Agent.Interval.D() < 10*time.Millisecond:
		return fmt.Errorf("%w: agent.interval %s is below 10ms", ErrConfig, c.Agent.Interval.D())
	case c.Agent.FlushInterval.D() <= 0:
		return fmt.Errorf("%w: agent.flush_interval must be positive", ErrConfig)
	case c.Agent.CallTimeout.D() <= 0:
		// A zero timer fires at once: every GPU call would time out.
		return fmt.Errorf("%w: agent.call_timeout must be positive", ErrConfig)
	case c.Agent.EnergyEvery.D() <= 0:
		return fmt.Errorf("%w: agent.energy_every must be positive", ErrConfig)
	case validListen(c.Agent.MetricsListen) != nil:
		return fmt.Errorf("%w: agent.metrics_listen: %v", ErrConfig, validListen(c.Agent.MetricsListen))
	case c.Agent.MetricsJobsTokenFile != "" && !filepath.IsAbs(c.Agent.MetricsJobsTokenFile):
		return fmt.Errorf("%w: agent.metrics_jobs_token_file %q must be an absolute path", ErrConfig, c.Agent.MetricsJobsTokenFile)
	case validListen(c.Serve.MetricsListen) != nil:
		return fmt.Errorf("%w: serve.metrics_listen: %v", ErrConfig, validListen(c.Serve.MetricsListen))
	case c.Agent.SeriesPoints < 16:
		return fmt.Errorf("%w: agent.series_points must be at least 16", ErrConfig)
	case c.Hooks.Deadline.D() <= 0 || c.Hooks.Deadline.D() > time.Minute:
		return fmt.Errorf("%w: hooks.deadline must be in (0, 1m]", ErrConfig)
	case c.JobComp.Deadline.D() <= 0 || c.JobComp.Deadline.D() > time.Minute:
		return fmt.Errorf("%w: jobcomp.deadline must be in (0, 1m]", ErrConfig)
	case c.JobComp.AdminCommentWait.D() <= 0 || c.JobComp.AdminCommentWait.D() > 10*time.Minute:
		return fmt.Errorf("%w: jobcomp.admin_comment_wait must be in (0, 10m]", ErrConfig)
	case c.MailProg.Deadline.D() <= 0 || c.MailProg.Deadline.D() > time.Minute:
		// slurmctld kills MailProg after 120 s; the mail must be out
		// well before.
		return fmt.Errorf("%w: mail_prog.deadline must be in (0, 1m]", ErrConfig)
	case !filepath.IsAbs(c.MailProg.Mailer):
		return fmt.Errorf("%w: mail_prog.mailer must be an absolute path", ErrConfig)
	case c.Sim.GPUs < 1 || c.Sim.GPUs > 64:
		return fmt.Errorf("%w: sim.gpus must be 1..64", ErrConfig)
	case len(c.Sim.Minors) > 0 && len(c.Sim.Minors) != c.Sim.GPUs:
		return fmt.Errorf("%w: sim.minors has %d entries for %d GPUs", ErrConfig, len(c.Sim.Minors), c.Sim.GPUs)
	case c.DB == "":
		return fmt.Errorf("%w: db must be set", ErrConfig)
	case c.Retention.Every.D() < 0 || c.Retention.SeriesAge.D() < 0 || c.Retention.DeliveredJobAge.D() < 0 || c.Retention.LocalJobAge.D() < 0:
		return fmt.Errorf("%w: retention ages and every must not be negative", ErrConfig)
	case c.Retention.Every.D() > 0 && c.Retention.Every.D() < time.Minute:
		return fmt.Errorf("%w: retention.every must be 0 (off) or at least 1m", ErrConfig)
	case c.Retention.DeliveredJobAge.D() > 0 && c.Retention.SeriesAge.D() > c.Retention.DeliveredJobAge.D():
		return fmt.Errorf("%w: retention.series_age must not pass delivered_job_age (the job goes first)", ErrConfig)
	}
	if err := c.Serve.validate(); err != nil {
		return fmt.Errorf("%w: serve.%v", ErrConfig, err)
	}
	for name := range c.Clusters {
		if err := validClusterName(name); err != nil {
			return fmt.Errorf("%w: clusters.%s: %v", ErrConfig, name, err)
		}
	}
	if err := c.Notices.validate(); err != nil {
		return fmt.Errorf("%w: notices.%v", ErrConfig, err)
	}
	switch f := c.Carbon.Factor; {
	case !(f >= 0 && f < 100_000):
		return fmt.Errorf("%w: carbon.factor must be a gCO2e/kWh in [0, 100000), not %v", ErrConfig, f)
	}
	return nil
}

// validate checks the serve section.
func (s ServeConfig) validate() error {
	if s.ConnsPerHost < 1 {
		return errors.New("conns_per_host must be at least 1")
	}
	if s.FailuresPerSecond < 1 || s.FailureBurst < 1 {
		return errors.New("failures_per_second and failure_burst must be at least 1")
	}
	for _, l := range []struct {
		name string
		v    int
	}{{"max_conns", s.MaxConns}, {"max_queries", s.MaxQueries}, {"queries_per_user", s.QueriesPerUser},
		{"query_decodes", s.QueryDecodes}, {"push_decodes", s.PushDecodes}, {"max_uploads", s.MaxUploads}, {"uploads_per_host", s.UploadsPerHost}} {
		if l.v < 1 {
			return fmt.Errorf("%s must be at least 1 (%d)", l.name, l.v)
		}
	}
	switch {
	case s.QueriesPerUser > s.MaxQueries:
		return fmt.Errorf("queries_per_user (%d) must not pass max_queries (%d)", s.QueriesPerUser, s.MaxQueries)
	case s.UploadsPerHost > s.MaxUploads:
		return fmt.Errorf("uploads_per_host (%d) must not pass max_uploads (%d)", s.UploadsPerHost, s.MaxUploads)
	case s.QueueWait.D() < 100*time.Millisecond || s.QueueWait.D() > time.Minute:
		return fmt.Errorf("queue_wait %s: want 100ms to 1m (a node's push and a user's query wait this long for a slot)", s.QueueWait.D())
	}
	if s.SeriesAge < 0 {
		return errors.New("series_age must not be negative (0 keeps every series as recorded)")
	}
	if s.SeriesPoints < 16 {
		return errors.New("series_points must be at least 16")
	}
	if s.Placement != "slurm" && s.Placement != "sender" {
		return fmt.Errorf("placement %q: want \"slurm\" or \"sender\"", s.Placement)
	}
	if s.HeldPerNode < 1 || s.HoldFor.D() < time.Second {
		return errors.New("held_per_node must be at least 1 and hold_for at least 1s")
	}
	for host, nodes := range s.NodeHosts {
		if strings.TrimSpace(host) == "" {
			return errors.New("node_hosts: a host address is empty")
		}
		if len(nodes) == 0 {
			return fmt.Errorf("node_hosts: host %q lists no node", host)
		}
		for _, n := range nodes {
			if _, _, err := SplitNode(n); err != nil {
				return fmt.Errorf("node_hosts: host %q: %v", host, err)
			}
		}
	}
	return nil
}

// validClusterName checks the NAME of a [clusters.NAME] section: a cluster
// name as Slurm keeps it (slurmext.ValidClusterName), lowercase (Slurm
// lowercases ClusterName; a section in capitals would never match a
// record).
func validClusterName(name string) error {
	if !slurmext.ValidClusterName(name) || name != slurmext.NormalClusterName(name) {
		return errors.New("want a cluster name as Slurm records it: 1 to 64 lowercase letters, digits, '-', '_' or '.'")
	}
	return nil
}

// For returns the [clusters.NAME] section of cluster (the zero section
// when there is none).
func (c Config) For(cluster string) ClusterConfig { return c.Clusters[cluster] }

// SplitNode reads an entry of serve.node_hosts: "gpu01" (cluster "", the
// collector's own) or "cluster/gpu01". The cluster is lowercased, as
// Slurm's cluster names are.
func SplitNode(entry string) (cluster, node string, err error) {
	cluster, node, found := strings.Cut(entry, "/")
	if !found {
		cluster, node = "", entry
	}
	cluster, node = slurmext.NormalClusterName(cluster), strings.TrimSpace(node)
	switch {
	case node == "" || strings.ContainsAny(node, "/ \t"):
		return "", "", fmt.Errorf("%q: want a node name or cluster/node", entry)
	case found && cluster == "":
		return "", "", fmt.Errorf("%q: empty cluster before the slash", entry)
	}
	return cluster, node, nil
}

// isSignalName reports whether name is a signal scancel --signal takes by
// name (without "SIG") that makes sense for a job: the ones Slurm's own
// docs use. A switch, not a map: a map literal is built before main in
// every binary that links config, a hook's too (issue #41).
func isSignalName(name string) bool {
	switch name {
	case "TERM", "INT", "HUP", "KILL", "USR1", "USR2", "QUIT", "CONT", "STOP":
		return true
	}
	return false
}

// validate checks the notices section, whether or not it is enabled, so a
// mistake shows when the file is written, not when notices are turned on.
func (n NoticesConfig) validate() error {
	switch {
	case n.Address == "" && n.AddressMap == "":
		return errors.New("address or address_map must be set")
	case n.Address != "" && !strings.Contains(n.Address, "{user}") && n.AddressMap == "":
		return fmt.Errorf("address %q must contain {user} (or set address_map)", n.Address)
	case !filepath.IsAbs(n.Sendmail):
		return fmt.Errorf("sendmail %q must be an absolute path", n.Sendmail)
	case !filepath.IsAbs(n.Squeue):
		return fmt.Errorf("squeue %q must be an absolute path", n.Squeue)
	case n.SendTimeout.D() <= 0:
		return errors.New("send_timeout must be positive")
	case n.DailyCap < 0:
		return errors.New("daily_cap must be 0 (no cap) or more")
	case n.HomeOptOut != "" && strings.ContainsRune(n.HomeOptOut, '/'):
		return fmt.Errorf("home_opt_out %q must be a file name, not a path", n.HomeOptOut)
	case n.HomeOptOut != "" && n.HomeTimeout.D() <= 0:
		return errors.New("home_timeout must be positive")
	case n.Queue < 1:
		return errors.New("queue must be at least 1")
	}
	for _, r := range []struct {
		name string
		r    IdleRule
	}{{"idle_gpu", n.IdleGPU}, {"idle_job", n.IdleJob}, {"unused_gpus", n.UnusedGPUs}} {
		switch {
		case r.r.Window.D() <= 0:
			return fmt.Errorf("%s.window must be positive", r.name)
		case !(r.r.UtilBelow > 0 && r.r.UtilBelow <= 100):
			return fmt.Errorf("%s.util_below must be in (0, 100], not %v", r.name, r.r.UtilBelow)
		}
	}
	o := n.Oversized
	switch {
	case o.Window.D() <= 0:
		return errors.New("oversized.window must be positive")
	case !(o.UtilBelow > 0 && o.UtilBelow <= 100):
		return fmt.Errorf("oversized.util_below must be in (0, 100], not %v", o.UtilBelow)
	case !(o.MemoryShare > 0 && o.MemoryShare <= 0.5):
		return fmt.Errorf("oversized.memory_share must be in (0, 0.5], not %v", o.MemoryShare)
	case o.Shards != "auto" && o.Shards != "yes" && o.Shards != "no":
		return fmt.Errorf("oversized.shards must be \"auto\", \"yes\" or \"no\", not %q", o.Shards)
	}
	for t, b := range o.GPUTypes {
		if t == "" || b == 0 {
			return fmt.Errorf("oversized.gpu_types: %q = %d: want a type name and its memory", t, b)
		}
	}
	c := n.Cancel
	switch {
	case c.Enabled && len(c.Partitions) == 0:
		return errors.New("cancel.partitions must name the partitions where jobs may be cancelled")
	case c.Grace.D() <= 0:
		return errors.New("cancel.grace must be positive")
	case !isSignalName(strings.TrimPrefix(c.Signal, "SIG")):
		return fmt.Errorf("cancel.signal %q is not one of TERM, INT, HUP, KILL, USR1, USR2, QUIT, CONT, STOP", c.Signal)
	case c.Wait.D() < 0:
		return errors.New("cancel.wait must not be negative")
	case !filepath.IsAbs(c.Scancel):
		return fmt.Errorf("cancel.scancel %q must be an absolute path", c.Scancel)
	case c.Timeout.D() <= 0:
		return errors.New("cancel.timeout must be positive")
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
