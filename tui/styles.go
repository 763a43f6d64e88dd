package tui

import (
	"charm.land/lipgloss/v2"

	"github.com/gpuprof/gpuprof/slurmext"
)

// styles are the looks of the views. With NoColor every style is empty and
// renders its text unchanged: no escape sequence reaches the terminal and
// the selection is shown by the "›" marker alone.
type styles struct {
	noColor                                                    bool
	title, header, selected, status, err, dim, good, bad, warn lipgloss.Style
}

func newStyles(noColor bool) styles {
	if noColor {
		return styles{noColor: true}
	}
	return styles{
		title:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("24")),
		header:   lipgloss.NewStyle().Bold(true).Underline(true),
		selected: lipgloss.NewStyle().Reverse(true),
		status:   lipgloss.NewStyle().Foreground(lipgloss.Color("252")).Background(lipgloss.Color("236")),
		err:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		dim:      lipgloss.NewStyle().Faint(true),
		good:     lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		bad:      lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
	}
}

// stateStyle colours a job state in the list (its label, see stateLabel)
// by its outcome class (slurmext.JobState.Outcome), the rule analysis and the
// report apply: good for completed; a warning for what may have saved or
// not needed its work (a time limit or deadline, preemption, scancel, a
// revoked federated sibling); bad for failures.
func (s styles) stateStyle(label string) lipgloss.Style {
	state := slurmext.JobState(label)
	if label == stateLabel(slurmext.StateOutOfMemory) {
		state = slurmext.StateOutOfMemory
	}
	switch state.Outcome() {
	case slurmext.OutcomeCompleted:
		return s.good
	case slurmext.OutcomeTimeout, slurmext.OutcomeCancelled:
		return s.warn
	case slurmext.OutcomeFailed:
		return s.bad
	}
	return lipgloss.NewStyle()
}

// render applies st to text, or returns text unchanged without colour.
func (s styles) render(st lipgloss.Style, text string) string {
	if s.noColor {
		return text
	}
	return st.Render(text)
}
