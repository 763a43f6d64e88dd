package collect

import (
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/gpuprof/gpuprof/config"
)

// The munge client is the [munge] section's, with gpuprof's timeout.
func TestMungeOf(t *testing.T) {
	got := MungeOf(config.MungeConfig{Munge: "/opt/munge", Unmunge: "/opt/unmunge", Socket: "/run/m.sock"})
	if got.MungeBin != "/opt/munge" || got.UnmungeBin != "/opt/unmunge" || got.Socket != "/run/m.sock" || got.Timeout <= 0 {
		t.Errorf("MungeOf = %+v", got)
	}
}

// Root always pushes; serve.slurm_user too when it is known here.
func TestPushUIDs(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name, user string
		want       []int
	}{
		{name: "none", user: "", want: []int{0}},
		{name: "root", user: "root", want: []int{0}},
		{name: "unknown", user: "no-such-user-gpuprof", want: []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PushUIDs(tt.user, log); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PushUIDs(%q) = %v, want %v", tt.user, got, tt.want)
			}
		})
	}
}

// A node_hosts entry without a cluster is the collector's own cluster's;
// "cluster/node" names another; an entry that does not parse is left out.
func TestNodeHosts(t *testing.T) {
	if got := NodeHosts(nil, "lab"); got != nil {
		t.Errorf("NodeHosts(nil) = %v, want nil", got)
	}
	got := NodeHosts(map[string][]string{"gw": {"gpu01", "DLRM/hn01", "bad/"}}, "lab")
	want := map[string][]NodeRef{"gw": {{Cluster: "lab", Node: "gpu01"}, {Cluster: "dlrm", Node: "hn01"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NodeHosts = %v, want %v", got, want)
	}
}
