// Package monthly is the window pipeline: the one reader of a window of
// jobs (internal/archtest) for gpuprof report, plan, recommend, profiles
// and whatif, the admins' digest of a day (Digest) and the terminal UI's
// month summary (SummaryMonth). It takes the caller's jobsource.Scope and what the command
// asks (Ask: a window, a cluster), chooses the default window when none
// is given (DefaultWindow: the last complete month with jobs, else the
// data's span), binds the one cluster of the answer with its own Slurm
// configuration (Bound, through jobsource.Scope.Bind), reads the window
// once (counted, then read in one pass, lean unless the queue replay
// needs it whole), and returns values: the month's report.Data (Reports,
// then Month.Bind and Month.Build for each cluster in turn: the analysis,
// the simulated capacity plan, the workload summary, the earlier months'
// headlines, the notices' tally from the same pass, anonymised when
// asked), an analysis with its simulated plan (AnalyseAndPlan), an
// analysis alone (Analyse) and a what-if's answer (WhatIf).
//
// It sits between the readers and the front ends: report may not read
// jobs or compute statistics, and a command is wiring, so the pipeline
// that does both lives here. It must not open a database, the network or
// a file, nor decide who may read what (the Scope is already scoped; an
// answer for admins only asks the Scope's caller, store.Caller.
// RequireAdmin), nor call back into its caller: it returns values, and
// the command prints and writes them (its progress display is a value it
// hands in, Progress).
package monthly
