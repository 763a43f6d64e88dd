package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/hooks"
)

func TestRunAgentRefusesBadNoticeConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Agent.GPU = "sim"
	cfg.Sim.Dir = filepath.Join(dir, "sim")
	cfg.DB = filepath.Join(dir, "gpuprof.db")
	cfg.SpoolDir = filepath.Join(dir, "spool")
	cfg.Socket = filepath.Join(dir, "agent.sock")
	cfg.QuerySocket = ""
	cfg.SlurmConf = filepath.Join(dir, "slurm.conf")
	cfg.Notices.Enabled = true
	cfg.Notices.AddressMap = filepath.Join(dir, "absent.map")
	err := runAgent(context.Background(), cfg, hooks.Forwarder{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, config.ErrConfig) {
		t.Errorf("runAgent with a missing address map: %v, want ErrConfig", err)
	}
}
