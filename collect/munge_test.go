package collect

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unmungeOut builds `unmunge --numeric` output as munge 0.5.15 prints it
// (captured on the development machine): 16-column keys, a blank line, then
// the payload exactly as encoded (no newline added).
func unmungeOut(status, uid, gid string, payload string) []byte {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			b.WriteString(k + ":" + strings.Repeat(" ", 17-len(k)) + v + "\n")
		}
	}
	line("STATUS", status)
	line("ENCODE_HOST", "10.1.2.3")
	line("ENCODE_TIME", "1796212326")
	line("DECODE_TIME", "1796212327")
	line("TTL", "300")
	line("CIPHER", "4")
	line("MAC", "5")
	line("ZIP", "0")
	line("UID", uid)
	line("GID", gid)
	line("LENGTH", strconv.Itoa(len(payload)))
	b.WriteString("\n")
	b.WriteString(payload)
	return []byte(b.String())
}

func TestParseUnmunge(t *testing.T) {
	tests := []struct {
		name        string
		out         []byte
		wantErr     bool
		wantUID     int
		wantGID     int
		wantPayload string
	}{
		{name: "success with payload", out: unmungeOut("0", "64030", "64030", "POST /v1/profiles abc"),
			wantUID: 64030, wantGID: 64030, wantPayload: "POST /v1/profiles abc"},
		{name: "payload with its own newline", out: unmungeOut("0", "0", "0", "hello\n"),
			wantUID: 0, wantGID: 0, wantPayload: "hello\n"},
		{name: "payload with a blank line inside", out: unmungeOut("0", "1001", "100", "a\n\nb"),
			wantUID: 1001, wantGID: 100, wantPayload: "a\n\nb"},
		{name: "empty payload", out: unmungeOut("0", "0", "0", ""), wantUID: 0, wantGID: 0, wantPayload: ""},
		{name: "expired numeric", out: unmungeOut("15", "0", "0", "x"), wantErr: true},
		{name: "replayed numeric", out: unmungeOut("17", "0", "0", "x"), wantErr: true},
		{name: "expired in words", out: unmungeOut("Expired credential (15)", "0", "0", "x"), wantErr: true},
		{name: "replayed in words", out: unmungeOut("Replayed credential (17)", "0", "0", "x"), wantErr: true},
		{name: "no status", out: unmungeOut("", "0", "0", "x"), wantErr: true},
		{name: "no uid", out: unmungeOut("0", "", "0", "x"), wantErr: true},
		{name: "no gid", out: unmungeOut("0", "0", "", "x"), wantErr: true},
		{name: "uid by name (not --numeric)", out: unmungeOut("Success (0)", "root (0)", "root (0)", "x"), wantErr: true},
		{name: "empty output", out: nil, wantErr: true},
		{name: "garbage", out: []byte("unmunge: Error: Failed to base64-decode credential\n"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, payload, err := parseUnmunge(tt.out)
			if tt.wantErr {
				if !errors.Is(err, ErrAuth) {
					t.Fatalf("err = %v, want ErrAuth", err)
				}
				if payload != nil {
					t.Errorf("payload = %q on error, want nil", payload)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if id.UID != tt.wantUID || id.GID != tt.wantGID {
				t.Errorf("uid, gid = %d, %d, want %d, %d", id.UID, id.GID, tt.wantUID, tt.wantGID)
			}
			if id.Host != "10.1.2.3" {
				t.Errorf("host = %q, want 10.1.2.3", id.Host)
			}
			if want := time.Unix(1796212326, 0); !id.Time.Equal(want) {
				t.Errorf("time = %v, want %v", id.Time, want)
			}
			if string(payload) != tt.wantPayload {
				t.Errorf("payload = %q, want %q", payload, tt.wantPayload)
			}
		})
	}
}

func TestBinding(t *testing.T) {
	base := Binding("POST", "/v1/profiles", []byte(`{"job_id":"1"}`))
	if again := Binding("POST", "/v1/profiles", []byte(`{"job_id":"1"}`)); !bytes.Equal(base, again) {
		t.Errorf("Binding is not stable: %q then %q", base, again)
	}
	if !bytes.Equal(Binding("GET", "/v1/jobs", nil), Binding("GET", "/v1/jobs", []byte{})) {
		t.Error("nil and empty bodies bind differently; the server passes nil for GET")
	}
	others := []struct {
		name   string
		method string
		path   string
		body   string
	}{
		{name: "method", method: "PUT", path: "/v1/profiles", body: `{"job_id":"1"}`},
		{name: "path", method: "POST", path: "/v1/profile", body: `{"job_id":"1"}`},
		{name: "query", method: "POST", path: "/v1/profiles?x=1", body: `{"job_id":"1"}`},
		{name: "body", method: "POST", path: "/v1/profiles", body: `{"job_id":"2"}`},
		{name: "empty body", method: "POST", path: "/v1/profiles", body: ``},
	}
	for _, tt := range others {
		t.Run(tt.name, func(t *testing.T) {
			if got := Binding(tt.method, tt.path, []byte(tt.body)); bytes.Equal(got, base) {
				t.Errorf("Binding(%s %s %s) equals the original request's", tt.method, tt.path, tt.body)
			}
		})
	}
}

// TestMungeRoundTrip runs the real munge and unmunge against the local
// munged. It is skipped only where munge is not installed or munged does
// not run; the e2e harness starts munged, so CI runs it.
func TestMungeRoundTrip(t *testing.T) {
	if _, err := os.Stat("/usr/bin/munge"); err != nil {
		t.Skipf("munge not installed: %v", err)
	}
	if _, err := exec.LookPath("/usr/bin/unmunge"); err != nil {
		t.Skipf("unmunge not installed: %v", err)
	}
	requireMunged(t, "/run/munge/munge.socket.2")

	ctx := context.Background()
	m := Munge{Timeout: 10 * time.Second}
	payload := Binding("POST", "/v1/profiles", []byte(`{"job_id":"42"}`))
	cred, err := m.Encode(ctx, payload)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if !strings.HasPrefix(cred, "MUNGE:") || strings.ContainsAny(cred, " \n") {
		t.Fatalf("credential = %q, want one MUNGE: token", cred)
	}
	id, got, err := m.Decode(ctx, cred)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !bytes.Equal(got, payload) {
		t.Errorf("payload = %q, want %q", got, payload)
	}
	if id.UID != os.Getuid() || id.GID != os.Getgid() {
		t.Errorf("uid, gid = %d, %d, want %d, %d", id.UID, id.GID, os.Getuid(), os.Getgid())
	}
	if id.Host == "" {
		t.Error("no encode host")
	}
	if d := time.Since(id.Time); d < -time.Minute || d > time.Minute {
		t.Errorf("encode time %v is %v away from now", id.Time, d)
	}

	// munged refuses a credential decoded before: a captured request
	// cannot be sent again.
	if _, _, err := m.Decode(ctx, cred); !errors.Is(err, ErrAuth) {
		t.Errorf("second Decode: err = %v, want ErrAuth (replayed)", err)
	}
	for _, bad := range []string{"MUNGE:AAAAbogus:", "not a credential", ""} {
		if _, _, err := m.Decode(ctx, bad); !errors.Is(err, ErrAuth) {
			t.Errorf("Decode(%q): err = %v, want ErrAuth", bad, err)
		}
	}

	// An empty payload round-trips as empty.
	cred, err = m.Encode(ctx, nil)
	if err != nil {
		t.Fatalf("Encode(nil): %v", err)
	}
	if _, got, err := m.Decode(ctx, cred); err != nil || len(got) != 0 {
		t.Errorf("Decode of an empty payload = %q, %v; want empty, nil", got, err)
	}
}
