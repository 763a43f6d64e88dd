package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// adminSections are the commands whose man pages go in section 8, the
// system administration commands and daemons: what root, slurmd, slurmctld
// or a service unit runs. Everything else — the commands users and admins
// type (jobs, show, tui, notices, report, the analyses) and gpuprof itself,
// installed in /usr/bin — is in section 1, as Debian's policy has it for
// programs in /usr/bin. A subcommand not named here takes its parent's.
var adminSections = map[string]bool{
	"agent":          true,
	"prolog":         true,
	"epilog":         true,
	"jobcomp":        true,
	"mailprog":       true,
	"admincomment":   true,
	"ingest":         true,
	"serve":          true,
	"import":         true,
	"notices digest": true,
}

// manSection is the section of cmd's man page, "1" or "8".
func manSection(cmd *cobra.Command) string {
	for c := cmd; c.HasParent(); c = c.Parent() {
		if adminSections[strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")] {
			return "8"
		}
	}
	return "1"
}

// newGenDocsCommand writes what a package installs beside the binary: a
// man page per command (cobra's generator, from the same help text as
// --help) and the shell completion scripts. Hidden: it is for make
// package, not for users.
func newGenDocsCommand() *cobra.Command {
	var man, completions string
	cmd := &cobra.Command{
		Use:    "gendocs",
		Short:  "Write man pages and shell completions (for packaging)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if man == "" && completions == "" {
				return usagef("name --man DIR, --completions DIR or both")
			}
			root := cmd.Root()
			if man != "" {
				if err := writeManPages(root, man); err != nil {
					return err
				}
			}
			if completions != "" {
				if err := writeCompletions(root, completions); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&man, "man", "", "man directory: pages go in its man1/ (gpuprof.1, gpuprof-show.1, …) and man8/ (gpuprof-agent.8, …)")
	cmd.Flags().StringVar(&completions, "completions", "", "directory for gpuprof.bash, _gpuprof (zsh) and gpuprof.fish")
	return cmd
}

// writeManPages writes one page per visible command, each in dir/manN/
// for its section (manSection), as a man directory is laid out. The date
// is SOURCE_DATE_EPOCH's when set, so that a rebuilt package is byte for
// byte the same (reproducible builds).
func writeManPages(root *cobra.Command, dir string) error {
	date := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var epoch int64
		if _, err := fmt.Sscan(s, &epoch); err != nil {
			return usagef("SOURCE_DATE_EPOCH %q: want seconds since 1970", s)
		}
		date = time.Unix(epoch, 0).UTC()
	}
	root.DisableAutoGenTag = true
	sections := map[string]string{} // page name (gpuprof-show) → section
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return
		}
		cmds = append(cmds, c)
		sections[strings.ReplaceAll(c.CommandPath(), " ", "-")] = manSection(c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range cmds {
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		section := sections[name]
		h := &doc.GenManHeader{Section: section, Source: "gpuprof " + version, Manual: "gpuprof manual", Date: &date}
		var buf bytes.Buffer
		if err := doc.GenMan(c, h, &buf); err != nil {
			return fmt.Errorf("man page %s: %w", name, err)
		}
		page := fixSeeAlso(buf.Bytes(), sections)
		sub := filepath.Join(dir, "man"+section)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(sub, name+"."+section), page, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// seeAlso is a reference cobra's generator writes in SEE ALSO, with the
// section of the page that refers (it knows one section for all pages).
// Compiled on first use: only gendocs needs it, and every gpuprof process
// (a slurmd hook among them) would pay for it at start-up (issue #41).
var seeAlso = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\\fB(gpuprof(?:-[a-z0-9]+)*)\(([0-9])\)\\fP`)
})

// fixSeeAlso gives each reference to another gpuprof page that page's own
// section.
func fixSeeAlso(page []byte, sections map[string]string) []byte {
	re := seeAlso()
	return re.ReplaceAllFunc(page, func(m []byte) []byte {
		sm := re.FindSubmatch(m)
		s, ok := sections[string(sm[1])]
		if !ok {
			return m
		}
		return []byte(`\fB` + string(sm[1]) + "(" + s + `)\fP`)
	})
}

// writeCompletions writes the three shells' scripts under the names each
// shell's package layout expects (bash-completion's completions/gpuprof,
// zsh's site-functions/_gpuprof, fish's vendor_completions.d/gpuprof.fish
// are where the package installs them).
func writeCompletions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		gen  func(string) error
	}{
		{"gpuprof.bash", func(p string) error { return root.GenBashCompletionFileV2(p, true) }},
		{"_gpuprof", root.GenZshCompletionFile},
		{"gpuprof.fish", func(p string) error { return root.GenFishCompletionFile(p, true) }},
	} {
		if err := c.gen(filepath.Join(dir, c.name)); err != nil {
			return fmt.Errorf("completion %s: %w", c.name, err)
		}
	}
	return nil
}
