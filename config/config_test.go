package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// examplePath covers every key; it doubles as documentation.
const examplePath = "testdata/gpuprof.toml"

func TestLoadExample(t *testing.T) {
	got, err := Load(examplePath, true)
	if err != nil {
		t.Fatalf("Load(%s): %v", examplePath, err)
	}
	want := Config{
		Cluster:     "hpc1",
		Node:        "gpu017",
		DB:          "/srv/gpuprof/node.db",
		SpoolDir:    "/srv/gpuprof/spool",
		Socket:      "/run/gpuprof-test/agent.sock",
		QuerySocket: "/run/gpuprof-test/query.sock",
		SubuidFile:  "/etc/gpuprof-test/subuid",
		LogFile:     "/var/log/gpuprof.log",
		Collector:   "http://ctl01:8642",
		AdminGroup:  "gpuadmin",
		SlurmConf:   "/etc/slurm-llnl/slurm.conf",
		SlurmSource: "auto",
		Clusters:    map[string]ClusterConfig{"hpc2": {SlurmConf: "/srv/hpc2/slurm.conf", GresConf: "/srv/hpc2/gres.conf"}},
		JobComp: JobCompConfig{Deadline: Duration(300 * time.Millisecond), AdminComment: true,
			AdminCommentWait: Duration(20 * time.Second), Sacctmgr: "/opt/slurm/bin/sacctmgr"},
		MailProg: MailProgConfig{Mailer: "/usr/sbin/slurm-spool-mail", Deadline: Duration(3 * time.Second)},
		Import:   ImportConfig{Sacct: "/opt/slurm/bin/sacct"},
		Serve: ServeConfig{Listen: "0.0.0.0:9000", SlurmUser: "slurmadm", Nodes: []string{"10.0.0.11", "10.0.0.12"}, MetricsListen: "127.0.0.1:9843",
			ConnsPerHost: 64, FailuresPerSecond: 5, FailureBurst: 40, MaxConns: 8192, MaxQueries: 16, QueriesPerUser: 4, QueryDecodes: 12, PushDecodes: 32, MaxUploads: 16, UploadsPerHost: 2,
			QueueWait: Duration(10 * time.Second), SeriesAge: Duration(90 * 24 * time.Hour), SeriesPoints: 64, NodeHosts: map[string][]string{"10.0.0.11": {"gpu017"}, "10.0.0.12": {"gpu018", "hpc2/gpu001"}},
			Placement: "sender", HeldPerNode: 50, HoldFor: Duration(20 * time.Minute)},
		Munge: MungeConfig{Munge: "/opt/munge/bin/munge", Unmunge: "/opt/munge/bin/unmunge", Socket: "/run/munge/alt.socket"},
		Agent: AgentConfig{
			GPU:           "sim",
			Interval:      Duration(500 * time.Millisecond),
			FlushInterval: Duration(30 * time.Second),
			SeriesPoints:  2048,
			CallTimeout:   Duration(5 * time.Second),
			EnergyEvery:   Duration(5 * time.Minute),
			MetricsListen: "unix:/run/gpuprof-test/metrics.sock", MetricsJobsTokenFile: "/etc/gpuprof-test/metrics-token",
		},
		Hooks: HookConfig{
			Deadline:       Duration(4 * time.Second),
			AutostartAgent: true,
			AgentCommand:   []string{"/usr/local/bin/gpuprof", "agent", "--config", "/etc/gpuprof/gpuprof.toml"},
			GresConf:       "/etc/slurm/gres-gpu.conf",
		},
		Sim: SimConfig{
			Dir:      "/tmp/gpuprof-sim",
			GPUs:     2,
			Model:    "NVIDIA A100-SXM4-40GB",
			Memory:   Bytes(40 << 30),
			Minors:   []int{4, 6},
			RealCost: true,
		},
		NVML: NVMLConfig{Library: "/usr/lib64/libnvidia-ml.so.1"},
		Proc: ProcConfig{Procfs: "/srv/fixture/proc", CgroupRoot: "/srv/fixture/cgroup"},
		Notices: NoticesConfig{
			Enabled:          true,
			From:             "GPU desk <gpu-desk@lab.example>",
			Address:          "{user}@lab.example",
			AddressMap:       "/etc/gpuprof/mail.map",
			Sendmail:         "/usr/lib/sendmail",
			SendTimeout:      Duration(10 * time.Second),
			Squeue:           "/opt/slurm/bin/squeue",
			DailyCap:         3,
			OptOutFile:       "/etc/gpuprof/no-notices",
			HomeOptOut:       ".no-gpu-mail",
			HomeTimeout:      Duration(500 * time.Millisecond),
			ExemptPartitions: []string{"interactive"},
			ExemptQOS:        []string{"service"},
			ExemptAccounts:   []string{"admins"},
			ExemptUsers:      []string{"svc-inference"},
			Queue:            16,
			IdleGPU:          IdleRule{Window: Duration(45 * time.Minute), UtilBelow: 5, MemoryBelow: Bytes(2 << 30)},
			IdleJob:          IdleRule{Window: Duration(30 * time.Minute), UtilBelow: 2, MemoryBelow: Bytes(512 << 20)},
			UnusedGPUs:       IdleRule{Window: Duration(90 * time.Minute), UtilBelow: 3, MemoryBelow: Bytes(256 << 20)},
			Oversized: OversizedRule{Window: Duration(6 * time.Hour), UtilBelow: 20, MemoryShare: 0.3, Shards: "yes",
				GPUTypes: map[string]Bytes{"l4": Bytes(24 << 30), "a10": Bytes(24 << 30)}},
			Cancel: CancelConfig{Enabled: true, Partitions: []string{"debug", "gpu"}, Grace: Duration(20 * time.Minute),
				Signal: "INT", Wait: Duration(2 * time.Minute), Scancel: "/opt/slurm/bin/scancel",
				Timeout: Duration(5 * time.Second), DryRun: true},
		},
		Carbon: CarbonConfig{Factor: 350, FactorsCSV: "/etc/gpuprof/grid.csv"},
		Retention: RetentionConfig{SeriesAge: Duration(7 * 24 * time.Hour), DeliveredJobAge: Duration(30 * 24 * time.Hour),
			LocalJobAge: Duration(365 * 24 * time.Hour), MaxSize: Bytes(1 << 30), Every: Duration(30 * time.Minute),
			ConvertBelow: Bytes(128 << 20)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(%s) =\n%+v\nwant\n%+v", examplePath, got, want)
	}
}

// leaves returns every non-struct field of v by its TOML key path.
func leaves(prefix string, v reflect.Value, out map[string]reflect.Value) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key := f.Tag.Get("toml")
		if prefix != "" {
			key = prefix + "." + key
		}
		if f.Type.Kind() == reflect.Struct {
			leaves(key, v.Field(i), out)
			continue
		}
		out[key] = v.Field(i)
	}
}

