package tui

import (
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/store"
)

// binding is one entry of a view's key table: the keys (as
// tea.KeyPressMsg.String() names them), the help line, and what they do.
// The tables are the only place keys are handled and the only source of
// the help overlay (?), so a key cannot work without being listed there.
type binding struct {
	keys   []string
	help   string
	action func(m Model) (tea.Model, tea.Cmd)
}

// keyNames are how keys read in the help: arrows as arrows, the rest as
// tea names them.
var keyNames = map[string]string{"up": "↑", "down": "↓", "left": "←", "right": "→"}

// helpKeys is a binding's keys as the help shows them: "↑ k".
func (b binding) helpKeys() string {
	names := make([]string, len(b.keys))
	for i, k := range b.keys {
		if n, ok := keyNames[k]; ok {
			k = n
		}
		names[i] = k
	}
	return strings.Join(names, " ")
}

// find returns the binding of key k in bs.
func find(bs []binding, k string) (binding, bool) {
	for _, b := range bs {
		for _, bk := range b.keys {
			if bk == k {
				return b, true
			}
		}
	}
	return binding{}, false
}

// commonKeys are answered in every view (after the prompt and the help
// overlay have had their turn).
var commonKeys = []binding{
	{[]string{"?"}, "help (any key closes it)", func(m Model) (tea.Model, tea.Cmd) { m.help = true; return m, nil }},
	{[]string{"q", "ctrl+c"}, "quit (ctrl+c even in a prompt)", func(m Model) (tea.Model, tea.Cmd) { return m, tea.Quit }},
}

// listKeys are the job list's keys.
var listKeys = []binding{
	{[]string{"up", "k"}, "up one job", func(m Model) (tea.Model, tea.Cmd) { return m.move(m.list.cursor - 1) }},
	{[]string{"down", "j"}, "down one job", func(m Model) (tea.Model, tea.Cmd) { return m.move(m.list.cursor + 1) }},
	{[]string{"pgup", "ctrl+u", "ctrl+b"}, "a screen up", listPageUp},
	{[]string{"pgdown", "ctrl+d", "ctrl+f", "space"}, "a screen down", listPageDown},
	{[]string{"g", "home"}, "first job", func(m Model) (tea.Model, tea.Cmd) { return m.move(0) }},
	{[]string{"G", "end"}, "last job", func(m Model) (tea.Model, tea.Cmd) { return m.move(m.lastIndex()) }},
	{[]string{"enter"}, "job detail", func(m Model) (tea.Model, tea.Cmd) {
		r, ok := m.rowAt(m.list.cursor)
		if !ok {
			return m, nil
		}
		return m.openDetail(r)
	}},
	{[]string{"/"}, "filter by name, job id, user, account or partition (enter applies)",
		func(m Model) (tea.Model, tea.Cmd) {
			m.prompt = newPrompt(promptText, "filter (name, id, user, account, partition): ", m.list.q.text)
			return m, nil
		}},
	{[]string{"s"}, "next sort column", func(m Model) (tea.Model, tea.Cmd) {
		q := &m.list.q
		cur := q.sort
		if cur == "" {
			cur = store.SortStart
		}
		q.sort, q.reverse = next(store.SortKeys(), cur), false
		return m, m.reload()
	}},
	{[]string{"S", "r"}, "reverse the order", func(m Model) (tea.Model, tea.Cmd) {
		m.list.q.reverse = !m.list.q.reverse
		return m, m.reload()
	}},
	{[]string{"f"}, "next state: all, RUNNING, COMPLETED, FAILED, …",
		func(m Model) (tea.Model, tea.Cmd) {
			m.list.q.state = next(states, m.list.q.state)
			return m, m.reload()
		}},
	{[]string{"p"}, "partition", func(m Model) (tea.Model, tea.Cmd) {
		m.prompt = newPrompt(promptPartition, "partition (empty: all): ", m.list.q.partition)
		return m, nil
	}},
	{[]string{"t"}, "time window: all, 24h, 7d, 30d",
		func(m Model) (tea.Model, tea.Cmd) {
			m.list.q.window = next(windows, m.list.q.window)
			return m, m.reload()
		}},
	{[]string{"m"}, "my summary of the month", func(m Model) (tea.Model, tea.Cmd) { return m.openSummary() }},
	{[]string{"u"}, "switch user (admins; empty: everyone)", func(m Model) (tea.Model, tea.Cmd) {
		if !m.id.Admin {
			m.message = "only admins can switch user"
			return m, nil
		}
		m.prompt = newPrompt(promptUser, "user (empty: everyone): ", m.list.q.user)
		return m, nil
	}},
	{[]string{"a"}, "switch account (admins; empty: all)", func(m Model) (tea.Model, tea.Cmd) {
		if !m.id.Admin {
			m.message = "only admins can switch account"
			return m, nil
		}
		m.prompt = newPrompt(promptAccount, "account (empty: all): ", m.list.q.account)
		return m, nil
	}},
}

