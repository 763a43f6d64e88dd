package hookproto

import (
	"encoding/json"
	"reflect"
	"time"
)

// MarshalJSON writes r exactly as encoding/json writes Request's fields
// and tags, but builds the encoders of what r carries only. encoding/json
// builds a struct's encoder for every field's type before it writes a
// byte: a prolog's start request built JobEnd's and profile.Job's whole
// tree, an epilog's end request profile.Job's, in a process that encodes
// one request and exits (1.1 of the 1.9 ms the first encoding took on the
// shared 2-core VM, issue #41: a hook starts as fast as a small program).
// TestRequestWire holds the bytes to the plain encoding.
func (r Request) MarshalJSON() ([]byte, error) {
	switch {
	case r.Hook != nil:
		return json.Marshal(plainRequest(r))
	case r.End == nil:
		return json.Marshal(startRequest{Op: r.Op, Start: r.Start})
	case reflect.ValueOf(r.End.Job).IsZero(): // omitzero's test: Job is left out
		e := r.End
		return json.Marshal(endRequest{Op: r.Op, Start: r.Start, End: &socketEnd{JobStart: e.JobStart,
			End: e.End, ExitKnown: e.ExitKnown, ExitStatus: e.ExitStatus, ExitSignal: e.ExitSignal}})
	}
	return json.Marshal(plainRequest(r))
}

// plainRequest is Request without its MarshalJSON: encoding/json's own
// encoding of every field.
type plainRequest Request

// startRequest is Request without End (nil, omitted).
type startRequest struct {
	Op    string    `json:"op"`
	Start *JobStart `json:"start,omitempty"`
}

// endRequest is Request with End's Job zero (omitted), the socket's end.
type endRequest struct {
	Op    string     `json:"op"`
	Start *JobStart  `json:"start,omitempty"`
	End   *socketEnd `json:"end,omitempty"`
}

// socketEnd is JobEnd without Job: its other fields, in order, with their
// tags (TestSocketEndIsJobEndWithoutJob).
type socketEnd struct {
	JobStart
	End        time.Time `json:"end"`
	ExitKnown  bool      `json:"exit_known"`
	ExitStatus int       `json:"exit_status"`
	ExitSignal int       `json:"exit_signal"`
}
