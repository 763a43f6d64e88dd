package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/store"
)

// listState is the job list: the query, the cursor and the pages loaded
// around it. Only pages near the cursor are kept (maxCachedPages); a
// page's rows are analysed once, when it arrives.
type listState struct {
	q query
	// gen numbers the query: results of an older one are dropped.
	gen        int
	total      int
	totalKnown bool
	pages      map[int][]row
	pending    map[int]bool
	cursor     int
	top        int // first visible row
	// dbUser is the user name the database has for the caller when the
	// caller's login is a bare uid (no passwd entry on this host): the
	// Source selects their jobs by uid, and the title names them as the
	// rows do.
	dbUser string
}

func newListState(q query) *listState {
	return &listState{q: q, pages: make(map[int][]row), pending: make(map[int]bool)}
}

// countMsg carries the number of jobs a query selects.
type countMsg struct {
	gen int
	n   int
	err error
}

// pageMsg carries one analysed page of the list.
type pageMsg struct {
	gen, page int
	rows      []row
	err       error
}

// listRows is how many rows of the list fit under its header.
func (m Model) listRows() int { return max(m.bodyHeight()-1, 1) }

// reload restarts the list for its (changed) query: a fresh count and the
// page at the cursor, which goes back to the top.
func (m Model) reload() tea.Cmd {
	l := m.list
	l.gen++
	l.total, l.totalKnown = 0, false
	l.pages = make(map[int][]row)
	l.pending = make(map[int]bool)
	l.cursor, l.top = 0, 0
	src, ctx, gen, f := m.src, m.ctx, l.gen, l.q.filter(m.opts.Now(), 0, 0)
	count := func() tea.Msg {
		n, err := src.Count(ctx, f)
		return countMsg{gen: gen, n: n, err: err}
	}
	return tea.Batch(count, m.ensurePages())
}

// ensurePages asks for the pages the screen shows, and the one a screen
// further down (so that scrolling on rarely waits), that are neither
// cached nor on their way.
func (m Model) ensurePages() tea.Cmd {
	return m.loadMissing(m.wantedPages())
}

// loadMissing loads the pages first..last that are neither cached nor on
// their way.
func (m Model) loadMissing(first, last int) tea.Cmd {
	l := m.list
	var cmds []tea.Cmd
	for p := first; p <= last; p++ {
		if _, ok := l.pages[p]; ok || l.pending[p] {
			continue
		}
		l.pending[p] = true
		cmds = append(cmds, m.loadPage(p))
	}
	return tea.Batch(cmds...)
}

// loadPage returns the command that loads and analyses page p.
func (m Model) loadPage(p int) tea.Cmd {
	l := m.list
	src, ctx, gen, cfg := m.src, m.ctx, l.gen, m.cfg
	now := m.opts.Now()
	f := l.q.filter(now, p*m.opts.PageSize, m.opts.PageSize)
	// With the page before in hand, ask for the jobs after its last one:
	// the store then reads this page alone, where an offset makes it read
	// every job before it (keyset paging; the same rows).
	var keyset store.ViewFilter
	if prev := l.pages[p-1]; p > 0 && len(prev) == m.opts.PageSize {
		keyset = f
		keyset.Offset = 0
		keyset.AfterCluster, keyset.AfterJobID = prev[len(prev)-1].cluster, prev[len(prev)-1].jobID
	}
	return func() tea.Msg {
		var vs []store.JobView
		var err error
		if keyset.AfterJobID != "" {
			// That job may have gone meanwhile: then by offset.
			if vs, err = src.Jobs(ctx, keyset); err != nil {
				vs, err = src.Jobs(ctx, f)
			}
		} else {
			vs, err = src.Jobs(ctx, f)
		}
		if err != nil {
			return pageMsg{gen: gen, page: p, err: err}
		}
		rows := make([]row, len(vs))
		for i, v := range vs {
			rows[i] = rowOf(v, cfg, now)
		}
		return pageMsg{gen: gen, page: p, rows: rows}
	}
}