func configKeys(c Config) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	leaves("", reflect.ValueOf(c), out)
	return out
}

func TestExampleSetsEveryKey(t *testing.T) {
	// A key added to Config but not to the example (and its docs) shows up
	// here: every value in the example differs from the default.
	got, err := Load(examplePath, true)
	if err != nil {
		t.Fatalf("Load(%s): %v", examplePath, err)
	}
	def := configKeys(Default())
	for key, v := range configKeys(got) {
		if reflect.DeepEqual(v.Interface(), def[key].Interface()) {
			t.Errorf("%s: example value %v equals the default; set it to something else", key, v.Interface())
		}
	}
}

func TestDocumentationExample(t *testing.T) {
	// docs/configuration.md must stay true to the code: its annotated
	// example names every key and shows the defaults (log_file aside, which
	// it marks "not the default").
	doc, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	text := string(doc)
	start := strings.Index(text, "```toml\n")
	if start < 0 {
		t.Fatal("docs/configuration.md has no ```toml block")
	}
	block := text[start+len("```toml\n"):]
	block = block[:strings.Index(block, "```")]

	var got Config
	md, err := toml.Decode(block, &got)
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		t.Errorf("the documented example has unknown keys %v", undec)
	}
	for key := range configKeys(Default()) {
		if strings.HasPrefix(key, "notices.") {
			continue // documented in docs/notices.md (TestNoticesDocumentationExample)
		}
		if !md.IsDefined(strings.Split(key, ".")...) {
			t.Errorf("the documented example lacks %s", key)
		}
	}
	// An empty TOML array decodes to an empty slice; the default is nil.
	if len(got.Hooks.AgentCommand) == 0 {
		got.Hooks.AgentCommand = nil
	}
	if len(got.Sim.Minors) == 0 {
		got.Sim.Minors = nil
	}
	if len(got.Serve.Nodes) == 0 {
		got.Serve.Nodes = nil
	}
	if len(got.Serve.NodeHosts) == 0 {
		got.Serve.NodeHosts = nil
	}
	if len(got.Clusters) == 0 {
		got.Clusters = nil
	}
	want := Default()
	want.LogFile = "/var/log/gpuprof/gpuprof.log"
	got.Notices = want.Notices // docs/notices.md documents the section
	if !reflect.DeepEqual(got, want) {
		t.Errorf("documented values =\n%+v\nwant the defaults\n%+v", got, want)
	}
}

