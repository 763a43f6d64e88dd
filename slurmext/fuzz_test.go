package slurmext

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// checkErrorMessage fails when an error message could carry raw input into a
// log: it must be printable ASCII and bounded.
func checkErrorMessage(t *testing.T, err error) {
	t.Helper()
	if err := CheckMessage(err.Error()); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseIndexList(f *testing.F) {
	for _, s := range []string{"", "0", "0,2-3", "3-1", "a,b", " 1 , 2 ", "1,1,1", "0-4095", "0-4096",
		"2147483647", "-1", "1,,2", "1-2-3", "\x00", "0-2147483647"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseIndexList(s)
		if err != nil {
			if !errors.Is(err, ErrBadIndexList) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("ParseIndexList(%q) error %v wraps no sentinel", s, err)
			}
			checkErrorMessage(t, err)
			if got != nil {
				t.Fatalf("ParseIndexList(%q) = %v with an error", s, got)
			}
			return
		}
		if len(got) > MaxIndexList {
			t.Fatalf("ParseIndexList(%q) returned %d indices, bound is %d", s, len(got), MaxIndexList)
		}
		for i, v := range got {
			if v < 0 || (i > 0 && v <= got[i-1]) {
				t.Fatalf("ParseIndexList(%q) = %v: not sorted, unique and non-negative", s, got)
			}
		}
		again, err := ParseIndexList(FormatIndexList(got))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("round trip of %v via %q = %v, %v", got, FormatIndexList(got), again, err)
		}
	})
}

func FuzzExpandHostlist(f *testing.F) {
	seeds := [][2]string{
		{"gpu[01-04,07],login1", "gpu07"}, {"n[8-10]", "n08"}, {"r[1-2]n[1-2]", "r2n1"},
		{"/dev/nvidia[0-3]", "/dev/nvidia3"}, {"gpu[01-04", "gpu01"}, {"gpu[3-1]", "gpu2"},
		{"n[0-4294967295]", "n7"}, {"a[0-999]b[0-999]", "a1b1"}, {"[0-12]0", "120"},
		{"", ""}, {"a,,b c", "c"}, {"x[]", "x"}, {"n[00-09]", "n9"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, host string) {
		hosts, err := ExpandHostlist(expr)
		contains, cerr := HostlistContains(expr, host)
		if err != nil {
			if !errors.Is(err, ErrBadHostlist) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("ExpandHostlist(%q) error %v wraps no sentinel", expr, err)
			}
			checkErrorMessage(t, err)
			// Contains parses the same syntax but has no size bound.
			if errors.Is(err, ErrBadHostlist) != (cerr != nil) {
				t.Fatalf("ExpandHostlist(%q) error %v but HostlistContains error %v", expr, err, cerr)
			}
			return
		}
		if cerr != nil {
			t.Fatalf("HostlistContains(%q) error %v but ExpandHostlist succeeded", expr, cerr)
		}
		if len(hosts) > MaxHostlistHosts {
			t.Fatalf("ExpandHostlist(%q) returned %d names, bound is %d", expr, len(hosts), MaxHostlistHosts)
		}
		total := 0
		for _, h := range hosts {
			total += len(h)
			if h == "" || strings.ContainsAny(h, "[], \t\n\r\v\f") {
				t.Fatalf("ExpandHostlist(%q) produced name %q", expr, h)
			}
		}
		if total > maxHostlistBytes {
			t.Fatalf("ExpandHostlist(%q) produced %d bytes, bound is %d", expr, total, maxHostlistBytes)
		}
		if want := slices.Contains(hosts, host); contains != want {
			t.Fatalf("HostlistContains(%q, %q) = %v, expansion says %v", expr, host, contains, want)
		}
		// Every produced name is matched; check a bounded sample.
		for i, h := range hosts {
			if i > 64 && i < len(hosts)-64 {
				continue
			}
			if ok, _ := HostlistContains(expr, h); !ok {
				t.Fatalf("HostlistContains(%q, %q) = false for an expanded name", expr, h)
			}
		}
		// Round trip: the names, listed plainly, expand to themselves.
		again, err := ExpandHostlist(strings.Join(hosts, ","))
		if err != nil || !slices.Equal(again, hosts) {
			t.Fatalf("round trip of ExpandHostlist(%q) failed: %v", expr, err)
		}
	})
}

