package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
)

// Options tune the TUI.
type Options struct {
	// PageSize is how many jobs one request to the Source asks for; 0
	// means DefaultPageSize.
	PageSize int
	// NoColor turns every style off: the views are plain text with no
	// escape sequence (the NO_COLOR convention).
	NoColor bool
	// Now is the clock (time windows, running jobs' elapsed time, "this
	// month"); nil means time.Now.
	Now func() time.Time
	// Config holds the analysis thresholds; the zero Config means
	// analysis.DefaultConfig().
	Config analysis.Config
	// User and Account, for an admin, start the list on that user's or
	// account's jobs (Everyone: on all jobs) instead of the admin's own.
	// They are ignored for anyone else; the Source would refuse them
	// anyway.
	User, Account string
	Everyone      bool
}

// DefaultPageSize is the page size when Options.PageSize is 0.
const DefaultPageSize = 100

// maxCachedPages bounds the list's page cache (see Model.cacheLimit): the
// pages around the cursor are kept, the farthest dropped. Twenty pages of
// the default 100 rows keep scrolling back up over 2,000 jobs from
// reading the store again (a page reached back up is read by offset),
// for well under a megabyte.
const maxCachedPages = 20

// screen is one of the views.
type screen int

const (
	screenList screen = iota
	screenDetail
	screenSummary
)

// Model is the TUI's state; it implements tea.Model. Build it with New.
type Model struct {
	ctx  context.Context
	src  Source
	id   Identity
	opts Options
	cfg  analysis.Config
	st   styles

	width, height int
	screen        screen
	help          bool
	prompt        *prompt
	// message is a one-off note for the status bar (cleared by the next
	// key); errMsg is the last loading error.
	message, errMsg string

	list    *listState
	detail  *detailState
	summary *summaryState
}

// New returns the TUI's model reading from src on behalf of id.
func New(ctx context.Context, src Source, id Identity, opts Options) Model {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cfg := opts.Config
	if reflect.ValueOf(cfg).IsZero() {
		cfg = analysis.DefaultConfig()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return Model{
		ctx:    ctx,
		src:    src,
		id:     id,
		opts:   opts,
		cfg:    cfg,
		st:     newStyles(opts.NoColor),
		width:  80,
		height: 24,
		list:   newListState(startQuery(id, opts)),
	}
}

// startQuery is the list's first query: the caller's own jobs, or for an
// admin what Options ask for.
func startQuery(id Identity, opts Options) query {
	q := query{user: id.User}
	if !id.Admin {
		return q
	}
	switch {
	case opts.User != "" || opts.Account != "":
		q.user, q.account = opts.User, opts.Account
	case opts.Everyone:
		q.user = ""
	}
	return q
}

// Run shows the TUI on out, reading keys from in, until the user quits or
// ctx is done. The NO_COLOR environment variable also turns colour off.
func Run(ctx context.Context, src Source, id Identity, opts Options, in io.Reader, out io.Writer) error {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	p := tea.NewProgram(New(ctx, src, id, opts),
		tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err := p.Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("tui: %w", err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// Init starts loading the first page and the count.
func (m Model) Init() tea.Cmd {
	return m.reload()
}

// Update handles keys, resizes and the results of loads.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
		m.list.scrollTo(m.list.cursor, m.listRows())
		return m, m.ensurePages()
	case tea.KeyPressMsg:
		return m.key(msg)
	case countMsg:
		return m.gotCount(msg)
	case pageMsg:
		return m.gotPage(msg)
	case detailMsg:
		return m.gotDetail(msg)
	case taskMsg:
		return m.gotTask(msg)
	case summaryMsg:
		return m.gotSummary(msg)
	}
	return m, nil
}

// key dispatches a key press: the prompt first, then the help overlay,
// then the current view.
func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if k == "ctrl+c" {
		return m, tea.Quit
	}
	m.message = ""
	if m.prompt != nil {
		return m.promptKey(msg)
	}
	if m.help {
		if k == "q" {
			return m, tea.Quit
		}
		m.help = false
		return m, nil
	}
	if b, ok := find(viewKeys(m.screen), k); ok {
		return b.action(m)
	}
	return m, nil
}

// View renders the current screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "gpuprof"
	return v
}

// render returns the screen as text: exactly m.height lines, each exactly
// m.width columns wide.
func (m Model) render() string {
	var title, status string
	var body []string
	switch m.screen {
	case screenDetail:
		title, body, status = m.detailView()
	case screenSummary:
		title, body, status = m.summaryView()
	default:
		title, body, status = m.listView()
	}
	if m.help {
		body = m.helpLines()
	}
	lines := make([]string, 0, m.height)
	lines = append(lines, m.st.render(m.st.title, fitClean(title, m.width)))
	for i := range max(m.height-2, 0) {
		l := ""
		if i < len(body) {
			l = body[i]
		}
		lines = append(lines, fitClean(l, m.width))
	}
	if m.height >= 2 {
		lines = append(lines, m.statusLine(status))
	}
	return strings.Join(lines, "\n")
}

// bodyHeight is how many lines a view has between title and status bar.
func (m Model) bodyHeight() int { return max(m.height-2, 1) }

// statusLine is the bottom line: the prompt while one is open, else the
// view's position, loading state, message or error, and the key hints.
func (m Model) statusLine(status string) string {
	if m.prompt != nil {
		return m.st.render(m.st.status, fitClean(m.prompt.line(), m.width))
	}
	left := status
	switch {
	case m.errMsg != "":
		left += " · error: " + sanitise(m.errMsg)
	case m.message != "":
		left += " · " + m.message
	}
	right := "? help  q quit"
	gap := m.width - width(left) - width(right)
	var line string
	if gap >= 1 {
		line = left + strings.Repeat(" ", gap) + right
	} else {
		line = fitClean(left, m.width)
	}
	st := m.st.status
	if m.errMsg != "" {
		st = m.st.err
	}
	return m.st.render(st, line)
}
