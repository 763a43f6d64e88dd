// Package fwd is the thin hook's side of the agent socket: a prolog or
// epilog forwarded whole (Hook), its request written by hand, and the
// client that sends it over a raw unix socket.
//
// gpuprof-hook, the binary slurmd runs for every job's prolog and epilog,
// links this package and little else (internal/archtest's
// TestThinHookIsSmall): no TOML decoder, no reflection-driven JSON, no
// net package. A Go program's start is paid in page faults, each a trip to
// the host on a virtual machine, and every package initialiser, fresh
// span and grown stack costs some (issue #41, docs/benchmarks.md). The
// agent, which already holds the validated configuration, does the
// hook's work (hooks.Forwarder); whatever the agent does not take, the
// thin hook hands to the full one (gpuprof-hook-full, else `gpuprof
// prolog|epilog`).
//
// The request is hookproto.Request with Op "hook" and Hook set, decoded by
// the agent with encoding/json; TestRequestDecodes holds the bytes
// written here to that decoding.
package fwd

import (
	"bytes"
	"errors"
	"fmt"
	"syscall"
	"time"
	"unicode/utf8"
)

// Op is the agent socket's operation of a forwarded hook
// (hookproto.OpHook).
const Op = "hook"

// Hook is a prolog or epilog the thin hook forwards to the agent.
type Hook struct {
	// Kind is "prolog" or "epilog".
	Kind string `json:"kind"`
	// ConfigSum is conffile.Sum of the configuration file the hook read:
	// the agent takes the hook only when it loaded the same bytes, so
	// the record is built on the configuration the hook names.
	ConfigSum string `json:"config_sum"`
	// Began is when the hook process started: the done line's took.
	Began time.Time `json:"began"`
	// LogLevel is the hook's --log-level ("" for info).
	LogLevel string `json:"log_level,omitempty"`
	// Env is the hook's environment as slurmd gave it, KEY=VALUE each;
	// for a repeated key the first counts, as for os.Getenv.
	Env []string `json:"env"`
}

// Getenv is the value of key in h.Env, as os.Getenv would give it in the
// hook's process: the first KEY= entry's value, else "".
func (h Hook) Getenv(key string) string {
	for _, kv := range h.Env {
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			return kv[len(key)+1:]
		}
	}
	return ""
}

// AppendRequest appends the socket request of h, one JSON line:
// {"op":"hook","hook":{...}} and a newline.
func (h Hook) AppendRequest(b []byte) []byte {
	b = append(b, `{"op":"hook","hook":{"kind":`...)
	b = appendString(b, h.Kind)
	b = append(b, `,"config_sum":`...)
	b = appendString(b, h.ConfigSum)
	b = append(b, `,"began":"`...)
	b = h.Began.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if h.LogLevel != "" {
		b = append(b, `,"log_level":`...)
		b = appendString(b, h.LogLevel)
	}
	b = append(b, `,"env":[`...)
	for i, kv := range h.Env {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, kv)
	}
	return append(b, "]}}\n"...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string that encoding/json decodes to
// what it decodes json.Marshal(s) to: quote, backslash and control
// characters escaped, each invalid UTF-8 byte as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// ErrOtherConfig: the hook read other configuration bytes than the agent
// loaded (the file edited since the agent started, or another file); the
// hook runs whole (hooks.Forwarder, the agent logs it once a sum).
var ErrOtherConfig = errors.New("the hook read another configuration than the agent")

// OK is the agent's whole answer when it took the hook: encoding/json's
// encoding of hookproto.Response{OK: true} (TestOKIsTheAgentsAnswer).
const OK = `{"ok":true}`

// MaxAnswer bounds the answer read back.
const MaxAnswer = 64 << 10

// ErrNotTaken: the agent answered, but not OK (another configuration, an
// agent without forwarded hooks, a job it could not record); Send's error
// wraps it with the answer.
var ErrNotTaken = errors.New("agent did not take the hook")

// Send sends h to the agent listening on the unix socket at path and waits
// for its answer, all within timeout. It returns nil only when the agent
// answered OK; any other outcome is an error, and the hook is then the
// full hook's to run. The socket is a plain blocking one with send and
// receive timeouts (which bound connect on a unix socket too): no
// goroutine, no poller.
func Send(path string, h Hook, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := setTimeouts(fd, deadline); err != nil {
		return err
	}
	if err := retry(deadline, func() error { return syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}) }); err != nil {
		return fmt.Errorf("connect %s: %w", path, err)
	}
	req := h.AppendRequest(make([]byte, 0, 4096))
	for len(req) > 0 {
		// Each call gets only the time left, so partial writes to an
		// agent that reads slowly stay within timeout in all.
		if err := setTimeouts(fd, deadline); err != nil {
			return err
		}
		var n int
		err := retry(deadline, func() (err error) { n, err = syscall.Write(fd, req); return err })
		if err != nil {
			return fmt.Errorf("send: %w", err)
		}
		req = req[n:]
	}
	answer := make([]byte, 0, 256)
	buf := make([]byte, 512)
	for {
		if err := setTimeouts(fd, deadline); err != nil {
			return err
		}
		var n int
		err := retry(deadline, func() (err error) { n, err = syscall.Read(fd, buf); return err })
		if err != nil {
			return fmt.Errorf("read answer: %w", err)
		}
		if n == 0 {
			return errors.New("read answer: connection closed before a whole line")
		}
		answer = append(answer, buf[:n]...)
		if i := bytes.IndexByte(answer, '\n'); i >= 0 {
			if string(answer[:i]) == OK {
				return nil
			}
			return fmt.Errorf("%w: %s", ErrNotTaken, answer[:min(i, 512)])
		}
		if len(answer) > MaxAnswer {
			return fmt.Errorf("read answer: over %d bytes without a newline", MaxAnswer)
		}
	}
}

// setTimeouts sets the socket's send and receive timeouts to the time left
// before deadline (at least a millisecond: zero would mean none).
func setTimeouts(fd int, deadline time.Time) error {
	left := time.Until(deadline)
	if left < time.Millisecond {
		return errTimedOut
	}
	tv := syscall.NsecToTimeval(left.Nanoseconds())
	for _, opt := range []int{syscall.SO_SNDTIMEO, syscall.SO_RCVTIMEO} {
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			return fmt.Errorf("set socket timeout: %w", err)
		}
	}
	return nil
}

var errTimedOut = errors.New("timed out")

// retry calls f again while it fails with EINTR (a signal during a call
// under a socket timeout is not restarted) and time is left; a timeout
// (EAGAIN under SO_SNDTIMEO or SO_RCVTIMEO) is errTimedOut.
func retry(deadline time.Time, f func() error) error {
	for {
		err := f()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR) && time.Now().Before(deadline):
			continue
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
			return errTimedOut
		}
		return err
	}
}
