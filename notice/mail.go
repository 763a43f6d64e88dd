package notice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gpuprof/gpuprof/termtext"
)

// MaxNameBytes bounds the job name in a subject and body: a name is the
// user's text, and 2,000 characters of it help no one.
const MaxNameBytes = 80

// ErrAddress means an address is not one plain addr-spec (a display name,
// a list, a group or anything a mail program could read as options or
// several recipients).
var ErrAddress = errors.New("not a single mail address")

// Message is one notice mail. Every text field may hold anything (a job
// name is the user's text): Compose sanitises what reaches the headers and
// the body.
type Message struct {
	From    string // "Name <addr>" or addr
	To      string // one addr-spec, checked by ParseRecipient
	Subject string
	Body    string
	Date    time.Time
	// ID makes the Message-ID (with the date); letters, digits, '.', '-'
	// and '_' are kept, the rest dropped.
	ID string
}

// ParseRecipient checks that addr is exactly one plain address
// (local@domain, no display name, no comma, no leading '-') and returns
// it as it will be given to the mail program and written in To.
func ParseRecipient(addr string) (string, error) {
	a, err := mail.ParseAddress(addr)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %q: %v", ErrAddress, addr, err)
	case a.Name != "" || a.Address != strings.TrimSpace(addr):
		return "", fmt.Errorf("%w: %q: want a bare address", ErrAddress, addr)
	case strings.HasPrefix(a.Address, "-") || strings.ContainsAny(a.Address, " ,;\r\n\t\"\\"):
		return "", fmt.Errorf("%w: %q", ErrAddress, addr)
	}
	return a.Address, nil
}

// ParseFrom checks the From setting (one address, with or without a
// display name) and returns it in header form.
func ParseFrom(from string) (string, error) {
	a, err := mail.ParseAddress(from)
	if err != nil {
		return "", fmt.Errorf("%w: from %q: %v", ErrAddress, from, err)
	}
	return a.String(), nil
}

// HeaderText makes untrusted text safe for a header value: Clean (so no
// escape sequence, control character — CR and LF among them — or
// invisible character survives), whitespace runs folded to one space, and
// non-ASCII text encoded as RFC 2047 words.
func HeaderText(s string) string {
	s = strings.Join(strings.Fields(termtext.Clean(s)), " ")
	for _, r := range s {
		if r >= 0x80 {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}

// JobName is a job name as a notice shows it: cleaned (termtext.Clean),
// on one line, cut to MaxNameBytes with "…" when longer; "(unknown)" when
// empty.
func JobName(name string) string {
	name = strings.Join(strings.Fields(termtext.Clean(name)), " ")
	if name == "" {
		return "(unknown)"
	}
	if cut, ok := termtext.Cut(name, MaxNameBytes); ok {
		return cut + "…"
	}
	return name
}

// Compose writes m as an RFC 5322 message: From, To (the one recipient),
// Subject, Date, Message-ID, MIME headers and Auto-Submitted (RFC 3834, so
// that vacation responders stay quiet), then the body as UTF-8 text
// (8bit), each line cleaned and word-wrapped at 76 columns, none over
// RFC 5322's 998 bytes whatever the body holds. It fails only for a
// recipient ParseRecipient refuses or a From ParseFrom refuses.
func Compose(m Message) ([]byte, error) {
	to, err := ParseRecipient(m.To)
	if err != nil {
		return nil, err
	}
	from, err := ParseFrom(m.From)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from)
	header("To", to)
	header("Subject", fold(HeaderText(m.Subject), len("Subject: ")))
	header("Date", m.Date.Format(time.RFC1123Z))
	header("Message-ID", "<"+idText(m.ID)+"."+fmt.Sprint(m.Date.Unix())+"@gpuprof>")
	header("Auto-Submitted", "auto-generated")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "8bit")
	b.WriteString("\r\n")
	for _, line := range strings.Split(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n") {
		for _, l := range wrap(termtext.Clean(line), wrapColumns) {
			b.WriteString(l + "\r\n")
		}
	}
	return b.Bytes(), nil
}

