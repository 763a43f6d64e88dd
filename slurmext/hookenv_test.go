package slurmext

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

// epilogEnv is an Epilog environment as Slurm 23.02 builds it for a 2-GPU job.
func epilogEnv() map[string]string {
	return map[string]string{
		"SLURMD_NODENAME":         "gpu01",
		"SLURM_CONF":              "/etc/slurm/slurm.conf",
		"SLURM_CLUSTER_NAME":      "lab",
		"SLURM_JOB_ID":            "4242",
		"SLURM_JOB_UID":           "1000",
		"SLURM_JOB_GID":           "100",
		"SLURM_JOB_USER":          "alice",
		"SLURM_JOB_WORK_DIR":      "/home/alice/run",
		"SLURM_NODELIST":          "gpu01",
		"SLURM_JOB_NODELIST":      "gpu[01-02]",
		"SLURM_SCRIPT_CONTEXT":    "epilog_slurmd",
		"SLURM_JOB_PARTITION":     "gpu",
		"SLURM_JOB_ACCOUNT":       "vision",
		"SLURM_JOB_COMMENT":       "resnet sweep",
		"SLURM_JOB_CONSTRAINTS":   "h100",
		"SLURM_JOB_NUM_NODES":     "2",
		"SLURM_JOB_RESERVATION":   "maint",
		"SLURM_JOB_RESTART_COUNT": "1",
		"SLURM_JOB_START_TIME":    "1700000000",
		"SLURM_JOB_END_TIME":      "1700003600",
		"SLURM_JOB_EXIT_CODE":     "768",
		"SLURM_JOB_EXIT_CODE2":    "3:0",
		"SLURM_JOB_DERIVED_EC":    "0",
		"SLURM_JOB_GPUS":          "0,2",
		"CUDA_VISIBLE_DEVICES":    "0,2",
		"GPU_DEVICE_ORDINAL":      "0,2",
	}
}

func epilogWant() HookEnv {
	return HookEnv{
		Context: "epilog_slurmd", Cluster: "lab", JobID: "4242", Node: "gpu01",
		User: "alice", UID: 1000, GID: 100,
		Partition: "gpu", Account: "vision", WorkDir: "/home/alice/run", Reservation: "maint",
		Constraints: "h100", Comment: "resnet sweep", NodeList: "gpu[01-02]", NumNodes: 2, RestartCount: 1,
		GPUs:  []int{0, 2},
		Start: time.Unix(1700000000, 0).UTC(), End: time.Unix(1700003600, 0).UTC(),
		ExitStatus: 3, ExitSignal: 0, HasExit: true, DerivedEC: "0",
	}
}