func TestNoticesDocumentationExample(t *testing.T) {
	// docs/notices.md's first ```toml block is the [notices] section with
	// every key at its default.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "notices.md"))
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	text := string(doc)
	start := strings.Index(text, "```toml\n")
	if start < 0 {
		t.Fatal("docs/notices.md has no ```toml block")
	}
	block := text[start+len("```toml\n"):]
	block = block[:strings.Index(block, "```")]
	var got Config
	md, err := toml.Decode(block, &got)
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		t.Errorf("the documented example has unknown keys %v", undec)
	}
	for key := range configKeys(Default()) {
		if strings.HasPrefix(key, "notices.") && !md.IsDefined(strings.Split(key, ".")...) {
			t.Errorf("docs/notices.md lacks %s", key)
		}
	}
	n := got.Notices
	for _, s := range []*[]string{&n.ExemptPartitions, &n.ExemptQOS, &n.ExemptAccounts, &n.ExemptUsers, &n.Cancel.Partitions} {
		if len(*s) == 0 {
			*s = nil
		}
	}
	if len(n.Oversized.GPUTypes) == 0 {
		n.Oversized.GPUTypes = nil
	}
	if want := Default().Notices; !reflect.DeepEqual(n, want) {
		t.Errorf("documented [notices] =\n%+v\nwant the defaults\n%+v", n, want)
	}
}

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
}

func TestLoadMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.toml")

	t.Run("default path", func(t *testing.T) {
		got, err := Load(missing, false)
		if err != nil {
			t.Fatalf("Load(missing, false) error = %v, want nil", err)
		}
		if !reflect.DeepEqual(got, Default()) {
			t.Errorf("Load(missing, false) = %+v, want the defaults", got)
		}
	})
	t.Run("explicit", func(t *testing.T) {
		_, err := Load(missing, true)
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Load(missing, true) error = %v, want one wrapping os.ErrNotExist", err)
		}
	})
}

func TestLoadPartialFileKeepsDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpuprof.toml")
	if err := os.WriteFile(path, []byte("[agent]\ninterval = \"250ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, true)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Default()
	want.Agent.Interval = Duration(250 * time.Millisecond)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load = %+v, want the defaults with agent.interval 250ms", got)
	}
}

