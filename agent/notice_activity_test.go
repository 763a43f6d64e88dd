package agent

import (
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/gpu/sim"
	"github.com/gpuprof/gpuprof/profile"
)

// TestNoticeIdleBySMActivity: the agent's notice rules read the readings
// it attributes to the job, GPM activity included: a job whose tiny
// kernels keep the duty cycle at 16 % while using 0.02 % of the SMs is
// idle by its SMs and is told so, with both numbers; a job whose kernels
// fill the SMs is not.
func TestNoticeIdleBySMActivity(t *testing.T) {
	f := newNoticeFixture(t, nil)
	f.clocked(nil, func(o *Options) { o.Notices = f.cfg })
	f.proc(4000, "40", "tiny", sim.Usage{UUID: f.devs[0].UUID, Mem: 512 << 20, Util: 16, SM: pct(0.02), Tensor: pct(0), DRAM: pct(0)})
	f.proc(4100, "41", "mm", sim.Usage{UUID: f.devs[1].UUID, Mem: 512 << 20, Util: 16, SM: pct(15), Tensor: pct(10), DRAM: pct(5)})
	f.startIn("40", "gpu", minorRef(0))
	f.startIn("41", "gpu", minorRef(1))
	f.tick(15)
	if n := f.deliver(); n != 1 {
		t.Fatalf("%d notices, want 1 (the tiny-kernel job's)", n)
	}
	rs := f.notices("40")
	if len(rs) != 1 || rs[0].Rule != profile.RuleIdleJob {
		t.Fatalf("job 40's notices = %+v, want idle_job", rs)
	}
	for _, want := range []string{"utilisation 16 %", "SM activity 0.02 %"} {
		if !strings.Contains(rs[0].Evidence, want) {
			t.Errorf("evidence %q lacks %q", rs[0].Evidence, want)
		}
	}
	if rs := f.notices("41"); len(rs) != 0 {
		t.Errorf("a job using its SMs was noticed: %+v", rs)
	}
}
