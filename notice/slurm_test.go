package notice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
)

func TestParseSqueue(t *testing.T) {
	tests := []struct {
		name, out string
		want      JobInfo
		err       error
	}{
		{name: "plain", out: "normal|train resnet\n", want: JobInfo{QOS: "normal", Name: "train resnet"}},
		{name: "name with bars", out: "gpu-long|a|b|c\n", want: JobInfo{QOS: "gpu-long", Name: "a|b|c"}},
		// A name cannot fake the QOS: it comes after it.
		{name: "name faking a QOS", out: "normal|service|x\n", want: JobInfo{QOS: "normal", Name: "service|x"}},
		{name: "ended job", out: "", err: ErrJobGone},
		{name: "no QOS (no accounting)", out: "|job\n", want: JobInfo{Name: "job"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSqueue(tt.out)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("parseSqueue(%q) = %+v, %v; want %+v, %v", tt.out, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestSqueueLookup(t *testing.T) {
	t.Setenv("NOTICE_SQUEUE", "normal|my\x1b[2Jjob\n")
	s := Squeue{Program: testdata(t, "squeue.sh"), Timeout: 5 * time.Second}
	got, err := s.Lookup(context.Background(), "17")
	if err != nil || got.QOS != "normal" || JobName(got.Name) != "myjob" {
		t.Errorf("Lookup = %+v (%q), %v", got, JobName(got.Name), err)
	}
}

func TestCanceller(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTICE_CAPTURE", dir)
	c := Canceller{Program: testdata(t, "scancel.sh"), Signal: "TERM", Wait: 10 * time.Millisecond, Timeout: 5 * time.Second}
	what, err := c.Cancel(context.Background(), "77", "the GPU idle for 02:00:00")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "scancel"))
	if want := "--signal=TERM 77\n77\n"; string(got) != want {
		t.Errorf("scancel calls = %q, want %q", got, want)
	}
	if !strings.Contains(what, "--signal=TERM 77") {
		t.Errorf("what = %q", what)
	}

	dry := c
	dry.DryRun = true
	if err := os.Remove(filepath.Join(dir, "scancel")); err != nil {
		t.Fatal(err)
	}
	what, err = dry.Cancel(context.Background(), "78", "evidence")
	if err != nil || !strings.Contains(what, "dry run") {
		t.Errorf("dry run = %q, %v", what, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "scancel")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run ran scancel")
	}

	hung := c
	hung.Program = testdata(t, "sendmail-hang.sh")
	hung.Timeout = 200 * time.Millisecond
	if _, err := hung.Cancel(context.Background(), "79", "evidence"); err == nil {
		t.Error("a hanging scancel was not reported")
	}
}

func TestFromConfig(t *testing.T) {
	c := config.Default().Notices
	c.Oversized.GPUTypes = map[string]config.Bytes{"l4": 24 << 30, "a10": 24 << 30, "a40": 48 << 30}
	c.Cancel.Enabled, c.Cancel.Partitions = true, []string{"debug"}
	n, err := FromConfig(c, time.Second, ClusterGres{Known: true, Shards: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Rules.Oversized.Types; len(got) != 3 || got[0].Name != "a10" || got[1].Name != "l4" || got[2].Name != "a40" {
		t.Errorf("types = %+v, want smallest first (ties by name)", got)
	}
	if !n.Rules.Oversized.Shards || n.Rules.Oversized.Margin <= 1 {
		t.Errorf("oversized = %+v: shards from slurm.conf and the analysis margin", n.Rules.Oversized)
	}
	if !n.CancelIn("debug") || n.CancelIn("gpu") || n.Rules.CancelGrace != time.Hour {
		t.Errorf("cancel: in debug %v, in gpu %v, grace %s", n.CancelIn("debug"), n.CancelIn("gpu"), n.Rules.CancelGrace)
	}
	c.Oversized.Shards = "no"
	if n, _ := FromConfig(c, time.Second, ClusterGres{Known: true, Shards: true}); n.Rules.Oversized.Shards {
		t.Error(`shards = "no" ignored`)
	}
	// slurm.conf declares h100 and l4 only: a40 and a10 are not offered.
	n, err = FromConfig(c, time.Second, ClusterGres{Known: true, Types: []string{"h100", "l4"}})
	if err != nil || len(n.Rules.Oversized.Types) != 1 || n.Rules.Oversized.Types[0].Name != "l4" {
		t.Errorf("types with slurm.conf's h100 and l4 = %+v, %v; want l4 only", n.Rules.Oversized.Types, err)
	}
	c.From = "not an address"
	if _, err := FromConfig(c, time.Second, ClusterGres{}); err == nil {
		t.Error("a bad From was accepted")
	}
}
