package notice

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpuprof/gpuprof/profile"
)

func testInput(name string) MessageInput {
	return MessageInput{
		From: "GPU desk <gpu-desk@lab.example>", To: "alice@lab.example",
		Notice: profile.Notice{Rule: profile.RuleIdleGPU, Time: t0.Add(time.Hour), Since: t0, GPUs: []int{1},
			Evidence: "1 of 2 GPUs idle for 01:00:00 (since 2026-12-03T09:00:00): GPU 1: no process, utilisation 0 %, memory 0 B",
			Fix:      "--gres=gpu:1", Status: profile.NoticePending},
		Cluster: "lab", JobID: "4242", Node: "gpu01", Name: name, User: "alice", Start: t0.Add(-time.Hour),
		OptOut: OptOut{HomeFile: ".gpuprof-no-notices"}, Loc: time.UTC,
	}
}

// parse reads a composed message back with net/mail and checks what every
// notice must be: well formed, one To with the one recipient, no other
// recipient header, headers free of CR/LF and escapes, body lines within
// RFC 5322's limit.
func parse(t *testing.T, raw []byte, to string) (*mail.Message, string, string) {
	t.Helper()
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for i, line := range bytes.Split(head, []byte("\r\n")) {
		if len(line) > 78 {
			t.Errorf("header line %d is %d bytes, over RFC 5322's 78: %q", i, len(line), line)
		}
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if len(line) > 998 {
			t.Errorf("line %d is %d bytes, over RFC 5322's 998", i, len(line))
		}
		if bytes.ContainsAny(line, "\r\n\x1b") {
			t.Errorf("line %d holds a bare CR, LF or ESC: %q", i, line)
		}
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail cannot read the message: %v\n%s", err, raw)
	}
	for _, k := range []string{"Bcc", "Cc", "Resent-To", "Resent-Cc", "Resent-Bcc", "Reply-To"} {
		if v, ok := m.Header[k]; ok {
			t.Errorf("header %s present: %q", k, v)
		}
	}
	if got := m.Header["To"]; len(got) != 1 {
		t.Fatalf("To headers = %q, want exactly one", got)
	}
	addrs, err := m.Header.AddressList("To")
	if err != nil || len(addrs) != 1 || addrs[0].Address != to {
		t.Errorf("To = %v (%v), want the one recipient %s", addrs, err, to)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Errorf("subject does not decode: %v", err)
	}
	if strings.ContainsAny(subject, "\r\n\x1b") {
		t.Errorf("decoded subject holds CR, LF or ESC: %q", subject)
	}
	body, err := io.ReadAll(m.Body)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(body), "\r\n") {
		// Over 76 only when one word (a job name without spaces) is.
		if utf8.RuneCountInString(line) > 76 && len(strings.Fields(line)) > 1 {
			t.Errorf("body line %d is %d characters, over 76, and could wrap: %q", i, utf8.RuneCountInString(line), line)
		}
	}
	if bytes.ContainsRune(body, 0x1b) {
		t.Errorf("body holds an escape")
	}
	return m, subject, string(body)
}

