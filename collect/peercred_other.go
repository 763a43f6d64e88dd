//go:build !linux

package collect

import (
	"errors"
	"fmt"
	"net"
)

// errNoPeerCred: this system has no SO_PEERCRED (Linux only); the local
// query socket refuses every connection rather than guess who called.
var errNoPeerCred = errors.New("peer credentials are supported on Linux only")

func peerIdentity(net.Conn) (Identity, int, error) {
	return Identity{}, 0, fmt.Errorf("%w: %w", ErrAuth, errNoPeerCred)
}
