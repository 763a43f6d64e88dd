package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/store"
)

// startQueryServer starts the agent's local query socket (query_socket):
// users who cannot open the database read their own jobs through it (see
// collect.ServeLocal). It runs beside the sampling, on its own goroutines
// and its own read-only database handle, and never stops the agent: a
// socket it cannot create is logged and the agent samples on without it.
// refusals counts and logs what it refuses (the agent exports the count).
// The returned function stops it and waits until it has.
func startQueryServer(ctx context.Context, cfg config.Config, refusals *collect.Refusals, log *slog.Logger) (stop func()) {
	if cfg.QuerySocket == "" {
		return func() {}
	}
	log = log.With("query_socket", cfg.QuerySocket)
	isAdmin, err := store.Admins(cfg.AdminGroup, cfg.Serve.SlurmUser)
	if err != nil {
		// store.Admins's one policy: only root is an admin.
		log.Warn("query socket: "+err.Error(), "admin_group", cfg.AdminGroup)
	}
	// The agent opened (created, migrated) the database before this.
	db, err := store.Open(ctx, cfg.DB, store.Options{ReadOnly: true, BusyTimeout: 2 * time.Second})
	if err != nil {
		log.Error("no query socket: users cannot read their jobs on this host", "err", err)
		return func() {}
	}
	ln, err := collect.ListenLocal(cfg.QuerySocket)
	if err != nil {
		db.Close()
		log.Error("no query socket: users cannot read their jobs on this host", "err", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer db.Close()
		if err := collect.ServeLocal(ctx, ln, db, collect.LocalOptions{IsAdmin: isAdmin, Refusals: refusals, Persons: collect.NewPersons(cfg.SubuidFile)}, log); err != nil {
			log.Error("query socket stopped", "err", err)
		}
	}()
	log.Info("query socket listening")
	return func() {
		cancel()
		<-done
	}
}
