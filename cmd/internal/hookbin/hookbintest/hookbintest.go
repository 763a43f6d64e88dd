// Package hookbintest holds what the tests of gpuprof-hook and
// gpuprof-hook-full share: the command lines both binaries must treat
// alike, since the thin hook hands its arguments to the full one as they
// came.
package hookbintest

// ArgumentCase is one command line given to a hook binary, with slurmd's
// SLURM_SCRIPT_CONTEXT, and what the binary must do with it without
// running a hook: its exit code and what stdout and stderr must hold.
type ArgumentCase struct {
	Name       string
	Args       []string
	Context    string
	WantCode   int
	WantStderr string
	WantStdout string
}

// ArgumentCases: the hook's name (or slurmd's SLURM_SCRIPT_CONTEXT
// without one) and --config, --db, --log-level; a bad flag is on stderr
// and exits 0, as gpuprof's hooks do; no hook name is a usage error.
var ArgumentCases = []ArgumentCase{
	{Name: "no hook", WantCode: 2, WantStderr: "no hook named"},
	{Name: "unknown hook", Args: []string{"report"}, WantCode: 2, WantStderr: "no hook named"},
	{Name: "bad flag", Args: []string{"epilog", "--no-such-flag"}, WantStderr: "Error: unknown flag: --no-such-flag"},
	{Name: "flag without its value", Args: []string{"epilog", "--config"}, WantStderr: "Error: flag needs an argument: --config"},
	{Name: "help", Args: []string{"--help"}, WantStdout: "--log-level"},
}
