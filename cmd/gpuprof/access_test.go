package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/jobsource"
	"github.com/gpuprof/gpuprof/store"
)

// readKind is how a command reads jobs.
type readKind int

const (
	// readsNoJobs: the command writes, simulates or prints; it opens no
	// job source (jobsource.Source).
	readsNoJobs readKind = iota
	// readsForOthers: a daemon that answers other callers' queries
	// through collect, which makes one store.Reader per caller.
	readsForOthers
	// readsOwn: through openSource, whose reader is the caller's: a
	// non-admin's own jobs, an admin's (or the database owner's) every job.
	readsOwn
	// readsAdminOnly: as readsOwn; what needs every user's jobs (the
	// replay, the digest) is refused or left out for a non-admin, who
	// reads their own jobs only.
	readsAdminOnly
	// readsOwnAsHook: as readsOwn, for a hook Slurm runs (as SlurmUser,
	// an admin by store.Admins) that logs its errors and exits 0, so
	// only the reader it opened is checked. One without args is not run
	// here: mailprog hands Slurm's mail to the mailer with exec(2)
	// (TestMailProgCommand runs it).
	readsOwnAsHook
)

// commandReads says how each command of gpuprof reads jobs, and what to
// run it with. Every command must be listed: TestCommandsReadScoped fails
// until a new one is. A command that reads jobs reads them through
// openSource: the store's readers are unexported behind store.Reader,
// and internal/archtest lets no file of cmd/ make one (jobsource.Open does).
var commandReads = map[string]struct {
	kind readKind
	args []string
}{
	"gpuprof agent":          {kind: readsForOthers}, // the query socket: collect.ServeLocal, a reader per peer uid
	"gpuprof serve":          {kind: readsForOthers}, // the collector: a reader per munge uid
	"gpuprof demo conf":      {kind: readsNoJobs},
	"gpuprof demo month":     {kind: readsNoJobs}, // writes a simulated month
	"gpuprof prolog":         {kind: readsNoJobs},
	"gpuprof epilog":         {kind: readsNoJobs},
	"gpuprof gendocs":        {kind: readsNoJobs},
	"gpuprof import sacct":   {kind: readsNoJobs}, // writes sacct's records; reads its import marks only
	"gpuprof ingest":         {kind: readsNoJobs},
	"gpuprof backup":         {kind: readsNoJobs}, // copies the file: whoever can open it (its mode decides) copies it whole
	"gpuprof restore":        {kind: readsNoJobs}, // replaces the file: root
	"gpuprof jobcomp":        {kind: readsNoJobs}, // starts admincomment, detached, when asked to
	"gpuprof admincomment":   {kind: readsOwnAsHook, args: []string{"admincomment", "1"}},
	"gpuprof mailprog":       {kind: readsOwnAsHook},
	"gpuprof simgpu burn":    {kind: readsNoJobs},
	"gpuprof simgpu init":    {kind: readsNoJobs},
	"gpuprof simgpu xid":     {kind: readsNoJobs},
	"gpuprof jobs":           {kind: readsOwn, args: []string{"jobs"}},
	"gpuprof show":           {kind: readsOwn, args: []string{"show", "1"}},
	"gpuprof profiles":       {kind: readsOwn, args: []string{"profiles"}},
	"gpuprof recommend":      {kind: readsOwn, args: []string{"recommend"}},
	"gpuprof tui":            {kind: readsOwn, args: []string{"tui"}},
	"gpuprof notices":        {kind: readsOwn, args: []string{"notices"}},
	"gpuprof plan":           {kind: readsAdminOnly, args: []string{"plan"}},
	"gpuprof report":         {kind: readsAdminOnly, args: []string{"report"}},
	"gpuprof whatif":         {kind: readsAdminOnly, args: []string{"whatif"}},
	"gpuprof notices digest": {kind: readsAdminOnly, args: []string{"notices", "digest", "--to", "root@localhost"}},
}

// completionReads are completions that read jobs (the names seen in
// recent jobs), as the shell asks for them: the command, then what to
// complete.
var completionReads = [][]string{{"__complete", "jobs", "--user", ""}, {"__complete", "tui", "--account", "a"}}

var errSourceChecked = errors.New("source checked")

// Every command of gpuprof is in commandReads, and each that reads jobs
// reads them through a reader scoped to whoever runs it: a user who is
// not an admin and does not own the database reads their own jobs only,
// the database's owner every job.
func TestCommandsReadScoped(t *testing.T) {
	var paths []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() {
			paths = append(paths, c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCommand())
	for _, p := range paths {
		if _, ok := commandReads[p]; !ok {
			t.Errorf("%s is not in commandReads: say how it reads jobs (through openSource, scoped to its caller, or not at all)", p)
		}
	}
	for p := range commandReads {
		if !slices.Contains(paths, p) {
			t.Errorf("commandReads lists %s, which is no command", p)
		}
	}

	dir := t.TempDir()
	dbPath, cfgPath := filepath.Join(dir, "gpuprof.db"), filepath.Join(dir, "gpuprof.yaml")
	db, err := store.Open(context.Background(), dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.WriteFile(cfgPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	owner := os.Getuid() // the database file's
	user := 4242         // neither root nor the owner; admin_group is unset
	if user == owner {
		user++
	}
	defer func(uid func() int) { callerUID, sourceOpened = uid, nil }(callerUID)

	runs := completionReads
	hook := map[string]bool{}
	for _, p := range paths {
		r := commandReads[p]
		if r.kind == readsOwn || r.kind == readsAdminOnly || r.kind == readsOwnAsHook && r.args != nil {
			runs = append(runs, r.args)
		}
		if r.kind == readsOwnAsHook && r.args != nil {
			hook[r.args[0]] = true
		}
	}
	for _, args := range runs {
		for _, uid := range []int{user, owner} {
			var got []store.Caller
			sourceOpened = func(s *jobsource.Source) error {
				r := s.Reader()
				if r == nil {
					t.Errorf("%v: read through a client, not the database --db names", args)
					return errSourceChecked
				}
				got = append(got, r.Caller())
				return errSourceChecked
			}
			callerUID = func() int { return uid }
			root := newRootCommand()
			flags := []string{"--config", cfgPath, "--db", dbPath}
			if args[0] == "__complete" { // what to complete comes last
				root.SetArgs(slices.Concat(args[:2], flags, args[2:]))
			} else {
				root.SetArgs(slices.Concat(args, flags))
			}
			root.SetOut(new(strings.Builder))
			root.SetErr(new(strings.Builder))
			err := root.ExecuteContext(context.Background())
			if args[0] != "__complete" && !hook[args[0]] && !errors.Is(err, errSourceChecked) {
				t.Errorf("gpuprof %v as uid %d: %v, want it to open a job source", args, uid, err)
			}
			if len(got) == 0 {
				t.Errorf("gpuprof %v as uid %d opened no job source", args, uid)
			}
			for _, c := range got {
				if wantAdmin := uid == owner; c.Admin != wantAdmin || !c.Admin && c.UID != uid {
					t.Errorf("gpuprof %v as uid %d reads as %+v, want admin %v (uid %d)", args, uid, c, wantAdmin, uid)
				}
			}
		}
	}
}
