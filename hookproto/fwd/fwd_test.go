package fwd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/hookproto/fwd"
)

var hostile = []string{
	"SLURM_JOB_ID=42",
	`SLURM_JOB_COMMENT=say "hi" \ back\slash`,
	"CTRL=a\x00b\x01c\nd\re\tf\x1f",
	"UNICODE=été ☃ 𝄞 \u2028\u2029 <>&",
	"INVALID=\xff\xfe ok \xc3",
	"EMPTY=",
	"=no key",
}

// TestRequestDecodes: the request written by hand decodes, with
// encoding/json, into the hookproto.Request the agent reads, with every
// string as encoding/json's own encoding would have carried it (invalid
// UTF-8 as U+FFFD).
func TestRequestDecodes(t *testing.T) {
	for _, h := range []fwd.Hook{
		{Kind: "prolog", ConfigSum: "0123456789abcdef", Began: time.Date(2026, 12, 7, 21, 0, 0, 123456789, time.UTC), LogLevel: "debug", Env: hostile},
		{Kind: "epilog", ConfigSum: "", Began: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Env: nil},
		{Kind: "épilog\"", ConfigSum: "\xff", Env: []string{""}},
	} {
		checkDecodes(t, h)
	}
}

func FuzzRequestDecodes(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, "prolog")
	}
	f.Fuzz(func(t *testing.T, env, kind string) {
		checkDecodes(t, fwd.Hook{Kind: kind, ConfigSum: env, Began: time.Unix(1796677089, 635535803), LogLevel: kind, Env: []string{env, kind + "=" + env}})
	})
}

func checkDecodes(t *testing.T, h fwd.Hook) {
	t.Helper()
	line := h.AppendRequest(nil)
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("request %q is not one line", line)
	}
	var got hookproto.Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("request %q does not decode: %v", line, err)
	}
	// What encoding/json's own encoding of h carries.
	b, err := json.Marshal(hookproto.Request{Op: hookproto.OpHook, Hook: &h})
	if err != nil {
		t.Fatal(err)
	}
	var want hookproto.Request
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got.Op != hookproto.OpHook || got.Hook == nil || !got.Hook.Began.Equal(want.Hook.Began) {
		t.Fatalf("request %q decodes to %+v, want %+v", line, got, want)
	}
	got.Hook.Began, want.Hook.Began = time.Time{}, time.Time{}
	if len(want.Hook.Env) == 0 {
		want.Hook.Env = nil
	}
	if len(got.Hook.Env) == 0 {
		got.Hook.Env = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("request %q decodes to %+v, want %+v", line, *got.Hook, *want.Hook)
	}
}

// TestOKIsTheAgentsAnswer: fwd.OK is the line the agent's socket writes
// for a request it took (encoding/json's encoding of an OK response).
func TestOKIsTheAgentsAnswer(t *testing.T) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(hookproto.Response{OK: true}); err != nil {
		t.Fatal(err)
	}
	if b.String() != fwd.OK+"\n" {
		t.Errorf("agent's OK answer %q, fwd.OK %q", b.String(), fwd.OK)
	}
}

func TestGetenv(t *testing.T) {
	h := fwd.Hook{Env: []string{"A=1", "AB=2", "A=3", "C=", "D"}}
	for key, want := range map[string]string{"A": "1", "AB": "2", "C": "", "D": "", "B": "", "": ""} {
		if got := h.Getenv(key); got != want {
			t.Errorf("Getenv(%q) = %q, want %q", key, got, want)
		}
	}
}

// serve answers one connection on a fresh unix socket with answer (after
// reading the request line when read), or holds it open unanswered.
func serve(t *testing.T, answer string, read bool) (string, chan []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if read {
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			got <- line
		}
		if answer == "" {
			time.Sleep(2 * time.Second)
			return
		}
		_, _ = c.Write([]byte(answer))
	}()
	return path, got
}

func TestSend(t *testing.T) {
	h := fwd.Hook{Kind: "prolog", ConfigSum: "0123456789abcdef", Began: time.Now(), Env: hostile}
	t.Run("ok", func(t *testing.T) {
		path, got := serve(t, fwd.OK+"\n", true)
		if err := fwd.Send(path, h, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		if line := <-got; !bytes.Equal(line, h.AppendRequest(nil)) {
			t.Errorf("agent read %q", line)
		}
	})
	t.Run("ok in pieces", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "agent.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = bufio.NewReader(c).ReadBytes('\n')
			for _, p := range []string{`{"ok"`, `:true}`, "\n"} {
				_, _ = c.Write([]byte(p))
				time.Sleep(10 * time.Millisecond)
			}
		}()
		if err := fwd.Send(path, h, 2*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		path, _ := serve(t, `{"ok":false,"error":"the hook read another configuration"}`+"\n", true)
		err := fwd.Send(path, h, 2*time.Second)
		if !errors.Is(err, fwd.ErrNotTaken) || !strings.Contains(err.Error(), "another configuration") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("more than OK", func(t *testing.T) {
		path, _ := serve(t, `{"ok":true,"held":true}`+"\n", true)
		if err := fwd.Send(path, h, 2*time.Second); !errors.Is(err, fwd.ErrNotTaken) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("closed without a line", func(t *testing.T) {
		path, _ := serve(t, `{"ok":true}`, true)
		if err := fwd.Send(path, h, 2*time.Second); err == nil {
			t.Error("no error")
		}
	})
	t.Run("no answer: bounded", func(t *testing.T) {
		path, _ := serve(t, "", true)
		start := time.Now()
		err := fwd.Send(path, h, 200*time.Millisecond)
		if took := time.Since(start); err == nil || took > time.Second {
			t.Errorf("err %v after %s", err, took)
		}
	})
	t.Run("no agent", func(t *testing.T) {
		if err := fwd.Send(filepath.Join(t.TempDir(), "none.sock"), h, time.Second); err == nil {
			t.Error("no error")
		}
	})
}

// TestSendBoundedWhenTheAgentDoesNotRead: an agent that accepts but never
// reads a request larger than the socket's buffer cannot hold the hook
// past its timeout, however many partial writes it lets through.
func TestSendBoundedWhenTheAgentDoesNotRead(t *testing.T) {
	path, _ := serve(t, "", false)
	big := make([]string, 0, 4096)
	for i := range 4096 {
		big = append(big, strings.Repeat("x", 1000)+string(rune('a'+i%26)))
	}
	start := time.Now()
	err := fwd.Send(path, fwd.Hook{Kind: "prolog", Env: big}, 300*time.Millisecond)
	if took := time.Since(start); err == nil || took > 1500*time.Millisecond {
		t.Errorf("err %v after %s", err, took)
	}
}
