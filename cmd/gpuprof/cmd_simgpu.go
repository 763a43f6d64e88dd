package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprof/gpuprof/cmd/internal/hookcmd"
	"github.com/gpuprof/gpuprof/gpu/sim"
)

func newSimGPUCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simgpu",
		Short: "Simulated GPU node: stand-ins for CUDA programs (no GPU needed)",
		Long: `Commands of the simulated GPU node described by the [sim] section of the
configuration (see docs/sim-node.md). The agent run with --gpu sim sees these
processes exactly as it would see CUDA processes through NVML.`,
	}
	cmd.AddCommand(newBurnCommand(g), newXIDCommand(g), newSimInitCommand(g))
	return cmd
}

type burnOptions struct {
	Mem     string
	Util    string
	SM      string
	Tensor  string
	DRAM    string
	For     time.Duration
	Devices int
	Name    string
}

func (o *burnOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Mem, "mem", "0", "GPU memory to hold per GPU, e.g. 6GiB; a comma list gives one value per GPU")
	fs.StringVar(&o.Util, "util", "0", "duty cycle to cause per GPU (NVML's utilisation: the share of time a kernel runs), percent; a comma list gives one per GPU")
	fs.StringVar(&o.SM, "sm", "", "SM activity to cause per GPU (GPM: how much of the SMs the kernels use), percent, e.g. 0.02 for a loop of tiny kernels; default: --util")
	fs.StringVar(&o.Tensor, "tensor", "", "tensor-core activity to cause per GPU (GPM), percent; default 0")
	fs.StringVar(&o.DRAM, "dram", "", "DRAM bandwidth to use per GPU (GPM), percent of the peak; default half of --util")
	fs.DurationVar(&o.For, "for", 0, "how long to run (0: until SIGTERM)")
	fs.IntVar(&o.Devices, "devices", 0, "use only the first N visible GPUs (0: all)")
	fs.StringVar(&o.Name, "name", "", "process name to register (default: this process's name)")
}

func newBurnCommand(g *globalOptions) *cobra.Command {
	o := &burnOptions{}
	cmd := &cobra.Command{
		Use:   "burn",
		Short: "Hold GPU memory and load like a CUDA program would",
		Long: `Stands in for a CUDA program: picks its GPUs from CUDA_VISIBLE_DEVICES as CUDA
does (ordinals in PCI bus order, or GPU UUIDs; unset means all GPUs), then
registers its real PID, memory and load with the simulated node until --for
elapses or it is terminated.`,
		Example: "  gpuprof simgpu burn --mem 6GiB --util 40 --for 30s\n  gpuprof simgpu burn --mem 10GiB,4GiB --util 80,20 --for 1m\n" +
			"  gpuprof simgpu burn --mem 2GiB --util 16 --sm 0.02 --tensor 0 --for 5m   # a loop of tiny kernels: busy by the duty cycle, idle SMs",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			bo := sim.BurnOptions{Dir: cfg.Sim.Dir, For: o.For, Devices: o.Devices, Name: o.Name, Procfs: cfg.Proc.Procfs}
			load := sim.LoadFlags{Mem: o.Mem, Util: o.Util, SM: o.SM, Tensor: o.Tensor, DRAM: o.DRAM}
			if err := load.Apply(&bo); err != nil {
				return usageError{err}
			}
			bo.Visible, bo.VisibleSet = os.LookupEnv("CUDA_VISIBLE_DEVICES")
			return sim.Burn(cmd.Context(), bo)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func newXIDCommand(g *globalOptions) *cobra.Command {
	var gpuIdx int
	var code uint64
	cmd := &cobra.Command{
		Use:   "xid",
		Short: "Raise a simulated XID error on a GPU",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			devs, err := sim.LoadNode(cfg.Sim.Dir)
			if err != nil {
				return err
			}
			if gpuIdx < 0 || gpuIdx >= len(devs) {
				return usagef("--gpu %d: the node has GPUs 0..%d", gpuIdx, len(devs)-1)
			}
			return sim.RecordXID(cfg.Sim.Dir, devs[gpuIdx].UUID, code, time.Now())
		},
	}
	cmd.Flags().IntVar(&gpuIdx, "gpu", 0, "GPU index (device order)")
	cmd.Flags().Uint64Var(&code, "code", 79, "XID code (79: GPU fallen off the bus)")
	return cmd
}

func newSimInitCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the simulated node's state directory and print its GPUs",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.Load()
			if err != nil {
				return err
			}
			devs, err := sim.Init(cfg.Sim.Dir, hookcmd.SimSpec(cfg))
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, d := range devs {
				printf(w, "%d  %s  %s  minor=%d  pci=%s  memory=%dGiB\n", d.Index, d.UUID, d.Name, d.Minor, d.PCIBusID, d.MemoryTotal>>30)
			}
			return nil
		},
	}
}
