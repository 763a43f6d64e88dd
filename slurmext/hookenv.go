package slurmext

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds on hook environment values.
const (
	// MaxCommentBytes is the most of SLURM_JOB_COMMENT that is kept.
	MaxCommentBytes = 1024
	// MaxFieldBytes bounds every other text field (PATH_MAX for WorkDir).
	MaxFieldBytes = 4096
	// maxJobIDLen is the longest job id accepted.
	maxJobIDLen = 64
	// maxUUIDLen bounds one GPU or MIG UUID ("MIG-GPU-<uuid>/7/0" is ~50).
	maxUUIDLen = 128
	// MaxUnixSeconds is 9999-12-31T23:59:59Z: later times cannot be
	// formatted as RFC 3339 and are certainly wrong.
	MaxUnixSeconds = 253402300799
	// noValExit marks Slurm's NO_VAL/INFINITE (0xfffffffe, 0xffffffff):
	// an exit code that was never set.
	noValExit = 0xfffffffe
)

// HookEnv is the parsed environment of a slurmd Prolog/Epilog. Text fields are
// sanitised (no control characters, valid UTF-8, bounded length) so that they
// can be logged, stored and shown as they are.
type HookEnv struct {
	Context      string // SLURM_SCRIPT_CONTEXT, e.g. "prolog_slurmd", "epilog_slurmd"
	Cluster      string // SLURM_CLUSTER_NAME
	JobID        string // SLURM_JOB_ID, validated (ValidJobID); text, because 25.11 ids may be non-numeric
	SLUID        string // SLURM_JOB_SLUID (25.11+) as Slurm prints it ("s5K1KKYAYG5D00"); "" when absent or malformed
	Node         string // SLURMD_NODENAME
	User         string // SLURM_JOB_USER
	UID          int    // SLURM_JOB_UID; -1 when absent or malformed
	GID          int    // SLURM_JOB_GID; -1 when absent or malformed
	Partition    string // SLURM_JOB_PARTITION
	Account      string // SLURM_JOB_ACCOUNT
	WorkDir      string // SLURM_JOB_WORK_DIR
	Reservation  string // SLURM_JOB_RESERVATION
	Constraints  string // SLURM_JOB_CONSTRAINTS
	Comment      string // SLURM_JOB_COMMENT, control characters removed, at most MaxCommentBytes
	NodeList     string // SLURM_JOB_NODELIST (23.02+), else SLURM_NODELIST; a hostlist expression
	NumNodes     int    // SLURM_JOB_NUM_NODES; 0 when absent
	RestartCount int    // SLURM_JOB_RESTART_COUNT; 0 when absent

	// GPUs are Slurm GPU indices: positions in the node's GRES gpu list
	// (see ParseGresConf), not NVML indices. From SLURM_JOB_GPUS, else
	// GPU_DEVICE_ORDINAL, else a numeric CUDA_VISIBLE_DEVICES. Sorted, unique.
	GPUs []int
	// GPUUUIDs are the GPU-/MIG- UUIDs that CUDA_VISIBLE_DEVICES (else
	// GPU_DEVICE_ORDINAL) carries when Slurm knows them (MIG); in the order
	// given, duplicates removed.
	GPUUUIDs []string

	Start time.Time // SLURM_JOB_START_TIME (23.02+), UTC; zero if absent
	End   time.Time // SLURM_JOB_END_TIME (23.02+), UTC; zero if absent

	// ExitStatus and ExitSignal are valid when HasExit: from
	// SLURM_JOB_EXIT_CODE2 ("3:0"), else decoded from the raw wait status in
	// SLURM_JOB_EXIT_CODE (768 → exit 3; the low 7 bits are the signal).
	ExitStatus int
	ExitSignal int
	HasExit    bool
	DerivedEC  string // SLURM_JOB_DERIVED_EC as given (a raw wait status)

	// Problems are notes on malformed but non-fatal values, e.g.
	// "SLURM_JOB_UID: not a number: \"x\"". The fields they concern keep
	// their "absent" value, or the sanitised text.
	Problems []string
}

