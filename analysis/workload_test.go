package analysis

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// march is the window of March 2025 in UTC: 31 days, 744 hours.
var march = Window{
	From: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
	To:   time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC),
}

// ran returns a completed job of user on the given GPUs over [start, end).
func ran(user string, start, end time.Time, gpus ...GPU) Job {
	j := job(end.Sub(start), gpus...)
	j.User, j.Submit, j.Start, j.End = user, start, start, end
	return j
}

func utc(mo time.Month, d, h, m int) time.Time { return time.Date(2025, mo, d, h, m, 0, 0, time.UTC) }

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !approx(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func summariseMarch(t *testing.T, jobs ...Job) Workload {
	t.Helper()
	w := SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: march}, DefaultConfig())
	if _, err := json.Marshal(w); err != nil {
		t.Fatalf("marshal workload: %v", err) // NaN or ±Inf slipped through
	}
	return w
}

func TestWorkloadMonthBoundary(t *testing.T) {
	// a: 2 GPUs, 28 Feb 22:00 – 1 Mar 04:00, 4 of its 6 hours inside.
	a := ran("alice", utc(2, 28, 22, 0), utc(3, 1, 4, 0), busy(50, 40), busy(50, 40))
	// b: 1 GPU, 31 Mar 20:00 – 1 Apr 02:00, 4 of 6 hours inside.
	b := ran("bob", utc(3, 31, 20, 0), utc(4, 1, 2, 0), busy(100, 40))
	// c: all in February, d: all in April: not counted.
	c := ran("carol", utc(2, 1, 0, 0), utc(2, 2, 0, 0), busy(100, 40))
	d := ran("dave", utc(4, 1, 0, 0), utc(4, 1, 1, 0), busy(100, 40))
	w := summariseMarch(t, a, b, c, d)

	h := w.Headline
	if h.Jobs != 2 || h.GPUJobs != 2 || h.Users != 2 || h.Accounts != 1 {
		t.Errorf("counts = %+v", h)
	}
	near(t, "allocated", h.AllocatedGPUHours, 2*4+4)
	near(t, "used", h.UsedGPUHours, 2*4*0.5+4)
	near(t, "measured", h.MeasuredGPUHours, 12)
	near(t, "utilisation", h.Utilisation, 8.0/12)
	near(t, "coverage", h.Coverage, 1)
	if len(w.Daily) != 31 || w.Daily[0].Date != "2025-03-01" || w.Daily[30].Date != "2025-03-31" {
		t.Fatalf("daily = %+v", w.Daily)
	}
	near(t, "day 1", w.Daily[0].Allocated, 8)
	near(t, "day 1 used", w.Daily[0].Used, 4)
	near(t, "day 31", w.Daily[30].Allocated, 4)
	if w.Daily[0].JobsStarted != 0 || w.Daily[30].JobsStarted != 1 || w.Daily[30].JobsSubmitted != 1 {
		t.Errorf("started/submitted: day 1 %+v, day 31 %+v", w.Daily[0], w.Daily[30])
	}
	for i := 1; i < 30; i++ {
		if w.Daily[i].Allocated != 0 {
			t.Errorf("day %d allocated %v, want 0", i+1, w.Daily[i].Allocated)
		}
	}
	if len(w.Models) != 1 || w.Models[0].JobGPUs != 3 || !approx(w.Models[0].GPUHours, 12) ||
		!approx(w.Models[0].UtilMean, 100*8.0/12) {
		t.Errorf("models = %+v", w.Models)
	}
	// 1 Mar 2025 is a Saturday: weekday 5; 31 Mar a Monday.
	near(t, "Sat 00h", w.HourOfWeek[5][0], 2.0/5) // five Saturdays in March
	near(t, "Mon 23h", w.HourOfWeek[0][23], 1.0/5)
	if !w.DataEnd.Equal(utc(4, 1, 0, 0)) {
		t.Errorf("DataEnd = %v, want the window's end", w.DataEnd)
	}
}