func (m Model) gotCount(msg countMsg) (tea.Model, tea.Cmd) {
	l := m.list
	if msg.gen != l.gen {
		return m, nil
	}
	if msg.err != nil {
		m.errMsg = "count jobs: " + msg.err.Error()
		return m, nil
	}
	// An admin who has no jobs of their own (root, an operator) starts on
	// everyone's rather than an empty list.
	if msg.n == 0 && msg.gen == 1 && m.id.Admin && l.q == (query{user: m.id.User}) {
		l.q.user = ""
		m.message = "you have no jobs: showing everyone's (u switches user)"
		return m, m.reload()
	}
	l.total, l.totalKnown = msg.n, true
	l.cursor = min(l.cursor, max(l.total-1, 0))
	l.scrollTo(l.cursor, m.listRows())
	return m, tea.Batch(m.ensurePages(), m.prefetchEnd())
}

// prefetchEnd loads the pages of the list's last screen in the
// background: a deep page costs the store a scan of everything before it
// (tens of milliseconds at 10,000 jobs), and G is the jump a user makes
// right away. They are the first pages evicted once the user scrolls.
func (m Model) prefetchEnd() tea.Cmd {
	l := m.list
	size := m.opts.PageSize
	if l.total <= 2*m.listRows() {
		return nil // the first screens' pages cover it
	}
	return m.loadMissing(max(l.total-m.listRows(), 0)/size, (l.total-1)/size)
}

func (m Model) gotPage(msg pageMsg) (tea.Model, tea.Cmd) {
	l := m.list
	if msg.gen != l.gen {
		return m, nil
	}
	delete(l.pending, msg.page)
	if msg.err != nil {
		m.errMsg = fmt.Sprintf("load page %d: %v", msg.page+1, msg.err)
		return m, nil
	}
	m.errMsg = ""
	l.pages[msg.page] = msg.rows
	if len(msg.rows) > 0 && l.q.user == m.id.User && isUID(m.id.User) && msg.rows[0].user != "" {
		l.dbUser = msg.rows[0].user
	}
	first, last := m.wantedPages()
	l.evict(first, last, m.cacheLimit())
	return m, nil
}

// wantedPages is the range of pages ensurePages keeps loaded: the screen
// and one screen further down.
func (m Model) wantedPages() (first, last int) {
	l := m.list
	size := m.opts.PageSize
	first, last = l.top/size, (l.top+2*m.listRows()-1)/size
	if l.totalKnown {
		last = min(last, max(l.total-1, 0)/size)
	}
	return first, max(first, last)
}

// cacheLimit is how many pages the list keeps: maxCachedPages, or more
// when small pages on a tall screen need more for two screens' worth.
func (m Model) cacheLimit() int {
	return max(maxCachedPages, 2*m.listRows()/m.opts.PageSize+3)
}

// evict drops cached pages beyond limit, farthest from the wanted range
// [first, last] first (pages inside it are dropped last), so the pages
// about to be shown are never the ones thrown away.
func (l *listState) evict(first, last, limit int) {
	for len(l.pages) > limit {
		far, dist := -1, -1
		for p := range l.pages {
			d := 0
			switch {
			case p < first:
				d = first - p
			case p > last:
				d = p - last
			}
			if d > dist || (d == dist && p < far) {
				far, dist = p, d
			}
		}
		delete(l.pages, far)
	}
}

// rowAt returns row i when its page is loaded.
func (m Model) rowAt(i int) (row, bool) {
	size := m.opts.PageSize
	rows, ok := m.list.pages[i/size]
	if !ok || i%size >= len(rows) {
		return row{}, false
	}
	return rows[i%size], true
}

// lastIndex is the index of the last row the cursor may reach.
func (m Model) lastIndex() int {
	l := m.list
	if l.totalKnown {
		return l.total - 1
	}
	return len(l.pages[0]) - 1 // before the count: the first page
}

