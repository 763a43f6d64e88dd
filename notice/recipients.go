package notice

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrNoAddress means no address is known for a user.
var ErrNoAddress = errors.New("no mail address known for the user")

// Recipients turns a user name into a mail address: the map file's line
// for the user when there is one, else the pattern with "{user}" replaced.
type Recipients struct {
	Pattern string
	// Map is "user address" per line, read with ReadAddressMap.
	Map map[string]string
}

// ReadAddressMap reads "user address" lines (whitespace between; blank
// lines and # comments skipped). A line with no address or more than one
// is an error naming the line.
func ReadAddressMap(r io.Reader) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch len(f) {
		case 0:
			continue
		case 2:
			m[f[0]] = f[1]
		default:
			return nil, fmt.Errorf("address map line %d: want \"user address\"", n)
		}
	}
	return m, sc.Err()
}

// Address returns user's address, checked with ParseRecipient. A user
// name that is not a plain POSIX-like name (letters, digits, '.', '_',
// '-', not leading '-') gets no address from the pattern.
func (r Recipients) Address(userName string) (string, error) {
	if a, ok := r.Map[userName]; ok {
		return ParseRecipient(a)
	}
	if r.Pattern == "" || !plainUser(userName) {
		return "", fmt.Errorf("%w: %q", ErrNoAddress, userName)
	}
	return ParseRecipient(strings.ReplaceAll(r.Pattern, "{user}", userName))
}

func plainUser(u string) bool {
	if u == "" || u[0] == '-' || len(u) > 64 {
		return false
	}
	for _, c := range u {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// OptOut says whether a user asked not to get notices: listed in the
// admins' file, or holding a file of the configured name in their home.
type OptOut struct {
	// File lists users, one per line (# comments); "" is off. It is read
	// at each check, so an edit takes effect without a restart.
	File string
	// HomeFile is a file name looked for in the user's home; "" is off.
	HomeFile string
	// Timeout bounds the home directory check (homes are often on NFS,
	// which can hang).
	Timeout time.Duration
	// Home returns a user's home directory; nil means the system's user
	// database (os/user).
	Home func(userName string) (string, error)
}

// OptedOut reports whether userName opted out, and how ("listed in FILE",
// "FILE exists"). A check that fails or times out is not an opt-out; its
// error is returned beside false for the record.
func (o OptOut) OptedOut(ctx context.Context, userName string) (bool, string, error) {
	if o.File != "" {
		listed, err := listed(o.File, userName)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, "", fmt.Errorf("opt-out file: %w", err)
		}
		if listed {
			return true, "listed in " + o.File, nil
		}
	}
	if o.HomeFile == "" {
		return false, "", nil
	}
	home := o.Home
	if home == nil {
		home = func(name string) (string, error) {
			u, err := user.Lookup(name)
			if err != nil {
				return "", err
			}
			return u.HomeDir, nil
		}
	}
	type result struct {
		path string
		ok   bool
		err  error
	}
	done := make(chan result, 1) // buffered: a hung stat must not leak a blocked send
	go func() {
		dir, err := home(userName)
		if err != nil || dir == "" {
			done <- result{err: fmt.Errorf("home of %q: %v", userName, err)}
			return
		}
		p := filepath.Join(dir, o.HomeFile)
		_, err = os.Lstat(p)
		switch {
		case err == nil:
			done <- result{path: p, ok: true}
		case errors.Is(err, os.ErrNotExist):
			done <- result{path: p}
		default:
			done <- result{path: p, err: err}
		}
	}()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		if r.ok {
			return true, r.path + " exists", nil
		}
		return false, "", r.err
	case <-t.C:
		return false, "", fmt.Errorf("home opt-out check of %q: no answer within %s", userName, timeout)
	case <-ctx.Done():
		return false, "", ctx.Err()
	}
}

func listed(path, userName string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if slices.Contains(strings.Fields(line), userName) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// Exemptions are the jobs never noticed nor cancelled.
type Exemptions struct {
	Partitions, QOS, Accounts, Users []string
}

// Exempt reports whether a job of these partition, account and user is
// exempt, and why. Slurm lets a job name several partitions ("a,b") until
// it runs; a running job's partition is one, but any listed one exempts.
func (e Exemptions) Exempt(partition, account, userName string) (bool, string) {
	if !e.IsExempt(partition, account, userName) {
		return false, ""
	}
	rest := partition
	for rest != "" {
		var p string
		p, rest, _ = strings.Cut(rest, ",")
		if p != "" && slices.Contains(e.Partitions, p) {
			return true, "partition " + p
		}
	}
	if account != "" && slices.Contains(e.Accounts, account) {
		return true, "account " + account
	}
	return true, "user " + userName
}

// IsExempt is Exempt without the reason; it does not allocate (the agent
// asks on every sampling tick).
func (e Exemptions) IsExempt(partition, account, userName string) bool {
	rest := partition
	for rest != "" {
		var p string
		p, rest, _ = strings.Cut(rest, ",")
		if p != "" && slices.Contains(e.Partitions, p) {
			return true
		}
	}
	return account != "" && slices.Contains(e.Accounts, account) ||
		userName != "" && slices.Contains(e.Users, userName)
}

// ExemptQOS reports whether a QOS is exempt.
func (e Exemptions) ExemptQOS(qos string) bool { return qos != "" && slices.Contains(e.QOS, qos) }
