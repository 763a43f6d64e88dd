package queuesim

import (
	"reflect"
	"testing"
	"time"
)

// TestScaleEach: one factor for all gives Scale's jobs; two groups of
// jobs (factor 1.5 and 1) are each scaled among themselves: 1.5 times
// the first group's jobs, the second's unchanged, the copies of the
// first group's jobs only, arriving in its hours.
func TestScaleEach(t *testing.T) {
	span := 24 * time.Hour
	var jobs []Job
	for i := range 200 {
		typ, at := "a", time.Duration(i%100)*6*time.Minute // a: hours 0–9
		if i%2 == 1 {
			typ, at = "b", 12*time.Hour+time.Duration(i%100)*6*time.Minute // b: hours 12–21
		}
		jobs = append(jobs, Job{Arrival: at, Run: time.Hour, GPUs: 1, Type: typ, Order: int64(i)})
	}
	same := make([]float64, len(jobs))
	for i := range same {
		same[i] = 1.3
	}
	if !reflect.DeepEqual(ScaleEach(jobs, same, span, 0, 7), Scale(jobs, 1.3, span, 0, 7)) {
		t.Error("one factor for all: not Scale's jobs")
	}
	fs := make([]float64, len(jobs))
	for i, j := range jobs {
		fs[i] = map[string]float64{"a": 1.5, "b": 1}[j.Type]
	}
	out := ScaleEach(jobs, fs, span, 0, 7)
	n := map[string]int{}
	for _, j := range out {
		n[j.Type]++
		if j.Type == "a" && j.Arrival >= 10*time.Hour {
			t.Errorf("a copy of an a job arrives at %v, outside the a jobs' hours", j.Arrival)
		}
	}
	if n["a"] != 150 || n["b"] != 100 {
		t.Errorf("jobs per group %v, want a 150, b 100", n)
	}
}
