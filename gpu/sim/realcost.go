package sim

import (
	"context"
	"sync"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// NVMLCost is what each NVML call that gpu/nvml makes costs in CPU on a
// real driver, per call.
type NVMLCost struct {
	MemoryInfo     time.Duration // GetMemoryInfo_v2
	Utilization    time.Duration // GetUtilizationRates
	Power          time.Duration // GetPowerUsage
	Temperature    time.Duration // GetTemperature
	Processes      time.Duration // GetComputeRunningProcesses
	EventWait      time.Duration // EventSetWait(0)
	AccountingMode time.Duration // GetAccountingMode
	GPMSample      time.Duration // GpmSampleGet
	GPMMetrics     time.Duration // GpmMetricsGet
	Energy         time.Duration // GetTotalEnergyConsumption
}

// H200Cost is NVMLCost measured on an NVIDIA H200, driver 580.159.04,
// through pynvml (docs/real-gpu.md, issue #28). The energy counter is the
// outlier: 3.9–4.2 ms where every other reading takes ≤ 6 µs.
var H200Cost = NVMLCost{
	MemoryInfo:     5600 * time.Nanosecond,
	Utilization:    900 * time.Nanosecond,
	Power:          800 * time.Nanosecond,
	Temperature:    1100 * time.Nanosecond,
	Processes:      6100 * time.Nanosecond,
	EventWait:      2200 * time.Nanosecond,
	AccountingMode: 5400 * time.Nanosecond,
	GPMSample:      46 * time.Microsecond,
	GPMMetrics:     10 * time.Microsecond,
	Energy:         4 * time.Millisecond,
}

// Spin keeps the CPU busy for d: a driver's calls are CPU work in the
// calling process (ioctls into the kernel module), not sleeps.
func Spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// Device is what a SampleDevice call costs: the four readings, and the GPM
// calls where the GPU has GPM.
func (c NVMLCost) Device(gpm bool) time.Duration {
	d := c.MemoryInfo + c.Utilization + c.Power + c.Temperature
	if gpm {
		d += c.GPMSample + c.GPMMetrics
	}
	return d
}

// ProcessList is what a Processes call costs: GetComputeRunningProcesses
// and GetProcessUtilization, the latter not measured and taken as alike.
func (c NVMLCost) ProcessList() time.Duration { return 2 * c.Processes }

var _ gpu.Sampler = (*Charged)(nil)

// Charged is the simulated node charged, per call, the CPU that the NVML
// calls gpu/nvml makes for it cost on a real driver (Cost): it spins that
// long before it answers, so that a benchmark on a machine without a GPU
// shows what the agent would cost on one (`[sim] real_cost`,
// scripts/bench-agent-realcost.sh). It is for benchmarks only: nothing
// but the simulated backend ever builds one, and only when configured.
//
// Unlike the Node it has an energy counter, as the GPUs it stands for do:
// the power of each GPU's samples integrated over time, in millijoules
// since Charge, so that the agent reads it as it would a real one (and
// pays its 4 ms).
type Charged struct {
	*Node
	cost NVMLCost

	mu     sync.Mutex
	energy map[string]*powerCounter
}

// powerCounter integrates a GPU's last sampled power over time.
type powerCounter struct {
	mJ      float64
	powerMW uint32
	at      time.Time
}

func (c *powerCounter) advance(now time.Time) {
	if !c.at.IsZero() && now.After(c.at) {
		c.mJ += float64(c.powerMW) * now.Sub(c.at).Seconds()
	}
	if now.After(c.at) {
		c.at = now
	}
}

// Charge wraps n so that each call costs what cost says.
func Charge(n *Node, cost NVMLCost) *Charged {
	return &Charged{Node: n, cost: cost, energy: make(map[string]*powerCounter, len(n.devices))}
}

// SampleDevice is the node's, charged the four readings and, on a model
// with GPM, the GPM sample and metrics calls.
func (c *Charged) SampleDevice(ctx context.Context, uuid string) (gpu.DeviceSample, error) {
	Spin(c.cost.Device(c.gpm))
	ds, err := c.Node.SampleDevice(ctx, uuid)
	if err != nil {
		return ds, err
	}
	c.mu.Lock()
	e := c.counter(uuid)
	e.advance(ds.Time)
	if ds.PowerMW.Valid {
		e.powerMW = ds.PowerMW.Value
	}
	c.mu.Unlock()
	return ds, nil
}

// Processes is the node's, charged the process list and its utilisation.
func (c *Charged) Processes(ctx context.Context, uuid string) ([]gpu.ProcessSample, error) {
	Spin(c.cost.ProcessList())
	return c.Node.Processes(ctx, uuid)
}

// XIDEvents is the node's, charged a wait of 0 on the event set.
func (c *Charged) XIDEvents(ctx context.Context) ([]gpu.XIDEvent, error) {
	Spin(c.cost.EventWait)
	return c.Node.XIDEvents(ctx)
}

// Accounting is the node's (off), charged the accounting mode's query.
func (c *Charged) Accounting(ctx context.Context, uuid string) ([]gpu.AccountingStats, error) {
	Spin(c.cost.AccountingMode)
	return c.Node.Accounting(ctx, uuid)
}

// Energy is the GPU's power integrated since Charge (see Charged),
// charged the energy counter's call.
func (c *Charged) Energy(ctx context.Context, uuid string) (uint64, error) {
	Spin(c.cost.Energy)
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	if _, err := c.device(uuid); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.counter(uuid)
	e.advance(c.now())
	return uint64(e.mJ), nil
}

// counter is uuid's; the caller holds mu.
func (c *Charged) counter(uuid string) *powerCounter {
	e := c.energy[uuid]
	if e == nil {
		e = &powerCounter{}
		c.energy[uuid] = e
	}
	return e
}
