package gpu

// ByUUID indexes every device and MIG instance by UUID; a MIG instance is
// a device of its own memory on its parent's minor and bus.
func ByUUID(devices []Device) map[string]Device {
	m := map[string]Device{}
	for _, d := range devices {
		m[d.UUID] = d
		for _, g := range d.MIG {
			m[g.UUID] = Device{Index: d.Index, UUID: g.UUID, Name: d.Name + " MIG " + g.Profile,
				Minor: d.Minor, PCIBusID: d.PCIBusID, MemoryTotal: g.MemoryTotal}
		}
	}
	return m
}