func TestWorkloadDSTBerlin(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	oct := Window{From: time.Date(2025, 10, 1, 0, 0, 0, 0, berlin), To: time.Date(2025, 11, 1, 0, 0, 0, 0, berlin)}
	// Summer time ends on Sunday 26 Oct 2025 at 03:00 CEST (01:00 UTC):
	// that day has 25 hours and 02:00–03:00 happens twice. The job runs
	// Sat 25 Oct 22:00 CEST – Mon 27 Oct 02:00 CET: 29 real hours.
	s := time.Date(2025, 10, 25, 22, 0, 0, 0, berlin)
	e := time.Date(2025, 10, 27, 2, 0, 0, 0, berlin)
	if e.Sub(s) != 29*time.Hour {
		t.Fatalf("setup: %v", e.Sub(s))
	}
	in := Input{
		Jobs:  []Job{ran("alice", s, e, busy(100, 40))},
		Nodes: []Node{{Name: "n1", GPUs: 4}, {Name: "bad", GPUs: -3}},
	}
	w := SummariseWorkload(in, WorkloadParams{Window: oct}, DefaultConfig())
	if len(w.Daily) != 31 || w.Daily[25].Date != "2025-10-26" {
		t.Fatalf("daily: %d days, day 26 %q", len(w.Daily), w.Daily[25].Date)
	}
	near(t, "25 Oct", w.Daily[24].Allocated, 2)
	near(t, "26 Oct", w.Daily[25].Allocated, 25)
	near(t, "27 Oct", w.Daily[26].Allocated, 2)
	near(t, "allocated", w.Headline.AllocatedGPUHours, 29)
	// October 2025 in Berlin has 31 × 24 + 1 hours.
	near(t, "capacity", w.Headline.CapacityGPUHours, 4*745)
	near(t, "occupancy", w.Headline.Occupancy, 29.0/(4*745))
	// Sunday 02:00 happens on 5, 12, 19 Oct and twice on 26 Oct; the job
	// covered both of the latter.
	near(t, "Sun 02h", w.HourOfWeek[6][2], 2.0/5)
	near(t, "Sun 10h", w.HourOfWeek[6][10], 1.0/4)
	near(t, "Sat 22h", w.HourOfWeek[5][22], 1.0/4)
	near(t, "Mon 01h", w.HourOfWeek[0][1], 1.0/4)
	near(t, "Mon 02h", w.HourOfWeek[0][2], 0)

	// Spring: Sunday 30 March 2025 has no 02:00. A job holding 3 GPUs the
	// whole month averages 3 in every hour that occurred.
	mar := Window{From: time.Date(2025, 3, 1, 0, 0, 0, 0, berlin), To: time.Date(2025, 4, 1, 0, 0, 0, 0, berlin)}
	all := ran("alice", mar.From.Add(-time.Hour), mar.To.Add(time.Hour), busy(10, 4), busy(10, 4), busy(10, 4))
	w = SummariseWorkload(Input{Jobs: []Job{all}}, WorkloadParams{Window: mar}, DefaultConfig())
	near(t, "March allocated", w.Headline.AllocatedGPUHours, 3*743)
	near(t, "30 Mar", w.Daily[29].Allocated, 3*23)
	for d := range 7 {
		for hr := range 24 {
			near(t, "March hour of week "+strconv.Itoa(d)+"/"+strconv.Itoa(hr), w.HourOfWeek[d][hr], 3)
		}
	}
}

func TestWorkloadIdleAndVRAM(t *testing.T) {
	// 10 h on one GPU at 80 % (idle 10 % of the time) and one never used.
	g := busy(80, 40)
	g.IdleFraction = 0.1
	a := ran("alice", utc(3, 2, 0, 0), utc(3, 2, 10, 0), g, idleGPU())
	// 2 h on three GPUs: peaks 40/80 and 20/80, and a preallocated one
	// whose peak says nothing; plus a GPU with a peak above its card and
	// one without a card size, both left out of the VRAM figures.
	pre := busy(50, 76)
	pre.Preallocated = true
	over := busy(50, 90)
	nocard := busy(50, 10)
	nocard.MemoryTotal = 0
	b := ran("bob", utc(3, 3, 0, 0), utc(3, 3, 2, 0), busy(50, 40), busy(50, 20), pre, over, nocard)
	w := summariseMarch(t, a, b)
	h := w.Headline

	near(t, "allocated", h.AllocatedGPUHours, 20+10)
	near(t, "measured", h.MeasuredGPUHours, 30)
	near(t, "used", h.UsedGPUHours, 8+5*0.5*2)
	near(t, "idle", h.IdleGPUHours, 0.1*10+10) // busy(50) GPUs have idle fraction 0
	near(t, "utilisation", h.Utilisation, 13.0/30)
	// Fractions: a 0.5 and 0 (the idle GPU's peak is 0), b 0.5 and 0.25.
	wantVRAM := Dist{N: 4, Mean: 1.25 / 4, P50: 0.25, P95: 0.5, Max: 0.5}
	if h.VRAMPeakFrac != wantVRAM {
		t.Errorf("VRAM = %+v, want %+v", h.VRAMPeakFrac, wantVRAM)
	}
	near(t, "headroom", h.VRAMHeadroom, 0.5)
	m := w.Models[0]
	if len(w.Models) != 1 || m.Preallocated != 1 || m.JobGPUs != 7 || m.VRAMHist != [10]int{1, 0, 1, 0, 0, 2} ||
		m.MemoryTotal != card {
		t.Errorf("model = %+v", m)
	}
	wantUtil := UtilHistogram{JobGPUs: [10]int{1, 0, 0, 0, 0, 5, 0, 0, 1}, GPUHours: [10]float64{10, 0, 0, 0, 0, 10, 0, 0, 10}}
	if w.Util != wantUtil {
		t.Errorf("util = %+v, want %+v", w.Util, wantUtil)
	}
	if u := w.Users[0]; u.Name != "alice" || u.TopClass != ClassLongTraining || !approx(u.IdleGPUHours, 11) || !approx(u.Utilisation, 0.4) {
		t.Errorf("alice = %+v", u)
	}
}

