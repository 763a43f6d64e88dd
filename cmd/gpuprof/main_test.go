package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/config"
)

func TestGuardExitsZeroAtDeadline(t *testing.T) {
	exited := make(chan int, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	began := time.Now()
	ctx, stop := guard(context.Background(), 100*time.Millisecond, log, "7", func(code int) { exited <- code })
	defer stop()
	if dl, ok := ctx.Deadline(); !ok || dl.Sub(began) > 95*time.Millisecond {
		t.Errorf("context deadline %v after start, want 90ms (a tenth before the hard one)", dl.Sub(began))
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		if took := time.Since(began); took < 100*time.Millisecond || took > time.Second {
			t.Errorf("watchdog fired after %s, want 100ms", took)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("watchdog never fired for a stuck hook")
	}
}

func TestGuardStopDisarms(t *testing.T) {
	exited := make(chan int, 1)
	_, stop := guard(context.Background(), 50*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), "7", func(code int) { exited <- code })
	stop()
	select {
	case <-exited:
		t.Fatal("watchdog fired after stop")
	case <-time.After(150 * time.Millisecond):
	}
}

func TestCleanKeepsTerminalsSafe(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "train-resnet", "train-resnet"},
		{"ansi", "x\x1b[31mred\x1b[0m", "xred"},
		{"c1 csi", "a\u009b2Jb", "ab"},
		{"c1 control", "a\u0085b", "a\uFFFDb"},
		{"newline", "a\nb", "a b"},
		{"bidi override", "evil\u202Etxt.exe", "evil\uFFFDtxt.exe"},
		{"bidi isolate", "a\u2066b\u2069", "a\uFFFDb\uFFFD"},
		{"long", strings.Repeat("é", 30), strings.Repeat("é", 19) + "…"},
		{"cjk", "训练任务", "训练任务"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cliview.Clean(tt.in, 20); got != tt.want {
				t.Errorf("cliview.Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestClusterNamePrecedence(t *testing.T) {
	cfg := config.Default()
	cfg.SlurmConf = t.TempDir() + "/none"
	if got := clusterName(cfg, ""); got != "default" {
		t.Errorf("no names anywhere: %q, want default", got)
	}
	if got := clusterName(cfg, "fromslurm"); got != "fromslurm" {
		t.Errorf("from Slurm: %q", got)
	}
	cfg.Cluster = "configured"
	if got := clusterName(cfg, "fromslurm"); got != "configured" {
		t.Errorf("configured: %q", got)
	}
}
