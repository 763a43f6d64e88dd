// Package tui is gpuprof's terminal user interface (`gpuprof tui`): a
// user's GPU jobs, what the analysis says about each, and this month's
// summary, in a terminal of 80×24 or more. It is built with bubbletea v2
// and lipgloss v2.
//
// # Views
//
// The job list (the default view) shows the jobs newest first, one page
// of Options.PageSize at a time fetched from the Source around the
// cursor, plus the screen ahead and, once the count is known, the last
// screen (for G); a few pages are cached and nothing loads the whole
// table. An admin without jobs of their own starts on everyone's. Each
// row shows the job id, name, state, start, elapsed time, GPUs requested
// and used, the VRAM peak over the card ("61/80G"), the mean utilisation
// and, from 100 columns, the class and bottleneck badges. The name column
// shrinks first; other columns drop by priority on narrow screens.
//
// The job detail (enter) shows the scheduler's facts, the analysis (class
// with its rule and numbers, bottlenecks, IO wait, flags such as idle
// allocations, preallocated memory and partial data), one block per GPU
// with sparklines of utilisation and memory over the job's life, energy,
// temperature and XID errors, the hints of analysis.Hints, and the
// profile of the job's recurring task (its other runs: same user, same
// normalised name or same array).
//
// My summary (m) reads this month's jobs ([ and ] move to the month
// before and after; at most 5,000 jobs, and it says so when there were
// more) and shows GPU-hours, efficiency (utilisation weighted
// by GPU-hours), idle GPU-hours, jobs by class and the most common hint,
// all from the analysis package.
//
// # Keys
//
//	↑/k ↓/j             move (scroll in the detail)
//	pgup/ctrl+u pgdn/ctrl+d  page
//	g G                 first / last
//	enter               job detail; esc or backspace goes back
//	/                   filter by name or job id (enter applies, esc cancels)
//	s  S or r           next sort column; reverse the order
//	f                   state: all, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, OUT_OF_MEMORY
//	p                   partition
//	t                   time window: all, 24h, 7d, 30d
//	m                   my summary
//	u a                 switch user (empty: everyone) / account — admins
//	?                   help
//	q ctrl+c            quit
//
// # Access control
//
// Access control lives in the Source, not here: Identity.Admin only
// decides whether the user and account prompts open. A non-admin's Source
// must return that user's jobs alone whatever filter the UI sends.
//
// # Rendering
//
// Loading happens in tea.Cmds that return typed messages; View calls pure
// render functions (golden-tested under testdata/). Every string that
// came from users (job names, users, accounts, partitions, nodes, process
// names) is stripped of escape sequences and control characters, then
// truncated and padded by display width, so wide CJK characters and emoji
// keep the columns aligned. Options.NoColor (or NO_COLOR for Run) renders
// plain text without a single escape sequence.
package tui
