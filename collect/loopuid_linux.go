package collect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// loopbackUID asks the kernel which uid owns the client's end of a TCP
// connection made on this host (NETLINK_SOCK_DIAG, one exact lookup of
// the socket whose local address is remote and whose peer is local), as
// `ss -e` shows it: on the collector's own host that tells its users
// apart before any credential is decoded. Nothing the client sends
// changes the answer; a socket the kernel no longer knows (the client
// closed it) is an error.
func loopbackUID(local, remote *net.TCPAddr) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200_000})
	family := byte(unix.AF_INET6)
	if remote.IP.To4() != nil && local.IP.To4() != nil {
		family = unix.AF_INET
	}
	put := func(b []byte, ip net.IP) {
		if family == unix.AF_INET {
			copy(b, ip.To4())
		} else {
			copy(b, ip.To16())
		}
	}
	// struct nlmsghdr (16) + struct inet_diag_req_v2 (56).
	req := make([]byte, 16+56)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence
	req[16], req[17] = family, unix.IPPROTO_TCP
	ne.PutUint32(req[20:], 0xffffffff) // every state
	// struct inet_diag_sockid, the client's socket: its source is the
	// connection's remote end.
	binary.BigEndian.PutUint16(req[24:], uint16(remote.Port))
	binary.BigEndian.PutUint16(req[26:], uint16(local.Port))
	put(req[28:44], remote.IP)
	put(req[44:60], local.IP)
	ne.PutUint32(req[64:], 0xffffffff) // INET_DIAG_NOCOOKIE
	ne.PutUint32(req[68:], 0xffffffff)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	buf := make([]byte, 1024)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	buf = buf[:n]
	if len(buf) < 16 {
		return 0, errors.New("sock_diag: short answer")
	}
	switch ne.Uint16(buf[4:]) {
	case unix.NLMSG_ERROR:
		if len(buf) >= 20 {
			if e := int32(ne.Uint32(buf[16:])); e < 0 {
				return 0, fmt.Errorf("sock_diag: %w", syscall.Errno(-e))
			}
		}
		return 0, errors.New("sock_diag: error answer")
	case unix.SOCK_DIAG_BY_FAMILY:
		// struct inet_diag_msg: idiag_uid at 64.
		if len(buf) < 16+72 {
			return 0, errors.New("sock_diag: short answer")
		}
		return int(ne.Uint32(buf[16+64:])), nil
	}
	return 0, fmt.Errorf("sock_diag: answer of type %d", ne.Uint16(buf[4:]))
}
