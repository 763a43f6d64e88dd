package capacity

import (
	"fmt"

	"github.com/gpuprof/gpuprof/internal/present"
)

// NoPurchaseWords is a purchase row's cell where the replay needs no GPU
// more of a model: "none needed", or, while jobs were left out of the
// replay (they ask for nodes the cluster does not have), that the jobs
// replayed need none and the left-out ones need other nodes, which no
// purchase of this model's GPUs on today's nodes gives them.
func (s SimJobs) NoPurchaseWords() string {
	if s.LeftOut == 0 {
		return "none needed"
	}
	return fmt.Sprintf("none for the jobs replayed; the %s left out need nodes the cluster lacks (see Left out)",
		present.Count(s.LeftOut, "job", "jobs"))
}
