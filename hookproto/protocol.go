package hookproto

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gpuprof/gpuprof/hookproto/fwd"
	"github.com/gpuprof/gpuprof/profile"
)

// Requests understood by the agent's socket. One JSON request and one JSON
// response per connection, each a single line.
const (
	OpStart  = "start"  // a job begins on this node (prolog)
	OpEnd    = "end"    // a job ended on this node (epilog): finalise it
	OpStatus = "status" // liveness and running jobs
	// OpHook: a prolog or epilog gpuprof-hook forwarded whole (Hook), which
	// the agent runs as OpStart or OpEnd (hooks.Forwarder).
	OpHook = fwd.Op
)

// GPURef names one GPU of a job as the hook found it. The agent resolves it
// to a device: by UUID when given (MIG, CUDA_VISIBLE_DEVICES UUIDs), else by
// the device file's minor number, else by Slurm's index in PCI bus order
// (what Slurm's AutoDetect uses when gres.conf lists no files).
type GPURef struct {
	SlurmIndex int    `json:"slurm_index"`
	Minor      int    `json:"minor"`
	UUID       string `json:"uuid,omitempty"`
}

// JobStart is what the prolog tells the agent.
type JobStart struct {
	Cluster   string    `json:"cluster"`
	JobID     string    `json:"job_id"`
	Node      string    `json:"node"`
	User      string    `json:"user"`
	UID       int       `json:"uid"`
	GID       int       `json:"gid"`
	Account   string    `json:"account,omitempty"`
	Partition string    `json:"partition,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	Start     time.Time `json:"start"`
	GPUs      []GPURef  `json:"gpus"`
	// SLUID is SLURM_JOB_SLUID (25.11+): Slurm 26.05 names the job's
	// cgroup by it, and the agent finds the job's processes there.
	SLUID string `json:"sluid,omitempty"`
}

// JobEnd is the one end-of-job event. The epilog sends it to the agent
// (OpEnd) with the job's identity in JobStart; when neither the agent nor
// the database takes it, the epilog spools it (KindHookEnd) with Job, the
// minimal profile the hook could build, and ingest or the agent finishes
// the job from that. Job is left out of the socket's request (omitzero), so
// the request is what it always was; a spooled record from before this type
// had only Job and the end fields, and reads the same.
type JobEnd struct {
	JobStart
	Job        profile.Job `json:"job,omitzero"`
	End        time.Time   `json:"end"`
	ExitKnown  bool        `json:"exit_known"`
	ExitStatus int         `json:"exit_status"`
	ExitSignal int         `json:"exit_signal"`
}

// Request is one message to the agent.
type Request struct {
	Op    string    `json:"op"`
	Start *JobStart `json:"start,omitempty"`
	End   *JobEnd   `json:"end,omitempty"`
	// Hook is OpHook's forwarded hook. Only gpuprof-hook sends it, written
	// by hand (fwd.Hook.AppendRequest).
	Hook *fwd.Hook `json:"hook,omitempty"`
}

// Response is the agent's answer. OK means the request's effect is durable
// (for OpEnd: the finished profile is in the database or the spool).
type Response struct {
	OK      bool     `json:"ok"`
	Error   string   `json:"error,omitempty"`
	Running []string `json:"running,omitempty"` // job ids, for OpStatus
	Devices int      `json:"devices,omitempty"`
	// Held, with OK false for OpEnd: the finished profile was not written
	// (disk full), but the agent keeps the job finished in memory and
	// writes it when the disk takes it. It is lost if the agent stops
	// first: the epilog still records what it can.
	Held bool `json:"held,omitempty"`
}

// ErrUnreachable means no agent answered on the socket.
var ErrUnreachable = errors.New("agent unreachable")

// Client talks to the agent over its unix socket.
type Client struct {
	Socket string
}

// Do sends one request and waits for the answer until ctx ends.
func (c Client) Do(ctx context.Context, req Request) (Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Response{}, fmt.Errorf("%w: send: %v", ErrUnreachable, err)
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return Response{}, fmt.Errorf("%w: read answer: %v", ErrUnreachable, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("bad answer from agent: %w", err)
	}
	if !resp.OK {
		return resp, fmt.Errorf("agent refused %s: %s", req.Op, resp.Error)
	}
	return resp, nil
}
