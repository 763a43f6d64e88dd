// Package archtest enforces the project's layering: which packages may
// import what. It has no code, only this test.
package archtest

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gpuprof/gpuprof"

type pkg struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// rules: a package (its path below the module, or one below it) may not
// import any of the listed packages or their sub-packages.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"gpu", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", module + "/store", module + "/agent"}, "GPU access is a leaf"},
	{"profile", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", module + "/store", module + "/agent", module + "/gpu/nvml", module + "/gpu/sim"}, "the profile model is pure"},
	{"slurmext", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", module + "/store", module + "/agent", module + "/gpu"}, "Slurm parsing is pure"},
	{"store", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/agent", module + "/hooks", module + "/gpu/nvml", module + "/gpu/sim"}, "the store knows profiles, not GPUs or hooks"},
	{"agent", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/gpu/nvml", module + "/gpu/sim"}, "the agent reads GPUs through gpu.Sampler only (slurmext, pure, is the one home of the job-id rule it applies)"},
	{"hooks", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/gpu/nvml", module + "/gpu/sim", module + "/gpu/nvproc"}, "hooks get their GPU inventory injected"},
	{"gpu/nvproc", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", module + "/gpu/nvml", module + "/gpu/sim"}, "nvproc names GPUs from the driver's /proc files for gpuprof-hook, which builds without cgo: it may link nothing that needs cgo"},
	{"hooks", []string{module + "/agent"}, "the hooks are the agent's client (and may have to start it): they speak hookproto, never import the daemon"},
	{"hooks", []string{"github.com/mattn/go-sqlite3", "database/sql", module + "/store", module + "/ingest"}, "a node's database has one writer, the agent (with ingest under it): a hook talks to the agent or spools for it, and never opens SQLite (a second writer contends for the lock the agent needs and cannot write an older schema anyway)"},
	{"jobcomp", []string{"github.com/NVIDIA/go-nvml", module + "/agent", module + "/hooks", module + "/gpu/nvml", module + "/gpu/sim"}, "jobcomp runs in slurmctld: it samples no GPU and talks to no node agent, it spools a hookproto record"},
	{"jobcomp", []string{"github.com/mattn/go-sqlite3", "database/sql", module + "/store", module + "/ingest"}, "a database has one writer, the spool's reader on its host (the agent, serve or ingest): slurmctld's hook spools and never opens SQLite, so it never waits for a lock with slurmctld waiting for it"},
	{"hookproto", []string{"github.com/mattn/go-sqlite3", "database/sql", "net/http", module + "/agent", module + "/hooks", module + "/jobcomp", module + "/store", module + "/ingest", module + "/spool", module + "/gpu/nvml", module + "/gpu/sim"}, "the hook protocol is shared by client and daemon: it imports neither, and no database or GPU backend"},
	{"config", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra"}, "config only describes"},
	{"analysis", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", module + "/store", module + "/gpu/nvml", module + "/gpu/sim"}, "analysis is pure"},
	{"analysis", []string{module + "/capacity", module + "/queuesim"}, "analysis concludes from the jobs; the replay and the plan built on it are capacity's, which imports analysis, never the reverse"},
	{"capacity", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", module + "/store", module + "/gpu/nvml", module + "/gpu/sim"}, "the capacity plan is pure"},
	{"queuesim", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", "os", "time/tzdata", module + "/store", module + "/analysis", module + "/slurmext", module + "/gpu"}, "the queue simulator is pure: jobs and a cluster in, starts out"},
	{"report", []string{"github.com/mattn/go-sqlite3", "database/sql", "net", "net/http", module + "/store", module + "/collect", module + "/agent"}, "the report presents findings: it reads no database and no network"},
	{"report", []string{module + "/monthly"}, "monthly reads the month and makes the report's data; report renders it and never calls back up"},
	{"monthly", []string{"github.com/NVIDIA/go-nvml", "github.com/mattn/go-sqlite3", "github.com/spf13/cobra", "database/sql", "net", "net/http", "os", module + "/store", module + "/collect", module + "/agent", module + "/config", module + "/gpu"}, "the window pipeline reads jobs only through the jobsource.Scope its caller hands it, already scoped: it opens no database, network or file and decides no access"},
	{"jobsource", []string{"github.com/NVIDIA/go-nvml", "github.com/spf13/cobra", module + "/agent", module + "/hooks", module + "/report", module + "/gpu/nvml", module + "/gpu/sim"}, "jobsource hands the commands their jobs, scoped to the caller: it reads the database, the collector or the query socket, never GPUs or hooks, and renders nothing"},
	{"jobsource", []string{module + "/monthly"}, "jobsource hands out the Scope the window pipeline (monthly) reads through: the pipeline calls jobsource, and no adapter of jobsource's calls back into the pipeline (one way, no return to a package already visited)"},
	{"cmd", []string{"github.com/mattn/go-sqlite3", "database/sql", module + "/internal/texttable"}, "a command is wiring: it reads through jobsource and writes through the package that owns the data (no SQL of its own), and prints through cliview (no table of its own)"},
	{"notice", []string{module + "/cliview"}, "the front ends (cliview, notice's mails, report, tui) stand side by side over present and texttable: none renders through another (cliview may take notice's listed row and counting line: notice owns notices, and the CLI lists them)"},
	{"report", []string{module + "/cliview", module + "/tui"}, "the front ends (cliview, notice's mails, report, tui) stand side by side over present and texttable: none renders through another (cliview may take notice's listed row and counting line: notice owns notices, and the CLI lists them)"},
	{"tui", []string{module + "/cliview", module + "/report"}, "the front ends (cliview, notice's mails, report, tui) stand side by side over present and texttable: none renders through another (cliview may take notice's listed row and counting line: notice owns notices, and the CLI lists them)"},
	{"cliview", []string{"github.com/mattn/go-sqlite3", "database/sql", "net", "net/http", "os", module + "/collect", module + "/agent", module + "/jobsource", module + "/monthly", module + "/hooks", module + "/jobcomp", module + "/gpu/nvml", module + "/gpu/sim"}, "cliview renders what the commands hand it: it reads no database, file or network and decides no access (the store's types it names are values, not readers)"},
	{"tui", []string{"github.com/mattn/go-sqlite3", "database/sql", "net/http", module + "/collect", module + "/agent"}, "the TUI reads jobs through its Source, which enforces access"},
}

// queuesimUsers may import queuesim: capacity, the one product user of the
// replay, and tools/planmonth, test support that schedules its
// generated month once with queuesim so that the jobs carry the starts a
// cluster would have given them (it reads no answer of the replay).
var queuesimUsers = map[string]bool{"capacity": true, "tools/planmonth": true}

// leaves: a package (its path below the module) may import no package of
// the module but the listed ones.
var leaves = []struct {
	pkg     string
	allowed []string
	why     string
}{
	{"slurmext", []string{module + "/termtext"}, "slurmext is the one home of every Slurm rule (job ids, states and their outcome classes, cgroup layout, step sockets, gres.conf), asked by analysis, the TUI, the report, the agent, hooks and the store: it imports nothing of gpuprof but termtext (the one rule for untrusted text), so every package can ask it and it can borrow no rule from one"},
	{"slurmext/sacct", []string{module + "/slurmext", module + "/termtext"}, "sacct's reader builds records with slurmext's rules and borrows none from elsewhere, so every package may ask it"},
	{"internal/texttable", nil, "texttable lays out cells it is handed, for the CLI and the digest mail alike: it imports nothing of gpuprof, so every front end can use it"},
	{"internal/present", []string{module + "/gpu", module + "/slurmext"}, "present is the one presenter: every number a person reads (durations, instants, bytes, percentages, energy, GPU-hours, plurals and lists) and the job facts show and the TUI both render are written by it for the CLI, the TUI, the report, notice mails and analysis prose alike; values in, text out, so it imports only the XID table it names codes from and Slurm's forms of durations and instants, and every front end (and analysis) can import it without a cycle"},
}

func TestLayers(t *testing.T) {
	seen := 0
	for _, p := range listPackages(t) {
		seen++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "internal/") && p.Name == "main" {
			t.Errorf("%s is a program: internal/ holds small libraries only; programs go in tools/", p.ImportPath)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/NVIDIA/go-nvml") && rel != "gpu/nvml" {
				t.Errorf("%s imports %s: only gpu/nvml may import go-nvml", p.ImportPath, imp)
			}
			if strings.HasPrefix(imp, "github.com/spf13/cobra") && !strings.HasPrefix(rel, "cmd/") {
				t.Errorf("%s imports cobra: only cmd/ may", p.ImportPath)
			}
			if strings.HasPrefix(imp, module+"/tools/") && !strings.HasPrefix(rel, "tools/") {
				t.Errorf("%s imports %s: tools/ holds benchmark and generator programs; the product does not depend on them (tests may)", p.ImportPath, imp)
			}
			if imp == module+"/queuesim" && !queuesimUsers[rel] {
				t.Errorf("%s imports queuesim: only capacity may (the what-ifs and the plan are the one user of the replay; others ask capacity)", p.ImportPath)
			}
			for _, l := range leaves {
				if rel == l.pkg && strings.HasPrefix(imp, module+"/") && !slices.Contains(l.allowed, imp) {
					t.Errorf("%s imports %s: %s", p.ImportPath, imp, l.why)
				}
			}
			for _, r := range rules {
				if rel != r.pkg && (r.pkg == "gpu" || !strings.HasPrefix(rel, r.pkg+"/")) {
					continue // "gpu" covers the interface package only, not its backends
				}
				for _, f := range r.forbidden {
					if imp == f || strings.HasPrefix(imp, f+"/") {
						t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
					}
				}
			}
		}
	}
	if seen < 8 {
		t.Fatalf("go list saw %d packages; the rules would check nothing", seen)
	}
}

// scopeMakers are the store's names that choose whose jobs a reader reads.
// The readers of jobs and notices themselves are unexported: a
// store.Reader, made for one caller, is the only way to them.
// scopeChoosers may decide whose jobs a reader reads (make a Caller, a
// Reader for one): jobsource for the command's caller, collect for a
// request's munge or socket identity.
var scopeChoosers = map[string]bool{"jobsource": true, "collect": true}

var scopeMakers = map[string]bool{"ReaderFor": true, "OwnerCaller": true, "Caller": true, "CallerOf": true, "System": true}

// systemReaders may read as store.System (every row, for no user): the
// daemons' own reads, the agent's pending notices and the collector's
// gauges.
var systemReaders = map[string]bool{"agent": true, "collect": true}

// TestOneAccessRule checks that the access rule "admin or own jobs" is
// applied in one place: the store's readers of jobs and notices stay
// unexported on DB and Tx (store.Reader scopes them); no file of cmd/
// chooses a reader's caller (jobsource.Open does, what every command
// reads through, TestCommandsReadScoped; jobsource.ForCaller, which takes
// a caller already decided, is for tests); and only the daemons read as
// store.System.
func TestOneAccessRule(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel != "store" && !slices.Contains(p.Imports, module+"/store") {
			continue
		}
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			where := rel + "/" + name
			if rel == "store" {
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.IsExported() && rawReader(fd) {
						t.Errorf("%s: (%s).%s reads jobs or notices for anyone: unexport it; store.Reader is the one way to them, scoped to its caller",
							where, recvName(fd), fd.Name.Name)
					}
				}
				continue
			}
			storeName := "store"
			for _, imp := range f.Imports {
				if imp.Path.Value == `"`+module+`/store"` && imp.Name != nil {
					storeName = imp.Name.Name
				}
			}
			// A store.Caller made (a composite literal) chooses whose jobs
			// are read; the type named (tui.Identity is one) chooses nothing.
			made := map[*ast.SelectorExpr]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				if cl, ok := n.(*ast.CompositeLit); ok {
					if sel, ok := cl.Type.(*ast.SelectorExpr); ok {
						made[sel] = true
					}
				}
				return true
			})
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if ok && sel.Sel.Name == "Caller" && !made[sel] {
					return true
				}
				if ok && sel.Sel.Name == "ForCaller" && strings.HasPrefix(rel, "cmd/") {
					t.Errorf("%s uses ForCaller: a command's source is opened for whoever runs it (jobsource.Open, through openSource); ForCaller is for tests", where)
				}
				if ok && rawProfileReaders[sel.Sel.Name] && !profileRowReaders[rel] {
					t.Errorf("%s calls %s: a job's raw profile rows are for the recording path (agent, ingest, the collector's merge); a command reads jobs through store.Reader", where, sel.Sel.Name)
				}
				if !ok || !scopeMakers[sel.Sel.Name] {
					return true
				}
				x, _ := sel.X.(*ast.Ident)
				qualified := x != nil && x.Name == storeName
				method := sel.Sel.Name == "ReaderFor" || sel.Sel.Name == "OwnerCaller"
				switch {
				case !qualified && !method:
				case qualified && sel.Sel.Name == "System":
					if !systemReaders[rel] {
						t.Errorf("%s reads as store.System: only the daemons (agent, collect) read every row for no user; read as the caller", where)
					}
				case sel.Sel.Name == "ReaderFor" && systemReaders[rel] && !scopeChoosers[rel]:
					// a daemon's reader, for store.System (checked above)
				case !scopeChoosers[rel]:
					t.Errorf("%s uses %s: only jobsource (a command's caller) and collect (a request's) choose whose jobs are read; read through them", where, sel.Sel.Name)
				}
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files; the rule would check nothing", checked)
	}
}

// rawProfileReaders are the store's readers of raw profile rows, for
// anyone: the recording path's own (the agent resumes and merges its jobs,
// ingest applies spooled records, the collector compares a push with what
// it holds); profileRowReaders are the packages that may call them.
var (
	rawProfileReaders = map[string]bool{"GetJob": true, "ListJobs": true, "RunningJobs": true}
	profileRowReaders = map[string]bool{"store": true, "agent": true, "ingest": true, "collect": true}
)

// rawReader says whether fd, a method, reads views or notices.
func rawReader(fd *ast.FuncDecl) bool {
	r := recvName(fd)
	n := fd.Name.Name
	return (r == "DB" || r == "Tx") && (strings.Contains(n, "View") || strings.Contains(n, "Notices"))
}

// recvName is the type name of fd's receiver ("" for a function).
func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// listPackages lists the module's packages (go list).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var ps []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			return ps
		} else if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
}

// confKeys are keys of Slurm's configuration files: a package that compares
// text with one of them is reading slurm.conf or gres.conf itself.
var confKeys = map[string]bool{
	"nodename": true, "partitionname": true, "nodeset": true, "gres": true, "clustername": true,
	"include": true, "slurmdspooldir": true, "schedulerparameters": true, "prioritytype": true,
	"autodetect": true, "maxtime": true, "prioritytier": true,
}

// confTextReaders are slurmext's readers of configuration text: the bound
// model (slurmext.LoadClusterConf through jobsource, LoadGresFile) is what
// every other package takes.
var confTextReaders = map[string]bool{
	"ReadSlurmConf": true, "ReadClusterName": true, "ReadNodeGres": true, "ReadSchedConf": true,
	"ReadGresConf": true, "ParseGresConf": true, "ParseConfText": true, "ReadConfText": true, "ReadClusterConf": true,
}

// TestOnlySlurmextParsesSlurmConf: only slurmext (and its subpackages) reads Slurm's
// configuration syntax (issue #37): no other package compares text with a
// configuration key or calls slurmext's text readers.
func TestOnlySlurmextParsesSlurmConf(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "slurmext" || strings.HasPrefix(rel, "slurmext/") || strings.HasPrefix(rel, "internal/archtest") {
			continue
		}
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			where := rel + "/" + name
			key := func(e ast.Expr) bool {
				lit, ok := e.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return false
				}
				s := strings.ToLower(strings.Trim(lit.Value, "\"`"))
				return confKeys[s]
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if confTextReaders[sel.Sel.Name] {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "slurmext" {
							t.Errorf("%s calls slurmext.%s: read the bound configuration (jobsource.BindConf, slurmext.LoadClusterConf), not its text", where, sel.Sel.Name)
						}
					}
					if sel.Sel.Name == "EqualFold" || sel.Sel.Name == "HasPrefix" {
						for _, a := range n.Args {
							if key(a) {
								t.Errorf("%s compares text with a Slurm configuration key: only slurmext parses slurm.conf and gres.conf", where)
							}
						}
					}
				case *ast.BinaryExpr:
					if n.Op == token.EQL && (key(n.X) || key(n.Y)) {
						t.Errorf("%s compares text with a Slurm configuration key: only slurmext parses slurm.conf and gres.conf", where)
					}
				case *ast.CaseClause:
					for _, e := range n.List {
						if key(e) {
							t.Errorf("%s switches on a Slurm configuration key: only slurmext parses slurm.conf and gres.conf", where)
						}
					}
				}
				return true
			})
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d files; the rule would check nothing", checked)
	}
}

