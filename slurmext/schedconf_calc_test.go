package slurmext

import (
	"strings"
	"testing"
	"time"
)

// TestSchedConfPriorityCalcPeriod: PriorityCalcPeriod is minutes as a bare
// number (slurm.conf(5)) or a Slurm time, and 5 minutes when not given.
func TestSchedConfPriorityCalcPeriod(t *testing.T) {
	for conf, want := range map[string]time.Duration{
		"PriorityType=priority/multifactor\n":                            5 * time.Minute,
		"PriorityType=priority/multifactor\nPriorityCalcPeriod=1\n":      time.Minute,
		"PriorityType=priority/multifactor\npriorityCalcPeriod=00:02:00": 2 * time.Minute,
	} {
		got, err := ReadSchedConf(strings.NewReader(conf))
		if err != nil {
			t.Fatalf("%q: %v", conf, err)
		}
		if got.PriorityCalcPeriod != want {
			t.Errorf("%q: PriorityCalcPeriod %v, want %v", conf, got.PriorityCalcPeriod, want)
		}
	}
}
