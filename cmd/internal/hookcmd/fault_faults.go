//go:build gpuprof_faults

package hookcmd

/*
#include <unistd.h>

// gpuprof_fault_segv crashes in C, as a bug in SQLite or NVML would.
static void gpuprof_fault_segv(void) { volatile int *p = 0; *p = 1; }
*/
import "C"

import (
	"os"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/hooks"
)

// This file exists only in test builds (go build -tags gpuprof_faults):
// e2e/hookcrash_test.go builds one and makes its hooks fail in every way a
// hook can, through GPUPROF_FAULT:
//
//	panic      a panic on the hook's goroutine (recovered: exit 0)
//	nil        a nil pointer dereference there (recovered: exit 0)
//	goroutine  a panic on a goroutine of its own (unrecoverable: exit 2)
//	segv       a segfault in C code (unrecoverable: exit 2)
//	kill       SIGKILL, as the OOM killer sends
//	hang       stuck in C for a minute (the watchdog exits 0 at the deadline)

func fault() func() {
	return func() { injectFault(os.Getenv("GPUPROF_FAULT")) }
}

func injectFault(fault string) {
	switch fault {
	case "panic":
		panic("injected fault: panic in a hook")
	case "nil":
		var d *hooks.Deps
		d.Config.DB = "" // a nil pointer dereference: a runtime panic
	case "goroutine":
		// The hook waits for the goroutine's panic to end the process. It
		// waited on a channel the goroutine closed in a defer before:
		// the panic runs its defers first, so the hook could wake, finish
		// and exit 0 before the runtime exited 2 (a jobcomp, quick to
		// finish, did so once under load).
		go func() {
			panic("injected fault: panic in a goroutine")
		}()
		time.Sleep(time.Minute)
	case "segv":
		C.gpuprof_fault_segv()
	case "kill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	case "hang":
		C.sleep(60)
	}
}