func TestComposeHostileNames(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2,000 bytes
	tests := []struct {
		name        string
		job         string
		wantSubject string // part of the decoded subject
	}{
		{name: "plain", job: "resnet-sweep", wantSubject: "job 4242 (resnet-sweep): GPU 1 idle"},
		{name: "header injection CRLF", job: "x\r\nBcc: evil@x.example", wantSubject: "job 4242 (x Bcc: evil@x.example)"},
		{name: "header injection LF", job: "x\nTo: evil@x.example\n\nbody", wantSubject: "(x To: evil@x.example body)"},
		{name: "ANSI escapes", job: "\x1b[31mred\x1b[0m\x1b]0;title\x07", wantSubject: "(red)"},
		{name: "2,000 characters", job: strings.Repeat("a", 2000), wantSubject: "(" + strings.Repeat("a", MaxNameBytes) + "…)"},
		{name: "2,000 bytes of UTF-8", job: long, wantSubject: "(" + strings.Repeat("é", MaxNameBytes/2) + "…)"},
		{name: "empty", job: "", wantSubject: "((unknown))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := Compose(Build(testInput(tt.job)))
			if err != nil {
				t.Fatal(err)
			}
			m, subject, body := parse(t, raw, "alice@lab.example")
			if !strings.Contains(subject, tt.wantSubject) {
				t.Errorf("subject %q, want it to contain %q", subject, tt.wantSubject)
			}
			// Wrapped lines joined again: the words, not the layout.
			flat := strings.Join(strings.Fields(body), " ")
			for _, want := range []string{"job 4242", "gpu01", "GPU 1: no process", "Since: 2026-12-03T09:00:00",
				"#SBATCH --gres=gpu:1", "touch ~/.gpuprof-no-notices"} {
				if !strings.Contains(flat, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
			if m.Header.Get("Auto-Submitted") != "auto-generated" {
				t.Errorf("Auto-Submitted = %q", m.Header.Get("Auto-Submitted"))
			}
			if from, err := m.Header.AddressList("From"); err != nil || len(from) != 1 || from[0].Address != "gpu-desk@lab.example" {
				t.Errorf("From = %v, %v", from, err)
			}
		})
	}
}

func TestParseRecipient(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "alice@lab.example", want: "alice@lab.example"},
		{in: "alice@lab.example, bob@lab.example"},
		{in: "Alice <alice@lab.example>"},
		{in: "-oQ/tmp@lab.example"},
		{in: "alice@lab.example\r\nBcc: evil@x.example"},
		{in: "a b@lab.example"},
		{in: ""},
	}
	for _, tt := range tests {
		got, err := ParseRecipient(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrAddress) {
				t.Errorf("ParseRecipient(%q) = %q, %v; want ErrAddress", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRecipient(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestRecipients(t *testing.T) {
	m, err := ReadAddressMap(strings.NewReader("# users\nalice alice.smith@uni.example\n\nbob  bob@other.example # moved\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := Recipients{Pattern: "{user}@lab.example", Map: m}
	tests := []struct{ user, want string }{
		{"alice", "alice.smith@uni.example"},
		{"carol", "carol@lab.example"},
		{"x\r\nBcc: evil", ""},
		{"-f", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := r.Address(tt.user)
		if tt.want == "" {
			if err == nil {
				t.Errorf("Address(%q) = %q, want an error", tt.user, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Address(%q) = %q, %v; want %q", tt.user, got, err, tt.want)
		}
	}
	if _, err := ReadAddressMap(strings.NewReader("alice\n")); err == nil {
		t.Error("a line without address was accepted")
	}
	if got, err := (Recipients{Map: m}).Address("carol"); !errors.Is(err, ErrNoAddress) {
		t.Errorf("no pattern, not in the map: %q, %v; want ErrNoAddress", got, err)
	}
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMailerSend(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTICE_CAPTURE", dir)
	raw, err := Compose(Build(testInput("x\r\nBcc: evil@x.example")))
	if err != nil {
		t.Fatal(err)
	}
	m := Mailer{Program: testdata(t, "sendmail.sh"), Timeout: 5 * time.Second}
	if err := m.Send(context.Background(), "alice@lab.example", raw); err != nil {
		t.Fatalf("Send: %v", err)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "1.argv"))
	if got, want := strings.Split(strings.TrimSpace(string(argv)), "\n"), []string{"-i", "--", "alice@lab.example"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sendmail argv = %q, want %q (never -t)", got, want)
	}
	msg, _ := os.ReadFile(filepath.Join(dir, "1.msg"))
	if !bytes.Equal(msg, raw) {
		t.Errorf("sendmail read another message than composed")
	}
	parse(t, msg, "alice@lab.example")

	if err := m.Send(context.Background(), "alice@lab.example, evil@x.example", raw); !errors.Is(err, ErrAddress) {
		t.Errorf("Send to two addresses: %v, want ErrAddress", err)
	}
	t.Setenv("NOTICE_EXIT", "75")
	err = m.Send(context.Background(), "alice@lab.example", raw)
	if err == nil || !strings.Contains(err.Error(), "exit status 75") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("failing sendmail: %v, want its exit status and output", err)
	}
}

func TestMailerTimeout(t *testing.T) {
	m := Mailer{Program: testdata(t, "sendmail-hang.sh"), Timeout: 300 * time.Millisecond}
	start := time.Now()
	err := m.Send(context.Background(), "alice@lab.example", []byte("Subject: x\r\n\r\nx\r\n"))
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("hanging sendmail: %v, want a timeout error", err)
	}
	if took > 3*time.Second {
		t.Errorf("Send took %s with a 300ms timeout: the hung program (or its child) held it", took)
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "short", in: "a b c", want: []string{"a b c"}},
		{name: "at spaces", in: "aaaa bbbb cccc dddd", want: []string{"aaaa bbbb", "cccc dddd"}},
		{name: "indent kept", in: "  aaa bbb cccc", want: []string{"  aaa bbb", "  cccc"}},
		{name: "long word cut at maxLineBytes", in: strings.Repeat("x", 2*maxLineBytes+5) + " y",
			want: []string{strings.Repeat("x", maxLineBytes), strings.Repeat("x", maxLineBytes), "xxxxx y"}},
		{name: "empty", in: "", want: []string{""}},
		{name: "GPU and its index together", in: "seen: aa GPU 1 and job 42", want: []string{"seen: aa", "GPU 1 and", "job 42"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrap(tt.in, 10); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wrap = %q, want %q", got, tt.want)
			}
		})
	}
}
