package analysis

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

// TestExampleIsDefaults keeps contrib/analysis.toml.example, which states
// the defaults, from drifting away from DefaultConfig.
func TestExampleIsDefaults(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "contrib", "analysis.toml.example"))
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultConfig(); !reflect.DeepEqual(c, want) {
		t.Errorf("example = %+v\nwant      %+v", c, want)
	}
	// Every key of the example is a key of the config: decoding it over a
	// zero config must set every field (a key left out would stay zero).
	data, err := os.ReadFile(filepath.Join("..", "contrib", "analysis.toml.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"short_job_max", "long_training_min", "idle_util_max", "low_util_max",
		"service_min_duration", "service_steady_min", "service_burst_spread", "interactive_names",
		"vram_bound_frac", "compute_bound_util", "low_sm_util_min", "low_sm_ratio", "io_bound_frac", "io_node_scope",
		"queue_bound_ratio", "queue_bound_min_wait", "limit_min_run",
		"min_jobs", "min_user_jobs", "confidence_n0", "sharing_vram_max", "sharing_share_min",
		"sharing_margin", "max_shards", "mps_util_min", "over_request_ratio", "io_share_min",
		"idle_share_min", "long_grp_frac", "queue_share_min", "user_share_max", "burst_frac",
		"growth", "horizon_months", "new_demand", "headroom", "vram_share_min", "waste_share_min"} {
		if !strings.Contains(string(data), "\n"+key+" = ") && !(key == "growth" && strings.Contains(string(data), "\n# growth = 0.3\n")) {
			t.Errorf("example lacks key %s", key)
		}
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		toml    string
		check   func(Config) bool // nil: no check
		wantErr string            // "" : no error
	}{
		{name: "empty", toml: "", check: func(c Config) bool { return reflect.DeepEqual(c, DefaultConfig()) }},
		{
			name: "override one key",
			toml: "[classes]\nshort_job_max = \"45m\"\n",
			check: func(c Config) bool {
				return c.Classes.ShortJobMax.D() == 45*time.Minute && c.Classes.LongTrainingMin.D() == 4*time.Hour
			},
		},
		{
			name:  "list replaced, not appended",
			toml:  "[classes]\ninteractive_names = [\"ipython\"]\n",
			check: func(c Config) bool { return reflect.DeepEqual(c.Classes.InteractiveNames, []string{"ipython"}) },
		},
		{
			name:  "integers for floats",
			toml:  "[bottlenecks]\nqueue_bound_ratio = 10\n",
			check: func(c Config) bool { return c.Bottlenecks.QueueBoundRatio == 10 },
		},
		{name: "unknown key", toml: "[classes]\nshort_jobs_max = \"1h\"\n", wantErr: `unknown key "classes.short_jobs_max"`},
		{name: "unknown section", toml: "[recommend]\nx = 1\n", wantErr: "unknown key"},
		{name: "bad duration", toml: "[classes]\nshort_job_max = \"soon\"\n", wantErr: "invalid analysis configuration"},
		{name: "wrong type", toml: "[classes]\nidle_util_max = \"five\"\n", wantErr: "invalid analysis configuration"},
		{name: "syntax", toml: "[classes\n", wantErr: "invalid analysis configuration"},
		{name: "short not below long", toml: "[classes]\nshort_job_max = \"5h\"\n", wantErr: "long_training_min"},
		{name: "service not above short", toml: "[classes]\nservice_min_duration = \"10m\"\n", wantErr: "service_min_duration"},
		{name: "zero short", toml: "[classes]\nshort_job_max = \"0s\"\n", wantErr: "short_job_max must be positive"},
		{name: "idle above low", toml: "[classes]\nidle_util_max = 40.0\n", wantErr: "idle_util_max"},
		{name: "low above 100", toml: "[classes]\nlow_util_max = 101.0\n", wantErr: "low_util_max"},
		{name: "NaN threshold", toml: "[classes]\nidle_util_max = nan\n", wantErr: "idle_util_max"},
		{name: "steady above 1", toml: "[classes]\nservice_steady_min = 1.5\n", wantErr: "service_steady_min"},
		{name: "spread zero", toml: "[classes]\nservice_burst_spread = 0.0\n", wantErr: "service_burst_spread"},
		{name: "vram frac zero", toml: "[bottlenecks]\nvram_bound_frac = 0.0\n", wantErr: "vram_bound_frac"},
		{name: "compute below low", toml: "[bottlenecks]\ncompute_bound_util = 20.0\n", wantErr: "compute_bound_util"},
		{name: "io frac above 1", toml: "[bottlenecks]\nio_bound_frac = 1.2\n", wantErr: "io_bound_frac"},
		{name: "ratio negative", toml: "[bottlenecks]\nqueue_bound_ratio = -1.0\n", wantErr: "queue_bound_ratio"},
		{name: "ratio infinite", toml: "[bottlenecks]\nqueue_bound_ratio = inf\n", wantErr: "queue_bound_ratio"},
		{name: "min wait negative", toml: "[bottlenecks]\nqueue_bound_min_wait = \"-1m\"\n", wantErr: "queue_bound_min_wait"},
		{name: "limit min run negative", toml: "[summary]\nlimit_min_run = \"-1s\"\n", wantErr: "limit_min_run"},
		{name: "min jobs zero", toml: "[recommend]\nmin_jobs = 0\n", wantErr: "min_jobs"},
		{name: "sharing vram above half", toml: "[recommend]\nsharing_vram_max = 0.6\n", wantErr: "sharing_vram_max"},
		{name: "margin below 1", toml: "[recommend]\nsharing_margin = 0.9\n", wantErr: "sharing_margin"},
		{name: "one shard", toml: "[recommend]\nmax_shards = 1\n", wantErr: "max_shards"},
		{name: "over-request ratio 1", toml: "[recommend]\nover_request_ratio = 1.0\n", wantErr: "over_request_ratio"},
		{name: "burst NaN", toml: "[recommend]\nburst_frac = nan\n", wantErr: "burst_frac"},
		{name: "headroom 1", toml: "[plan]\nheadroom = 1.0\n", wantErr: "headroom"},
		{name: "growth -1", toml: "[plan]\ngrowth = -1.0\n", wantErr: "growth"},
		{name: "horizon negative", toml: "[plan]\nhorizon_months = -1\n", wantErr: "horizon_months"},
		{name: "plan override", toml: "[plan]\ngrowth = 0.5\n", check: func(c Config) bool { return c.Plan.Growth == 0.5 && c.Plan.Headroom == 0.2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.toml), "test.toml")
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want ErrConfig containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "test.toml") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if tt.check != nil && !tt.check(c) {
				t.Errorf("config = %+v: check failed", c)
			}
		})
	}
}

