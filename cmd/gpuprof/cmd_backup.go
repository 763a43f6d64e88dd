package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/store"
)

type backupOptions struct {
	To    string
	Check string
}

func (o *backupOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.To, "to", "", "write a consistent copy of the database to this new file (never overwritten)")
	fs.StringVar(&o.Check, "check", "", "check a backup file (integrity, schema) and say what it holds; writes nothing")
}

func newBackupCommand(g *globalOptions) *cobra.Command {
	o := &backupOptions{}
	cmd := &cobra.Command{
		Use:   "backup --to FILE | --check FILE",
		Short: "Copy the database consistently while the agent or serve writes it",
		Long: `Writes a consistent copy of the database (the node's or the collector's, the
configuration's db or --db) to a new file while the agent or gpuprof serve keep
writing: one snapshot (SQLite's VACUUM INTO, a read transaction: writers are not
stopped), compacted. The copy is written under a temporary name in the
destination's directory, created exclusively with no link followed and with the
database's permission bits (at most 0640), synced, checked (integrity, foreign
keys, schema) and only then named FILE, which must not exist. --check FILE
checks an existing backup the same way. Restore with gpuprof restore
(docs/backup.md).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.To == "") == (o.Check == "") {
				return usageError{errors.New("give one of --to FILE or --check FILE")}
			}
			if o.Check != "" {
				info, err := store.CheckFile(cmd.Context(), o.Check)
				if err != nil {
					return fmt.Errorf("check %s: %w", o.Check, err)
				}
				printBackupInfo(cmd.OutOrStdout(), o.Check, info)
				return nil
			}
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			return runBackup(cmd.Context(), cfg, o.To, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// runBackup copies cfg.DB to dst.
func runBackup(ctx context.Context, cfg config.Config, dst string, out io.Writer) error {
	db, err := store.Open(ctx, cfg.DB, store.Options{ReadOnly: true, BusyTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	info, err := db.Backup(ctx, dst)
	if err != nil {
		return err
	}
	printBackupInfo(out, dst, info)
	printf(out, "copied %s in %.1f s\n", cfg.DB, time.Since(start).Seconds())
	return nil
}

func printBackupInfo(out io.Writer, path string, info store.BackupInfo) {
	printf(out, "%s: ok, schema %d, %d bytes, %d job profiles, %d scheduler records, %d queued for the collector\n",
		path, info.Version, info.Bytes, info.Jobs, info.Sched, info.Outbox)
}

type restoreOptions struct {
	From   string
	Procfs string
}

func (o *restoreOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.From, "from", "", "the backup file to restore (made by gpuprof backup)")
	fs.StringVar(&o.Procfs, "procfs", "/proc", "procfs root, read for the processes holding the database open")
}

func newRestoreCommand(g *globalOptions) *cobra.Command {
	o := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore --from FILE",
		Short: "Replace the database with a backup (the agent or serve stopped)",
		Long: `Checks the backup (as gpuprof backup --check), refuses while any process holds
the database open (the agent, gpuprof serve, a hook: read from /proc, so run it
as root; stop the service first), keeps the database it replaces beside it as
DB.before-restore-UNIXTIME (with its -wal), and puts the backup in its place
with the replaced file's owner, group and mode. Profiles recorded after the
backup are not in it: on a node, jobs still running resume from their next
flush; on the collector, nodes re-send only what is still in their outbox
(docs/backup.md).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.From == "" {
				return usageError{errors.New("--from FILE is required")}
			}
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			kept, err := store.Restore(cmd.Context(), o.Procfs, o.From, cfg.DB)
			if err != nil {
				return err
			}
			if kept != "" {
				printf(cmd.OutOrStdout(), "the replaced database is kept as %s\n", kept)
			}
			printf(cmd.OutOrStdout(), "restored %s from %s\n", cfg.DB, o.From)
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
