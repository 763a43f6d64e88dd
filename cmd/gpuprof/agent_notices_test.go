package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/notice"
)

func TestClusterGres(t *testing.T) {
	dir := t.TempDir()
	noShards := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(noShards, []byte("ClusterName=lab\nNodeName=g[1-2] Gres=gpu:a100:4 State=UNKNOWN\nNodeName=g3 Gres=gpu:l4:2,gpu:a100:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       notice.ClusterGres
	}{
		// The example declares gpu:h100:8,shard:64 on its GPU nodes.
		{name: "contrib example", path: filepath.Join("..", "..", "contrib", "slurm", "slurm.conf.example"),
			want: notice.ClusterGres{Known: true, Shards: true, Types: []string{"h100"}}},
		{name: "GPUs without shards", path: noShards, want: notice.ClusterGres{Known: true, Types: []string{"a100", "l4"}}},
		{name: "unreadable", path: filepath.Join(dir, "absent.conf"), want: notice.ClusterGres{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clusterGres(tt.path); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("clusterGres(%s) = %+v, want %+v", tt.path, got, tt.want)
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
