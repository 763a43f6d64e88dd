package capacity

import (
	"errors"

	"github.com/gpuprof/gpuprof/queuesim"
)

// CannotReplay reports whether err says that the queue replay could not be
// built from its input (a node, partition or job the simulator cannot take,
// queuesim.ErrBadInput): the findings stand without a replayed effect,
// where another error stops the answer.
func CannotReplay(err error) bool { return errors.Is(err, queuesim.ErrBadInput) }
