package analysis

import (
	"testing"
	"time"
)

const a100sxm = "NVIDIA A100-SXM4-80GB"

// onA100 is busy(u, peakGiB) on an A100.
func onA100(u float64, peakGiB uint64) GPU {
	g := busy(u, peakGiB)
	g.Model, g.Node = a100sxm, "gpu02"
	return g
}

// waited sets the job's submit time wait before its start.
func waited(j Job, wait time.Duration) Job {
	j.Submit = j.Start.Add(-wait)
	return j
}

func TestWorkloadModelOccupancyAndWait(t *testing.T) {
	nodes := []Node{
		{Name: "gpu01", GPUModel: h100, GPUs: 4},
		{Name: "gpu02", GPUModel: a100sxm, GPUs: 2},
		{Name: "broken", GPUModel: a100sxm, GPUs: -2}, // a parsing error: no cards
	}
	jobs := []Job{
		// a: 2 A100s for 10 h after a 10-minute wait.
		waited(ran("alice", utc(3, 2, 0, 0), utc(3, 2, 10, 0), onA100(50, 40), onA100(50, 40)), 10*time.Minute),
		// b: 1 H100 for 20 h after 30 minutes.
		waited(ran("bob", utc(3, 3, 0, 0), utc(3, 3, 20, 0), busy(50, 40)), 30*time.Minute),
		// c: an H100 and an A100 for 1 h after an hour: counts on both.
		waited(ran("carol", utc(3, 4, 0, 0), utc(3, 4, 1, 0), busy(50, 40), onA100(50, 40)), time.Hour),
		// A CPU job that waited 5 hours: in no GPU wait.
		waited(ran("dave", utc(3, 5, 0, 0), utc(3, 5, 1, 0)), 5*time.Hour),
	}
	w := SummariseWorkload(Input{Jobs: jobs, Nodes: nodes}, WorkloadParams{Window: march}, DefaultConfig())
	if len(w.Models) != 2 {
		t.Fatalf("models = %+v", w.Models)
	}
	// Both models have 21 GPU-hours: by name, A100 first.
	a, h := w.Models[0], w.Models[1]
	if a.Model != a100sxm || h.Model != h100 {
		t.Fatalf("models in order %q, %q", a.Model, h.Model)
	}
	// March has 744 hours: A100 2 × 744 = 1,488 card-hours, H100 2,976.
	if a.Cards != 2 || h.Cards != 4 {
		t.Errorf("cards: A100 %d, H100 %d; want 2 and 4", a.Cards, h.Cards)
	}
	near(t, "A100 GPU-hours", a.GPUHours, 2*10+1)
	near(t, "A100 capacity", a.CapacityGPUHours, 1488)
	near(t, "A100 occupancy", a.Occupancy, 21.0/1488)
	near(t, "H100 GPU-hours", h.GPUHours, 20+1)
	near(t, "H100 capacity", h.CapacityGPUHours, 2976)
	near(t, "H100 occupancy", h.Occupancy, 21.0/2976)
	// A100 waits: a (once, not once per GPU) 600 s and c 3,600 s; nearest
	// rank: p50 the first of two, p95 the second.
	if want := (Dist{N: 2, Mean: 2100, P50: 600, P95: 3600, Max: 3600}); a.Wait != want {
		t.Errorf("A100 wait = %+v, want %+v", a.Wait, want)
	}
	if want := (Dist{N: 2, Mean: 2700, P50: 1800, P95: 3600, Max: 3600}); h.Wait != want {
		t.Errorf("H100 wait = %+v, want %+v", h.Wait, want)
	}
	hl := w.Headline
	if hl.InventoryGPUs != 6 {
		t.Errorf("inventory GPUs = %d, want 6", hl.InventoryGPUs)
	}
	// GPU jobs only: 600, 1,800, 3,600 s; the CPU job's 5 h is left out.
	if want := (Dist{N: 3, Mean: 2000, P50: 1800, P95: 3600, Max: 3600}); hl.GPUWait != want {
		t.Errorf("GPU wait = %+v, want %+v", hl.GPUWait, want)
	}
	for i, d := range w.Daily {
		near(t, "capacity of "+d.Date, d.Capacity, 6*24)
		if i == 30 {
			break
		}
	}

	// Without an inventory: no cards, no capacity, occupancy unknown (0).
	w = SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: march}, DefaultConfig())
	for _, m := range w.Models {
		if m.Cards != 0 || m.CapacityGPUHours != 0 || m.Occupancy != 0 {
			t.Errorf("no inventory: %s = %+v", m.Model, m)
		}
	}
	if w.Headline.InventoryGPUs != 0 || w.Daily[0].Capacity != 0 {
		t.Errorf("no inventory: headline %+v, day 1 capacity %v", w.Headline, w.Daily[0].Capacity)
	}
}

func TestWorkloadCapacityPerDayDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	oct := Window{From: time.Date(2025, 10, 1, 0, 0, 0, 0, berlin), To: time.Date(2025, 11, 1, 0, 0, 0, 0, berlin)}
	in := Input{Nodes: []Node{{Name: "n1", GPUModel: h100, GPUs: 3}}}
	w := SummariseWorkload(in, WorkloadParams{Window: oct}, DefaultConfig())
	// 26 October 2025 has 25 hours in Berlin (summer time ends).
	near(t, "25 Oct", w.Daily[24].Capacity, 3*24)
	near(t, "26 Oct", w.Daily[25].Capacity, 3*25)
	sum := 0.0
	for _, d := range w.Daily {
		sum += d.Capacity
	}
	near(t, "days' capacity", sum, w.Headline.CapacityGPUHours)
}

func TestWorkloadEnergy(t *testing.T) {
	withEnergy := func(g GPU, kwh float64) GPU {
		g.EnergyJ, g.EnergyValid = kwh*3.6e6, true
		return g
	}
	acct := func(j Job, a string) Job { j.Account = a; return j }
	// x: 2 GPUs of 5 kWh each over 28 Feb 20:00 – 1 Mar 04:00, half of
	// the run inside March: 2 × 2.5 kWh over 2 × 4 GPU-hours.
	x := acct(ran("alice", utc(2, 28, 20, 0), utc(3, 1, 4, 0), withEnergy(busy(90, 40), 5), withEnergy(busy(90, 40), 5)), "physics")
	// v: 2 h, one GPU of 0.5 kWh and one without a reading.
	v := acct(ran("alice", utc(3, 2, 0, 0), utc(3, 2, 2, 0), withEnergy(busy(90, 40), 0.5), busy(90, 40)), "physics")
	// y: 4 h without any reading, and a GPU whose reading is negative
	// (impossible: left out).
	bad := busy(90, 40)
	bad.EnergyJ, bad.EnergyValid = -5, true
	y := acct(ran("bob", utc(3, 3, 0, 0), utc(3, 3, 4, 0), busy(90, 40), bad), "bio")
	w := summariseMarch(t, x, v, y)

	byName := map[string]GroupUsage{}
	for _, g := range w.Accounts {
		byName[g.Name] = g
	}
	ph, bio := byName["physics"], byName["bio"]
	near(t, "physics kWh", ph.Energy.KWh, 2*2.5+0.5)
	near(t, "physics measured GPU-hours", ph.Energy.MeasuredGPUHours, 2*4+2)
	near(t, "physics coverage", ph.Energy.Coverage, 10.0/12)
	if bio.Energy != (Energy{}) || bio.Energy.Known() {
		t.Errorf("bio energy = %+v, want unknown (nothing measured)", bio.Energy)
	}
	if !ph.Energy.Known() {
		t.Error("physics energy not known")
	}
	if len(w.Models) != 1 {
		t.Fatalf("models = %+v", w.Models)
	}
	m := w.Models[0]
	near(t, "H100 kWh", m.Energy.KWh, 5.5)
	near(t, "H100 measured", m.Energy.MeasuredGPUHours, 10)
	near(t, "H100 coverage", m.Energy.Coverage, 10.0/20)
	if w.Headline.Energy != m.Energy {
		t.Errorf("headline energy %+v, want the one model's %+v", w.Headline.Energy, m.Energy)
	}
	if u := w.Users[0]; u.Name != "alice" || !approx(u.Energy.KWh, 5.5) {
		t.Errorf("alice = %+v", u)
	}

	// A running job: energy so far, scaled to the part in the window.
	// Started 31 Mar 12:00, data until 2 Apr 00:00 (another job's end):
	// 36 h so far, 12 of them in March.
	run := ran("carol", utc(3, 31, 12, 0), time.Time{}, withEnergy(busy(90, 40), 3.6))
	run.State, run.End, run.ExitKnown = "RUNNING", time.Time{}, false
	later := ran("dave", utc(4, 1, 0, 0), utc(4, 2, 0, 0), busy(90, 40))
	w = SummariseWorkload(Input{Jobs: []Job{run, later}, Now: utc(4, 2, 0, 0)}, WorkloadParams{Window: march}, DefaultConfig())
	near(t, "running kWh", w.Headline.Energy.KWh, 3.6*12/36)
	near(t, "running measured", w.Headline.Energy.MeasuredGPUHours, 12)
}

