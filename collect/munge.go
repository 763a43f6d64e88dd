package collect

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrAuth means a request carried no valid credential, or one that does not
// match the request.
var ErrAuth = errors.New("authentication failed")

// Identity is who encoded a munge credential, as munged vouches for it.
type Identity struct {
	UID  int
	GID  int
	Host string // ENCODE_HOST, as unmunge prints it (address in numeric mode)
	Time time.Time
}

// Munge encodes and decodes munge credentials with the munge and unmunge
// programs that every Slurm cluster already runs (no cgo binding needed).
type Munge struct {
	MungeBin   string // default /usr/bin/munge
	UnmungeBin string // default /usr/bin/unmunge
	Socket     string // munged socket; empty means the default
	Timeout    time.Duration
}

func (m Munge) bin(p, def string) string {
	if p != "" {
		return p
	}
	return def
}

func (m Munge) run(ctx context.Context, name string, stdin []byte, args ...string) ([]byte, error) {
	if m.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Timeout)
		defer cancel()
	}
	if m.Socket != "" {
		args = append([]string{"--socket", m.Socket}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Encode returns a credential carrying payload, vouching for the caller's
// uid and gid.
func (m Munge) Encode(ctx context.Context, payload []byte) (string, error) {
	out, err := m.run(ctx, m.bin(m.MungeBin, "/usr/bin/munge"), payload)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Decode checks a credential and returns who made it and its payload. A
// forged, expired or replayed credential is an error wrapping ErrAuth.
func (m Munge) Decode(ctx context.Context, cred string) (Identity, []byte, error) {
	if !strings.HasPrefix(cred, "MUNGE:") || len(cred) > 64<<10 {
		return Identity{}, nil, fmt.Errorf("%w: not a munge credential", ErrAuth)
	}
	out, err := m.run(ctx, m.bin(m.UnmungeBin, "/usr/bin/unmunge"), []byte(cred), "--numeric")
	if err != nil {
		return Identity{}, nil, fmt.Errorf("%w: %v", ErrAuth, err)
	}
	return parseUnmunge(out)
}

// parseUnmunge reads `unmunge --numeric` output: "KEY: value" lines, a blank
// line, then the payload.
func parseUnmunge(out []byte) (Identity, []byte, error) {
	var id Identity
	head, payload, found := bytes.Cut(out, []byte("\n\n"))
	if !found {
		head = out
	}
	meta := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			meta[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if meta["STATUS"] != "0" && !strings.HasPrefix(meta["STATUS"], "Success") {
		return id, nil, fmt.Errorf("%w: munge status %q", ErrAuth, meta["STATUS"])
	}
	var err error
	if id.UID, err = strconv.Atoi(meta["UID"]); err != nil {
		return id, nil, fmt.Errorf("%w: no uid in credential", ErrAuth)
	}
	if id.GID, err = strconv.Atoi(meta["GID"]); err != nil {
		return id, nil, fmt.Errorf("%w: no gid in credential", ErrAuth)
	}
	id.Host = meta["ENCODE_HOST"]
	if ts, err := strconv.ParseInt(meta["ENCODE_TIME"], 10, 64); err == nil {
		id.Time = time.Unix(ts, 0)
	}
	return id, payload, nil
}

// Binding ties a credential to one request: the method, the path with its
// query, and a digest of the body. A credential captured from one request is
// useless for another, and munged refuses to decode it twice.
func Binding(method, pathQuery string, body []byte) []byte {
	sum := sha256.Sum256(body)
	return []byte(method + " " + pathQuery + " " + hex.EncodeToString(sum[:]))
}
