package hookproto

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// Resolve maps the hook's GPU references to devices of this node: by UUID,
// else by device-file minor number, else by Slurm index in PCI bus order. It
// returns the devices, their Slurm indices, and a note per reference it
// could not resolve.
func Resolve(devices []gpu.Device, refs []GPURef) ([]gpu.Device, []int, []string) {
	uuids := gpu.ByUUID(devices)
	byPCI := slices.Clone(devices)
	sort.Slice(byPCI, func(i, j int) bool { return byPCI[i].PCIBusID < byPCI[j].PCIBusID })
	var devs []gpu.Device
	var idx []int
	var problems []string
	for _, r := range refs {
		var d gpu.Device
		var ok bool
		switch {
		case r.UUID != "":
			d, ok = uuids[r.UUID]
		case r.Minor >= 0:
			for _, c := range devices {
				if c.Minor == r.Minor {
					d, ok = c, true
					break
				}
			}
		case r.SlurmIndex >= 0 && r.SlurmIndex < len(byPCI):
			d, ok = byPCI[r.SlurmIndex], true
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("GPU (slurm index %d, minor %d, uuid %q) not found on this node", r.SlurmIndex, r.Minor, r.UUID))
			continue
		}
		if slices.ContainsFunc(devs, func(x gpu.Device) bool { return x.UUID == d.UUID }) {
			continue
		}
		devs = append(devs, d)
		idx = append(idx, r.SlurmIndex)
	}
	return devs, idx, problems
}

// NewProfile builds the empty profile of a job starting on devs.
func NewProfile(js JobStart, devs []gpu.Device, slurmIdx []int, interval time.Duration, points int, v gpu.Versions, source string) profile.Job {
	j := profile.Job{
		Key:            profile.Key{Cluster: js.Cluster, JobID: js.JobID, Node: js.Node},
		User:           js.User,
		UID:            js.UID,
		GID:            js.GID,
		Account:        js.Account,
		Partition:      js.Partition,
		Comment:        js.Comment,
		Start:          js.Start,
		Status:         profile.StatusRunning,
		Source:         source,
		SampleInterval: interval,
		Driver:         v.Driver,
		CUDADriver:     v.CUDADriver,
	}
	for i, d := range devs {
		j.GPUs = append(j.GPUs, profile.NewGPU(d, slurmIdx[i], js.Start, interval, points))
	}
	return j
}