// with returns a copy of env with changes applied; an empty value deletes.
func with(env map[string]string, changes map[string]string) func(string) string {
	m := maps.Clone(env)
	for k, v := range changes {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

func TestParseHookEnv(t *testing.T) {
	tests := []struct {
		name         string
		changes      map[string]string
		edit         func(*HookEnv) // applied to epilogWant()
		wantProblems []string       // substrings, one per expected note, in order
	}{
		{name: "complete epilog"},
		{
			name: "prolog without exit codes or 23.02 variables",
			changes: map[string]string{
				"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_EXIT_CODE": "", "SLURM_JOB_EXIT_CODE2": "",
				"SLURM_JOB_DERIVED_EC": "", "SLURM_JOB_START_TIME": "", "SLURM_JOB_END_TIME": "",
				"SLURM_JOB_NODELIST": "",
			},
			edit: func(e *HookEnv) {
				e.Context = "prolog_slurmd"
				e.ExitStatus, e.HasExit, e.DerivedEC = 0, false, ""
				e.Start, e.End = time.Time{}, time.Time{}
				e.NodeList = "gpu01"
			},
		},
		{
			name:    "non-numeric 25.11 job id",
			changes: map[string]string{"SLURM_JOB_ID": "sC8F3K2M1A0Z"},
			edit:    func(e *HookEnv) { e.JobID = "sC8F3K2M1A0Z" },
		},
		{
			name:    "SLUID of 25.11 (the name of the job's 26.05 cgroup)",
			changes: map[string]string{"SLURM_JOB_SLUID": "s5K1KKYAYG5D00"},
			edit:    func(e *HookEnv) { e.SLUID = "s5K1KKYAYG5D00" },
		},
		{
			name:    "SLUID read as Slurm reads it, kept as Slurm prints it",
			changes: map[string]string{"SLURM_JOB_SLUID": "s5k1kkyayg5doo"},
			edit:    func(e *HookEnv) { e.SLUID = "s5K1KKYAYG5D00" },
		},
		{
			name:         "malformed SLUID dropped with a note",
			changes:      map[string]string{"SLURM_JOB_SLUID": "s5K1/../job_9"},
			wantProblems: []string{"SLURM_JOB_SLUID: not a SLUID"},
		},
		{
			name:         "numeric SLUID is not a SLUID",
			changes:      map[string]string{"SLURM_JOB_SLUID": "4242"},
			wantProblems: []string{"SLURM_JOB_SLUID: not a SLUID"},
		},
		{
			name:    "array and het job ids",
			changes: map[string]string{"SLURM_JOB_ID": "123_4+1.batch-x"},
			edit:    func(e *HookEnv) { e.JobID = "123_4+1.batch-x" },
		},
		{
			name:         "malformed uid and gid",
			changes:      map[string]string{"SLURM_JOB_UID": "alice", "SLURM_JOB_GID": "-5"},
			edit:         func(e *HookEnv) { e.UID, e.GID = -1, -1 },
			wantProblems: []string{"SLURM_JOB_UID: not a user or group id", "SLURM_JOB_GID: not a user or group id"},
		},
		{
			name:         "uid -1 as unsigned is refused",
			changes:      map[string]string{"SLURM_JOB_UID": "4294967295"},
			edit:         func(e *HookEnv) { e.UID = -1 },
			wantProblems: []string{"SLURM_JOB_UID"},
		},
		{
			name:    "absent uid is -1 without a note",
			changes: map[string]string{"SLURM_JOB_UID": "", "SLURM_JOB_GID": ""},
			edit:    func(e *HookEnv) { e.UID, e.GID = -1, -1 },
		},
		{
			name:    "root uid",
			changes: map[string]string{"SLURM_JOB_UID": "0", "SLURM_JOB_GID": "0"},
			edit:    func(e *HookEnv) { e.UID, e.GID = 0, 0 },
		},
		{
			name:    "spaces around numbers tolerated",
			changes: map[string]string{"SLURM_JOB_UID": " 1000 ", "SLURM_JOB_NUM_NODES": "2\n"},
		},
		{
			name:         "comment with control characters",
			changes:      map[string]string{"SLURM_JOB_COMMENT": "line1\nline2\x1b[31m\tend\u202e"},
			edit:         func(e *HookEnv) { e.Comment = "line1line2[31mend" },
			wantProblems: []string{"SLURM_JOB_COMMENT: removed or replaced 4"},
		},
		{
			name:         "comment with invalid UTF-8",
			changes:      map[string]string{"SLURM_JOB_COMMENT": "ok\xffok"},
			edit:         func(e *HookEnv) { e.Comment = "ok\uFFFDok" },
			wantProblems: []string{"SLURM_JOB_COMMENT: removed or replaced 1"},
		},
		{
			name:    "10 KB comment truncated to 1024 bytes",
			changes: map[string]string{"SLURM_JOB_COMMENT": strings.Repeat("ab\x01", 3500)},
			edit:    func(e *HookEnv) { e.Comment = strings.Repeat("ab", 512) },
			wantProblems: []string{
				"SLURM_JOB_COMMENT: removed or replaced 512",
				"SLURM_JOB_COMMENT: truncated from 10500 to 1024 bytes",
			},
		},
		{
			name:         "truncation respects rune boundaries",
			changes:      map[string]string{"SLURM_JOB_COMMENT": "x" + strings.Repeat("é", 600)},
			edit:         func(e *HookEnv) { e.Comment = "x" + strings.Repeat("é", 511) },
			wantProblems: []string{"truncated from 1201 to 1023 bytes"},
		},
		{
			name:         "work dir with newline sanitised",
			changes:      map[string]string{"SLURM_JOB_WORK_DIR": "/home/a\nFAKE LOG LINE"},
			edit:         func(e *HookEnv) { e.WorkDir = "/home/aFAKE LOG LINE" },
			wantProblems: []string{"SLURM_JOB_WORK_DIR: removed or replaced 1"},
		},
		{
			name:         "malformed counts",
			changes:      map[string]string{"SLURM_JOB_NUM_NODES": "two", "SLURM_JOB_RESTART_COUNT": "-1"},
			edit:         func(e *HookEnv) { e.NumNodes, e.RestartCount = 0, 0 },
			wantProblems: []string{"SLURM_JOB_NUM_NODES", "SLURM_JOB_RESTART_COUNT"},
		},
		{
			name:         "malformed times",
			changes:      map[string]string{"SLURM_JOB_START_TIME": "yesterday", "SLURM_JOB_END_TIME": "99999999999999"},
			edit:         func(e *HookEnv) { e.Start, e.End = time.Time{}, time.Time{} },
			wantProblems: []string{"SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME"},
		},
		{
			name:    "zero time means unset",
			changes: map[string]string{"SLURM_JOB_END_TIME": "0"},
			edit:    func(e *HookEnv) { e.End = time.Time{} },
		},
		{
			name:         "malformed node list kept with a note",
			changes:      map[string]string{"SLURM_JOB_NODELIST": "gpu[01-"},
			edit:         func(e *HookEnv) { e.NodeList = "gpu[01-" },
			wantProblems: []string{"SLURM_JOB_NODELIST: hostlist"},
		},
		{
			name:    "gpus from SLURM_JOB_GPUS with ranges",
			changes: map[string]string{"SLURM_JOB_GPUS": "0,2-3", "CUDA_VISIBLE_DEVICES": "", "GPU_DEVICE_ORDINAL": ""},
			edit:    func(e *HookEnv) { e.GPUs = []int{0, 2, 3} },
		},
		{
			name:    "gpus with spaces and duplicates",
			changes: map[string]string{"SLURM_JOB_GPUS": " 2 , 0 ,2", "CUDA_VISIBLE_DEVICES": "", "GPU_DEVICE_ORDINAL": ""},
		},
		{
			name:    "gpus from GPU_DEVICE_ORDINAL",
			changes: map[string]string{"SLURM_JOB_GPUS": "", "CUDA_VISIBLE_DEVICES": "", "GPU_DEVICE_ORDINAL": "1"},
			edit:    func(e *HookEnv) { e.GPUs = []int{1} },
		},
		{
			name:    "gpus from numeric CUDA_VISIBLE_DEVICES",
			changes: map[string]string{"SLURM_JOB_GPUS": "", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": "3"},
			edit:    func(e *HookEnv) { e.GPUs = []int{3} },
		},
		{
			name:    "no gpus",
			changes: map[string]string{"SLURM_JOB_GPUS": "", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": ""},
			edit:    func(e *HookEnv) { e.GPUs = nil },
		},
		{
			name:    "NoDevFiles means none",
			changes: map[string]string{"SLURM_JOB_GPUS": "", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": "NoDevFiles"},
			edit:    func(e *HookEnv) { e.GPUs = nil },
		},
		{
			name: "MIG: numeric SLURM_JOB_GPUS, UUIDs in CUDA_VISIBLE_DEVICES",
			changes: map[string]string{
				"SLURM_JOB_GPUS": "4", "GPU_DEVICE_ORDINAL": "",
				"CUDA_VISIBLE_DEVICES": "MIG-5c3b1d4e-8a2f-5b6c-9d0e-1f2a3b4c5d6e",
			},
			edit: func(e *HookEnv) {
				e.GPUs = []int{4}
				e.GPUUUIDs = []string{"MIG-5c3b1d4e-8a2f-5b6c-9d0e-1f2a3b4c5d6e"}
			},
		},
		{
			name: "GPU UUIDs deduplicated in order, old MIG form accepted",
			changes: map[string]string{
				"SLURM_JOB_GPUS": "", "GPU_DEVICE_ORDINAL": "",
				"CUDA_VISIBLE_DEVICES": "GPU-b,MIG-GPU-a/1/0, GPU-b",
			},
			edit: func(e *HookEnv) { e.GPUs, e.GPUUUIDs = nil, []string{"GPU-b", "MIG-GPU-a/1/0"} },
		},
		{
			name:         "reverse range is a note and falls back",
			changes:      map[string]string{"SLURM_JOB_GPUS": "3-1"},
			wantProblems: []string{"SLURM_JOB_GPUS: index list \"3-1\": reverse range"},
		},
		{
			name:         "letters are a note",
			changes:      map[string]string{"SLURM_JOB_GPUS": "a,b", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": ""},
			edit:         func(e *HookEnv) { e.GPUs = nil },
			wantProblems: []string{"SLURM_JOB_GPUS"},
		},
		{
			name:         "empty item in GPU list",
			changes:      map[string]string{"SLURM_JOB_GPUS": ",", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": ""},
			edit:         func(e *HookEnv) { e.GPUs = nil },
			wantProblems: []string{"SLURM_JOB_GPUS: index list \",\": empty item"},
		},
		{
			name:         "huge range bounded",
			changes:      map[string]string{"SLURM_JOB_GPUS": "0-100000000", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": ""},
			edit:         func(e *HookEnv) { e.GPUs = nil },
			wantProblems: []string{"more than 4096 indices"},
		},
		{
			name:         "mixed numbers and UUIDs",
			changes:      map[string]string{"SLURM_JOB_GPUS": "", "GPU_DEVICE_ORDINAL": "", "CUDA_VISIBLE_DEVICES": "0,GPU-abc"},
			edit:         func(e *HookEnv) { e.GPUs = nil },
			wantProblems: []string{"CUDA_VISIBLE_DEVICES: \"0\" is not a GPU-/MIG- UUID"},
		},
		{
			name:         "disagreeing lists noted, SLURM_JOB_GPUS wins",
			changes:      map[string]string{"CUDA_VISIBLE_DEVICES": "1"},
			wantProblems: []string{"CUDA_VISIBLE_DEVICES: indices \"1\" disagree with SLURM_JOB_GPUS \"0,2\""},
		},
		{
			name:    "exit from raw status when EXIT_CODE2 absent",
			changes: map[string]string{"SLURM_JOB_EXIT_CODE2": "", "SLURM_JOB_EXIT_CODE": "256"},
			edit:    func(e *HookEnv) { e.ExitStatus = 1 },
		},
		{
			name:    "signal from raw status",
			changes: map[string]string{"SLURM_JOB_EXIT_CODE2": "", "SLURM_JOB_EXIT_CODE": "9"},
			edit:    func(e *HookEnv) { e.ExitStatus, e.ExitSignal = 0, 9 },
		},
		{
			name:         "malformed EXIT_CODE2 falls back to raw",
			changes:      map[string]string{"SLURM_JOB_EXIT_CODE2": "3", "SLURM_JOB_EXIT_CODE": "512"},
			edit:         func(e *HookEnv) { e.ExitStatus = 2 },
			wantProblems: []string{"SLURM_JOB_EXIT_CODE2: exit code \"3\""},
		},
		{
			name:         "both malformed",
			changes:      map[string]string{"SLURM_JOB_EXIT_CODE2": "x:y", "SLURM_JOB_EXIT_CODE": "-1"},
			edit:         func(e *HookEnv) { e.ExitStatus, e.HasExit = 0, false },
			wantProblems: []string{"SLURM_JOB_EXIT_CODE2", "SLURM_JOB_EXIT_CODE: not a wait status"},
		},
		{
			name:         "NO_VAL exit code",
			changes:      map[string]string{"SLURM_JOB_EXIT_CODE2": "", "SLURM_JOB_EXIT_CODE": "4294967294"},
			edit:         func(e *HookEnv) { e.ExitStatus, e.HasExit = 0, false },
			wantProblems: []string{"SLURM_JOB_EXIT_CODE: 4294967294 means no exit code"},
		},
		{
			name:         "malformed derived exit code kept, noted",
			changes:      map[string]string{"SLURM_JOB_DERIVED_EC": "0:0"},
			edit:         func(e *HookEnv) { e.DerivedEC = "0:0" },
			wantProblems: []string{"SLURM_JOB_DERIVED_EC: not a wait status"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookEnv(with(epilogEnv(), tt.changes))
			if err != nil {
				t.Fatalf("ParseHookEnv error = %v", err)
			}
			want := epilogWant()
			if tt.edit != nil {
				tt.edit(&want)
			}
			gotProblems := got.Problems
			got.Problems = nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseHookEnv =\n%+v\nwant\n%+v", got, want)
			}
			if len(gotProblems) != len(tt.wantProblems) {
				t.Fatalf("Problems = %q, want %d notes matching %q", gotProblems, len(tt.wantProblems), tt.wantProblems)
			}
			for i, sub := range tt.wantProblems {
				if !strings.Contains(gotProblems[i], sub) {
					t.Errorf("Problems[%d] = %q, want it to contain %q", i, gotProblems[i], sub)
				}
			}
		})
	}
}

func TestParseHookEnvBadJobID(t *testing.T) {
	tests := []struct {
		name    string
		id      string
		wantMsg string // substring of the error
	}{
		{name: "missing", id: "", wantMsg: "SLURM_JOB_ID: missing"},
		{name: "space", id: "12 3", wantMsg: `"12 3"`},
		{name: "shell metacharacters", id: "1;rm -rf /", wantMsg: `"1;rm -rf /"`},
		{name: "newline escaped", id: "1\nFAKE", wantMsg: `"1\nFAKE"`},
		{name: "escape sequence", id: "\x1b[2J", wantMsg: `"\x1b[2J"`},
		{name: "65 characters", id: strings.Repeat("1", 65), wantMsg: "(65 bytes)"},
		{name: "huge", id: strings.Repeat("\x00", 1<<20), wantMsg: "(1048576 bytes)"},
		{name: "unicode digits", id: "١٢٣", wantMsg: "not 1-64 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookEnv(with(epilogEnv(), map[string]string{"SLURM_JOB_ID": tt.id}))
			if !errors.Is(err, ErrBadEnv) {
				t.Fatalf("ParseHookEnv error = %v, want ErrBadEnv", err)
			}
			if !reflect.DeepEqual(got, HookEnv{}) {
				t.Errorf("ParseHookEnv returned %+v with the error, want the zero HookEnv", got)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("error %q does not contain %q", msg, tt.wantMsg)
			}
			if CheckMessage(msg) != nil {
				t.Errorf("error message unbounded or unescaped (%d bytes): %q", len(msg), msg)
			}
		})
	}
}

func TestValidJobID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		want bool
	}{
		{name: "numeric", id: "123", want: true},
		{name: "all allowed characters", id: "aZ09_.+-", want: true},
		{name: "64 characters", id: strings.Repeat("9", 64), want: true},
		{name: "empty", id: "", want: false},
		{name: "65 characters", id: strings.Repeat("9", 65), want: false},
		{name: "slash", id: "1/2", want: false},
		{name: "NUL", id: "1\x00", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidJobID(tt.id); got != tt.want {
				t.Errorf("ValidJobID(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
}

func TestParseExitCode2(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantStatus int
		wantSignal int
		wantErr    bool
	}{
		{name: "exit 3", in: "3:0", wantStatus: 3},
		{name: "success", in: "0:0"},
		{name: "signal", in: "0:9", wantSignal: 9},
		{name: "maximum", in: "255:127", wantStatus: 255, wantSignal: 127},
		{name: "outer spaces", in: " 1:0\n", wantStatus: 1},
		{name: "no colon", in: "3", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "empty parts", in: ":", wantErr: true},
		{name: "status too big", in: "256:0", wantErr: true},
		{name: "signal too big", in: "0:128", wantErr: true},
		{name: "negative", in: "-1:0", wantErr: true},
		{name: "two colons", in: "1:2:3", wantErr: true},
		{name: "letters", in: "a:b", wantErr: true},
		{name: "inner space", in: "1: 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, signal, err := ParseExitCode2(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrBadExitCode) {
					t.Errorf("ParseExitCode2(%q) error = %v, want ErrBadExitCode", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseExitCode2(%q) error = %v", tt.in, err)
			}
			if status != tt.wantStatus || signal != tt.wantSignal {
				t.Errorf("ParseExitCode2(%q) = %d, %d, want %d, %d", tt.in, status, signal, tt.wantStatus, tt.wantSignal)
			}
		})
	}
}

func TestDecodeWaitStatus(t *testing.T) {
	tests := []struct {
		name       string
		raw        uint32
		wantStatus int
		wantSignal int
	}{
		{name: "success", raw: 0},
		{name: "exit 3", raw: 768, wantStatus: 3},
		{name: "exit 255", raw: 255 << 8, wantStatus: 255},
		{name: "killed", raw: 9, wantSignal: 9},
		{name: "killed with core dump", raw: 0x80 | 11, wantSignal: 11},
		{name: "stopped", raw: 0x137f},
		{name: "high bits ignored", raw: 0x10000 | 768, wantStatus: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, signal := DecodeWaitStatus(tt.raw)
			if status != tt.wantStatus || signal != tt.wantSignal {
				t.Errorf("DecodeWaitStatus(%d) = %d, %d, want %d, %d", tt.raw, status, signal, tt.wantStatus, tt.wantSignal)
			}
		})
	}
}

// checkSanitised fails when a text field could still forge a log line.
func checkSanitised(t *testing.T, field, s string, maxBytes int) {
	t.Helper()
	if err := CheckText(field, s, maxBytes); err != nil {
		t.Error(err)
	}
}
