package gpu

// Limits beyond which a reading is physically absurd and therefore dropped
// (left invalid) rather than stored. They are generous on purpose: the point
// is to keep sentinels and garbage out of profiles, not to second-guess
// hardware.
const (
	maxPercent = 100
	maxTempC   = 150
	maxPowerMW = 5_000_000 // 5 kW: no single GPU board draws more
)

// Sanitize drops readings that cannot be true for dev: utilisation above
// 100 %, memory used above the card's total, temperatures and power beyond
// physical limits, activity outside 0–100 % (a performance counter that
// wrapped or skewed under a clock change). It reports how many readings it
// dropped so the caller can log them.
func Sanitize(s DeviceSample, memoryTotal uint64) (DeviceSample, int) {
	dropped := 0
	if s.Activity.Valid {
		a := &s.Activity.Value
		for _, v := range []*Opt[float64]{&a.SM, &a.SMOccupancy, &a.Tensor, &a.DRAM, &a.FP64, &a.FP32, &a.FP16} {
			// !(0 <= x <= 100) also drops NaN.
			if v.Valid && !(v.Value >= 0 && v.Value <= maxPercent) {
				*v = Opt[float64]{}
				dropped++
			}
		}
		if !a.Any() {
			s.Activity = Opt[Activity]{}
		}
	}
	if s.Util.Valid && s.Util.Value > maxPercent {
		s.Util = Opt[uint32]{}
		dropped++
	}
	if s.MemUtil.Valid && s.MemUtil.Value > maxPercent {
		s.MemUtil = Opt[uint32]{}
		dropped++
	}
	if s.MemoryUsed.Valid && memoryTotal > 0 && s.MemoryUsed.Value > memoryTotal {
		s.MemoryUsed = Opt[uint64]{}
		dropped++
	}
	if s.TempC.Valid && s.TempC.Value > maxTempC {
		s.TempC = Opt[uint32]{}
		dropped++
	}
	if s.PowerMW.Valid && s.PowerMW.Value > maxPowerMW {
		s.PowerMW = Opt[uint32]{}
		dropped++
	}
	return s, dropped
}

// SanitizeProcess is Sanitize for a per-process reading.
func SanitizeProcess(p ProcessSample, memoryTotal uint64) (ProcessSample, int) {
	dropped := 0
	if p.SMUtil.Valid && p.SMUtil.Value > maxPercent {
		p.SMUtil = Opt[uint32]{}
		dropped++
	}
	if p.MemoryUsed.Valid && memoryTotal > 0 && p.MemoryUsed.Value > memoryTotal {
		p.MemoryUsed = Opt[uint64]{}
		dropped++
	}
	return p, dropped
}