func listPageUp(m Model) (tea.Model, tea.Cmd) {
	l, page := m.list, m.listRows()
	l.top = max(l.top-page, 0)
	return m.move(l.cursor - page)
}

func listPageDown(m Model) (tea.Model, tea.Cmd) {
	l, page := m.list, m.listRows()
	l.top += page
	if last := m.lastIndex(); l.top > last-page+1 {
		l.top = max(last-page+1, 0)
	}
	return m.move(l.cursor + page)
}

// scrollBy returns an action that scrolls the detail by n lines (n is
// multiplied by the screen's height when screens is set).
func detailScroll(n int, screens bool) func(m Model) (tea.Model, tea.Cmd) {
	return func(m Model) (tea.Model, tea.Cmd) {
		d := m.detail
		page := m.bodyHeight()
		switch {
		case n == math.MinInt32:
			d.scroll = 0
		case n == math.MaxInt32:
			d.scroll = math.MaxInt32
		case screens:
			d.scroll += n * page
		default:
			d.scroll += n
		}
		d.scroll = max(min(d.scroll, len(m.detailLines())-page), 0)
		return m, nil
	}
}

// detailKeys are the job detail's keys.
var detailKeys = []binding{
	{[]string{"up", "k"}, "scroll up a line", detailScroll(-1, false)},
	{[]string{"down", "j"}, "scroll down a line", detailScroll(1, false)},
	{[]string{"pgup", "ctrl+u", "ctrl+b"}, "a screen up", detailScroll(-1, true)},
	{[]string{"pgdown", "ctrl+d", "ctrl+f", "space"}, "a screen down", detailScroll(1, true)},
	{[]string{"g", "home"}, "top", detailScroll(math.MinInt32, false)},
	{[]string{"G", "end"}, "bottom", detailScroll(math.MaxInt32, false)},
	{[]string{"esc", "backspace", "left", "h"}, "back to the list", func(m Model) (tea.Model, tea.Cmd) {
		m.screen = screenList
		m.detail = nil
		return m, m.ensurePages()
	}},
	{[]string{"m"}, "my summary", func(m Model) (tea.Model, tea.Cmd) { return m.openSummary() }},
}

// summaryScroll returns an action that scrolls the summary by n lines
// (math.MinInt32: to the top).
func summaryScroll(n int) func(m Model) (tea.Model, tea.Cmd) {
	return func(m Model) (tea.Model, tea.Cmd) {
		s := m.summary
		if n == math.MinInt32 {
			s.scroll = 0
		} else {
			s.scroll += n
		}
		s.scroll = max(min(s.scroll, len(m.summaryLines())-m.bodyHeight()), 0)
		return m, nil
	}
}

// summaryKeys are my summary's keys.
var summaryKeys = []binding{
	{[]string{"up", "k"}, "scroll up a line", summaryScroll(-1)},
	{[]string{"down", "j"}, "scroll down a line", summaryScroll(1)},
	{[]string{"g", "home"}, "top", summaryScroll(math.MinInt32)},
	{[]string{"["}, "the month before", func(m Model) (tea.Model, tea.Cmd) {
		return m.loadMonth(monthOf(m.summary.month).From.AddDate(0, -1, 0))
	}},
	{[]string{"]"}, "the month after", func(m Model) (tea.Model, tea.Cmd) {
		return m.loadMonth(monthOf(m.summary.month).From.AddDate(0, 1, 0))
	}},
	{[]string{"esc", "backspace", "left", "h", "m"}, "back to the list", func(m Model) (tea.Model, tea.Cmd) {
		m.screen = screenList
		m.summary = nil
		return m, m.ensurePages()
	}},
}

// viewKeys is the key table of screen s: its own keys, then the common
// ones.
func viewKeys(s screen) []binding {
	var own []binding
	switch s {
	case screenDetail:
		own = detailKeys
	case screenSummary:
		own = summaryKeys
	default:
		own = listKeys
	}
	return append(own[:len(own):len(own)], commonKeys...)
}
