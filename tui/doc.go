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
// and, from 100 columns, the class (analysis.Class.String(), the one
// name of each class) and bottleneck badges. Every column but the name is
// sized to its header and the cells on screen; the name takes the rest.
// It shrinks first; other columns drop by priority on narrow screens.
// Durations are Slurm's [D-]HH:MM:SS and the detail's instants
// slurmext.FormatTime's; the list's START is a compact MM-DD hh:mm.
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
// Each view has one key table (keys.go: listKeys, detailKeys,
// summaryKeys, then commonKeys): a slice of bindings {keys, help,
// action}. Key presses are dispatched through it and the help overlay (?)
// is generated from it, so a key cannot work without being listed; a
// test presses every key a terminal can send and checks just that.
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
