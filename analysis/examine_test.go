package analysis

import (
	"reflect"
	"testing"
)

// TestExamine: Examine's findings are each rule's own answer, so that show
// and the TUI's detail, which render them, say what the rules say.
func TestExamine(t *testing.T) {
	c := DefaultConfig()
	idle := healthy()
	idle.Name, idle.Util, idle.UtilJitter, idle.Jobs = "idle", 1, 1, 20
	jobs := Plant(PlantSpec{Days: 3, Groups: []PlantGroup{healthy(), idle}}, 3)
	classes := map[Class]bool{}
	for _, j := range jobs {
		got := Examine(j, c, nil)
		class, why := Classify(j, c)
		if !reflect.DeepEqual(got.Metrics, Measure(j, c)) || got.Class != class || !reflect.DeepEqual(got.Why, why) ||
			!reflect.DeepEqual(got.Bottlenecks, Diagnose(j, c)) || !reflect.DeepEqual(got.Hints, Hints(j, c, nil)) {
			t.Errorf("job %s: Examine differs from Measure, Classify, Diagnose and Hints", j.ID)
		}
		classes[got.Class] = true
	}
	if len(jobs) == 0 || len(classes) < 2 {
		t.Errorf("%d jobs in %d classes: want jobs of more than one class to compare", len(jobs), len(classes))
	}
}
