// Package cliview is the command line's front end: every table and text a
// gpuprof command prints (jobs, show, profiles, recommend, plan, what-if,
// notices and their digest, import's result lines) and the JSON those
// commands emit, rendered from library values to an io.Writer.
//
// It sits beside report, tui and notice, over the one presenter
// (internal/present): it writes numbers only through present and untrusted
// text only through termtext. It renders only: it reads no database, file or
// network, decides no access and draws no conclusion; the commands in
// cmd/gpuprof read, call the library and hand it the values.
package cliview
