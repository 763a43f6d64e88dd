package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// recommendWorkload plants a month that triggers every rule with Slurm
// configuration: small quiet work (shards, MPS, a shared partition and
// QOS), short jobs that wait (a debug partition), long training (a long
// QOS), over-requested limits (DefaultTime), a user far above the others
// (per-user limits), over-requested GPUs and IO-bound work (hints).
func recommendWorkload() []analysis.PlantGroup {
	healthy := analysis.PlantGroup{Users: []string{"ann", "bob", "cat"}, Account: "ml", Name: "train",
		Jobs: 150, Duration: 8 * time.Hour, Jitter: 0.1, LimitFactor: 1.3,
		VRAMFrac: 0.6, VRAMJitter: 0.1, Util: 85, UtilJitter: 5}
	return []analysis.PlantGroup{
		{Users: []string{"sam", "sue"}, Account: "nlp", Name: "eval",
			Jobs: 600, Duration: 3 * time.Hour, VRAMFrac: 0.15, VRAMJitter: 0.02, Util: 20, UtilJitter: 5, Wait: 30 * time.Minute, LimitFactor: 10},
		{Users: []string{"dan", "dee", "dot"}, Account: "ml", Name: "bash",
			Jobs: 100, Duration: 10 * time.Minute, Wait: 40 * time.Minute, VRAMFrac: 0.2, Util: 40},
		{Users: []string{"lee"}, Account: "ml", Name: "pretrain",
			Jobs: 10, GPUs: 8, Duration: 36 * time.Hour, VRAMFrac: 0.8, Util: 90, LimitFactor: 8, Wait: 6 * time.Hour},
		healthy,
		{Users: []string{"greedy"}, Account: "cv", Name: "ft", Jobs: 10, Duration: 5 * time.Hour, GPUs: 4, UsedGPUs: 1, VRAMFrac: 0.5, Util: 90},
		{Users: []string{"ioana"}, Account: "bio", Name: "prep", Jobs: 60, Duration: 4 * time.Hour, VRAMFrac: 0.3, Util: 12, IOWait: 0.5},
	}
}

// emitted is EmitSlurm's text split by target (its comment headers).
type emitted map[string][]string

func splitEmitted(t *testing.T, text string) emitted {
	t.Helper()
	headers := map[string]string{
		"# sacctmgr:":   analysis.TargetSacctmgr,
		"# slurm.conf:": analysis.TargetSlurmConf,
		"# gres.conf:":  analysis.TargetGresConf,
		"# scontrol:":   analysis.TargetScontrol,
		"# sbatch:":     analysis.TargetSbatch,
	}
	out := emitted{}
	target := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "# ") {
			for h, tg := range headers {
				if strings.HasPrefix(l, h) {
					target = tg
				}
			}
			continue
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		if target == "" {
			t.Fatalf("line %q before any target header", l)
		}
		out[target] = append(out[target], l)
	}
	return out
}