func TestWorkloadHourOfWeekAndPending(t *testing.T) {
	// Two weeks from Monday 3 March.
	win := Window{From: utc(3, 3, 0, 0), To: utc(3, 17, 0, 0)}
	// 2 GPUs Monday 10:00–11:30 of the first week.
	a := ran("alice", utc(3, 3, 10, 0), utc(3, 3, 11, 30), busy(90, 40), busy(90, 40))
	// 4 GPUs requested Monday 10 March 09:00, started 09:30, ran 30 m.
	b := ran("bob", utc(3, 10, 9, 30), utc(3, 10, 10, 0), busy(90, 40), busy(90, 40), busy(90, 40), busy(90, 40))
	b.Submit = utc(3, 10, 9, 0)
	w := SummariseWorkload(Input{Jobs: []Job{a, b}}, WorkloadParams{Window: win}, DefaultConfig())
	near(t, "Mon 10h", w.HourOfWeek[0][10], 2.0/2)
	near(t, "Mon 11h", w.HourOfWeek[0][11], 1.0/2)
	near(t, "Mon 09h", w.HourOfWeek[0][9], 4*0.5/2)
	near(t, "pending Mon 09h", w.PendingHourOfWeek[0][9], 4*0.5/2)
	near(t, "pending Mon 10h", w.PendingHourOfWeek[0][10], 0)
	near(t, "pending 10 Mar", w.Daily[7].Pending, 2)
	near(t, "pending 3 Mar", w.Daily[0].Pending, 0)
	if len(w.Daily) != 14 {
		t.Errorf("%d days, want 14", len(w.Daily))
	}
	// Cells times their occurrences add up to the GPU-hours.
	sum := 0.0
	for d := range 7 {
		for hr := range 24 {
			sum += w.HourOfWeek[d][hr] * 2
		}
	}
	near(t, "hour-of-week total", sum, w.Headline.AllocatedGPUHours)
}

