package capacity

import (
	"fmt"
	"strings"

	"github.com/gpuprof/gpuprof/internal/present"
)

// NoPurchaseWords is a purchase row's cell where the replay needs no GPU
// more of a model: "none needed", or, while jobs were left out of the
// replay, that the jobs replayed need none and what the left-out ones
// need that the cluster lacks ("a node of 8 GPUs of type a100 in
// partition gpu"), which no purchase of this model's GPUs on today's
// nodes gives them: the largest reasons first, at most
// noPurchaseReasons of them.
func (s SimJobs) NoPurchaseWords() string {
	if s.LeftOut == 0 {
		return "none needed"
	}
	var needs []string
	for i, r := range s.LeftOutReasons {
		if i == noPurchaseReasons {
			n := len(s.LeftOutReasons) - i
			needs = append(needs, fmt.Sprintf("and %d more %s", n, present.Plural(n, "reason", "reasons")))
			break
		}
		if r.Need != "" {
			needs = append(needs, fmt.Sprintf("%s (%s)", r.Need, present.Count(r.Jobs, "job", "jobs")))
		}
	}
	if len(needs) == 0 {
		return fmt.Sprintf("none for the jobs replayed; the %s left out need nodes the cluster lacks (see Left out)",
			present.Count(s.LeftOut, "job", "jobs"))
	}
	return fmt.Sprintf("none for the jobs replayed; the %s left out need %s (see Left out)",
		present.Count(s.LeftOut, "job", "jobs"), strings.Join(needs, "; "))
}

// noPurchaseReasons is how many left-out reasons a purchase row names.
const noPurchaseReasons = 3
