//go:build !gpuprof_faults

package hookcmd

// fault returns nil: a production hook runs its work as it is. A build
// with the gpuprof_faults tag (fault_faults.go) returns a function that
// injects the fault named by GPUPROF_FAULT before the hook's work
// (hooks.Runtime.Before), so tests can crash a real gpuprof or gpuprof-hook binary inside
// a hook; a production build has no such switch.
func fault() func() { return nil }
