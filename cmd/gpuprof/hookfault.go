//go:build !gpuprof_faults

package main

// withHookFault and withJobCompFault return the hook's work unchanged. A
// build with the gpuprof_faults tag (hookfault_faults.go) makes them inject
// the fault named by GPUPROF_FAULT instead, so tests can crash a real
// gpuprof binary inside a hook; a production build has no such switch.
func withHookFault(_ string, run hookFunc) hookFunc { return run }

func withJobCompFault(record jobCompFunc) jobCompFunc { return record }
