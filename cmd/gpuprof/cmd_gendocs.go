package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manSection is the section of gpuprof's man pages: it is installed in
// /usr/sbin, whose programs Debian's policy puts in section 8.
const manSection = "8"

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
	cmd.Flags().StringVar(&man, "man", "", "directory for the man pages (gpuprof.8, gpuprof-show.8, …)")
	cmd.Flags().StringVar(&completions, "completions", "", "directory for gpuprof.bash, _gpuprof (zsh) and gpuprof.fish")
	return cmd
}

// writeManPages writes one page per visible command. The date is
// SOURCE_DATE_EPOCH's when set, so that a rebuilt package is byte for byte
// the same (reproducible builds).
func writeManPages(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	date := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var epoch int64
		if _, err := fmt.Sscan(s, &epoch); err != nil {
			return usagef("SOURCE_DATE_EPOCH %q: want seconds since 1970", s)
		}
		date = time.Unix(epoch, 0).UTC()
	}
	h := &doc.GenManHeader{Section: manSection, Source: "gpuprof " + version, Manual: "gpuprof manual", Date: &date}
	root.DisableAutoGenTag = true
	return doc.GenManTree(root, h, dir)
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
