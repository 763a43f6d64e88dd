package collect

import (
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

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

// serve's settings are the collector's limits: the defaults of both
// agree, and each setting reaches its limit.
func TestLimitsOf(t *testing.T) {
	if got := LimitsOf(config.Default().Serve).orDefault(defaultLimits()); got != defaultLimits() {
		t.Errorf("config's serve defaults as limits = %+v, want the collector's %+v", got, defaultLimits())
	}
	c := config.ServeConfig{ConnsPerHost: 3, MaxConns: 5, MaxQueries: 7, QueriesPerUser: 11, QueryDecodes: 13, PushDecodes: 17,
		MaxUploads: 19, UploadsPerHost: 23, QueueWait: config.Duration(29 * time.Second)}
	want := Limits{ConnsPerPeer: 3, MaxConns: 5, MaxQueries: 7, QueriesPerUID: 11, QueryDecodes: 13, PushDecodes: 17,
		MaxUploads: 19, UploadsPerHost: 23, QueueWait: 29 * time.Second}
	if got := LimitsOf(c); got != want {
		t.Errorf("LimitsOf = %+v, want %+v", got, want)
	}
}