func TestLoadConfigMissing(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "none.toml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error = %v, want os.ErrNotExist", err)
	}
}

func TestLoadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "analysis.toml")
	if err := os.WriteFile(path, []byte("[bottlenecks]\nvram_bound_frac = 0.95\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil || c.Bottlenecks.VRAMBoundFrac != 0.95 {
		t.Errorf("LoadConfig = %v, %v; want vram_bound_frac 0.95", c.Bottlenecks.VRAMBoundFrac, err)
	}
}

// ConfigAt: no path is the defaults; a path is the file over them, and
// a missing one an error.
func TestConfigAt(t *testing.T) {
	if c, err := ConfigAt(""); err != nil || !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf(`ConfigAt("") = %+v, %v; want the defaults`, c, err)
	}
	if _, err := ConfigAt(filepath.Join(t.TempDir(), "none.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ConfigAt(missing) error = %v, want os.ErrNotExist", err)
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || d.D() != 90*time.Minute {
		t.Errorf("UnmarshalText(1h30m) = %v, %v", d.D(), err)
	}
	if b, _ := d.MarshalText(); string(b) != "1h30m0s" {
		t.Errorf("MarshalText = %s, want 1h30m0s", b)
	}
	// Days are config.Duration's (config/units_test.go); a unit it does
	// not know is still refused.
	if err := d.UnmarshalText([]byte("1d")); err != nil || d.D() != 24*time.Hour {
		t.Errorf("UnmarshalText(1d) = %v, %v; want 24h", d.D(), err)
	}
	if err := d.UnmarshalText([]byte("1w")); err == nil {
		t.Error("UnmarshalText(1w): no error")
	}
}

// TestDocsExampleParses keeps the example in docs/analysis.md valid.
func TestDocsExampleParses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "analysis.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```toml\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/analysis.md has no toml block")
	}
	c, err := ParseConfig([]byte(block), "docs/analysis.md")
	if err != nil {
		t.Fatal(err)
	}
	if c.Classes.ShortJobMax.D() != 20*time.Minute || c.Bottlenecks.IONodeScope || c.Bottlenecks.QueueBoundRatio != 10 {
		t.Errorf("docs example decoded to %+v", c)
	}
}
