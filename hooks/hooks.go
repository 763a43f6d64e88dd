// Package hooks implements gpuprof's slurmd Prolog and Epilog: they tell the
// node agent that a job starts or ends and, when the agent cannot be
// reached, spool what they know for it. The agent is the one writer of a
// node's database: a hook never opens it (archtest: hooks import neither
// store nor ingest).
//
// Hooks must never hurt the cluster: a non-zero exit drains the node, so
// every function here reports its failures to the caller for logging and the
// command exits 0. The guard every Slurm hook runs under, slurmctld's
// jobcomp included, is here too: a hard deadline (Guard), a recovered panic
// (Recovery), the defaults on a broken configuration (Setup) and a log that
// never touches stdout or stderr (LogDest). Nothing here samples GPUs on a
// schedule (the agent does).
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/hookproto"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/spool"
)

// Deps is what a hook needs. Everything is injected so tests can run a hook
// against a temp directory, a fake clock and a simulated GPU node.
type Deps struct {
	Config     config.Config
	ConfigPath string // passed to an autostarted agent
	Env        slurmext.HookEnv
	Log        *slog.Logger
	Now        func() time.Time
	// OpenInventory opens the GPU inventory; used only when the agent is
	// unreachable, to name the job's GPUs by UUID. May be nil.
	OpenInventory func(ctx context.Context) (gpu.Inventory, error)
	// Self is this binary's path, for starting the agent.
	Self string
	// ConfRoots are where a configless node keeps slurm.conf (nil:
	// slurmext.DefaultConfRoots).
	ConfRoots *slurmext.ConfRoots
}

// Outcome says how a hook recorded the job, for the log line.
type Outcome string

// Outcomes of a hook.
const (
	ViaAgent Outcome = "agent" // the agent took it
	ViaSpool Outcome = "spool" // the agent did not answer: spooled for it
	// ViaAgentMemory: nothing could be written (disk full), but the agent
	// holds the finished job in memory and writes it when the disk takes
	// it; lost only if the agent stops first.
	ViaAgentMemory Outcome = "agent-memory"
)

// confFiles looks up, once per hook, the slurm.conf and gres.conf the hook
// reads: the configured slurm.conf, else, on a configless node, slurmd's
// cached copy (slurmext.FindSlurmConf); gres.conf as configured, else beside
// slurmd's SLURM_CONF, else beside the slurm.conf found.
func (d Deps) confFiles() (slurmConf, gresConf string) {
	roots := d.confRoots()
	p, src := slurmext.FindSlurmConf(d.Config.SlurmConf, roots)
	if src != slurmext.ConfConfigured && src != slurmext.ConfNone && d.Log != nil {
		d.Log.Info("slurm.conf", "file", p, "source", string(src))
	}
	switch {
	case d.Config.Hooks.GresConf != "":
		gresConf = d.Config.Hooks.GresConf
	case roots.Env != "":
		gresConf = slurmext.DefaultGresConf(roots.Env)
	case src != slurmext.ConfNone && src != slurmext.ConfConfigured:
		// The configless cache's copy, beside its slurm.conf.
		gresConf = filepath.Join(filepath.Dir(p), "gres.conf")
	default:
		gresConf = slurmext.DefaultGresConf("")
	}
	return p, gresConf
}

func (d Deps) confRoots() slurmext.ConfRoots {
	if d.ConfRoots != nil {
		return *d.ConfRoots
	}
	return slurmext.DefaultConfRoots()
}

func (d Deps) node() string {
	return slurmext.NodeName(d.Config.Node, d.Env.Node, os.Hostname)
}

// jobStart builds the agent's view of the job from the environment.
func (d Deps) jobStart() hookproto.JobStart {
	e := d.Env
	start := e.Start
	if start.IsZero() {
		start = d.Now()
	}
	slurmConf, gresConf := d.confFiles()
	return hookproto.JobStart{
		// cluster and node name the job's records by the one rule every
		// writer uses (slurmext.ClusterName, slurmext.NodeName).
		Cluster:   slurmext.ClusterName(d.Config.Cluster, e.Cluster, slurmConf),
		JobID:     e.JobID,
		Node:      d.node(),
		User:      e.User,
		UID:       e.UID,
		GID:       e.GID,
		Account:   e.Account,
		Partition: e.Partition,
		Comment:   e.Comment,
		Start:     start,
		GPUs:      GPURefs(e, gresConf, d.Log),
		SLUID:     e.SLUID,
	}
}

