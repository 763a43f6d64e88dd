package notice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOptOut(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "no-notices")
	if err := os.WriteFile(list, []byte("# asked on 2026-11-02\nbob\ncarol dave # two on a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	homes := filepath.Join(dir, "home")
	for _, u := range []string{"alice", "erin"} {
		if err := os.MkdirAll(filepath.Join(homes, u), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(homes, "erin", ".gpuprof-no-notices"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	home := func(u string) (string, error) {
		if u == "hung" {
			select {} // an NFS home that never answers
		}
		if u == "nobody" {
			return "", errors.New("unknown user")
		}
		return filepath.Join(homes, u), nil
	}
	o := OptOut{File: list, HomeFile: ".gpuprof-no-notices", Timeout: 200 * time.Millisecond, Home: home}
	tests := []struct {
		user    string
		want    bool
		how     string
		wantErr bool
	}{
		{user: "alice", want: false},
		{user: "bob", want: true, how: "listed in"},
		{user: "dave", want: true, how: "listed in"},
		{user: "erin", want: true, how: ".gpuprof-no-notices exists"},
		{user: "hung", want: false, wantErr: true},
		{user: "nobody", want: false, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			start := time.Now()
			got, how, err := o.OptedOut(context.Background(), tt.user)
			if got != tt.want || !strings.Contains(how, tt.how) || (err != nil) != tt.wantErr {
				t.Errorf("OptedOut(%s) = %v, %q, %v; want %v, %q, error %v", tt.user, got, how, err, tt.want, tt.how, tt.wantErr)
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("OptedOut(%s) took %s with a 200ms timeout", tt.user, time.Since(start))
			}
		})
	}
	// A missing list is no opt-out and no error (the admins have none yet).
	o.File = filepath.Join(dir, "absent")
	if got, _, err := o.OptedOut(context.Background(), "bob"); got || err != nil {
		t.Errorf("missing list: %v, %v", got, err)
	}
}

func TestExemptions(t *testing.T) {
	e := Exemptions{Partitions: []string{"interactive"}, QOS: []string{"service"}, Accounts: []string{"admins"}, Users: []string{"svc"}}
	tests := []struct {
		part, acct, user string
		want             bool
	}{
		{"gpu", "vision", "alice", false},
		{"interactive", "vision", "alice", true},
		{"gpu,interactive", "vision", "alice", true},
		{"gpu", "admins", "alice", true},
		{"gpu", "vision", "svc", true},
		{"", "", "", false},
	}
	for _, tt := range tests {
		if got, why := e.Exempt(tt.part, tt.acct, tt.user); got != tt.want || got && why == "" {
			t.Errorf("Exempt(%q, %q, %q) = %v, %q; want %v", tt.part, tt.acct, tt.user, got, why, tt.want)
		}
	}
	if !e.ExemptQOS("service") || e.ExemptQOS("normal") || e.ExemptQOS("") {
		t.Error("ExemptQOS wrong")
	}
}
