package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

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
