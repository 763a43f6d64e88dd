package nvml

import (
	"log/slog"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// symbols records which optional NVML functions the loaded library exports.
// Functions present in every driver gpuprof supports (Init, device handles,
// UUID, name, memory info v1, utilisation rates, power, running processes,
// driver version) are not listed: they are always called.
//
// GetTemperature is listed because NVML 13 deprecates it; its successor,
// GetTemperatureV, is not used: go-nvml binds it to a concrete C handle, so
// no fake nvml.Device can stand in for it in tests.
type symbols struct {
	MemoryV2    bool // nvmlDeviceGetMemoryInfo_v2 (R510+): used memory without the driver's reserve
	Energy      bool // nvmlDeviceGetTotalEnergyConsumption (Volta+)
	Temperature bool // nvmlDeviceGetTemperature, deprecated in NVML 13
	ProcessUtil bool // nvmlDeviceGetProcessUtilization
	Events      bool // event sets, for XID errors
	MIG         bool // MIG mode and instance handles (R450+)
	Accounting  bool // per-process accounting records
	CUDAVersion bool // nvmlSystemGetCudaDriverVersion
	// Architecture: nvmlDeviceGetArchitecture (R470+), which lets the GPM
	// policy table rule out older GPUs without asking the driver.
	Architecture bool
	GPM          bool // GPU Performance Monitoring (R520+): SM, tensor, DRAM activity
	GPMMIG       bool // nvmlGpmMigSampleGet: GPM per MIG instance
}

// lookupSymbols asks check for each optional feature; a feature counts as
// present only when the library exports every C symbol it needs.
func lookupSymbols(check func(string) bool) symbols {
	all := func(names ...string) bool {
		for _, n := range names {
			if !check(n) {
				return false
			}
		}
		return true
	}
	return symbols{
		MemoryV2:    all("nvmlDeviceGetMemoryInfo_v2"),
		Energy:      all("nvmlDeviceGetTotalEnergyConsumption"),
		Temperature: all("nvmlDeviceGetTemperature"),
		ProcessUtil: all("nvmlDeviceGetProcessUtilization"),
		Events:      all("nvmlEventSetCreate", "nvmlDeviceRegisterEvents", "nvmlEventSetWait", "nvmlEventSetFree"),
		MIG: all("nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetMigDeviceHandleByIndex",
			"nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId"),
		Accounting:   all("nvmlDeviceGetAccountingMode", "nvmlDeviceGetAccountingPids", "nvmlDeviceGetAccountingStats"),
		CUDAVersion:  all("nvmlSystemGetCudaDriverVersion"),
		Architecture: all("nvmlDeviceGetArchitecture"),
		GPM: all("nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "nvmlGpmSampleFree", "nvmlGpmSampleGet",
			"nvmlGpmMetricsGet"),
		GPMMIG: all("nvmlGpmMigSampleGet"),
	}
}

// extensionChecker asks the library itself. It must run after a successful
// Init: go-nvml can only look symbols up in a loaded library.
func extensionChecker(lib nvml.Interface, logger *slog.Logger) func(string) bool {
	ext := lib.Extensions()
	if ext == nil {
		// A fake without extensions: calling optional functions could hit
		// unset mock functions, so behave like the oldest driver.
		logger.Debug("NVML library has no extensions; optional functions disabled")
		return func(string) bool { return false }
	}
	return func(name string) bool { return ext.LookupSymbol(name) == nil }
}
