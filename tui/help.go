package tui

// helpEntry is one key of the help overlay.
type helpEntry struct{ keys, what string }

// listHelp, detailHelp and commonHelp are the keys each view answers; the
// help overlay (?) shows them.
var (
	listHelp = []helpEntry{
		{"↑/k ↓/j", "move"},
		{"pgup/ctrl+u pgdn/ctrl+d", "page up / down"},
		{"g G", "first / last job"},
		{"enter", "job detail"},
		{"/", "filter by name or job id (enter applies, esc cancels)"},
		{"s", "next sort column"},
		{"S r", "reverse the order"},
		{"f", "state: all, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, OOM"},
		{"p", "partition"},
		{"t", "time window: all, 24h, 7d, 30d"},
		{"m", "my summary of this month ([ ] other months)"},
		{"u a", "switch user / account (admins)"},
	}
	detailHelp = []helpEntry{
		{"↑/k ↓/j pgup pgdn g G", "scroll"},
		{"esc backspace", "back to the list"},
	}
	summaryHelp = []helpEntry{
		{"↑/k ↓/j g", "scroll"},
		{"[ ]", "the month before / after"},
		{"esc backspace m", "back to the list"},
	}
	commonHelp = []helpEntry{
		{"?", "close this help"},
		{"q ctrl+c", "quit"},
	}
)

// helpLines is the help overlay for the current view.
func (m Model) helpLines() []string {
	entries := listHelp
	switch m.screen {
	case screenDetail:
		entries = detailHelp
	case screenSummary:
		entries = summaryHelp
	}
	entries = append(entries[:len(entries):len(entries)], commonHelp...)
	w := 0
	for _, e := range entries {
		w = max(w, width(e.keys))
	}
	lines := []string{"", "  Keys", ""}
	for _, e := range entries {
		lines = append(lines, "  "+m.st.render(m.st.header, fitClean(e.keys, w))+"  "+e.what)
	}
	lines = append(lines, "", "  What you may see is decided by the data source, not by this screen.")
	return lines
}