func TestWorkloadTopNAndLost(t *testing.T) {
	mk := func(user, account string, state slurmext.JobState, hours int, wait time.Duration, gpus ...GPU) Job {
		j := ran(user, utc(3, 5, 0, 0), utc(3, 5, hours, 0), gpus...)
		j.Account, j.State, j.Submit = account, state, j.Start.Add(-wait)
		return j
	}
	jobs := []Job{
		mk("bob", "physics", "COMPLETED", 10, time.Minute, busy(90, 40)),
		mk("alice", "physics", "TIMEOUT", 5, 3*time.Minute, busy(90, 40)),
		mk("alice", "physics", "COMPLETED", 5, 5*time.Minute, busy(90, 40)),
		mk("carol", "bio", "FAILED", 1, 0, busy(90, 40), busy(90, 40)),
		mk("carol", "bio", "FAILED", 1, 10*time.Minute, busy(90, 40)),
		mk("dave", "bio", "CANCELLED", 1, 20*time.Minute, busy(90, 40)),
		mk("erin", "chem", "COMPLETED", 1, 30*time.Minute), // CPU job
	}
	w := SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: march, TopN: 2}, DefaultConfig())
	total := 10.0 + 5 + 5 + 2 + 1 + 1
	near(t, "allocated", w.Headline.AllocatedGPUHours, total)
	if w.Headline.Users != 5 || w.Headline.Accounts != 3 || w.Headline.Jobs != 7 || w.Headline.GPUJobs != 6 {
		t.Errorf("headline = %+v", w.Headline)
	}
	// alice and bob tie at 10 h: by name.
	if len(w.Users) != 2 || w.Users[0].Name != "alice" || w.Users[1].Name != "bob" {
		t.Fatalf("users = %+v", w.Users)
	}
	al := w.Users[0]
	if al.Jobs != 2 || !approx(al.LostGPUHours, 5) || !approx(al.Share, 10/total) || al.WaitP50 != 180 {
		t.Errorf("alice = %+v", al)
	}
	// Others: carol 3 h, dave 1 h, erin 0 h; waits 0, 600, 1200, 1800 s.
	// dave's CANCELLED hour is not lost work.
	o := w.OtherUsers
	if o.Name != "" || o.Count != 3 || o.Jobs != 4 || !approx(o.GPUHours, 4) || !approx(o.LostGPUHours, 3) || o.WaitP50 != 600 {
		t.Errorf("others = %+v", o)
	}
	if len(w.Accounts) != 2 || w.Accounts[0].Name != "physics" || w.Accounts[1].Name != "bio" ||
		w.OtherAccounts.Count != 1 || w.OtherAccounts.Jobs != 1 || w.OtherAccounts.GPUHours != 0 {
		t.Errorf("accounts = %+v, others %+v", w.Accounts, w.OtherAccounts)
	}
	want := []LostShare{
		{State: "TIMEOUT", Jobs: 1, GPUHours: 5, Share: 5 / total},
		{State: "FAILED", Jobs: 2, GPUHours: 3, Share: 3 / total},
	}
	if c := w.Cancelled; c.State != "CANCELLED" || c.Jobs != 1 || !approx(c.GPUHours, 1) || !approx(c.Share, 1/total) {
		t.Errorf("cancelled = %+v, want 1 job, 1 GPU-hour, in its own row", c)
	}
	if !approx(w.LostGPUHours, 8) || !approx(w.TimeoutGPUHours, 5) {
		t.Errorf("lost %v (timeout %v), want 8 (5)", w.LostGPUHours, w.TimeoutGPUHours)
	}
	if len(w.Lost) != len(want) {
		t.Fatalf("lost = %+v", w.Lost)
	}
	for i := range want {
		if g := w.Lost[i]; g.State != want[i].State || g.Jobs != want[i].Jobs || !approx(g.GPUHours, want[i].GPUHours) || !approx(g.Share, want[i].Share) {
			t.Errorf("lost[%d] = %+v, want %+v", i, g, want[i])
		}
	}
	near(t, "lost total", w.LostGPUHours, 8)

	// TopN 0 means 10: everyone named, no others.
	w = SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: march}, DefaultConfig())
	if len(w.Users) != 5 || w.OtherUsers != (GroupUsage{}) {
		t.Errorf("default TopN: users %d, others %+v", len(w.Users), w.OtherUsers)
	}
}

func TestWorkloadRunningAndPending(t *testing.T) {
	run := ran("alice", utc(3, 10, 0, 0), time.Time{}, busy(50, 40), busy(50, 40))
	run.State, run.End, run.ExitKnown = "RUNNING", time.Time{}, false
	// The latest time in the data: a job that ended 12 March 00:00.
	done := ran("bob", utc(3, 11, 0, 0), utc(3, 12, 0, 0), busy(50, 40))
	// Queued since 11 March 00:00 for 3 GPUs.
	queued := Job{User: "carol", Account: "lab", State: "PENDING", Submit: utc(3, 11, 0, 0), ReqGPUs: 3}
	// Cancelled in the queue after 2 h.
	gaveUp := Job{User: "dave", Account: "lab", State: "CANCELLED", Submit: utc(3, 11, 0, 0),
		End: utc(3, 11, 2, 0), ReqGPUs: 1, ExitKnown: true}
	// A record without a start: counted, no hours.
	noStart := Job{User: "erin", Account: "lab", State: "COMPLETED", Submit: utc(3, 11, 0, 0),
		End: utc(3, 11, 5, 0), ReqGPUs: 2, ExitKnown: true}
	w := summariseMarch(t, run, done, queued, gaveUp, noStart)
	if !w.DataEnd.Equal(utc(3, 12, 0, 0)) {
		t.Errorf("DataEnd = %v", w.DataEnd)
	}
	h := w.Headline
	if h.Jobs != 5 || h.GPUJobs != 5 {
		t.Errorf("jobs = %d / %d, want 5 / 5", h.Jobs, h.GPUJobs)
	}
	near(t, "allocated", h.AllocatedGPUHours, 2*48+24)
	near(t, "pending", w.Daily[10].Pending, 3*24+2)
	near(t, "pending 12 Mar", w.Daily[11].Pending, 0)
	// The job cancelled in the queue never ran: nothing lost.
	if len(w.Lost) != 0 || w.LostGPUHours != 0 {
		t.Errorf("lost = %+v", w.Lost)
	}
}

