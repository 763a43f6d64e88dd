package hookproto

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// TestRequestWire: Request's MarshalJSON writes the bytes encoding/json
// writes for Request's fields and tags (plainRequest), for every shape of
// request: status, start, the socket's end (Job zero), an end with a job,
// with characters encoding/json escapes.
func TestRequestWire(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.FixedZone("x", 3600))
	js := JobStart{Cluster: "lab", JobID: "4242_7", Node: "gpu01", User: "a<d>a&", UID: 1001, GID: 100,
		Account: "phys", Partition: "gpu", Comment: "\"q\"\n\u2028", Start: at, SLUID: "s1",
		GPUs: []GPURef{{SlurmIndex: 0, Minor: 0}, {SlurmIndex: 1, Minor: -1, UUID: "GPU-bbbb"}}}
	end := JobEnd{JobStart: js, End: at.Add(time.Hour), ExitKnown: true, ExitStatus: 3, ExitSignal: 9}
	withJob := end
	withJob.Job = profile.Job{Key: profile.Key{Cluster: "lab", JobID: "4242_7", Node: "gpu01"}, Partial: true}
	tests := []struct {
		name string
		req  Request
	}{
		{name: "status", req: Request{Op: OpStatus}},
		{name: "empty", req: Request{}},
		{name: "start", req: Request{Op: OpStart, Start: &js}},
		{name: "start, no GPUs", req: Request{Op: OpStart, Start: &JobStart{JobID: "1"}}},
		{name: "end", req: Request{Op: OpEnd, End: &end}},
		{name: "end, zero", req: Request{Op: OpEnd, End: &JobEnd{}}},
		{name: "end with a job", req: Request{Op: OpEnd, End: &withJob}},
		{name: "start and end", req: Request{Op: "both", Start: &js, End: &end}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(plainRequest(tt.req))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Marshal(%s):\n got %s\nwant %s", tt.name, got, want)
			}
			var enc bytes.Buffer
			if err := json.NewEncoder(&enc).Encode(tt.req); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc.Bytes(), append(want, '\n')) {
				t.Errorf("Encode(%s):\n got %s\nwant %s", tt.name, enc.Bytes(), want)
			}
		})
	}
}

// TestSocketEndIsJobEndWithoutJob: socketEnd has JobEnd's fields but Job,
// in JobEnd's order, with the same types and tags, so that a field added
// to JobEnd cannot go missing from the socket's request.
func TestSocketEndIsJobEndWithoutJob(t *testing.T) {
	var want []reflect.StructField
	je := reflect.TypeFor[JobEnd]()
	for i := range je.NumField() {
		if f := je.Field(i); f.Name != "Job" {
			want = append(want, f)
		}
	}
	se := reflect.TypeFor[socketEnd]()
	if se.NumField() != len(want) {
		t.Fatalf("socketEnd has %d fields, JobEnd without Job %d", se.NumField(), len(want))
	}
	for i, w := range want {
		g := se.Field(i)
		if g.Name != w.Name || g.Type != w.Type || g.Tag != w.Tag || g.Anonymous != w.Anonymous {
			t.Errorf("socketEnd field %d = %s %v %q, want %s %v %q", i, g.Name, g.Type, g.Tag, w.Name, w.Type, w.Tag)
		}
	}
}