// fold folds a header value at its spaces (RFC 5322 folding white space)
// so that no header line is longer than 78 characters where a space
// allows; first is the length of "Name: " before the value. An RFC 2047
// value is a row of encoded words of at most 75 characters, separated by
// spaces, so it folds too.
func fold(v string, first int) string {
	var b strings.Builder
	col := first
	for i, w := range strings.Split(v, " ") {
		switch {
		case i == 0 && col+len(w) > 78 && col > 0:
			// Even the first word does not fit after the name: it
			// starts the next line ("Subject: " CRLF SP word).
			b.WriteString("\r\n ")
			col = 1
		case i == 0:
		case col+1+len(w) > 78:
			b.WriteString("\r\n")
			col = 0
			fallthrough
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

// glued joins "GPU 1" and "job 42" into one word for wrapping: a reader
// (or a grep) finds them on one line.
func glued(words []string) []string {
	out := words[:0:0]
	for i := 0; i < len(words); i++ {
		w := words[i]
		if (w == "GPU" || w == "job") && i+1 < len(words) {
			w += " " + words[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

// wrapColumns is where body lines are wrapped; maxLineBytes bounds a
// line that has no space to wrap at (RFC 5322 allows 998).
const (
	wrapColumns  = 76
	maxLineBytes = 900
)

// wrap breaks a line at spaces so that no piece is wider than width runes,
// keeping the line's indentation on its continuation lines; a word longer
// than maxLineBytes is cut.
func wrap(line string, width int) []string {
	if utf8.RuneCountInString(line) <= width && len(line) <= maxLineBytes {
		return []string{line}
	}
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	var out []string
	cur := indent
	for _, w := range glued(strings.Fields(line)) {
		for len(w) > maxLineBytes {
			head, _ := termtext.Cut(w, maxLineBytes)
			if cur != indent {
				out = append(out, cur)
				cur = indent
			}
			out = append(out, indent+head)
			w = w[len(head):]
		}
		switch {
		case cur == indent:
			cur += w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) > width:
			out = append(out, cur)
			cur = indent + w
		default:
			cur += " " + w
		}
	}
	if cur != indent || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

func idText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "notice"
	}
	return b.String()
}

// Mailer hands messages to a sendmail-compatible program.
type Mailer struct {
	// Program is the mail program's absolute path.
	Program string
	// Timeout bounds one delivery; the program (its process group) is
	// killed after it.
	Timeout time.Duration
}

// maxOutput bounds what is kept of the program's output for the record.
const maxOutput = 512

// Send runs `Program -i -- to` with msg on stdin. -i: a line with a single
// dot does not end the message; no -t: the recipients are the argument
// alone, never read from the headers; "--": an address cannot pass for an
// option. It returns an error with the program's exit status and output
// when it fails, or when it runs past Timeout (it is killed, with its
// children).
func (m Mailer) Send(ctx context.Context, to string, msg []byte) error {
	addr, err := ParseRecipient(to)
	if err != nil {
		return err
	}
	return run(ctx, m.Timeout, bytes.NewReader(msg), m.Program, "-i", "--", addr)
}

// run runs a program in its own process group with stdin, bounded by
// timeout; on timeout or ctx's end the whole group is killed. The error
// carries the program's output (cut to maxOutput bytes).
func run(ctx context.Context, timeout time.Duration, stdin io.Reader, prog string, args ...string) error {
	_, err := output(ctx, timeout, stdin, prog, args...)
	return err
}

// output is run returning the program's standard output.
func output(ctx context.Context, timeout time.Duration, stdin io.Reader, prog string, args ...string) ([]byte, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A child that keeps the pipes open must not hold Wait forever.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	out := strings.TrimSpace(stderr.String() + " " + stdout.String())
	out, _ = termtext.Cut(termtext.Clean(out), maxOutput)
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("%s: no answer within %s: killed", prog, timeout)
	} else {
		err = fmt.Errorf("%s: %w", prog, err)
	}
	if out != "" {
		err = fmt.Errorf("%w: %s", err, out)
	}
	return stdout.Bytes(), err
}
