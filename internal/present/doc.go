// Package present is gpuprof's one presenter: it writes every number a
// person reads, one function per form with one rule and one table test,
// so that the CLI, the terminal UI, the report, notice mails and the
// analysis' prose write a quantity the same way. Two formatters of one
// quantity once printed one wait two ways on one page.
//
// Its forms: durations in Slurm's [D-]HH:MM:SS (Duration, Seconds),
// instants as sacct writes them (Instant), numbers with thousands
// separators (Number, Int) and the prose's one decimal (Decimal),
// percentages (Percent, Share, PercentWhole, WholePercent; Util and Activity
// for a GPU's readings), GPU-hours, GPUs held, energy (Energy, KWh), CO2e,
// bytes (GiB, Bytes), temperatures, XID codes, plurals, counts and lists
// (Plural, Count, List), and the one spelling of a missing value (Missing,
// OrMissing). GPUFacts is one GPU's facts as gpuprof show and
// the TUI's detail both render them (analysis.GPU.Facts builds it).
//
// It must not read anything or decide anything: values in, text out. It
// imports of gpuprof only gpu (the XID table) and slurmext (Slurm's
// forms), so that every front end and analysis can import it.
package present
