package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/hooks"
)

// TestMailProgCommand: Slurm's END mail for a job the database holds goes
// to the configured mailer with Slurm's arguments, its body the job's
// GPU summary.
func TestMailProgCommand(t *testing.T) {
	db := runningDB(t)
	dir := t.TempDir()
	mailer := filepath.Join(dir, "mail")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >" + dir + "/argv\ncat >" + dir + "/body\n"
	if err := os.WriteFile(mailer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "gpuprof.toml")
	conf := fmt.Sprintf("log_file = %q\n[mail_prog]\nmailer = %q\ndeadline = \"1s\"\n", filepath.Join(dir, "log"), mailer)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SLURM_JOB_ID": "8101", "SLURM_CLUSTER_NAME": "lab", "SLURM_JOB_MAIL_TYPE": "Reached 90% of time limit"}
	p := hooks.Process{Getenv: func(k string) string { return env[k] }, Exit: func(int) {}}
	args := []string{"-s", "Slurm Job_id=8101 Name=x\nBcc: evil@example.org Reached 90% of time limit, Run time 00:30:00", "alice"}
	if code := runMailProg(context.Background(), &globalOptions{ConfigPath: cfg, DB: db}, args, p); code != 0 {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("exit %d; log:\n%s", code, log)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	if got := strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00"); strings.Join(got, "|") != strings.Join(args, "|") {
		t.Errorf("mailer's arguments %q, want Slurm's %q", got, args)
	}
	body, _ := os.ReadFile(filepath.Join(dir, "body"))
	for _, want := range []string{"GPU summary by gpuprof for job 8101 (cluster lab)", "GPUs held/used:  1/1", "VRAM peak:       20 of 80 GiB (25 %)", "Utilisation:     mean 70 %", "had not closed the job's profile yet"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}
