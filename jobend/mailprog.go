package jobend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// DefaultMailer is Slurm's own default MailProg, and the mailer MailProg
// hands the mail to unless configured otherwise.
const DefaultMailer = "/usr/bin/mail"

// MailProg is Slurm's MailProg in front of the site's mailer: slurmctld
// runs it as `MailProg -s SUBJECT RECIPIENT` (slurmext, "Slurm's
// MailProg"), and it runs Mailer with exactly those arguments. The
// subject and recipient are never read or rebuilt: a job name holding a
// line break or a "Bcc:" line stays inside the one argv element Slurm
// made of it, and what the mailer does with it is what it would do
// without gpuprof. The summary goes in the body only.
type MailProg struct {
	// Mailer is the site's mailer, an absolute path (DefaultMailer).
	Mailer string
	// Deadline bounds the summary: past it the mail goes out unchanged.
	Deadline time.Duration
	// Summary finds the job's summary text; it must return when its ctx
	// ends (the deadline), but MailProg does not rely on it.
	Summary func(ctx context.Context, jobID string) (string, error)
	Log     *slog.Logger
	// Exec replaces this process with the mailer (syscall.Exec), so that
	// the mail is Slurm's with nothing of gpuprof left; it returns only
	// on failure.
	Exec func(path string, argv []string, env []string) error
	// Stdin, Stdout, Stderr and Env are the process's (tests set them;
	// Env nil: os.Environ()). The mailer's environment is Env with
	// GPUPROF_MAILPROG=1 added (loopEnv).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            []string
	Getenv         func(string) string
}

// loopEnv marks the environment MailProg hands the mailer: a mailer that
// runs gpuprof mailprog again (mail_prog.mailer naming the wrapper) is
// told by it, and the loop ends at DefaultMailer instead of going on.
const loopEnv = "GPUPROF_MAILPROG=1"

// ErrNoMailer means the mailer could not be run at all: the mail is lost
// unless Slurm's log is read, so the exit status says so.
var ErrNoMailer = errors.New("mailer not run")

// Run sends the mail args describe (Slurm's argv after the program).
// A mail whose SLURM_JOB_MAIL_TYPE reports a run (slurmext.
// MailTypeReportsRun) gets the job's summary appended to its body when
// Summary answers within Deadline; any other mail, and every mail whose
// summary fails or is late (the reason logged), is handed to Mailer
// unchanged by Exec. It returns the mailer's exit status when it ran the
// mailer itself, or an error wrapping ErrNoMailer.
func (m MailProg) Run(ctx context.Context, args []string) (int, error) {
	began := time.Now()
	getenv := m.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	jobID, kind := getenv(slurmext.MailEnvJobID), getenv(slurmext.MailEnvMailType)
	log := m.Log.With("job", jobID, "mail_type", kind)
	took := func() any { return slog.DurationValue(time.Since(began).Round(time.Millisecond)) }
	if getenv("GPUPROF_MAILPROG") == "1" {
		log.Error("mail_prog.mailer runs gpuprof mailprog again; sending through "+DefaultMailer+" instead", "mailer", m.Mailer)
		m.Mailer = DefaultMailer
		return m.unchanged(args, log, "", took)
	}
	if m.Env == nil {
		m.Env = os.Environ()
	}
	m.Env = append(slices.Clip(m.Env), loopEnv)
	if !slurmext.MailTypeReportsRun(kind) || jobID == "" {
		return m.unchanged(args, log, "", took)
	}
	text, err := m.summaryWithin(ctx, jobID)
	if err != nil {
		return m.unchanged(args, log, err.Error(), took)
	}
	if strings.TrimSpace(text) == "" {
		return m.unchanged(args, log, "empty summary", took)
	}
	return m.withSummary(args, text, log, took)
}

// summaryWithin runs Summary under Deadline; when it has not answered by
// then (a cgo call does not watch its context), it is left behind.
func (m MailProg) summaryWithin(ctx context.Context, jobID string) (string, error) {
	d := m.Deadline
	if d <= 0 {
		d = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type answer struct {
		text string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				got <- answer{err: fmt.Errorf("summary panicked: %v", r)}
			}
		}()
		t, err := m.Summary(ctx, jobID)
		got <- answer{t, err}
	}()
	select {
	case a := <-got:
		return a.text, a.err
	case <-ctx.Done():
		return "", fmt.Errorf("no summary within %s: %w", d, ctx.Err())
	}
}

// unchanged hands the mail to the mailer as Slurm wrote it (its stdin
// untouched), replacing this process; why, when not "", is logged.
// took says how long gpuprof has held the mail.
func (m MailProg) unchanged(args []string, log *slog.Logger, why string, took func() any) (int, error) {
	if why != "" {
		log.Warn("mail sent without the GPU summary", "reason", why, "took", took())
	}
	argv := append([]string{m.Mailer}, args...)
	err := m.Exec(m.Mailer, argv, m.Env)
	log.Error("mailer not run", "mailer", m.Mailer, "err", err)
	return 1, fmt.Errorf("%w: exec %s: %v", ErrNoMailer, m.Mailer, err)
}

// withSummary runs the mailer with Slurm's arguments and Slurm's body
// (stdin, copied as it is) followed by the summary.
func (m MailProg) withSummary(args []string, text string, log *slog.Logger, took func() any) (int, error) {
	cmd := exec.Command(m.Mailer, args...)
	cmd.Env = m.Env
	cmd.Stdout, cmd.Stderr = m.Stdout, m.Stderr
	pr, pw := io.Pipe()
	cmd.Stdin = pr
	if err := cmd.Start(); err != nil {
		pr.Close()
		// The mailer cannot start; exec cannot do better, but it is
		// the path the mail takes without gpuprof: try it.
		log.Error("mailer did not start; handing the mail over unchanged", "mailer", m.Mailer, "err", err)
		return m.unchanged(args, log, "", took)
	}
	go func() {
		in := m.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
		_, err := io.Copy(pw, in)
		if err == nil {
			_, err = io.WriteString(pw, "\n"+text)
		}
		pw.CloseWithError(err)
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		log.Info("mail sent with the GPU summary", "took", took())
		return 0, nil
	case errors.As(err, &ee):
		log.Error("mailer failed", "mailer", m.Mailer, "err", err)
		return ee.ExitCode(), nil
	}
	return 1, fmt.Errorf("%w: %s: %v", ErrNoMailer, m.Mailer, err)
}