// ValidJobID reports whether id is 1–64 characters of [A-Za-z0-9_.+-], the
// shape of every Slurm job id (plain "123", array "123_4", het "123+1", and
// the non-numeric ids of 25.11).
func ValidJobID(id string) bool {
	if len(id) == 0 || len(id) > maxJobIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// Notes collects what a reader noted of the fields it could not take, one
// line each ("name: why"), with the values quoted short: a hook
// environment's Problems, a jobcomp or sacct record's notes. Its methods read
// one field each, noting a malformed value and returning the unknown value
// of its kind (0, -1, the zero time, "") instead.
type Notes []string

// Add notes a problem with the field name.
func (n *Notes) Add(name, format string, args ...any) {
	*n = append(*n, name+": "+fmt.Sprintf(format, args...))
}

// Text returns the sanitised value of a text variable, noting any change.
func (n *Notes) Text(name, v string, maxBytes int) string {
	out, removed, truncated := sanitizeText(v, maxBytes)
	if removed > 0 {
		n.Add(name, "removed or replaced %d control or invalid characters", removed)
	}
	if truncated {
		n.Add(name, "truncated from %d to %d bytes", len(v), len(out))
	}
	return out
}

// ID parses a uid/gid: 0..4294967294 (4294967295 is (uid_t)-1).
func (n *Notes) ID(name, v string) int {
	if v == "" {
		return -1
	}
	u, ok := ParseDigits(strings.TrimSpace(v), math.MaxUint32-1)
	if !ok {
		n.Add(name, "not a user or group id: %s", QuoteShort(v))
		return -1
	}
	return int(u)
}

// Count parses a non-negative count such as SLURM_JOB_NUM_NODES.
func (n *Notes) Count(name, v string) int {
	if v == "" {
		return 0
	}
	u, ok := ParseDigits(strings.TrimSpace(v), math.MaxInt32)
	if !ok {
		n.Add(name, "not a non-negative number: %s", QuoteShort(v))
		return 0
	}
	return int(u)
}

// SLUID parses a SLUID (SLURM_JOB_SLUID) into the form Slurm prints, the
// one its 26.05 cgroup directories are named by (SlurmCgroupJob).
func (n *Notes) SLUID(name, v string) string {
	if v == "" {
		return ""
	}
	s, ok := ParseSLUID(strings.TrimSpace(v))
	if !ok {
		n.Add(name, "not a SLUID: %s", QuoteShort(v))
		return ""
	}
	return s
}

// Epoch parses seconds since 1970; "0" means unset, as in Slurm.
func (n *Notes) Epoch(name, v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	u, ok := ParseDigits(strings.TrimSpace(v), MaxUnixSeconds)
	if !ok {
		n.Add(name, "not a time in seconds since 1970: %s", QuoteShort(v))
		return time.Time{}
	}
	if u == 0 {
		return time.Time{}
	}
	return time.Unix(int64(u), 0).UTC()
}

// ParseHookEnv parses the environment of a slurmd Prolog or Epilog, read
// through getenv (os.Getenv in production, a map in tests).
//
// It fails, with an error wrapping ErrBadEnv, only when SLURM_JOB_ID is missing
// or not a valid job id (ValidJobID): without it nothing can be recorded.
// Every other malformed value becomes a note in Problems and the field keeps
// its absent value, so that the hook can still record what it has. It never
// panics, whatever the input.
func ParseHookEnv(getenv func(string) string) (HookEnv, error) {
	id := getenv("SLURM_JOB_ID")
	switch {
	case id == "":
		return HookEnv{}, fmt.Errorf("SLURM_JOB_ID: missing: %w", ErrBadEnv)
	case !ValidJobID(id):
		return HookEnv{}, fmt.Errorf("SLURM_JOB_ID %s: not 1-%d characters of [A-Za-z0-9_.+-]: %w",
			QuoteShort(id), maxJobIDLen, ErrBadEnv)
	}
	var n Notes
	e := HookEnv{JobID: id}
	e.Context = n.Text("SLURM_SCRIPT_CONTEXT", getenv("SLURM_SCRIPT_CONTEXT"), MaxFieldBytes)
	e.Cluster = n.Text("SLURM_CLUSTER_NAME", getenv("SLURM_CLUSTER_NAME"), MaxFieldBytes)
	e.Node = n.Text("SLURMD_NODENAME", getenv("SLURMD_NODENAME"), MaxFieldBytes)
	e.User = n.Text("SLURM_JOB_USER", getenv("SLURM_JOB_USER"), MaxFieldBytes)
	e.UID = n.ID("SLURM_JOB_UID", getenv("SLURM_JOB_UID"))
	e.GID = n.ID("SLURM_JOB_GID", getenv("SLURM_JOB_GID"))
	e.Partition = n.Text("SLURM_JOB_PARTITION", getenv("SLURM_JOB_PARTITION"), MaxFieldBytes)
	e.Account = n.Text("SLURM_JOB_ACCOUNT", getenv("SLURM_JOB_ACCOUNT"), MaxFieldBytes)
	e.WorkDir = n.Text("SLURM_JOB_WORK_DIR", getenv("SLURM_JOB_WORK_DIR"), MaxFieldBytes)
	e.Reservation = n.Text("SLURM_JOB_RESERVATION", getenv("SLURM_JOB_RESERVATION"), MaxFieldBytes)
	e.Constraints = n.Text("SLURM_JOB_CONSTRAINTS", getenv("SLURM_JOB_CONSTRAINTS"), MaxFieldBytes)
	e.Comment = n.Text("SLURM_JOB_COMMENT", getenv("SLURM_JOB_COMMENT"), MaxCommentBytes)
	e.NumNodes = n.Count("SLURM_JOB_NUM_NODES", getenv("SLURM_JOB_NUM_NODES"))
	e.RestartCount = n.Count("SLURM_JOB_RESTART_COUNT", getenv("SLURM_JOB_RESTART_COUNT"))
	e.SLUID = n.SLUID("SLURM_JOB_SLUID", getenv("SLURM_JOB_SLUID"))
	e.Start = n.Epoch("SLURM_JOB_START_TIME", getenv("SLURM_JOB_START_TIME"))
	e.End = n.Epoch("SLURM_JOB_END_TIME", getenv("SLURM_JOB_END_TIME"))

	nodeListVar := "SLURM_JOB_NODELIST"
	nodeList := getenv(nodeListVar)
	if nodeList == "" {
		nodeListVar = "SLURM_NODELIST"
		nodeList = getenv(nodeListVar)
	}
	e.NodeList = n.Text(nodeListVar, nodeList, MaxFieldBytes)
	if e.NodeList != "" {
		// Validate only; expanding could be large and no hook needs it.
		if _, err := parseHostlist(e.NodeList); err != nil {
			n.Add(nodeListVar, "%v", err)
		}
	}

	e.parseGPUs(getenv, &n)
	e.parseExit(getenv, &n)
	e.Problems = n
	return e, nil
}

// parseGPUs fills GPUs and GPUUUIDs from the first variable that gives each.
func (e *HookEnv) parseGPUs(getenv func(string) string, n *Notes) {
	var fromVar string
	for _, name := range []string{"SLURM_JOB_GPUS", "GPU_DEVICE_ORDINAL", "CUDA_VISIBLE_DEVICES"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		var (
			idx   []int
			uuids []string
			err   error
		)
		if name == "SLURM_JOB_GPUS" {
			// Always Slurm's numeric indices, even under MIG.
			idx, err = ParseIndexList(v)
		} else {
			idx, uuids, err = parseDeviceList(v)
		}
		if err != nil {
			n.Add(name, "%v", err)
			continue
		}
		switch {
		case idx != nil && e.GPUs == nil:
			e.GPUs, fromVar = idx, name
		case idx != nil && !slices.Equal(idx, e.GPUs):
			n.Add(name, "indices %s disagree with %s %s; using %s",
				QuoteShort(FormatIndexList(idx)), fromVar, QuoteShort(FormatIndexList(e.GPUs)), fromVar)
		}
		if uuids != nil && e.GPUUUIDs == nil {
			e.GPUUUIDs = uuids
		}
	}
}

// parseDeviceList parses CUDA_VISIBLE_DEVICES or GPU_DEVICE_ORDINAL: either an
// index list or a list of GPU-/MIG- UUIDs. "NoDevFiles", which old Slurm
// versions set when gres.conf has no File=, means no devices.
func parseDeviceList(v string) ([]int, []string, error) {
	if strings.TrimSpace(v) == "NoDevFiles" {
		return nil, nil, nil
	}
	if !strings.Contains(v, "GPU-") && !strings.Contains(v, "MIG-") {
		idx, err := ParseIndexList(v)
		return idx, nil, err
	}
	if strings.Count(v, ",") >= MaxIndexList {
		return nil, nil, fmt.Errorf("more than %d devices: %w", MaxIndexList, ErrTooLarge)
	}
	var uuids []string
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if !validUUID(item) {
			return nil, nil, fmt.Errorf("%s is not a GPU-/MIG- UUID in a UUID list: %w", QuoteShort(item), ErrBadIndexList)
		}
		if !slices.Contains(uuids, item) {
			uuids = append(uuids, item)
		}
	}
	return nil, uuids, nil
}

