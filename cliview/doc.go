// Package cliview is the command line's front end: every table and text a
// gpuprof command prints (jobs, show, profiles, recommend, plan, what-if,
// notices and their digest, import's result lines) and the JSON those
// commands emit, rendered from library values to an io.Writer.
//
// It sits beside report, tui and notice, over the one presenter
// (internal/present): it writes numbers only through present and untrusted
// text only through termtext (Short). It renders only: it reads no
// database, file or network and decides no access; the commands in
// cmd/gpuprof read, call the library and hand it the values. What it says
// of a job comes from analysis, by the functions the TUI asks too
// (analysis.Examine for show's findings, Measure's Shown for the GPUs and
// utilisation of jobs, ProfileGPU's Facts for each GPU), so that the CLI
// and the TUI cannot say different things of one job.
package cliview