func FuzzParseHookEnv(f *testing.F) {
	f.Add("4242", "1000", "0,2-3", "0,2", "resnet\nsweep", "3:0", "768", "1700000000", "gpu[01-02]")
	f.Add("", "", "", "", "", "", "", "", "")
	f.Add("1;reboot", "x", "3-1", "a,b", strings.Repeat("\x1b[2J", 2500), "3", "-1", "tomorrow", "gpu[01-")
	f.Add("sC8F3K2M1A0Z", "4294967295", " 1 , 2 ", "MIG-5c3b1d4e-8a2f-5b6c-9d0e-1f2a3b4c5d6e", "\u202eevil", "255:127", "4294967294", "0", "n[0-4294967295]")
	f.Add("7", "0", ",", "0,GPU-abc", "\xff\xfe", "1:2:3", "9", "99999999999999", "a b")
	f.Add("8", "0", "0-100000000", "NoDevFiles", "é", ":", "0x10", "1", "[]")
	f.Fuzz(func(t *testing.T, jobID, uid, gpus, cvd, comment, exit2, exit, start, nodeList string) {
		env := map[string]string{
			"SLURM_JOB_ID": jobID, "SLURM_JOB_UID": uid, "SLURM_JOB_GID": uid,
			"SLURM_JOB_GPUS": gpus, "CUDA_VISIBLE_DEVICES": cvd, "GPU_DEVICE_ORDINAL": cvd,
			"SLURM_JOB_COMMENT": comment, "SLURM_JOB_WORK_DIR": comment, "SLURM_JOB_USER": nodeList,
			"SLURM_JOB_EXIT_CODE2": exit2, "SLURM_JOB_EXIT_CODE": exit, "SLURM_JOB_DERIVED_EC": exit,
			"SLURM_JOB_START_TIME": start, "SLURM_JOB_END_TIME": exit, "SLURM_JOB_NUM_NODES": start,
			"SLURM_JOB_NODELIST": nodeList,
		}
		e, err := ParseHookEnv(func(k string) string { return env[k] })
		if err != nil {
			if !errors.Is(err, ErrBadEnv) {
				t.Fatalf("ParseHookEnv error %v does not wrap ErrBadEnv", err)
			}
			checkErrorMessage(t, err)
			if ValidJobID(jobID) {
				t.Fatalf("ParseHookEnv refused valid job id %q: %v", jobID, err)
			}
			return
		}
		if e.JobID != jobID || !ValidJobID(e.JobID) {
			t.Fatalf("JobID = %q from %q", e.JobID, jobID)
		}
		if e.UID < -1 || e.GID < -1 || e.NumNodes < 0 || e.RestartCount < 0 {
			t.Fatalf("negative ids or counts: %+v", e)
		}
		checkSanitised(t, "Comment", e.Comment, MaxCommentBytes)
		for name, v := range map[string]string{"WorkDir": e.WorkDir, "User": e.User, "NodeList": e.NodeList} {
			checkSanitised(t, name, v, MaxFieldBytes)
		}
		checkSanitised(t, "DerivedEC", e.DerivedEC, maxQuoted)
		if len(e.GPUs) > MaxIndexList {
			t.Fatalf("%d GPUs, bound is %d", len(e.GPUs), MaxIndexList)
		}
		for i, g := range e.GPUs {
			if g < 0 || (i > 0 && g <= e.GPUs[i-1]) {
				t.Fatalf("GPUs %v not sorted, unique and non-negative", e.GPUs)
			}
		}
		if len(e.GPUUUIDs) > MaxIndexList {
			t.Fatalf("%d GPU UUIDs, bound is %d", len(e.GPUUUIDs), MaxIndexList)
		}
		for i, u := range e.GPUUUIDs {
			if !validUUID(u) || slices.Contains(e.GPUUUIDs[:i], u) {
				t.Fatalf("GPUUUIDs %q: invalid or duplicate %q", e.GPUUUIDs, u)
			}
		}
		if e.HasExit && (e.ExitStatus < 0 || e.ExitStatus > 255 || e.ExitSignal < 0 || e.ExitSignal > 127) {
			t.Fatalf("exit %d:%d out of range", e.ExitStatus, e.ExitSignal)
		}
		if !e.HasExit && (e.ExitStatus != 0 || e.ExitSignal != 0) {
			t.Fatalf("exit %d:%d set without HasExit", e.ExitStatus, e.ExitSignal)
		}
		for _, tm := range []struct {
			name string
			year int
		}{{"Start", e.Start.Year()}, {"End", e.End.Year()}} {
			if tm.year > 9999 {
				t.Fatalf("%s year %d", tm.name, tm.year)
			}
		}
		for _, p := range e.Problems {
			if CheckMessage(p) != nil {
				t.Fatalf("problem note unbounded or unescaped (%d bytes): %q", len(p), p)
			}
		}
		if e.HasExit && exit2 != "" {
			if st, sig, err := ParseExitCode2(exit2); err == nil && FormatExitCode2(st, sig) != FormatExitCode2(e.ExitStatus, e.ExitSignal) {
				t.Fatalf("exit %d:%d, SLURM_JOB_EXIT_CODE2 says %q", e.ExitStatus, e.ExitSignal, exit2)
			}
		}
	})
}

