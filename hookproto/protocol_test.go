package hookproto_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
)

// The testdata files were written by gpuprof before this package existed
// (commit 7e75d43): hookend-before-hookproto.json by an epilog's spool.Put
// of the old ingest.HookEnd, request-end.json as the epilog's old
// agent.Request. Records and requests of that release must still read,
// and the socket's request must not change.

var (
	start = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	end   = start.Add(90 * time.Minute)
	js    = hookproto.JobStart{Cluster: "lab", JobID: "4242", Node: "gpu01", User: "ada", UID: 1001, GID: 100,
		Account: "phys", Partition: "gpu", Start: start,
		GPUs: []hookproto.GPURef{{SlurmIndex: 0, Minor: 0}, {SlurmIndex: 1, Minor: -1, UUID: "GPU-bbbb"}}}
)

// beforeHookproto is the spooled end record's type before JobEnd took its
// place (ingest.HookEnd): what an older gpuprof reads a record as.
type beforeHookproto struct {
	Job        profile.Job `json:"job"`
	End        time.Time   `json:"end"`
	ExitKnown  bool        `json:"exit_known"`
	ExitStatus int         `json:"exit_status"`
	ExitSignal int         `json:"exit_signal"`
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJobEndReadsOldSpoolRecord(t *testing.T) {
	var je hookproto.JobEnd
	if err := json.Unmarshal(readFile(t, "testdata/hookend-before-hookproto.json"), &je); err != nil {
		t.Fatal(err)
	}
	want := profile.Key{Cluster: "lab", JobID: "4242", Node: "gpu01"}
	if je.Job.Key != want || !je.End.Equal(end) || !je.ExitKnown || je.ExitStatus != 3 || je.ExitSignal != 0 {
		t.Errorf("got job %v end %v exit %v/%d/%d, want %v %v true/3/0", je.Job.Key, je.End, je.ExitKnown, je.ExitStatus, je.ExitSignal, want, end)
	}
	if len(je.Job.GPUs) != 2 || je.Job.GPUs[1].UUID != hookproto.UnresolvedUUIDPrefix+"1" || !je.Job.Partial {
		t.Errorf("job = %+v, want two GPUs, the second unresolved, partial", je.Job)
	}
	if je.JobID != "" {
		t.Errorf("JobStart.JobID = %q from a record without it, want empty", je.JobID)
	}
}

// TestJobEndRecordReadsAsBefore: a record this release spools (JobEnd with
// the job's identity and its minimal profile) reads in an older release
// exactly as that release's own record of the same end did.
func TestJobEndRecordReadsAsBefore(t *testing.T) {
	var old beforeHookproto
	if err := json.Unmarshal(readFile(t, "testdata/hookend-before-hookproto.json"), &old); err != nil {
		t.Fatal(err)
	}
	je := hookproto.JobEnd{JobStart: js, Job: old.Job, End: end, ExitKnown: true, ExitStatus: 3}
	b, err := json.Marshal(je)
	if err != nil {
		t.Fatal(err)
	}
	var got beforeHookproto
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, old) {
		t.Errorf("new record read as before:\n got %+v\nwant %+v", got, old)
	}
}

func TestEndRequestUnchanged(t *testing.T) {
	je := hookproto.JobEnd{JobStart: js, End: end, ExitKnown: true, ExitStatus: 3}
	b, err := json.Marshal(hookproto.Request{Op: hookproto.OpEnd, End: &je})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.TrimSuffix(readFile(t, "testdata/request-end.json"), []byte("\n"))
	if !bytes.Equal(b, want) {
		t.Errorf("request:\n got %s\nwant %s", b, want)
	}
}
