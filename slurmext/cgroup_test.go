package slurmext

import (
	"strings"
	"testing"
)

func TestSlurmCgroupJob(t *testing.T) {
	// A cgroup v1 host as Slurm's task/cgroup and proctrack/cgroup leave a
	// task (freezer, cpuset, memory, devices; the others at the root), with
	// the unified line systemd keeps on a hybrid host.
	v1 := func(prefix string) string {
		return strings.Join([]string{
			"12:hugetlb:/",
			"11:devices:" + prefix + "/uid_1001/job_4242/step_0/task_0",
			"10:memory:" + prefix + "/uid_1001/job_4242/step_0/task_0",
			"9:cpuset:" + prefix + "/uid_1001/job_4242/step_0",
			"8:freezer:" + prefix + "/uid_1001/job_4242/step_0",
			"7:cpu,cpuacct:/system.slice/slurmd.service",
			"1:name=systemd:/system.slice/slurmd.service",
			"0::/system.slice/slurmd.service",
		}, "\n") + "\n"
	}
	tests := []struct {
		name string
		in   string
		want CgroupJob
		ok   bool
	}{
		// cgroup v2, as Slurm 22.05–25.11 name it.
		{name: "v2 task", in: "0::/system.slice/slurmstepd.scope/job_103/step_0/user/task_0\n",
			want: CgroupJob{JobID: "103", UID: -1, Step: "0"}, ok: true},
		{name: "v2 batch step", in: "0::/system.slice/slurmstepd.scope/job_103/step_batch/user/task_0\n",
			want: CgroupJob{JobID: "103", UID: -1, Step: "batch"}, ok: true},
		{name: "v2 extern step (pam_slurm_adopt)", in: "0::/system.slice/slurmstepd.scope/job_103/step_extern/user/task_special\n",
			want: CgroupJob{JobID: "103", UID: -1, Step: "extern"}, ok: true},
		{name: "v2 interactive step", in: "0::/system.slice/slurmstepd.scope/job_7/step_interactive/user/task_0\n",
			want: CgroupJob{JobID: "7", UID: -1, Step: "interactive"}, ok: true},
		{name: "v2 heterogeneous step", in: "0::/system.slice/slurmstepd.scope/job_60/step_0+1/user/task_2\n",
			want: CgroupJob{JobID: "60", UID: -1, Step: "0+1"}, ok: true},
		{name: "v2 slurmstepd's own leaf", in: "0::/system.slice/slurmstepd.scope/job_103/step_0/slurm\n",
			want: CgroupJob{JobID: "103", UID: -1, Step: "0"}, ok: true},
		{name: "v2 job level", in: "0::/system.slice/slurmstepd.scope/job_103\n",
			want: CgroupJob{JobID: "103", UID: -1}, ok: true},
		{name: "v2 largest job id", in: "0::/system.slice/slurmstepd.scope/job_4294967293/step_0\n",
			want: CgroupJob{JobID: "4294967293", UID: -1, Step: "0"}, ok: true},
		{name: "v2 no newline", in: "0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0",
			want: CgroupJob{JobID: "5", UID: -1, Step: "0"}, ok: true},
		// --enable-multiple-slurmd (Debian's build among others).
		{name: "v2 multiple slurmd", in: "0::/system.slice/gpu07_slurmstepd.scope/job_103/step_0/user/task_0\n",
			want: CgroupJob{JobID: "103", UID: -1, Step: "0"}, ok: true},
		// Slurm 26.05: directories keyed by SLUID.
		{name: "v2 SLUID (26.05)", in: "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0/user/task_0\n",
			want: CgroupJob{SLUID: "s5K1KKYAYG5D00", UID: -1, Step: "0"}, ok: true},
		{name: "v2 SLUID multiple slurmd", in: "0::/system.slice/n1_slurmstepd.scope/s0C8F3K2M1A0ZX/step_batch/user/task_0\n",
			want: CgroupJob{SLUID: "s0C8F3K2M1A0ZX", UID: -1, Step: "batch"}, ok: true},
		// cgroup v1.
		{name: "v1", in: v1("/slurm"), want: CgroupJob{JobID: "4242", UID: 1001, Step: "0"}, ok: true},
		{name: "v1 multiple slurmd", in: v1("/slurm_gpu07"), want: CgroupJob{JobID: "4242", UID: 1001, Step: "0"}, ok: true},
		{name: "v1 a user's cgroup nested in their own step",
			in:   "4:memory:/slurm/uid_1001/job_5/step_0/uid_1002/job_903/step_0\n",
			want: CgroupJob{JobID: "5", UID: 1001, Step: "0"}, ok: true},
		{name: "v1 job level", in: "4:memory:/slurm/uid_0/job_5\n", want: CgroupJob{JobID: "5", UID: 0}, ok: true},

		// Look-alikes: a job_N where Slurm does not put jobs.
		{name: "systemd user delegation", in: "0::/user.slice/user-1001.slice/user@1001.service/job_903/step_0/user/task_0\n"},
		{name: "look-alike scope in a user's subtree",
			in: "0::/user.slice/user-1001.slice/user@1001.service/system.slice/slurmstepd.scope/job_903/step_0\n"},
		{name: "job_N at the root", in: "0::/job_903\n"},
		{name: "job_N in a session scope", in: "0::/user.slice/user-1001.slice/session-4.scope/job_903\n"},
		{name: "another slice", in: "0::/machine.slice/slurmstepd.scope/job_903/step_0\n"},
		{name: "another scope", in: "0::/system.slice/evil.scope/job_903/step_0\n"},
		{name: "empty node name", in: "0::/system.slice/_slurmstepd.scope/job_903/step_0\n"},
		{name: "slurmstepd's own cgroup", in: "0::/system.slice/slurmstepd.scope/system\n"},
		{name: "slurmd", in: "0::/system.slice/slurmd.service\n"},
		{name: "v1 line shaped as v2", in: "4:memory:/system.slice/slurmstepd.scope/job_903\n"},
		{name: "v2 line shaped as v1", in: "0::/slurm/uid_1001/job_903/step_0\n"},
		{name: "v1 without the uid level", in: "4:memory:/slurm/job_903/step_0\n"},
		{name: "v1 another root", in: "4:memory:/user/slurm/uid_1001/job_903\n"},
		{name: "v1 empty node name", in: "4:memory:/slurm_/uid_1001/job_903\n"},

		// Malformed levels.
		{name: "job id with leading zero", in: "0::/system.slice/slurmstepd.scope/job_0103/step_0\n"},
		{name: "job id zero", in: "0::/system.slice/slurmstepd.scope/job_0/step_0\n"},
		{name: "job id NO_VAL", in: "0::/system.slice/slurmstepd.scope/job_4294967294/step_0\n"},
		{name: "job id not a number", in: "0::/system.slice/slurmstepd.scope/job_abc/step_0\n"},
		{name: "array job id form", in: "0::/system.slice/slurmstepd.scope/job_53_1/step_0\n"},
		{name: "SLUID in lower case", in: "0::/system.slice/slurmstepd.scope/s5k1kkyayg5d00/step_0\n"},
		{name: "SLUID too short", in: "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D0/step_0\n"},
		{name: "bad step", in: "0::/system.slice/slurmstepd.scope/job_103/step_evil/user\n"},
		{name: "no step level", in: "0::/system.slice/slurmstepd.scope/job_103/user/task_0\n"},
		{name: "uid with leading zero", in: "4:memory:/slurm/uid_01001/job_903\n"},
		{name: "uid (uid_t)-1", in: "4:memory:/slurm/uid_4294967295/job_903\n"},

		// Lines that disagree: Slurm never does that.
		{name: "two jobs", in: "4:memory:/slurm/uid_1001/job_5/step_0\n3:freezer:/slurm/uid_1001/job_6/step_0\n"},
		{name: "two uids", in: "4:memory:/slurm/uid_1001/job_5/step_0\n3:freezer:/slurm/uid_1002/job_5/step_0\n"},
		{name: "v1 and v2 disagree", in: "4:memory:/slurm/uid_1001/job_5/step_0\n0::/system.slice/slurmstepd.scope/job_6/step_0\n"},

		{name: "empty", in: ""},
		{name: "garbage", in: "no colons here\n::\n0:\n"},
		{name: "relative path", in: "0::system.slice/slurmstepd.scope/job_5\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := SlurmCgroupJob(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("SlurmCgroupJob(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSlurmCgroupJobHybridHostKeepsTheUID(t *testing.T) {
	// The unified line (no uid level) before the v1 lines: the owner still
	// comes from the v1 line.
	in := "0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0\n"
	got, ok := SlurmCgroupJob(in)
	if !ok || got.UID != -1 {
		t.Fatalf("v2 alone: %+v %v", got, ok)
	}
	in = "0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0\n4:memory:/slurm/uid_1001/job_5/step_0\n"
	got, ok = SlurmCgroupJob(in)
	if !ok || got != (CgroupJob{JobID: "5", UID: 1001, Step: "0"}) {
		t.Errorf("hybrid: %+v %v; want job 5 of uid 1001", got, ok)
	}
}

func TestSlurmCgroupJobBounded(t *testing.T) {
	in := strings.Repeat("4:memory:/slurm/uid_1/job_5\n", maxCgroupLines+1)
	if _, ok := SlurmCgroupJob(in); ok {
		t.Error("more lines than any kernel writes accepted")
	}
	long := "0::/system.slice/slurmstepd.scope/job_5/step_0/" + strings.Repeat("a/", maxCgroupPath) + "\n"
	if _, ok := SlurmCgroupJob(long); ok {
		t.Error("a path longer than PATH_MAX accepted")
	}
}

func FuzzSlurmCgroupJob(f *testing.F) {
	f.Add("0::/system.slice/slurmstepd.scope/job_103/step_0/user/task_0\n")
	f.Add("4:memory:/slurm_n1/uid_1001/job_4242/step_batch/task_0\n")
	f.Add("0::/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, ok := SlurmCgroupJob(in)
		if !ok {
			return
		}
		if (c.JobID == "") == (c.SLUID == "") {
			t.Fatalf("%+v: want exactly one of JobID and SLUID", c)
		}
		if !ValidJobID(c.Key()) {
			t.Fatalf("%+v: key %q is not a valid job id", c, c.Key())
		}
	})
}

func TestParseSLUID(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{name: "as printed", in: "s5K1KKYAYG5D00", want: "s5K1KKYAYG5D00", ok: true},
		{name: "lower case and look-alike letters", in: "S5k1kkyayg5doo", want: "s5K1KKYAYG5D00", ok: true},
		{name: "I and L read as 1", in: "sIL00000000000", want: "s1100000000000", ok: true},
		{name: "numeric job id", in: "4242"},
		{name: "too short", in: "s5K1KKYAYG5D0"},
		{name: "U is not a Crockford digit", in: "s5K1KKYAYG5DU0"},
		{name: "path", in: "s5K1/../job_90"},
		{name: "empty", in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseSLUID(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseSLUID(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