func FuzzParseGresConf(f *testing.F) {
	f.Add("NodeName=localhost Name=gpu File=/some/dir/nvidia[0-3]\nNodeName=localhost Name=shard Count=8\n", "localhost")
	f.Add("Name=gpu Type=a100 \\\n File=/dev/nvidia[0-1] # c\nName=gpu File=/dev/nvidia2,/dev/nvidia3\n", "gpu01")
	f.Add("NodeName=gpu[01-04] Name=gpu File=/dev/nvidia[0-7]\nNodeName=gpu[05-08] Name=gpu Type=a100 File=/dev/nvidia[0-3]\n", "gpu06")
	f.Add("Include /etc/slurm/x.conf\n", "n")
	f.Add("Name=gpu File=\"/dev/nvidia0\nbogus\n", "n")
	f.Add("Name = gpu MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21\r\nAutoDetect=nvml\r\n", "")
	f.Add("Name=gpu File=/dev/n[0-4096]\n", "n")
	f.Add("NodeName=n[1-3 Name=gpu File=/dev/nvidia0\n", "n1")
	f.Add("Name=gpu File=/dev/gpu\\#0 \\\\\nName=gpu File=/dev/nvidia[0-1]\nName=gpu File=/dev/nvidia1\n", "x")
	f.Fuzz(func(t *testing.T, conf, node string) {
		devs, err := ParseGresConf(strings.NewReader(conf), node)
		if err != nil {
			if !errors.Is(err, ErrBadGresConf) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("ParseGresConf error %v wraps no sentinel", err)
			}
			checkErrorMessage(t, err)
			if devs != nil {
				t.Fatalf("ParseGresConf returned %v with an error", devs)
			}
			return
		}
		if len(devs) > MaxGresDevices {
			t.Fatalf("%d devices, bound is %d", len(devs), MaxGresDevices)
		}
		seen := make(map[string]bool)
		for i, d := range devs {
			if d.Index != i || !strings.EqualFold(d.Name, "gpu") || d.File == "" || seen[d.File] {
				t.Fatalf("device %d = %+v: want Index %d, Name gpu, a unique non-empty File", i, d, i)
			}
			seen[d.File] = true
		}
		again, err := ParseGresConf(strings.NewReader(conf), node)
		if err != nil || !slices.Equal(again, devs) {
			t.Fatalf("second parse differs: %v, %v", again, err)
		}
	})
}

// FuzzParseSlurmConf: any slurm.conf text, which may include itself or a
// second file of the same text, parses or is refused: no panic, no hang,
// bounded output, an Include cycle an error.
func FuzzParseSlurmConf(f *testing.F) {
	for _, s := range []string{
		"ClusterName=a\nNodeName=DEFAULT Gres=gpu:a100:4\nNodeName=n[1-4]\nPartitionName=p Nodes=ALL\n",
		"Include b.conf\n", "Include slurm.conf\n", "include %c.conf\nClusterName=x\n", "Include /f/b.conf\nInclude b.conf\n",
		"NodeSet=s Feature=f\nNodeName=n1 Features=f\nPartitionName=p Nodes=s,n[2-3] MaxTime=1-0\n",
		"A=\"x #y\"\n", "A=1 \\\nB=2\\\\\n", "PartitionName=p Nodes=n[0-65535]\n", "NodeName=n[0-99999] Gres=gpu:4K\n",
		"SchedulerParameters=bf_interval=-1,bf_window=10\n", "x", "=", "Include\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		files := map[string]string{"/f/slurm.conf": s, "/f/b.conf": s, "/f/x.conf": "NodeName=x1 Gres=gpu:1\n"}
		c, err := LoadClusterConf("/f/slurm.conf", mapOpener(files))
		if err != nil {
			checkErrorMessage(t, err)
			return
		}
		if strings.Contains(strings.ToLower(s), "include slurm.conf\n") && strings.HasPrefix(strings.ToLower(s), "include slurm.conf\n") {
			t.Fatalf("%q includes itself and parsed", s)
		}
		if len(c.Nodes) > maxConfNodes {
			t.Fatalf("%d nodes", len(c.Nodes))
		}
	})
}