// TestRecommendationsAcceptedBySlurm applies every sacctmgr command,
// slurm.conf line, gres.conf line and scontrol command that the
// recommendations emit to a real Slurm with accounting, and fails on every
// line Slurm rejects.
func TestRecommendationsAcceptedBySlurm(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	in := analysis.Input{
		Jobs:  analysis.Plant(analysis.PlantSpec{Days: 30, Groups: recommendWorkload()}, 1),
		Nodes: []analysis.Node{{Name: "localhost", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 4, MemoryTotal: 80 << 30, Partitions: []string{"gpu"}}},
	}
	f, err := analysis.Analyse(in, analysis.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, r := range f.Recommendations {
		kinds[r.Kind] = true
	}
	for _, k := range []string{analysis.RecShards, analysis.RecDebugPart, analysis.RecLongQOS, analysis.RecUserLimits, analysis.RecDefaultTime} {
		if !kinds[k] {
			t.Errorf("the planted workload gave no %s recommendation (got %v)", k, kinds)
		}
	}
	text := analysis.EmitSlurm(f.Recommendations)
	t.Logf("emitted:\n%s", text)
	lines := splitEmitted(t, text)
	for _, tg := range []string{analysis.TargetSacctmgr, analysis.TargetSlurmConf, analysis.TargetGresConf, analysis.TargetScontrol} {
		if len(lines[tg]) == 0 {
			t.Errorf("nothing emitted for %s", tg)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	c := startCluster(t, clusterOptions{Accounting: true})

	// 1. Accounting: QOS first, since partitions name them.
	for _, l := range lines[analysis.TargetSacctmgr] {
		args := strings.Fields(l)
		if _, err := c.output(args[0], args[1:]...); err != nil {
			t.Errorf("Slurm rejected %q: %v", l, err)
		}
	}
	checkQOS(t, c, lines[analysis.TargetSacctmgr])

	// 2. slurm.conf and gres.conf: merged into the cluster's files, then
	// both daemons restart (GresTypes, PriorityType, PreemptType and a
	// node's Gres are read only at start).
	var partitions []string
	conf := readFile(t, c.Conf)
	for _, l := range lines[analysis.TargetSlurmConf] {
		switch {
		case strings.HasPrefix(l, "PartitionName="):
			partitions = append(partitions, l)
		case strings.HasPrefix(l, "NodeName="):
			conf = mergeNodeGres(t, conf, l)
		default:
			conf = mergeKey(t, conf, l)
		}
	}
	writeFile(t, c.Conf, conf)
	gresPath := filepath.Join(c.Dir, "etc", "gres.conf")
	gres := readFile(t, gresPath)
	for _, l := range lines[analysis.TargetGresConf] {
		gres = mergeGresLine(t, gres, l)
	}
	gres = requireGPUType(t, conf, gres, lines[analysis.TargetGresConf])
	writeFile(t, gresPath, gres)
	t.Logf("slurm.conf now:\n%s\ngres.conf now:\n%s", conf, gres)
	restartSlurm(t, c)

	// Slurm shows a shard count with the GPU type it sits on
	// ("shard:h100:16" for "shard:16").
	nodeGres := c.run(t, "sinfo", "-h", "-N", "-n", "localhost", "-o", "%G")
	for _, l := range lines[analysis.TargetSlurmConf] {
		if !strings.HasPrefix(l, "NodeName=") {
			continue
		}
		for _, part := range strings.Split(strings.TrimPrefix(strings.Fields(l)[1], "Gres="), ",") {
			f := strings.Split(part, ":")
			re := regexp.QuoteMeta(f[0]) + `(:[a-z0-9_]+)?:` + regexp.QuoteMeta(f[len(f)-1])
			if len(f) == 3 {
				re = regexp.QuoteMeta(part)
			}
			if !regexp.MustCompile(`(^|,)` + re + `(\(|,|$)`).MatchString(nodeGres) {
				t.Errorf("after %q the node's Gres is %q, want %s", l, nodeGres, part)
			}
		}
	}
	for _, l := range lines[analysis.TargetGresConf] {
		if m := regexp.MustCompile(`Name=shard Count=(\d+)`).FindStringSubmatch(l); m != nil {
			if !regexp.MustCompile(`(^|,)shard(:[a-z0-9_]+)?:` + m[1] + `(\(|,|$)`).MatchString(nodeGres) {
				t.Errorf("after %q sinfo shows Gres %q, want %s shards", l, nodeGres, m[1])
			}
		}
	}
	cfg := c.run(t, "scontrol", "show", "config")
	for _, l := range lines[analysis.TargetSlurmConf] {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.Contains(l, " ") && k != "GresTypes" && k != "AccountingStorageTRES" {
			if !regexp.MustCompile(`(?mi)^` + regexp.QuoteMeta(k) + `\s*=\s*` + regexp.QuoteMeta(v) + `\s*$`).MatchString(cfg) {
				t.Errorf("after %q scontrol show config lacks %s = %s", l, k, v)
			}
		}
	}

	// 3. Partitions, created at run time from their slurm.conf form.
	for _, l := range partitions {
		if _, err := c.output("scontrol", append([]string{"create"}, strings.Fields(l)...)...); err != nil {
			t.Errorf("Slurm rejected partition line %q (as scontrol create): %v", l, err)
			continue
		}
		name := strings.TrimPrefix(strings.Fields(l)[0], "PartitionName=")
		got, err := c.output("scontrol", "show", "partition", name)
		if err != nil {
			t.Errorf("partition %s after %q: %v", name, l, err)
			continue
		}
		for _, kv := range strings.Fields(l)[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if k == "Nodes" || k == "State" {
				continue
			}
			// scontrol shows QOS= as QoS=.
			if !regexp.MustCompile(`(?i)(^|\s)` + regexp.QuoteMeta(k) + `=` + regexp.QuoteMeta(v) + `(\s|$)`).MatchString(got) {
				t.Errorf("partition %s after %q lacks %s=%s:\n%s", name, l, k, v, got)
			}
		}
	}

	// 4. Run-time changes.
	for _, l := range lines[analysis.TargetScontrol] {
		args := strings.Fields(l)
		if args[0] != "scontrol" {
			t.Errorf("scontrol line %q does not start with scontrol", l)
			continue
		}
		if _, err := c.output(args[0], args[1:]...); err != nil {
			t.Errorf("Slurm rejected %q: %v", l, err)
		}
	}

	if st := c.run(t, "sinfo", "-h", "-N", "-n", "localhost", "-o", "%t %E"); !strings.HasPrefix(st, "idle") && !strings.HasPrefix(st, "mix") && !strings.HasPrefix(st, "alloc") {
		t.Errorf("node localhost is %q after the changes, want it usable", st)
	}
}

// checkQOS checks that every value a `sacctmgr modify qos` line set shows
// in `sacctmgr show qos`.
func checkQOS(t *testing.T, c *cluster, lines []string) {
	t.Helper()
	for _, l := range lines {
		f := strings.Fields(l)
		// sacctmgr -i modify qos NAME set K=V…
		if len(f) < 7 || f[2] != "modify" || f[3] != "qos" || f[5] != "set" {
			continue
		}
		row, err := c.output("sacctmgr", "-n", "-P", "show", "qos", f[4],
			"format=Name,Priority,MaxWall,GrpTRES,MaxTRES,MaxTRESPU,Preempt,PreemptMode,Flags")
		if err != nil {
			t.Errorf("sacctmgr show qos %s: %v", f[4], err)
			continue
		}
		for _, kv := range f[6:] {
			_, v, _ := strings.Cut(kv, "=")
			if !strings.Contains(strings.ToLower(row), strings.ToLower(v)) {
				t.Errorf("after %q, sacctmgr show qos %s gives %q: no %s", l, f[4], row, kv)
			}
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mergeKey sets a global slurm.conf parameter "Key=Value": it replaces
// the line that sets Key, or is appended before the first node line (node
// and partition lines must come after global parameters).
func mergeKey(t *testing.T, conf, line string) string {
	t.Helper()
	k, _, ok := strings.Cut(line, "=")
	if !ok {
		t.Fatalf("slurm.conf line %q is not Key=Value", line)
	}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(k) + `=.*$`)
	if re.MatchString(conf) {
		return re.ReplaceAllLiteralString(conf, line)
	}
	i := strings.Index(conf, "\nNodeName=")
	if i < 0 {
		return conf + line + "\n"
	}
	return conf[:i+1] + line + "\n" + conf[i+1:]
}

// mergeNodeGres puts the Gres= of an emitted "NodeName=X Gres=…" line into
// the cluster's line for node X.
func mergeNodeGres(t *testing.T, conf, line string) string {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != 2 || !strings.HasPrefix(f[1], "Gres=") {
		t.Fatalf("node line %q is not NodeName=X Gres=…", line)
	}
	re := regexp.MustCompile(`(?m)^(` + regexp.QuoteMeta(f[0]) + ` .*?)Gres=\S+(.*)$`)
	if !re.MatchString(conf) {
		t.Fatalf("slurm.conf has no line %s … Gres=… to merge %q into", f[0], line)
	}
	return re.ReplaceAllString(conf, "${1}"+strings.ReplaceAll(f[1], "$", "$$")+"${2}")
}

// mergeGresLine replaces the gres.conf line for the same node and GRES
// name, or appends it.
func mergeGresLine(t *testing.T, gres, line string) string {
	t.Helper()
	m := regexp.MustCompile(`^(NodeName=\S+) (Name=\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("gres.conf line %q is not NodeName=X Name=Y …", line)
	}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]+" "+m[2]) + `( .*)?$`)
	if re.MatchString(gres) {
		return re.ReplaceAllLiteralString(gres, line)
	}
	return gres + line + "\n"
}

// restartSlurm stops this cluster's slurmctld and slurmd by the pids in
// their pid files, starts them again with the changed files, and waits
// until the node is idle. testcluster.sh start would rewrite the files.
func restartSlurm(t *testing.T, c *cluster) {
	t.Helper()
	for _, d := range []string{"slurmctld", "slurmd"} {
		pidFile := filepath.Join(c.Dir, "run", d+".pid")
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("%s pid: %v", d, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s pid file: %v", d, err)
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatalf("stop %s (pid %d): %v", d, pid, err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
				break // a zombie under an init that does not reap
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) did not stop", d, pid)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, args := range [][]string{{"/usr/sbin/slurmctld", "-f", c.Conf}, {"/usr/sbin/slurmd", "-f", c.Conf, "-N", "localhost"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = c.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s with the recommended configuration: %v\n%s\n%s", strings.Join(args, " "), err, out, c.logTail(filepath.Base(args[0])+".log", 40))
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _ := c.output("sinfo", "-h", "-N", "-n", "localhost", "-o", "%t")
		if st == "idle" {
			return
		}
		if strings.HasPrefix(st, "drain") || time.Now().After(deadline) {
			reason, _ := c.output("sinfo", "-h", "-N", "-n", "localhost", "-o", "%E")
			t.Fatalf("after the restart the node is %q (reason %q), want idle\nslurmctld.log:\n%s\nslurmd.log:\n%s",
				st, reason, c.logTail("slurmctld.log", 30), c.logTail("slurmd.log", 30))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// requireGPUType makes the cluster's gres.conf give the GPU type a merged
// node line names (Gres=gpu:TYPE:N), as the reference layout in
// the design notes (slurm-facts.md) does ("Name=gpu Type=h100 File=…"); the test
// cluster's untyped file does not. slurmd 22.05 matches slurm.conf's typed
// count against gres.conf lines of that type: with only untyped gpu lines
// it logs "gres.conf for GRES gpu has 4 more configured than expected …
// Ignoring extra GRES" and exits with "SHARING configuration lacks "File"
// specification", because the shards then have no GPU to sit on. The
// recommendation relies on a typed gres.conf; the test says so in its log.
func requireGPUType(t *testing.T, conf, gres string, emittedGres []string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^NodeName=(\S+) .*Gres=gpu:([a-z][a-z0-9_]*):\d+`).FindStringSubmatch(conf)
	if m == nil {
		return gres
	}
	node, typ := m[1], m[2]
	gpuLine := regexp.MustCompile(`(?m)^NodeName=` + regexp.QuoteMeta(node) + ` Name=gpu( .*)?$`)
	typed := regexp.MustCompile(`(^| )Type=` + regexp.QuoteMeta(typ) + `( |$)`)
	for _, l := range emittedGres {
		if gpuLine.MatchString(l) && typed.MatchString(l) {
			return gres
		}
	}
	for _, l := range gpuLine.FindAllString(gres, -1) {
		if !typed.MatchString(l) {
			t.Logf("the emitted node line names GPU type %q; the test cluster's gres.conf line %q is untyped, so Type=%s is added "+
				"(an untyped gres.conf makes slurmd 22.05 exit with these lines)", typ, l, typ)
			gres = strings.Replace(gres, l, strings.Replace(l, " Name=gpu", " Name=gpu Type="+typ, 1), 1)
		}
	}
	return gres
}
