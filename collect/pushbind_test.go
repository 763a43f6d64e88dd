package collect

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// TestPushBoundToSender is issue 25's reproduction 7: a node's credential
// pushed a profile for another node, for another cluster, under a job id
// "../../etc", and changed a finished profile's owner. With NodeHosts a
// host pushes only for the nodes (of the clusters) it is configured as;
// a job id must pass slurmext.ValidJobID whatever the configuration; and
// no push changes the owner Slurm or an earlier profile gave a job.
func TestPushBoundToSender(t *testing.T) {
	const node2Addr = "10.0.0.12"
	nodes := map[string][]NodeRef{
		nodeAddr:  {{Cluster: "lab", Node: "gpu01"}},
		node2Addr: {{Cluster: "lab", Node: "gpu02"}, {Cluster: "lab", Node: "gpu03"}}, // two slurmd on one host
	}
	on := func(host string) Identity { return Identity{UID: 0, Host: host} }
	withCluster := func(j profile.Job, c string) profile.Job { j.Cluster = c; return j }
	tests := []struct {
		name  string
		as    Identity
		job   profile.Job
		nodes map[string][]NodeRef
		want  int
	}{
		{name: "a node pushes its own profile", as: on(nodeAddr), job: testJob("7", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusNoContent},
		{name: "a host of two nodes pushes for the second", as: on(node2Addr), job: testJob("7", "gpu03", aliceUID, true), nodes: nodes, want: http.StatusNoContent},
		{name: "the SlurmUser on its node", as: Identity{UID: slurmUID, Host: nodeAddr}, job: testJob("7", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusNoContent},
		{name: "a node pushes for another node", as: on(nodeAddr), job: testJob("7", "gpu02", aliceUID, true), nodes: nodes, want: http.StatusForbidden},
		{name: "a node pushes for its name in another cluster", as: on(nodeAddr), job: withCluster(testJob("7", "gpu01", aliceUID, true), "other"), nodes: nodes, want: http.StatusForbidden},
		{name: "a host that is no node", as: on("10.9.9.9"), job: testJob("7", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusForbidden},
		{name: "a path for a job id", as: on(nodeAddr), job: testJob("../../etc", "gpu01", aliceUID, true), nodes: nodes, want: http.StatusBadRequest},
		{name: "a path for a job id, no node binding", as: on(nodeAddr), job: testJob("../../etc", "gpu01", aliceUID, true), want: http.StatusBadRequest},
		{name: "a job id with a slash", as: on(nodeAddr), job: testJob("7/8", "gpu01", aliceUID, true), want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0, slurmUID}, NodeHosts: tt.nodes})
			body := mustJSON(t, tt.job)
			w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, tt.as, "POST", "/v1/profiles", body))
			if w.Code != tt.want {
				t.Fatalf("status = %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), tt.want)
			}
			_, err := db.GetJob(context.Background(), tt.job.Key)
			if stored := err == nil; stored != (tt.want == http.StatusNoContent) {
				t.Errorf("stored = %t (%v), want %t", stored, err, tt.want == http.StatusNoContent)
			}
		})
	}
}

// TestPushKeepsOwner: a push never changes who owns a job. The owner is
// the scheduler record's when jobcomp reported the job, else that of the
// job's finished profiles, else that of its running profiles on other
// nodes; a node's own running profile may still be corrected (a job found
// before its prolog is provisional), its finished one may not.
func TestPushKeepsOwner(t *testing.T) {
	ctx := context.Background()
	s, m, db := newTestServer(t, ServerOptions{PushUIDs: []int{0}})
	push := func(as Identity, j profile.Job) int {
		body := mustJSON(t, j)
		w := serve(s.Handler(), "POST", "/v1/profiles", body, signed(m, as, "POST", "/v1/profiles", body))
		t.Logf("push %s/%s uid %d %s: %d %s", j.JobID, j.Node, j.UID, j.Status, w.Code, strings.TrimSpace(w.Body.String()))
		return w.Code
	}
	owner := func(k profile.Key) int {
		j, err := db.GetJob(ctx, k)
		if err != nil {
			t.Fatalf("GetJob %v: %v", k, err)
		}
		return j.UID
	}

	// A finished profile's owner stays.
	if got := push(rootNode, testJob("7", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Fatalf("first push: %d, want 204", got)
	}
	if got := push(rootNode, testJob("7", "gpu01", bobUID, true)); got != http.StatusConflict {
		t.Errorf("the same finished profile with bob as owner: %d, want 409", got)
	}
	if got := owner(profile.Key{Cluster: "lab", JobID: "7", Node: "gpu01"}); got != aliceUID {
		t.Errorf("owner after the refused push = %d, want alice %d", got, aliceUID)
	}
	// Nor may another node's profile of that job name another owner.
	if got := push(rootNode, testJob("7", "gpu02", bobUID, false)); got != http.StatusConflict {
		t.Errorf("a second node's profile of alice's job with bob as owner: %d, want 409", got)
	}
	if got := push(rootNode, testJob("7", "gpu02", aliceUID, false)); got != http.StatusNoContent {
		t.Errorf("a second node's profile of alice's job as alice's: %d, want 204", got)
	}

	// The scheduler record is Slurm's word on the owner.
	r := slurmext.JobRecord{Cluster: "lab", JobID: "8", DisplayID: "8", ArrayTaskID: -1, HetOffset: -1, CancelledBy: -1,
		User: "user1001", UID: aliceUID, State: "COMPLETED", Start: t0, End: t0.Add(time.Hour), Source: "jobcomp"}
	if err := db.PutSchedJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := push(rootNode, testJob("8", "gpu01", bobUID, false)); got != http.StatusConflict {
		t.Errorf("a profile naming bob for a job Slurm says is alice's: %d, want 409", got)
	}
	if _, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: "8", Node: "gpu01"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused profile was stored: %v", err)
	}

	// A node's own running profile is provisional: its next push may name
	// the owner Slurm gave (prolog after discovery), then it is fixed.
	if got := push(rootNode, testJob("9", "gpu01", bobUID, false)); got != http.StatusNoContent {
		t.Fatalf("a discovered job: %d, want 204", got)
	}
	if got := push(rootNode, testJob("9", "gpu01", aliceUID, true)); got != http.StatusNoContent {
		t.Errorf("the same node corrects its running profile's owner: %d, want 204", got)
	}
	if got := owner(profile.Key{Cluster: "lab", JobID: "9", Node: "gpu01"}); got != aliceUID {
		t.Errorf("owner after the correction = %d, want %d", got, aliceUID)
	}
}