// request is the agent request of a node hook of kind: the prolog's start
// (OpStart with jobStart), the epilog's end (OpEnd: jobStart with the end
// and exit the environment gives, the end now when it gives none). The
// hooks send it themselves (Prolog, Epilog); the agent builds it for a
// hook gpuprof-hook forwarded (Forwarder), so both record a job alike.
func (d Deps) request(kind Kind) hookproto.Request {
	js := d.jobStart()
	if kind != KindEpilog {
		return hookproto.Request{Op: hookproto.OpStart, Start: &js}
	}
	e := d.Env
	end := e.End
	if end.IsZero() {
		end = d.Now()
	}
	return hookproto.Request{Op: hookproto.OpEnd, End: &hookproto.JobEnd{JobStart: js, End: end,
		ExitKnown: e.HasExit, ExitStatus: e.ExitStatus, ExitSignal: e.ExitSignal}}
}

// GPURefs maps the job's Slurm GPU indices to device files through
// gres.conf (position i in the node's gpu File= list is Slurm index i) and
// names each by the file's minor number. Without gres.conf files, or with
// AutoDetect on, the agent takes Slurm's index in PCI bus order. Never by assuming
// Slurm index = NVML index.
func GPURefs(e slurmext.HookEnv, gresConf string, log *slog.Logger) []hookproto.GPURef {
	var refs []hookproto.GPURef
	for _, u := range e.GPUUUIDs {
		refs = append(refs, hookproto.GPURef{SlurmIndex: -1, Minor: -1, UUID: u})
	}
	if len(refs) > 0 || len(e.GPUs) == 0 {
		return refs
	}
	var devs []slurmext.GresDevice
	if g, err := slurmext.LoadGresFile(gresConf, nil); err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("gres.conf unreadable; mapping GPUs by PCI order", "job", e.JobID, "file", gresConf, "err", err)
	} else if err == nil {
		gc, err := g.For(e.Node)
		switch {
		case err != nil:
			log.Warn("gres.conf unreadable; mapping GPUs by PCI order", "job", e.JobID, "file", gresConf, "err", err)
		case gc.AutoDetect != "" && gc.AutoDetect != "off":
			// slurmd merges what it detects and orders it itself: the
			// file order says nothing; Slurm's order is PCI bus order.
		default:
			devs = gc.Devices
		}
	}
	for _, idx := range e.GPUs {
		ref := hookproto.GPURef{SlurmIndex: idx, Minor: -1}
		if idx < len(devs) {
			if m, err := slurmext.DeviceMinor(devs[idx].File); err == nil {
				ref.Minor = m
			} else {
				log.Warn("device minor unknown", "job", e.JobID, "file", devs[idx].File, "err", err)
			}
		}
		refs = append(refs, ref)
	}
	return refs
}

// Prolog registers the job with the agent, else spools its start record
// for the agent to take (agent/merge.go).
func Prolog(ctx context.Context, d Deps) (Outcome, error) {
	req := d.request(KindProlog)
	js := *req.Start
	actx, cancel := context.WithTimeout(ctx, budget(ctx, 0.4))
	_, err := hookproto.Client{Socket: d.Config.Socket}.Do(actx, req)
	cancel()
	if err == nil {
		return ViaAgent, nil
	}
	d.Log.Warn("agent not reachable at job start; spooling the start for it", "job", js.JobID, "err", err)
	if d.Config.Hooks.AutostartAgent && errors.Is(err, hookproto.ErrUnreachable) {
		if serr := d.startAgent(); serr != nil {
			d.Log.Error("agent autostart failed", "job", js.JobID, "err", serr)
		} else {
			d.Log.Info("agent started detached", "job", js.JobID)
		}
	}
	j := d.minimalProfile(ctx, js)
	j.MarkPartial("agent unreachable at job start")
	return d.spool(hookproto.KindHookStart, j)
}

// Epilog asks the agent to finalise the job, else spools its end record
// for the agent to apply.
func Epilog(ctx context.Context, d Deps) (Outcome, error) {
	req := d.request(KindEpilog)
	je := *req.End
	js := je.JobStart
	actx, cancel := context.WithTimeout(ctx, budget(ctx, 0.5))
	resp, err := hookproto.Client{Socket: d.Config.Socket}.Do(actx, req)
	cancel()
	if err == nil {
		return ViaAgent, nil
	}
	if resp.Held {
		d.Log.Warn("agent could not write the job's end record; it holds the job finished until the disk takes it; spooling the end too",
			"job", js.JobID, "err", err)
	} else {
		d.Log.Warn("agent not reachable at job end; spooling the end for it", "job", js.JobID, "err", err)
	}
	je.Job = d.minimalProfile(ctx, js)
	out, err := d.spool(hookproto.KindHookEnd, je)
	if resp.Held && err != nil {
		return ViaAgentMemory, fmt.Errorf("end record held by the agent until the disk takes it (lost if the agent stops first); the hook's own attempt: spool: %v", errors.Unwrap(err))
	}
	return out, err
}