// validUUID accepts NVIDIA device UUIDs: "GPU-<hex uuid>", "MIG-<hex uuid>" and
// the older "MIG-GPU-<uuid>/<gi>/<ci>".
func validUUID(s string) bool {
	if len(s) <= len("GPU-") || len(s) > maxUUIDLen ||
		!strings.HasPrefix(s, "GPU-") && !strings.HasPrefix(s, "MIG-") {
		return false
	}
	for i := 4; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '/') {
			return false
		}
	}
	return true
}

// parseExit fills the exit fields of an Epilog environment.
func (e *HookEnv) parseExit(getenv func(string) string, n *Notes) {
	if v := getenv("SLURM_JOB_EXIT_CODE2"); v != "" {
		status, signal, err := ParseExitCode2(v)
		if err == nil {
			e.ExitStatus, e.ExitSignal, e.HasExit = status, signal, true
		} else {
			n.Add("SLURM_JOB_EXIT_CODE2", "%v", err)
		}
	}
	if v := getenv("SLURM_JOB_EXIT_CODE"); v != "" && !e.HasExit {
		raw, ok := ParseDigits(strings.TrimSpace(v), math.MaxUint32)
		switch {
		case !ok:
			n.Add("SLURM_JOB_EXIT_CODE", "not a wait status: %s", QuoteShort(v))
		case raw >= noValExit:
			n.Add("SLURM_JOB_EXIT_CODE", "%d means no exit code was recorded", raw)
		default:
			e.ExitStatus, e.ExitSignal = DecodeWaitStatus(uint32(raw))
			e.HasExit = true
		}
	}
	if v := getenv("SLURM_JOB_DERIVED_EC"); v != "" {
		e.DerivedEC = n.Text("SLURM_JOB_DERIVED_EC", v, maxQuoted)
		if _, ok := ParseDigits(e.DerivedEC, math.MaxUint32); !ok {
			n.Add("SLURM_JOB_DERIVED_EC", "not a wait status: %s", QuoteShort(v))
		}
	}
}