func TestWorkloadVRAMGPUHours(t *testing.T) {
	pre := busy(50, 78)
	pre.Preallocated = true
	jobs := []Job{
		ran("alice", utc(3, 2, 0, 0), utc(3, 2, 10, 0), busy(50, 40)),                                // 0.5: bin 5, 10 h
		ran("bob", utc(3, 3, 0, 0), utc(3, 3, 3, 0), busy(50, 20), busy(50, 20)),                     // 0.25: bin 2, 2 × 3 h
		ran("carol", utc(3, 4, 0, 0), utc(3, 4, 5, 0), pre),                                          // preallocated, 5 h
		ran("dave", utc(3, 31, 22, 0), utc(4, 1, 2, 0), busy(50, 76)),                                // 0.95: bin 9, 2 h in March
		ran("erin", utc(3, 5, 0, 0), utc(3, 5, 7, 0), busy(50, 70), busy(50, 0)),                     // 0.875: bin 8 and 0: bin 0, 7 h each
		ran("frank", utc(3, 6, 0, 0), utc(3, 6, 1, 0), func() GPU { g := busy(50, 90); return g }()), // over the card: in no bin
	}
	w := summariseMarch(t, jobs...)
	m := w.Models[0]
	want := [10]float64{0: 7, 2: 6, 5: 10, 8: 7, 9: 2}
	for i := range want {
		near(t, "bin "+binName(i), m.VRAMHistGPUHours[i], want[i])
	}
	if m.VRAMHist != [10]int{0: 1, 2: 2, 5: 1, 8: 1, 9: 1} {
		t.Errorf("VRAM counts = %v", m.VRAMHist)
	}
	near(t, "preallocated GPU-hours", m.PreallocatedGPUHours, 5)
	if m.Preallocated != 1 {
		t.Errorf("preallocated = %d, want 1", m.Preallocated)
	}
}

func binName(i int) string { return string(rune('0'+i)) + "0 %" }

func TestWorkloadPendingPerDay(t *testing.T) {
	// 2 GPUs requested 4 Mar 22:00, started 5 Mar 01:00: 2 h of waiting
	// on the 4th, 1 h on the 5th.
	a := ran("alice", utc(3, 5, 1, 0), utc(3, 5, 3, 0), busy(90, 40), busy(90, 40))
	a.Submit = utc(3, 4, 22, 0)
	// Eligible (a dependency released it) 5 Mar 23:30, held 3 GPUs, still
	// queued when the data ends on 6 Mar 02:00.
	b := Job{User: "bob", Account: "lab", State: "PENDING", Submit: utc(3, 5, 12, 0), Eligible: utc(3, 5, 23, 30), ReqGPUs: 3}
	c := ran("carol", utc(3, 6, 0, 0), utc(3, 6, 2, 0), busy(90, 40))
	w := summariseMarch(t, a, b, c)
	near(t, "pending 4 Mar", w.Daily[3].Pending, 2*2)
	near(t, "pending 5 Mar", w.Daily[4].Pending, 2*1+3*0.5)
	near(t, "pending 6 Mar", w.Daily[5].Pending, 3*2)
	near(t, "pending 7 Mar", w.Daily[6].Pending, 0)
}