func TestWorkloadPlantedMonth(t *testing.T) {
	spec := PlantSpec{
		Start: march.From, Days: 31,
		Groups: []PlantGroup{
			{Users: []string{"u1", "u2", "u3"}, Account: "a", Jobs: 400, GPUs: 4, UsedGPUs: 3, Duration: 6 * time.Hour,
				Jitter: 0.5, Util: 70, UtilJitter: 20, VRAMFrac: 0.5, VRAMJitter: 0.3},
			{Users: []string{"u4"}, Account: "b", Jobs: 300, Duration: 20 * time.Minute, Util: 10, VRAMFrac: 0.1,
				Preallocated: true, State: "FAILED"},
			{Users: []string{"u5", "u6"}, Account: "c", Jobs: 200, GPUs: 2, IdleAll: true, Duration: 2 * time.Hour},
			{Users: []string{"u7"}, Account: "d", Jobs: 100, GPUs: 8, NoGPUData: true, Duration: 30 * time.Hour, Jitter: 0.3},
		},
	}
	jobs := Plant(spec, 7)
	var inside, straddle []Job
	straddleHours := 0.0
	for _, j := range jobs {
		if j.End.After(march.To) {
			straddle = append(straddle, j)
			straddleHours += float64(j.ReqGPUs) * march.To.Sub(j.Start).Hours()
		} else {
			inside = append(inside, j)
		}
	}
	if len(straddle) == 0 {
		t.Fatal("setup: no job straddles the window's end")
	}
	f, err := Analyse(Input{Jobs: inside}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := WorkloadParams{Window: march}
	w := SummariseWorkload(Input{Jobs: inside}, p, DefaultConfig())
	if math.Abs(w.Headline.AllocatedGPUHours-f.Summary.GPUHours) > 1e-6 {
		t.Errorf("inside: allocated %v, summary %v", w.Headline.AllocatedGPUHours, f.Summary.GPUHours)
	}
	if w.Headline.Jobs != len(inside) || w.Headline.GPUJobs != f.Summary.GPUJobs {
		t.Errorf("jobs %d/%d, want %d/%d", w.Headline.Jobs, w.Headline.GPUJobs, len(inside), f.Summary.GPUJobs)
	}

	w = SummariseWorkload(Input{Jobs: jobs}, p, DefaultConfig())
	h := w.Headline
	total := f.Summary.GPUHours + straddleHours
	if math.Abs(h.AllocatedGPUHours-total) > 1e-6 {
		t.Errorf("all: allocated %v, want %v", h.AllocatedGPUHours, total)
	}
	sumDays, sumModels, sumUsers, sumCells := 0.0, 0.0, 0.0, 0.0
	for _, d := range w.Daily {
		sumDays += d.Allocated
	}
	for _, m := range w.Models {
		sumModels += m.GPUHours
	}
	for _, u := range w.Users {
		sumUsers += u.GPUHours
	}
	// March 2025 starts on a Saturday: Sat, Sun and Mon occur five times.
	for d := range 7 {
		n := 4.0
		if d >= 5 || d == 0 {
			n = 5
		}
		for hr := range 24 {
			sumCells += w.HourOfWeek[d][hr] * n
		}
	}
	for what, got := range map[string]float64{"days": sumDays, "models": sumModels, "users": sumUsers, "hour of week": sumCells} {
		if math.Abs(got-total) > 1e-6*total {
			t.Errorf("%s sum to %v, want %v", what, got, total)
		}
	}
	// u4's jobs all failed; u5 and u6 never touched a GPU.
	byName := map[string]GroupUsage{}
	for _, u := range w.Users {
		byName[u.Name] = u
	}
	if u := byName["u4"]; !approx(u.LostGPUHours, u.GPUHours) || u.GPUHours == 0 || u.TopClass != ClassShortDebug {
		t.Errorf("u4 = %+v", u)
	}
	if u := byName["u5"]; u.UsedGPUHours != 0 || !approx(u.IdleGPUHours, u.GPUHours) || u.TopClass != ClassIdleAllocation {
		t.Errorf("u5 = %+v", u)
	}
	// u7 has no readings: its long runs are long training by the scheduler
	// view alone.
	if u := byName["u7"]; u.TopClass != ClassLongTraining || u.UsedGPUHours != 0 {
		t.Errorf("u7 = %+v", u)
	}
	// The preallocated GPUs are counted apart; u7's GPUs have no model.
	models := map[string]ModelUsage{}
	for _, m := range w.Models {
		models[m.Model] = m
	}
	if m := models["NVIDIA H100 80GB HBM3"]; m.Preallocated != 300 || m.VRAMPeakFrac.N != 400*4+200*2 {
		t.Errorf("H100 = %+v", m)
	}
	if m := models[""]; m.JobGPUs != 800 {
		t.Errorf("unknown model = %+v", m)
	}
	if h.Coverage >= 1 || h.Coverage <= 0 || h.Utilisation <= 0 || h.Utilisation >= 1 {
		t.Errorf("coverage %v, utilisation %v", h.Coverage, h.Utilisation)
	}
	if len(w.Lost) != 1 || w.Lost[0].State != "FAILED" || w.Lost[0].Jobs != 300 {
		t.Errorf("lost = %+v", w.Lost)
	}
}

func TestWorkloadEmpty(t *testing.T) {
	w := summariseMarch(t)
	if len(w.Daily) != 31 || w.Daily[0].Date != "2025-03-01" || w.Headline != (Headline{}) ||
		w.Users == nil || w.Accounts == nil || w.Models == nil || w.Lost == nil {
		t.Errorf("empty month = %+v", w)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"daily", "users", "accounts", "models", "lost"} {
		if back[k] == nil {
			t.Errorf("%s is null: %s", k, b)
		}
	}

	j := ran("alice", utc(3, 5, 0, 0), utc(3, 5, 1, 0), busy(50, 40))
	for _, win := range []Window{
		{},
		{From: march.From, To: march.From},
		{From: march.To, To: march.From},
		{From: march.From, To: march.From.AddDate(20, 0, 0)},
		{From: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), To: march.To},
	} {
		w := SummariseWorkload(Input{Jobs: []Job{j}}, WorkloadParams{Window: win}, DefaultConfig())
		if w.Headline.Jobs != 0 || len(w.Daily) != 0 || w.Daily == nil || w.Window != win {
			t.Errorf("window %v: %+v", win, w)
		}
	}
}

