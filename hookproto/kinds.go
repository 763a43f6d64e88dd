package hookproto

// Kinds of spool records. Every record is idempotent to apply (package
// ingest), so a record applied twice (crash between commit and removal)
// changes nothing.
const (
	// KindProfile is a complete profile from the agent (running or
	// finished); it replaces what the database has, except that a running
	// profile never replaces a finished one.
	KindProfile = "profile"
	// KindHookStart is a minimal running profile from a prolog that could
	// not reach the agent; it is inserted only if the job is unknown.
	KindHookStart = "hookstart"
	// KindHookEnd is a JobEnd from an epilog that could not reach the
	// agent; it finishes what the database has, marked partial.
	KindHookEnd = "hookend"
	// KindSchedJob is the scheduler's view of a job from jobcomp; it is
	// merged into the scheduler table (see store.PutSchedJob).
	KindSchedJob = "schedjob"
)

// UnresolvedUUIDPrefix starts the placeholder UUID a hook gives a GPU it
// knows only by Slurm index (the GPU backend did not answer it).
const UnresolvedUUIDPrefix = "unresolved-slurm-gpu-"
