//go:build !gpuprof_faults

package main

// hookFault returns nil: a production hook runs its work as it is. A build
// with the gpuprof_faults tag (hookfault_faults.go) returns a function that
// injects the fault named by GPUPROF_FAULT before the hook's work
// (hooks.Runtime.Before), so tests can crash a real gpuprof binary inside
// a hook; a production build has no such switch.
func hookFault() func() { return nil }