// minimalProfile is the profile a hook can build alone: the job, its GPUs
// (by UUID when the GPU backend answers in time) and no readings.
func (d Deps) minimalProfile(ctx context.Context, js hookproto.JobStart) profile.Job {
	var devs []gpu.Device
	if d.OpenInventory != nil {
		sctx, cancel := context.WithTimeout(ctx, budget(ctx, 0.3))
		devs = d.devices(sctx)
		cancel()
	}
	interval := d.Config.Agent.Interval.D()
	got, idx, problems := hookproto.Resolve(devs, js.GPUs)
	j := hookproto.NewProfile(js, got, idx, interval, d.Config.Agent.SeriesPoints, gpu.Versions{}, profile.SourceHook)
	if len(problems) > 0 {
		// Keep the GPUs the inventory did not name: by the UUID Slurm gave
		// (a MIG instance: gpu/nvproc lists physical GPUs only; the agent
		// names it when it drains the record), else by Slurm index.
		for _, r := range js.GPUs {
			if r.UUID != "" {
				if !slices.ContainsFunc(got, func(g gpu.Device) bool { return g.UUID == r.UUID }) {
					j.GPUs = append(j.GPUs, profile.NewGPU(gpu.Device{UUID: r.UUID, Minor: r.Minor}, r.SlurmIndex, js.Start, interval, d.Config.Agent.SeriesPoints))
				}
				continue
			}
			if slicesContainsIndex(idx, r.SlurmIndex) {
				continue
			}
			g := profile.NewGPU(gpu.Device{UUID: hookproto.UnresolvedUUIDPrefix + strconv.Itoa(r.SlurmIndex), Minor: r.Minor}, r.SlurmIndex, js.Start, interval, d.Config.Agent.SeriesPoints)
			j.GPUs = append(j.GPUs, g)
		}
		if len(devs) == 0 {
			j.MarkPartial("GPU UUIDs unknown: the GPU backend did not answer")
		} else {
			for _, p := range problems {
				j.MarkPartial(p)
			}
		}
	}
	return j
}

func slicesContainsIndex(idx []int, v int) bool {
	for _, x := range idx {
		if x == v {
			return true
		}
	}
	return false
}

func (d Deps) devices(ctx context.Context) []gpu.Device {
	type res struct {
		devs []gpu.Device
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		// The select below bounds the wait: a hung driver leaves this
		// goroutine behind, and the hook goes on without UUIDs.
		// A panic here (in the GPU backend) would kill the hook with exit
		// 2, which no recover on the hook's own goroutine can catch:
		// recover it here, log its stack, and go on without UUIDs.
		defer func() {
			if p := recover(); p != nil {
				d.Log.Error("GPU inventory panicked; going on without GPU UUIDs", "job", d.Env.JobID,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				ch <- res{err: fmt.Errorf("GPU inventory panicked: %v", p)}
			}
		}()
		inv, err := d.OpenInventory(ctx)
		if err != nil {
			ch <- res{err: err}
			return
		}
		devs, err := inv.Devices(ctx)
		_ = inv.Close()
		ch <- res{devs, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			d.Log.Warn("GPU inventory unavailable", "job", d.Env.JobID, "err", r.err)
		}
		return r.devs
	case <-ctx.Done():
		d.Log.Warn("GPU inventory timed out", "job", d.Env.JobID)
		return nil
	}
}

// spool makes a record durable in the spool directory (two fsyncs), where
// the agent, the node database's one writer, takes it (agent/merge.go,
// ingest.Apply). A hook never opens the database: a second writer would
// contend with the agent for its lock and, on an older schema, could not
// write anyway.
func (d Deps) spool(kind string, v any) (Outcome, error) {
	if _, err := (spool.Dir{Path: d.Config.SpoolDir}).Put(kind, v); err != nil {
		return "", fmt.Errorf("record lost: spool: %w", err)
	}
	return ViaSpool, nil
}

// budget returns a share of the time left before ctx's deadline.
func budget(ctx context.Context, share float64) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return time.Second
	}
	left := time.Until(dl)
	if left <= 0 {
		return time.Millisecond
	}
	return time.Duration(float64(left) * share)
}

// startAgent starts the agent in its own session with no inherited
// descriptors, so slurmd neither kills it with the prolog's process group
// nor waits for its output.
func (d Deps) startAgent() error {
	args := d.Config.Hooks.AgentCommand
	if len(args) == 0 {
		if d.Self == "" {
			return errors.New("no agent command configured and own path unknown")
		}
		args = []string{d.Self, "agent"}
		if d.ConfigPath != "" {
			args = append(args, "--config", d.ConfigPath)
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