func TestWorkloadGarbage(t *testing.T) {
	good := ran("alice", utc(3, 5, 0, 0), utc(3, 5, 2, 0), busy(50, 40))
	nan := busy(50, 40)
	nan.UtilMean, nan.IdleFraction = math.NaN(), math.Inf(1)
	neg := busy(-5, 40)
	hot := busy(150, 40)
	hot.IdleFraction = -1
	readings := ran("bob", utc(3, 5, 0, 0), utc(3, 5, 2, 0), nan, neg, hot)

	backwards := ran("carol", utc(3, 5, 2, 0), utc(3, 5, 0, 0), busy(50, 40))
	backwards.End = utc(3, 5, 0, 0)
	farFuture := ran("carol", utc(3, 5, 0, 0), time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC), busy(50, 40))
	tooLong := ran("carol", utc(3, 5, 0, 0), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), busy(50, 40))
	huge := ran("dave", utc(3, 5, 0, 0), utc(3, 5, 1, 0))
	huge.ReqGPUs = 1 << 40
	ancient := ran("erin", time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}, busy(50, 40))
	ancient.State, ancient.End = "RUNNING", time.Time{}
	weird := ran("\x1b[31m<script>", utc(3, 6, 0, 0), utc(3, 6, 1, 0), busy(50, 40))
	weird.State = "NOT_A_STATE"

	w := summariseMarch(t, good, readings, backwards, farFuture, tooLong, huge, ancient, weird)
	h := w.Headline
	// good 2 h + bob's three GPUs 2 h each (no usable readings) + weird 1 h.
	near(t, "allocated", h.AllocatedGPUHours, 2+6+1)
	near(t, "measured", h.MeasuredGPUHours, 3)
	near(t, "used", h.UsedGPUHours, 1.5)
	near(t, "idle", h.IdleGPUHours, 0)
	if w.AbsurdGPUCounts != 1 {
		t.Errorf("absurd GPU counts = %d", w.AbsurdGPUCounts)
	}
	if w.Notes.NaN == 0 || w.Notes.Inf == 0 || w.Notes.Negative == 0 || w.Notes.UtilOver100 == 0 || w.Notes.BadTimes < 3 {
		t.Errorf("notes = %+v", w.Notes)
	}
	if len(w.Lost) != 0 {
		t.Errorf("lost = %+v", w.Lost)
	}
	if w.Util.JobGPUs != [10]int{0, 0, 0, 0, 0, 2} || w.Util.GPUHours[5] != 3 {
		t.Errorf("util = %+v", w.Util)
	}
}

