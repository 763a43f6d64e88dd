package collect

import (
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// peerIdentity asks the kernel who is at the other end of a unix-socket
// connection (SO_PEERCRED: the credentials the peer had when it called
// connect) and returns them with the peer's pid. Nothing the peer sends
// can change the answer.
func peerIdentity(c net.Conn) (Identity, int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Identity{}, 0, fmt.Errorf("%w: a %T is not a unix-socket connection: no peer credentials", ErrAuth, c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Identity{}, 0, fmt.Errorf("%w: peer credentials: %v", ErrAuth, err)
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Identity{}, 0, fmt.Errorf("%w: peer credentials: %v", ErrAuth, err)
	}
	if credErr != nil {
		return Identity{}, 0, fmt.Errorf("%w: SO_PEERCRED: %v", ErrAuth, credErr)
	}
	return Identity{UID: int(cred.Uid), GID: int(cred.Gid), Host: LocalHost, Time: time.Now()}, int(cred.Pid), nil
}
