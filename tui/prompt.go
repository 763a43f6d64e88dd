package tui

import (
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// promptKind says what a prompt's answer changes.
type promptKind int

const (
	promptText promptKind = iota
	promptPartition
	promptUser
	promptAccount
)

// maxPromptLen bounds what can be typed into a prompt, in bytes.
const maxPromptLen = 256

// prompt is a one-line editor in the status bar. Its value changes the
// query only on enter; esc cancels.
type prompt struct {
	kind  promptKind
	label string
	value string
}

func newPrompt(kind promptKind, label, value string) *prompt {
	return &prompt{kind: kind, label: label, value: value}
}

// line is the prompt as shown, with a block cursor.
func (p *prompt) line() string {
	return " " + p.label + sanitise(p.value) + "█"
}

// promptKey edits the open prompt.
func (m Model) promptKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	p := m.prompt
	switch msg.String() {
	case "esc":
		m.prompt = nil
		return m, nil
	case "enter":
		m.prompt = nil
		return m.applyPrompt(p.kind, strings.TrimSpace(p.value))
	case "backspace":
		if p.value != "" {
			_, size := utf8.DecodeLastRuneInString(p.value)
			p.value = p.value[:len(p.value)-size]
		}
		return m, nil
	case "ctrl+u":
		p.value = ""
		return m, nil
	}
	if t := sanitise(msg.Text); t != "" && len(p.value)+len(t) <= maxPromptLen {
		p.value += t
	}
	return m, nil
}

// applyPrompt changes the query by a prompt's answer and reloads the list.
func (m Model) applyPrompt(kind promptKind, v string) (tea.Model, tea.Cmd) {
	q := &m.list.q
	switch kind {
	case promptText:
		q.text = v
	case promptPartition:
		q.partition = v
	case promptUser:
		if !m.id.Admin { // the key is refused earlier; the Source enforces anyway
			return m, nil
		}
		q.user = v
	case promptAccount:
		if !m.id.Admin {
			return m, nil
		}
		q.account = v
	}
	m.screen = screenList
	return m, m.reload()
}