// DecodeWaitStatus splits a raw wait(2) status as Slurm stores it (the value of
// SLURM_JOB_EXIT_CODE) into exit status and terminating signal, as
// WEXITSTATUS/WTERMSIG do: 768 → (3, 0); 9 → (0, 9). A stopped status (low
// byte 0x7f) gives (0, 0), as in SLURM_JOB_EXIT_CODE2.
func DecodeWaitStatus(raw uint32) (status, signal int) {
	switch low := raw & 0x7f; low {
	case 0:
		return int(raw>>8) & 0xff, 0
	case 0x7f:
		return 0, 0
	default:
		return 0, int(low)
	}
}

// ParseExitCode2 parses Slurm's "exit:signal" form (SLURM_JOB_EXIT_CODE2,
// jobcomp EXITCODE/DERIVED_EC, sacct ExitCode): "3:0" → 3, 0. The exit status
// must be 0–255 and the signal 0–127; surrounding spaces are ignored. Errors
// wrap ErrBadExitCode.
func ParseExitCode2(s string) (status, signal int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, 0, fmt.Errorf("exit code %s: want exit:signal: %w", QuoteShort(s), ErrBadExitCode)
	}
	st, ok1 := ParseDigits(a, 255)
	sig, ok2 := ParseDigits(b, 127)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("exit code %s: want exit 0-255 and signal 0-127: %w", QuoteShort(s), ErrBadExitCode)
	}
	return int(st), int(sig), nil
}

// FormatExitCode2 renders status and signal as "exit:signal".
func FormatExitCode2(status, signal int) string {
	return strconv.Itoa(status) + ":" + strconv.Itoa(signal)
}