// scrollTo keeps row i visible in a window of n rows.
func (l *listState) scrollTo(i, n int) {
	switch {
	case i < l.top:
		l.top = i
	case i >= l.top+n:
		l.top = i - n + 1
	}
	l.top = max(l.top, 0)
}

// move puts the cursor at i (clamped) and loads what becomes visible.
func (m Model) move(i int) (tea.Model, tea.Cmd) {
	l := m.list
	l.cursor = max(min(i, m.lastIndex()), 0)
	l.scrollTo(l.cursor, m.listRows())
	return m, m.ensurePages()
}

// column is one column of the list: its header, the most columns it
// takes, and how to read it from a row. A column is as wide as the
// widest of its header and the cells on screen, up to width; the name
// takes what the others leave.
type column struct {
	title string
	width int
	right bool
	cell  func(r *row) string
}

var (
	colID      = column{"JOBID", 20, false, func(r *row) string { return r.id }}
	colName    = column{"NAME", 0, false, func(r *row) string { return r.name }}
	colUser    = column{"USER", 12, false, func(r *row) string { return r.user }}
	colState   = column{"STATE", 10, false, func(r *row) string { return r.state }}
	colStart   = column{"START", 11, false, func(r *row) string { return r.start }}
	colElapsed = column{"ELAPSED", 11, true, func(r *row) string { return r.elapsed }}
	colGPUs    = column{"GPUS", 5, true, func(r *row) string { return r.gpus }}
	colVRAM    = column{"VRAM", 10, true, func(r *row) string { return r.vram }}
	colUtil    = column{"UTIL", 4, true, func(r *row) string { return r.util }}
	colClass   = column{"CLASS", 17, false, func(r *row) string { return r.class }}
	colBadges  = column{"BOTTLENECK", 16, false, func(r *row) string { return r.badges }}
)

// minNameWidth is the narrowest the name column gets before other columns
// are dropped.
const minNameWidth = 12

// columns chooses the columns for a screen w wide showing rows. Each
// column but the name is sized to its header and these rows' cells (a
// 4-digit job id takes 5 columns, not 10); the name takes what is left.
// Class and bottleneck need 100 columns; when the name would be narrower
// than minNameWidth, the least useful columns go first. The user column
// is shown when the list is not one user's.
func columns(w int, showUser bool, rows []row) []column {
	cols := []column{colID, colName}
	if showUser {
		cols = append(cols, colUser)
	}
	cols = append(cols, colState, colStart, colElapsed, colGPUs, colVRAM, colUtil)
	if w >= 100 {
		cols = append(cols, colClass, colBadges)
	}
	for i := range cols {
		c := &cols[i]
		if c.title == "NAME" {
			continue
		}
		fit := width(c.title)
		for k := range rows {
			fit = max(fit, width(c.cell(&rows[k])))
		}
		c.width = min(fit, c.width)
	}
	// Dropped in this order when the name would be narrower than
	// minNameWidth.
	dropOrder := []string{"BOTTLENECK", "CLASS", "START", "USER", "GPUS", "VRAM", "ELAPSED", "UTIL", "STATE"}
	for _, drop := range dropOrder {
		if fixedWidth(cols)+minNameWidth <= w-2 {
			break
		}
		for i, c := range cols {
			if c.title == drop {
				cols = append(cols[:i:i], cols[i+1:]...)
				break
			}
		}
	}
	for i := range cols {
		if cols[i].title == "NAME" {
			cols[i].width = max(w-2-fixedWidth(cols), 1)
		}
	}
	return cols
}

// fixedWidth is the width of the columns other than the name, with one
// space between columns.
func fixedWidth(cols []column) int {
	n := len(cols) - 1
	for _, c := range cols {
		n += c.width
	}
	return n
}

