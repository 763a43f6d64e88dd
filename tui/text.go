package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// sanitise makes a user-controlled string (job name, user, account,
// partition, node, process name) safe to put on a terminal, by gpuprof's
// one rule (termtext.Clean): what is left can be measured by display
// width.
func sanitise(s string) string { return termtext.Clean(s) }

// width returns the display width of s (wide CJK and emoji count two).
func width(s string) int { return ansi.StringWidth(s) }

// fitClean makes a clean string (sanitised, or styled here) exactly w
// columns wide: truncated with "…" when longer, padded with spaces when
// shorter. Escape sequences of styles count zero columns.
func fitClean(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = width(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// fitRight is fitClean aligned right.
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-sw) + s
}

// clip sanitises s and truncates it to at most w columns, without padding.
func clip(s string, w int) string {
	s = sanitise(s)
	if width(s) > w {
		return ansi.Truncate(s, max(w, 0), "…")
	}
	return s
}

// formatCount prints n with thousands separators: 10,000.
func formatCount(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// slurmDuration prints a duration as Slurm does, [D-]HH:MM:SS
// (slurmext.FormatDuration), the form of sacct, squeue and --time.
func slurmDuration(d time.Duration) string { return slurmext.FormatDuration(d, false) }

// formatGiB prints bytes as whole GiB ("61"), or with one decimal under
// 10 GiB ("4.5").
func formatGiB(b uint64) string {
	g := float64(b) / (1 << 30)
	if g < 10 {
		return trimZero(fmt.Sprintf("%.1f", g))
	}
	return fmt.Sprintf("%.0f", g)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// formatEnergy prints joules as Wh or kWh.
func formatEnergy(j float64) string {
	wh := j / 3600
	if wh >= 1000 {
		return fmt.Sprintf("%.1f kWh", wh/1000)
	}
	return fmt.Sprintf("%.0f Wh", wh)
}

// formatStart prints a job's start compactly for the list's narrow
// START column: "01-02 15:04", month-day and minute of
// slurmext.FormatTime's instant (the detail shows the full one).
func formatStart(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format("01-02 15:04")
}

// shortUUID shortens a GPU UUID to its first group: "GPU-3f9a2b1c".
func shortUUID(u string) string {
	u = sanitise(u)
	if i := strings.IndexByte(u, '-'); i >= 0 {
		if j := strings.IndexByte(u[i+1:], '-'); j >= 0 {
			return u[:i+1+j]
		}
	}
	return clip(u, 16)
}

// secondsDuration converts seconds (as analysis.Dist holds them) to a
// duration.
func secondsDuration(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

// nbsp joins a label to its value ("limit" and "1-00:00:00") so that
// wrapWords keeps them on one line; it is drawn as a plain space.
const nbsp = "\u00a0"

// wrapWords breaks s into lines of at most w columns at spaces only, so
// an option or a value (--signal=B:USR1@300, limit 1-00:00:00) is never
// split: a token wider than w gets a line of its own (and is cut with
// "…" where it is drawn). Styled text is measured without its escapes.
func wrapWords(s string, w int) []string {
	var lines []string
	line, lw := "", 0
	for _, tok := range strings.Split(s, " ") {
		tw := width(tok)
		switch {
		case line == "" && lw == 0:
			line, lw = tok, tw
		case lw+1+tw <= w:
			line, lw = line+" "+tok, lw+1+tw
		default:
			lines = append(lines, line)
			line, lw = tok, tw
		}
	}
	lines = append(lines, line)
	for i := range lines {
		lines[i] = strings.ReplaceAll(lines[i], nbsp, " ")
	}
	return lines
}
