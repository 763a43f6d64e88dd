// Package cliview is the command line's front end: the tables and texts
// gpuprof's commands print (jobs, show, profiles, recommend, plan, what-if,
// the notices listing, import's result and progress lines, the plan's
// progress line) and the JSON those commands emit, rendered from library
// values to an io.Writer. A command's one-line messages (which month a
// report is of, where it was written) stay with the command; the admins'
// digest is a mail, rendered by notice.
//
// It sits beside report, tui and notice, over the one presenter
// (internal/present): the quantities a person reads (durations, instants,
// percentages, GPU-hours, energy, bytes, ratios, counts) go through
// present, and untrusted text through termtext (Short). The plan's
// arithmetic lines show their operands to the fixed precision of the
// formula they spell out (C_now = 12.34 GPUs), and rank correlations keep
// two decimals; neither is a quantity present has a form for. It renders
// only: it reads no database, file or network and decides no access; the
// commands in cmd/gpuprof read, call the library and hand it the values.
// What it says of a job comes from analysis, by the functions the TUI asks
// too (analysis.Examine for show's findings, Measure's Shown for the GPUs
// and utilisation of jobs, ProfileGPU's Facts for each GPU), so that the
// CLI and the TUI cannot say different things of one job. The notices
// listing takes its row (notice.Row) and counting line (notice.Counting)
// from notice, which owns notices.
package cliview
