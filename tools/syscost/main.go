// Command syscost measures what a periodic agent pays on this machine for
// the operations it is made of: a system call, a stat of a path, a read of
// a kept /proc file, and a wake-up of another thread. A sampling agent's CPU
// share is mostly these, so they tell how much of a benchmark's figure is
// the machine (a virtual machine may make each several times dearer than
// bare metal) rather than the program.
//
//	go run ./tools/syscost [PATH]
//
// PATH is the path to stat (default: the current directory); give one as
// deep as the files the agent reads.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

func main() {
	path := "."
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := run(path); err != nil {
		fmt.Fprintln(os.Stderr, "syscost:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	const calls = 200_000
	per := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(n) }

	start := time.Now()
	for range calls {
		syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
	}
	fmt.Printf("getppid (a bare system call)      %8.0f ns\n", per(time.Since(start), calls))

	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	start = time.Now()
	for range calls {
		_ = syscall.Stat(path, &st)
	}
	fmt.Printf("stat of %s  %8.0f ns\n", path, per(time.Since(start), calls))

	fd, err := syscall.Open("/proc/self/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /proc/self/stat: %w", err)
	}
	defer syscall.Close(fd)
	buf := make([]byte, 1024)
	const reads = 50_000
	start = time.Now()
	for range reads {
		if _, err := syscall.Pread(fd, buf, 0); err != nil {
			return fmt.Errorf("pread /proc/self/stat: %w", err)
		}
	}
	fmt.Printf("pread of a kept /proc/self/stat   %8.0f ns\n", per(time.Since(start), reads))

	rtt, err := pingPong(20_000)
	if err != nil {
		return err
	}
	fmt.Printf("pipe round trip, two threads      %8.0f ns (two wake-ups)\n", rtt)
	return nil
}

// pingPong passes a byte back and forth between two OS threads through two
// pipes and returns the mean round trip in nanoseconds: each way is a write
// and a wake-up of a thread blocked in read.
func pingPong(rounds int) (float64, error) {
	var a, b [2]int
	if err := syscall.Pipe2(a[:], syscall.O_CLOEXEC); err != nil {
		return 0, err
	}
	if err := syscall.Pipe2(b[:], syscall.O_CLOEXEC); err != nil {
		return 0, err
	}
	defer func() {
		for _, fd := range []int{a[0], a[1], b[0], b[1]} {
			syscall.Close(fd)
		}
	}()
	echoed := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		buf := make([]byte, 1)
		for range rounds {
			if _, err := syscall.Read(a[0], buf); err != nil {
				echoed <- err
				return
			}
			if _, err := syscall.Write(b[1], buf); err != nil {
				echoed <- err
				return
			}
		}
		echoed <- nil
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := []byte{1}
	start := time.Now()
	for range rounds {
		if _, err := syscall.Write(a[1], buf); err != nil {
			return 0, err
		}
		if _, err := syscall.Read(b[0], buf); err != nil {
			return 0, err
		}
	}
	d := time.Since(start)
	if err := <-echoed; err != nil {
		return 0, err
	}
	return float64(d.Nanoseconds()) / float64(rounds), nil
}
