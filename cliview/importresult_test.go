package cliview

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/termtext"
)

func TestGPUSourcesLine(t *testing.T) {
	tests := []struct {
		name string
		in   history.GPUSources
		want string
	}{
		{name: "none", want: ""},
		{name: "one from ReqTRES", in: history.GPUSources{ReqTRES: 1}, want: "GPUs and shards read from ReqTRES for 1 job"},
		{name: "all three", in: history.GPUSources{ReqTRES: 3, AllocTRES: 1, Neither: 2},
			want: "GPUs and shards read from ReqTRES for 3 jobs, from AllocTRES for 1 job (no ReqTRES), from neither column for 2 (no GPU counted)"},
		{name: "AllocTRES only", in: history.GPUSources{AllocTRES: 2}, want: "GPUs and shards read from AllocTRES for 2 jobs (no ReqTRES)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gpuSourcesLine(tt.in); got != tt.want {
				t.Errorf("gpuSourcesLine(%+v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestImportResult: the counts, the unnamed jobs with what chose their
// cluster, and the duplicate ids (cleaned) on stdout; skipped records and
// notes on stderr.
func TestImportResult(t *testing.T) {
	var stdout, stderr strings.Builder
	res := history.Result{Read: 4, Inserted: 3, Unchanged: 1, Took: time.Second, Unnamed: 1, Conflicts: 7,
		ConflictIDs: []string{"12", "1\x1b[2J3"}, Notes: []string{"a note"}, NoteCount: 3}
	ImportResult(&stdout, &stderr, res, history.ImportCluster{Name: "lab", Origin: history.ClusterFromSlurmConf, SlurmConf: "/etc/slurm/slurm.conf"})
	wantOut := "4 jobs read: 3 new, 0 updated, 1 unchanged; 0 skipped; 4 jobs/s\n" +
		"1 job names no cluster (no Cluster column): imported as cluster lab (ClusterName of /etc/slurm/slurm.conf; --cluster NAME imports them as another)\n" +
		"7 job ids appear more than once with different content (first: 12, " + termtext.Short("1\x1b[2J3", 64) + "); the one kept is decided as docs/sacct.md says (\"Duplicate job ids\")\n"
	if stdout.String() != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), wantOut)
	}
	if want := "note: a note\n… and 2 more notes\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	for origin, want := range map[history.ClusterOrigin]string{
		history.ClusterFromFlag:    "--cluster",
		history.ClusterFromSetting: "the cluster setting; --cluster NAME imports them as another",
		history.ClusterFromSection: "the one [clusters.lab] section of the configuration; --cluster NAME imports them as another",
		history.ClusterFromNothing: "nothing names this host's cluster; --cluster NAME imports them as another",
	} {
		if got := importOrigin(history.ImportCluster{Name: "lab", Origin: origin}); got != want {
			t.Errorf("origin %d: %q, want %q", origin, got, want)
		}
	}
}