func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		name    string
		content string
		wantIn  string // part of the error message
	}{
		{name: "unknown top-level key", content: "cluster = \"a\"\ndatabase = \"x\"\n", wantIn: `unknown key "database"`},
		{name: "unknown nested key", content: "[agent]\nintervall = \"1s\"\n", wantIn: `unknown key "agent.intervall"`},
		{name: "unknown section", content: "[gpu]\nx = 1\n", wantIn: `unknown key "gpu`},
		{name: "syntax error", content: "cluster = \n", wantIn: "gpuprof.toml"},
		{name: "bad duration", content: "[agent]\ninterval = \"fast\"\n", wantIn: "fast"},
		{name: "duration without unit", content: "[hooks]\ndeadline = \"2\"\n", wantIn: "deadline"},
		{name: "bad size", content: "[sim]\nmemory = \"lots\"\n", wantIn: "lots"},
		{name: "wrong type", content: "[sim]\ngpus = \"four\"\n", wantIn: "gpus"},
		{name: "fails validation", content: "[agent]\ngpu = \"rocm\"\n", wantIn: `agent.gpu must be "nvml" or "sim", not "rocm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gpuprof.toml")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, true)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Load error = %v, want ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Load error = %q, want it to contain %q", err, tt.wantIn)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		wantIn string // "" means valid
	}{
		{name: "defaults", mutate: func(*Config) {}},
		{name: "carbon factor", mutate: func(c *Config) { c.Carbon.Factor = 350 }},
		{name: "negative carbon factor", mutate: func(c *Config) { c.Carbon.Factor = -1 }, wantIn: "carbon.factor"},
		{name: "absurd carbon factor", mutate: func(c *Config) { c.Carbon.Factor = 1e6 }, wantIn: "carbon.factor"},
		{name: "sim backend", mutate: func(c *Config) { c.Agent.GPU = "sim" }},
		{name: "unknown backend", mutate: func(c *Config) { c.Agent.GPU = "cuda" }, wantIn: "agent.gpu"},
		{name: "empty backend", mutate: func(c *Config) { c.Agent.GPU = "" }, wantIn: "agent.gpu"},
		{name: "interval at minimum", mutate: func(c *Config) { c.Agent.Interval = Duration(10 * time.Millisecond) }},
		{name: "interval below minimum", mutate: func(c *Config) { c.Agent.Interval = Duration(9 * time.Millisecond) }, wantIn: "agent.interval 9ms is below 10ms"},
		{name: "zero flush interval", mutate: func(c *Config) { c.Agent.FlushInterval = 0 }, wantIn: "agent.flush_interval"},
		{name: "negative flush interval", mutate: func(c *Config) { c.Agent.FlushInterval = Duration(-time.Second) }, wantIn: "agent.flush_interval"},
		{name: "zero call timeout", mutate: func(c *Config) { c.Agent.CallTimeout = 0 }, wantIn: "agent.call_timeout"},
		{name: "metrics on loopback", mutate: func(c *Config) { c.Agent.MetricsListen = "127.0.0.1:9842" }},
		{name: "metrics token file relative", mutate: func(c *Config) { c.Agent.MetricsJobsTokenFile = "token" }, wantIn: "agent.metrics_jobs_token_file"},
		{name: "metrics on every address", mutate: func(c *Config) { c.Agent.MetricsListen = ":9842" }},
		{name: "metrics on IPv6 loopback", mutate: func(c *Config) { c.Agent.MetricsListen = "[::1]:9842" }},
		{name: "metrics on a unix socket", mutate: func(c *Config) { c.Agent.MetricsListen = "unix:/run/gpuprof/metrics.sock" }},
		{name: "metrics without port", mutate: func(c *Config) { c.Agent.MetricsListen = "127.0.0.1" }, wantIn: "agent.metrics_listen"},
		{name: "metrics port by name", mutate: func(c *Config) { c.Agent.MetricsListen = "localhost:http" }, wantIn: "agent.metrics_listen"},
		{name: "metrics port too large", mutate: func(c *Config) { c.Agent.MetricsListen = "127.0.0.1:65536" }, wantIn: "agent.metrics_listen"},
		{name: "metrics relative socket", mutate: func(c *Config) { c.Agent.MetricsListen = "unix:metrics.sock" }, wantIn: "agent.metrics_listen"},
		{name: "series points at minimum", mutate: func(c *Config) { c.Agent.SeriesPoints = 16 }},
		{name: "too few series points", mutate: func(c *Config) { c.Agent.SeriesPoints = 15 }, wantIn: "agent.series_points"},
		{name: "zero deadline", mutate: func(c *Config) { c.Hooks.Deadline = 0 }, wantIn: "hooks.deadline"},
		{name: "deadline at maximum", mutate: func(c *Config) { c.Hooks.Deadline = Duration(time.Minute) }},
		{name: "deadline above maximum", mutate: func(c *Config) { c.Hooks.Deadline = Duration(time.Minute + 1) }, wantIn: "hooks.deadline"},
		{name: "no simulated GPUs", mutate: func(c *Config) { c.Sim.GPUs = 0 }, wantIn: "sim.gpus"},
		{name: "64 simulated GPUs", mutate: func(c *Config) { c.Sim.GPUs = 64 }},
		{name: "too many simulated GPUs", mutate: func(c *Config) { c.Sim.GPUs = 65 }, wantIn: "sim.gpus"},
		{name: "minors match GPUs", mutate: func(c *Config) { c.Sim.GPUs, c.Sim.Minors = 2, []int{1, 0} }},
		{name: "minors mismatch", mutate: func(c *Config) { c.Sim.Minors = []int{0, 1} }, wantIn: "sim.minors has 2 entries for 4 GPUs"},
		{name: "no database", mutate: func(c *Config) { c.DB = "" }, wantIn: "db must be set"},
		{name: "node hosts", mutate: func(c *Config) {
			c.Serve.NodeHosts = map[string][]string{"10.0.0.11": {"gpu01"}, "10.0.0.12": {"gpu02", "Other/gpu03"}}
		}},
		{name: "node hosts, a host without nodes", mutate: func(c *Config) { c.Serve.NodeHosts = map[string][]string{"10.0.0.11": {}} }, wantIn: "serve.node_hosts"},
		{name: "node hosts, an empty host", mutate: func(c *Config) { c.Serve.NodeHosts = map[string][]string{" ": {"gpu01"}} }, wantIn: "serve.node_hosts"},
		{name: "node hosts, a bad node", mutate: func(c *Config) { c.Serve.NodeHosts = map[string][]string{"10.0.0.11": {"a/b/c"}} }, wantIn: "serve.node_hosts"},
		{name: "a cluster's files", mutate: func(c *Config) {
			c.Clusters = map[string]ClusterConfig{"dlrm": {SlurmConf: "/srv/dlrm/slurm.conf"}, "lab-2.a_b": {}}
		}},
		{name: "a cluster in capitals", mutate: func(c *Config) { c.Clusters = map[string]ClusterConfig{"DLRM": {}} }, wantIn: "clusters.DLRM"},
		{name: "a cluster with a slash", mutate: func(c *Config) { c.Clusters = map[string]ClusterConfig{"a/b": {}} }, wantIn: "clusters.a/b"},
		{name: "no connection per host", mutate: func(c *Config) { c.Serve.ConnsPerHost = 0 }, wantIn: "serve.conns_per_host"},
		{name: "no failure allowed", mutate: func(c *Config) { c.Serve.FailuresPerSecond = 0 }, wantIn: "serve.failures_per_second"},
		{name: "no failure burst", mutate: func(c *Config) { c.Serve.FailureBurst = 0 }, wantIn: "failure_burst"},
		{name: "no connection", mutate: func(c *Config) { c.Serve.MaxConns = 0 }, wantIn: "serve.max_conns"},
		{name: "no query decode", mutate: func(c *Config) { c.Serve.QueryDecodes = 0 }, wantIn: "serve.query_decodes"},
		{name: "no push decode", mutate: func(c *Config) { c.Serve.PushDecodes = -1 }, wantIn: "serve.push_decodes"},
		{name: "no upload per host", mutate: func(c *Config) { c.Serve.UploadsPerHost = 0 }, wantIn: "serve.uploads_per_host"},
		{name: "queries per user over max", mutate: func(c *Config) { c.Serve.QueriesPerUser = 9 }, wantIn: "serve.queries_per_user"},
		{name: "uploads per host over max", mutate: func(c *Config) { c.Serve.UploadsPerHost = 5 }, wantIn: "serve.uploads_per_host"},
		{name: "queue wait too short", mutate: func(c *Config) { c.Serve.QueueWait = Duration(10 * time.Millisecond) }, wantIn: "serve.queue_wait"},
		{name: "larger lanes", mutate: func(c *Config) {
			c.Serve.MaxQueries, c.Serve.QueryDecodes, c.Serve.PushDecodes, c.Serve.MaxUploads, c.Serve.UploadsPerHost = 16, 16, 32, 16, 2
		}},
		{name: "negative series age", mutate: func(c *Config) { c.Serve.SeriesAge = Duration(-time.Hour) }, wantIn: "serve.series_age"},
		{name: "series thinned too far", mutate: func(c *Config) { c.Serve.SeriesPoints = 8 }, wantIn: "serve.series_points"},
		{name: "unknown placement", mutate: func(c *Config) { c.Serve.Placement = "node" }, wantIn: "serve.placement"},
		{name: "no profile held", mutate: func(c *Config) { c.Serve.HeldPerNode = 0 }, wantIn: "serve.held_per_node"},
		{name: "notices on", mutate: func(c *Config) { c.Notices.Enabled = true }},
		{name: "notice address without user", mutate: func(c *Config) { c.Notices.Address = "gpu@lab.example" }, wantIn: "notices.address"},
		{name: "notice address map alone", mutate: func(c *Config) { c.Notices.Address, c.Notices.AddressMap = "", "/etc/gpuprof/mail.map" }},
		{name: "no notice address", mutate: func(c *Config) { c.Notices.Address = "" }, wantIn: "notices.address"},
		{name: "relative sendmail", mutate: func(c *Config) { c.Notices.Sendmail = "sendmail" }, wantIn: "notices.sendmail"},
		{name: "relative squeue", mutate: func(c *Config) { c.Notices.Squeue = "squeue" }, wantIn: "notices.squeue"},
		{name: "zero send timeout", mutate: func(c *Config) { c.Notices.SendTimeout = 0 }, wantIn: "notices.send_timeout"},
		{name: "negative daily cap", mutate: func(c *Config) { c.Notices.DailyCap = -1 }, wantIn: "notices.daily_cap"},
		{name: "no daily cap", mutate: func(c *Config) { c.Notices.DailyCap = 0 }},
		{name: "home opt-out as a path", mutate: func(c *Config) { c.Notices.HomeOptOut = "../etc/x" }, wantIn: "notices.home_opt_out"},
		{name: "home opt-out off", mutate: func(c *Config) { c.Notices.HomeOptOut, c.Notices.HomeTimeout = "", 0 }},
		{name: "empty queue", mutate: func(c *Config) { c.Notices.Queue = 0 }, wantIn: "notices.queue"},
		{name: "idle window zero", mutate: func(c *Config) { c.Notices.IdleGPU.Window = 0 }, wantIn: "notices.idle_gpu.window"},
		{name: "idle util 0", mutate: func(c *Config) { c.Notices.IdleJob.UtilBelow = 0 }, wantIn: "notices.idle_job.util_below"},
		{name: "idle util 100", mutate: func(c *Config) { c.Notices.UnusedGPUs.UtilBelow = 100 }},
		{name: "idle util above 100", mutate: func(c *Config) { c.Notices.UnusedGPUs.UtilBelow = 101 }, wantIn: "notices.unused_gpus.util_below"},
		{name: "oversized share too large", mutate: func(c *Config) { c.Notices.Oversized.MemoryShare = 0.6 }, wantIn: "notices.oversized.memory_share"},
		{name: "oversized shards word", mutate: func(c *Config) { c.Notices.Oversized.Shards = "maybe" }, wantIn: "notices.oversized.shards"},
		{name: "oversized type without memory", mutate: func(c *Config) { c.Notices.Oversized.GPUTypes = map[string]Bytes{"l4": 0} }, wantIn: "notices.oversized.gpu_types"},
		{name: "cancel without partitions", mutate: func(c *Config) { c.Notices.Cancel.Enabled = true }, wantIn: "notices.cancel.partitions"},
		{name: "cancel in a partition", mutate: func(c *Config) { c.Notices.Cancel.Enabled, c.Notices.Cancel.Partitions = true, []string{"debug"} }},
		{name: "cancel signal with SIG", mutate: func(c *Config) { c.Notices.Cancel.Signal = "SIGUSR1" }},
		{name: "cancel signal unknown", mutate: func(c *Config) { c.Notices.Cancel.Signal = "TERM;rm" }, wantIn: "notices.cancel.signal"},
		{name: "cancel relative scancel", mutate: func(c *Config) { c.Notices.Cancel.Scancel = "scancel" }, wantIn: "notices.cancel.scancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantIn == "" {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Validate() = %v, want ErrConfig mentioning %q", err, tt.wantIn)
			}
		})
	}
}

func TestSplitNode(t *testing.T) {
	tests := []struct {
		name, entry, cluster, node string
		wantErr                    bool
	}{
		{name: "a node of this cluster", entry: "gpu01", node: "gpu01"},
		{name: "a node of another cluster", entry: "hpc2/gpu01", cluster: "hpc2", node: "gpu01"},
		{name: "the cluster lowercased, the node kept", entry: "HPC2/GPU01", cluster: "hpc2", node: "GPU01"},
		{name: "spaces around", entry: " hpc2 / gpu01 ", cluster: "hpc2", node: "gpu01"},
		{name: "empty", entry: "", wantErr: true},
		{name: "no node", entry: "hpc2/", wantErr: true},
		{name: "no cluster before the slash", entry: "/gpu01", wantErr: true},
		{name: "two slashes", entry: "a/b/c", wantErr: true},
		{name: "a space inside", entry: "gpu 01", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster, node, err := SplitNode(tt.entry)
			if (err != nil) != tt.wantErr {
				t.Fatalf("SplitNode(%q) error = %v, want error %t", tt.entry, err, tt.wantErr)
			}
			if cluster != tt.cluster || node != tt.node {
				t.Errorf("SplitNode(%q) = %q, %q; want %q, %q", tt.entry, cluster, node, tt.cluster, tt.node)
			}
		})
	}
}

// TestLoadRefusesFIFO: gpuprof.toml is root's own configuration, read
// without waiting (issue 39, finding 9): a FIFO in its place is an error
// at once.
func TestLoadRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "gpuprof.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Load(fifo, false)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a FIFO: %v, want not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO in place of gpuprof.toml")
	}
}
