package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// Shell completion of flag values, not only of flag names: the fixed
// vocabularies (states, sort keys, output formats) from the one place each
// is defined, and the names of users, accounts and partitions from the
// jobs the caller may see, read through the same source (local database,
// agent socket or collector) and the same scoping as gpuprof jobs.

// completionLookback bounds the jobs read for name completion, and
// completionTimeout how long a <Tab> may wait for them.
const (
	completionLookback = 90 * 24 * time.Hour
	completionTimeout  = 2 * time.Second
)

// registerCompletions attaches value completion to every command's flags
// of the names below. A flag is completed where it exists; commands added
// later get theirs by name too.
func registerCompletions(root *cobra.Command, g *globalOptions) {
	fixed := map[string]func(cmd *cobra.Command) []string{
		"state": func(*cobra.Command) []string {
			var out []string
			for _, c := range slurmext.SacctStateCodes() {
				if short, long, ok := strings.Cut(c, " "); ok {
					out = append(out, long+"\t"+short)
				}
			}
			return append(out, "finished\tknown only from a GPU profile whose epilog came")
		},
		"sort": func(*cobra.Command) []string { return store.SortKeys() },
	}
	names := []string{"user", "account", "partition"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for flag, f := range fixed {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
					return withPrefix(f(cmd), prefix), cobra.ShellCompDirectiveNoFileComp
				})
			}
		}
		if c.Name() != "whatif" { // whatif's --partition is a partition definition, not a name
			for _, flag := range names {
				if c.Flags().Lookup(flag) != nil {
					_ = c.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
						return withPrefix(seenNames(cmd.Context(), g, flag), prefix), cobra.ShellCompDirectiveNoFileComp
					})
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// seenNames are the names (field: user, account or partition) of the
// jobs of the last completionLookback that the caller may see; nothing
// when the source cannot be opened or answers too slowly (a completion
// never prints an error into the shell's line).
func seenNames(ctx context.Context, g *globalOptions, field string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	src, err := openSource(ctx, g, false)
	if err != nil {
		return nil
	}
	defer src.Close()
	names, _ := src.Names(ctx, time.Now().Add(-completionLookback), field)
	var out []string
	for _, n := range names { // onto the shell's line: cleaned, once each
		if n = termtext.Short(n, 64); n != "-" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// withPrefix keeps the candidates that start with what was typed (the
// part before a tab is the value; after it, its description).
func withPrefix(cands []string, prefix string) []string {
	out := cands[:0:0]
	for _, c := range cands {
		v, _, _ := strings.Cut(c, "\t")
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(prefix)) {
			out = append(out, c)
		}
	}
	return out
}