func TestWorkloadDeterministic(t *testing.T) {
	jobs := syntheticJobs(3000, 3)
	win := Window{From: t0, To: t0.AddDate(0, 0, 1)}
	a := SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: win}, DefaultConfig())
	b := SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: win}, DefaultConfig())
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("two runs differ")
	}
}

// BenchmarkSummariseWorkload summarises a month of synthetic jobs;
// GPUPROF_BENCH_JOBS sets how many (default 1,000,000).
func BenchmarkSummariseWorkload(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("GPUPROF_BENCH_JOBS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("GPUPROF_BENCH_JOBS=%q: want a positive integer", s)
		}
		n = v
	}
	jobs := syntheticJobs(n, 1)
	// The jobs are submitted one a second from t0; the window cuts the
	// run in the middle so that some jobs straddle each edge.
	win := Window{From: t0.Add(time.Duration(n/4) * time.Second), To: t0.Add(time.Duration(3*n/4) * time.Second)}
	c := DefaultConfig()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	var w Workload
	for b.Loop() {
		w = SummariseWorkload(Input{Jobs: jobs}, WorkloadParams{Window: win}, c)
	}
	runtime.ReadMemStats(&after)
	if w.Headline.Jobs == 0 || w.Headline.AllocatedGPUHours == 0 {
		b.Fatalf("empty summary: %+v", w.Headline)
	}
	per := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/job")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/per, "allocs/job")
}

func TestWorkloadModels(t *testing.T) {
	a100 := busy(30, 20)
	a100.Model, a100.MemoryTotal = "NVIDIA A100-SXM4-40GB", 40*gib // peak 0.5
	a := ran("alice", utc(3, 2, 0, 0), utc(3, 2, 4, 0), a100, a100)
	b := ran("bob", utc(3, 2, 0, 0), utc(3, 2, 1, 0), busy(90, 60)) // 0.75
	c := ran("carol", utc(3, 2, 0, 0), utc(3, 2, 1, 0))             // no record
	c.ReqGPUs = 3
	w := summariseMarch(t, a, b, c)
	if len(w.Models) != 3 {
		t.Fatalf("models = %+v", w.Models)
	}
	// By GPU-hours: A100 8, unknown 3, H100 1.
	if m := w.Models[0]; m.Model != a100.Model || m.JobGPUs != 2 || !approx(m.GPUHours, 8) || !approx(m.UtilMean, 30) ||
		m.MemoryTotal != 40*gib || m.VRAMPeakFrac != (Dist{N: 2, Mean: 0.5, P50: 0.5, P95: 0.5, Max: 0.5}) {
		t.Errorf("A100 = %+v", m)
	}
	if m := w.Models[1]; m.Model != "" || m.JobGPUs != 3 || !approx(m.GPUHours, 3) || m.UtilMean != 0 || m.VRAMPeakFrac.N != 0 {
		t.Errorf("unknown = %+v", m)
	}
	if m := w.Models[2]; m.Model != h100 || m.VRAMHist[7] != 1 || !approx(m.UtilMean, 90) {
		t.Errorf("H100 = %+v", m)
	}
	want := Dist{N: 3, Mean: 1.75 / 3, P50: 0.5, P95: 0.75, Max: 0.75}
	if w.Headline.VRAMPeakFrac != want {
		t.Errorf("VRAM = %+v, want %+v", w.Headline.VRAMPeakFrac, want)
	}
	near(t, "coverage", w.Headline.Coverage, 9.0/12)
}