// windowReaders may name jobsource.Query, the one way to a window's jobs
// (jobsource.Scope's Count, Input and InputAndNotices take it): the
// window pipeline (monthly) alone. The admins' digest of a day and the
// TUI's month summary read through it too (monthly.Digest,
// monthly.SummaryMonth); before, each read its window beside it (an
// adapter of jobsource's, notice.DaySource, and the TUI's own paging
// into an analysis.InputBuilder).
var windowReaders = map[string]bool{"monthly": true}

// inputBuilders may turn stored jobs into an analysis input
// (analysis.NewInputBuilder): jobsource, where a Scope's reads build it.
var inputBuilders = map[string]bool{"jobsource": true}

// TestOnlyPipelineReadsWindow: only the window pipeline (monthly) reads a
// window's jobs (issue #41). The default window, the cluster bound with
// its own slurm.conf, the count that sizes the read and whether the
// replay needs it in full are decided there once, so report, plan,
// recommend, profiles, whatif, the admins' digest and the TUI's month
// summary read a window alike; a command asks with a monthly.Ask (or the
// digest's day, the summary's month) and renders what comes back.
// jobsource.Query is the only way to ask a Scope for jobs of a window, so
// no other package names it; no other package builds an analysis input
// from jobs it read itself (analysis.NewInputBuilder: jobsource's reads
// alone); and jobsource hands an analysis input out through a Scope
// only (its reads, behind the Scope, are of an unexported type), and no
// exported function of it builds one (analysis.NewInputBuilder), so that
// no side door (an adapter for one reader) comes back. The last such door,
// Source.GPUTypes (the hints' inventory, a month of jobs read beside the
// pipeline), is the pipeline's now: monthly.GPUTypes, through the Scope.
func TestOnlyPipelineReadsWindow(t *testing.T) {
	forbidName(t, windowReaders, "jobsource", "Query", 5,
		"names jobsource.Query: only the window pipeline (monthly) reads a window's jobs; ask it with a monthly.Ask")
	forbidName(t, inputBuilders, "analysis", "NewInputBuilder", 20,
		"builds an analysis input from jobs it read itself: read the window through the pipeline (monthly), which asks the caller's jobsource.Scope")
	for _, pf := range goFilesOf(t, func(rel string, _ pkg) bool { return rel == "jobsource" }) {
		for _, d := range pf.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			recv := recvName(fd)
			if fd.Name.IsExported() && returnsInput(fd) && recv != "Scope" && (recv == "" || ast.IsExported(recv)) {
				t.Errorf("%s: %s hands out an analysis input outside a Scope: the window pipeline reads through jobsource.Scope alone", pf.where, fd.Name.Name)
			}
			if fd.Name.IsExported() && namesSelector(fd, "analysis", "NewInputBuilder") {
				t.Errorf("%s: %s builds an analysis input from jobs it reads itself: only a Scope's reads (unexported, behind jobsource.Scope) do; read the window through the pipeline (monthly)", pf.where, fd.Name.Name)
			}
		}
	}
}

