package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/config"
)

func TestClusterHasShards(t *testing.T) {
	dir := t.TempDir()
	noShards := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(noShards, []byte("ClusterName=lab\nNodeName=g[1-2] Gres=gpu:a100:4 State=UNKNOWN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       bool
	}{
		// The example declares shard:64 on its GPU nodes.
		{name: "contrib example", path: filepath.Join("..", "..", "contrib", "slurm", "slurm.conf.example"), want: true},
		{name: "GPUs without shards", path: noShards, want: false},
		{name: "unreadable", path: filepath.Join(dir, "absent.conf"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clusterHasShards(tt.path); got != tt.want {
				t.Errorf("clusterHasShards(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

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
	err := runAgent(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, config.ErrConfig) {
		t.Errorf("runAgent with a missing address map: %v, want ErrConfig", err)
	}
}