// listView renders the job list.
func (m Model) listView() (title string, body []string, status string) {
	l := m.list
	title = m.listTitle()
	n := m.listRows()
	var shown []row
	for i := l.top; i < l.top+n; i++ {
		if r, ok := m.rowAt(i); ok {
			shown = append(shown, r)
		}
	}
	cols := columns(m.width, l.q.user == "" && m.id.Admin, shown)
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = pad(c.title, c.width, c.right)
	}
	body = append(body, m.st.render(m.st.header, "  "+strings.Join(cells, " ")))

	for i := l.top; i < l.top+n; i++ {
		if l.totalKnown && i >= l.total {
			break
		}
		r, ok := m.rowAt(i)
		if !ok {
			if !l.totalKnown && i > 0 {
				break
			}
			body = append(body, "  "+m.st.render(m.st.dim, "loading…"))
			continue
		}
		for k, c := range cols {
			cells[k] = pad(c.cell(&r), c.width, c.right)
			if c.title == "STATE" && i != l.cursor { // a reset inside would end the selection's style
				cells[k] = m.st.render(m.st.stateStyle(r.state), cells[k])
			}
		}
		line := strings.Join(cells, " ")
		if i == l.cursor {
			body = append(body, m.st.render(m.st.selected, "› "+line))
		} else {
			body = append(body, "  "+line)
		}
	}
	if l.totalKnown && l.total == 0 {
		body = append(body, "  no jobs match")
	}
	return title, body, m.listStatus()
}

// pad fits a clean cell to w columns, aligned left or right.
func pad(s string, w int, right bool) string {
	if right {
		return fitRight(s, w)
	}
	return fitClean(s, w)
}

// listTitle says whose jobs the list shows and how they are filtered.
// It is never cut: when it is wider than the screen, the parts that only
// restate a default (state all, window all, the default order) go
// first, then the program's name, then long values are shortened.
func (m Model) listTitle() string {
	q := m.list.q
	who := "everyone"
	switch {
	case q.user != "" && q.user == m.id.User && m.list.dbUser != "":
		who = clip(m.list.dbUser, 24) + " (uid " + clip(q.user, 12) + ")"
	case q.user != "":
		who = clip(q.user, 24)
	}
	type part struct {
		text, short string // short: the compact form, when space is short
		optional    bool   // a default: left out when space is short
	}
	parts := []part{{"gpuprof", "", true}, {"jobs of " + who, who, false}}
	if q.account != "" {
		a := clip(q.account, 20)
		parts = append(parts, part{"account " + a, "acct " + a, false})
	}
	if q.partition != "" {
		p := clip(q.partition, 20)
		parts = append(parts, part{"partition " + p, "part " + p, false})
	}
	state := string(q.state)
	if state == "" {
		state = "all"
	}
	parts = append(parts,
		part{"state " + state, state, q.state == ""},
		part{"window " + windowName(q.window), windowName(q.window), q.window == 0},
		part{"sort " + q.sortName(), q.sortName(), q.sort == "" && !q.reverse})
	if q.text != "" {
		f := "/" + clip(q.text, 20) + "/"
		parts = append(parts, part{"filter " + f, f, false})
	}
	join := func(all, short bool) string {
		var ts []string
		for _, p := range parts {
			switch {
			case p.optional && !all:
			case short:
				ts = append(ts, p.short)
			default:
				ts = append(ts, p.text)
			}
		}
		return " " + strings.Join(ts, " · ")
	}
	for _, t := range []string{join(true, false), join(false, false), join(false, true)} {
		if width(t) <= m.width {
			return t
		}
	}
	for i := range parts { // still too wide: shorter values
		parts[i].short = clip(parts[i].short, 12)
	}
	return join(false, true)
}

// isUID reports whether a login name is a bare number: what a uid
// without a passwd entry is shown as.
func isUID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// listStatus is the list's part of the status bar: where the cursor is.
func (m Model) listStatus() string {
	l := m.list
	var s string
	switch {
	case !l.totalKnown:
		s = " loading…"
	case l.total == 0:
		s = " 0 jobs"
	default:
		s = fmt.Sprintf(" row %s of %s", present.Int(l.cursor+1), present.Int(l.total))
		if len(l.pending) > 0 {
			s += " · loading…"
		}
	}
	return s
}