// namesSelector reports whether fd's body names pkg.name.
func namesSelector(fd *ast.FuncDecl, pkg, name string) bool {
	found := false
	if fd.Body != nil {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == pkg {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// forbidName fails every non-test file, of a package outside allowed
// that imports the module's package pkg, that names pkg.name (why says
// what it does instead); fewer than least files checked fails the rule.
func forbidName(t *testing.T, allowed map[string]bool, pkgName, name string, least int, why string) {
	t.Helper()
	path := module + "/" + pkgName
	files := goFilesOf(t, func(rel string, p pkg) bool {
		return !allowed[rel] && slices.Contains(p.Imports, path)
	})
	for _, pf := range files {
		if selectorsOf(pf.file, path, pkgName, name) > 0 {
			t.Errorf("%s %s", pf.where, why)
		}
	}
	if len(files) < least {
		t.Fatalf("checked %d files for %s.%s; the rule would check nothing", len(files), pkgName, name)
	}
}

// selectorsOf counts where f names pkg.name, pkg imported from path
// (def: its name when f gives it none).
func selectorsOf(f *ast.File, path, def, name string) int {
	alias := importName(f, path, def)
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		sel, ok := node.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == alias && sel.Sel.Name == name {
			n++
		}
		return true
	})
	return n
}

// returnsInput says whether fd's results name analysis.Input.
func returnsInput(fd *ast.FuncDecl) bool {
	if fd.Type.Results == nil {
		return false
	}
	for _, r := range fd.Type.Results.List {
		if sel, ok := r.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Input" {
			if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == "analysis" {
				return true
			}
		}
	}
	return false
}

// goFile is one parsed Go file of a package, where says which.
type goFile struct {
	where string
	file  *ast.File
}

// goFilesOf parses the non-test Go files of the packages keep accepts
// (rel: the package's path below the module).
func goFilesOf(t *testing.T, keep func(rel string, p pkg) bool) []goFile {
	t.Helper()
	var out []goFile
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if !keep(rel, p) {
			continue
		}
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, goFile{where: rel + "/" + name, file: f})
		}
	}
	return out
}

// importName is the name f gives the package path (def when it names
// none).
func importName(f *ast.File, path, def string) string {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"`+path+`"` && imp.Name != nil {
			return imp.Name.Name
		}
	}
	return def
}

// slurmMarkers are pieces of Slurm's output syntax that a reader splits or
// matches on: sacct -P's field separator, the gres/ items of TRES and GRES
// strings, the variables of a hook's or a job's environment, scontrol's
// key=value words, sacct's column names. A package that splits or matches
// text on one of them is reading Slurm's output itself.
var slurmMarkers = []string{"|", "gres/", "SLURM_JOB", "JobId=", "JobState=", "NodeList=", "JobIDRaw", "TRESUsageIn"}

// slurmTextFuncs are the strings and bytes functions a reader splits or
// matches text with.
var slurmTextFuncs = map[string]bool{
	"Split": true, "SplitN": true, "SplitAfter": true, "Cut": true, "CutPrefix": true, "CutSuffix": true,
	"HasPrefix": true, "HasSuffix": true, "TrimPrefix": true, "TrimSuffix": true, "Index": true,
	"LastIndex": true, "Contains": true, "Count": true, "EqualFold": true, "FieldsFunc": true,
}

// slurmOutputExceptions may match one marker, each for its reason.
var slurmOutputExceptions = map[string]string{
	"agent/identity.go": "the agent tells which job a process runs from SLURM_JOB_ID in the process's own environment (/proc/PID/environ), a value it checks with slurmext.ValidJobID: identity, not Slurm's output",
}

// TestOnlySlurmextParsesSlurmOutput: only slurmext and its subpackages
// (slurmext/sacct: sacct's text and JSON) read Slurm's output formats
// (issue #41): no other package splits or matches text on a piece of
// Slurm's syntax. Two readers of one format drift apart (sacct's columns
// had two once); tools/, which writes Slurm's formats for tests and
// benchmarks, reads none.
func TestOnlySlurmextParsesSlurmOutput(t *testing.T) {
	skip := func(rel string) bool {
		return rel == "slurmext" || strings.HasPrefix(rel, "slurmext/") || strings.HasPrefix(rel, "tools/") || strings.HasPrefix(rel, "internal/archtest")
	}
	files := goFilesOf(t, func(rel string, _ pkg) bool { return !skip(rel) })
	for _, pf := range files {
		where := pf.where
		ast.Inspect(pf.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !slurmTextFuncs[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "strings" && x.Name != "bytes" {
				return true
			}
			ast.Inspect(call, func(a ast.Node) bool {
				lit, ok := a.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s := strings.Trim(lit.Value, "\"`")
				for _, m := range slurmMarkers {
					if (s == m || m != "|" && strings.Contains(s, m)) && slurmOutputExceptions[where] == "" {
						t.Errorf("%s: %s.%s on %q reads Slurm's output: only slurmext and its subpackages parse Slurm's formats; ask them", where, sel.X, sel.Sel.Name, s)
					}
				}
				return true
			})
			return true
		})
	}
	if len(files) < 50 {
		t.Fatalf("checked %d files; the rule would check nothing", len(files))
	}
}
