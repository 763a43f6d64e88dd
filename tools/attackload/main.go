// Command attackload plays issue 25's hostile user against gpuprof's two
// query endpoints at once: it holds connections to the agent's local
// query socket and to `gpuprof serve` (half-sent requests, stalled
// uploads, idle keep-alive connections), dials again whenever one is
// closed, and floods both with bad requests (pipelined bad filters,
// requests without or with forged munge credentials, unauthenticated
// pushes). It prints what it sent and what came back.
//
// It is a load-test harness, not a product command: it lives under
// internal/ and is run by scripts/attack-load.sh, which measures what the
// other users see meanwhile. It must never be pointed at a production
// host.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// target is one endpoint under attack.
type target struct {
	name, network, addr string
	// srcs are the local addresses TCP connections are made from, in
	// turn (127.0.0.2-5: one host, several addresses); empty: the
	// kernel's choice.
	srcs           []net.IP
	next           atomic.Uint64
	dials, redials atomic.Int64
	sent           atomic.Int64
	mu             sync.Mutex
	answers        map[int]int64 // by status; 0: connection closed before an answer
}

func (t *target) answered(code int) {
	t.mu.Lock()
	t.answers[code]++
	t.mu.Unlock()
}

func (t *target) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	if len(t.srcs) > 0 {
		d.LocalAddr = &net.TCPAddr{IP: t.srcs[t.next.Add(1)%uint64(len(t.srcs))]}
	}
	c, err := d.DialContext(ctx, t.network, t.addr)
	if err == nil {
		t.dials.Add(1)
	}
	return c, err
}

// hold keeps one connection of kind open until ctx ends, dialing again
// each time the server closes it.
func (t *target) hold(ctx context.Context, kind string) {
	first := true
	for ctx.Err() == nil {
		c, err := t.dial(ctx)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !first {
			t.redials.Add(1)
		}
		first = false
		stop := context.AfterFunc(ctx, func() { c.Close() })
		switch kind {
		case "half": // a request line and one header, then nothing
			if _, err := io.WriteString(c, "GET /v1/jobs HTTP/1.1\r\nHost: x\r\n"); err == nil {
				t.sent.Add(1)
				_, _ = io.Copy(io.Discard, c)
			}
		case "upload": // a push announcing 16 MiB, no credential, 64 KiB sent
			req := "POST /v1/profiles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 16777216\r\n\r\n"
			if _, err := io.WriteString(c, req+strings.Repeat(" ", 64<<10)); err == nil {
				t.sent.Add(1)
				t.readAnswers(c)
			}
		case "idle": // one request answered, then the connection kept idle
			if _, err := io.WriteString(c, "GET /v1/jobs?sort=bogus HTTP/1.1\r\nHost: x\r\n\r\n"); err == nil {
				t.sent.Add(1)
				t.readAnswers(c)
			}
		}
		stop()
		c.Close()
	}
}

// readAnswers counts the answers on c until it is closed.
func (t *target) readAnswers(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.answered(resp.StatusCode)
	}
}

// flood pipelines bad requests on one connection at a time until ctx
// ends, reading the answers on the side.
func (t *target) flood(ctx context.Context, requests []string) {
	batch := strings.Join(requests, "")
	for ctx.Err() == nil {
		c, err := t.dial(ctx)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		done := make(chan struct{})
		go func() { t.readAnswers(c); close(done) }()
		for ctx.Err() == nil {
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, batch); err != nil {
				break
			}
			t.sent.Add(int64(len(requests)))
		}
		c.Close()
		<-done
		stop()
	}
}

func (t *target) report() {
	t.mu.Lock()
	defer t.mu.Unlock()
	codes := make([]int, 0, len(t.answers))
	for c := range t.answers {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, " %d:%d", c, t.answers[c])
	}
	fmt.Printf("attack %s: dials=%d redials=%d requests_sent=%d answers=[%s ]\n",
		t.name, t.dials.Load(), t.redials.Load(), t.sent.Load(), b.String())
}

func main() {
	socket := flag.String("socket", "", "the agent's query socket to attack (empty: none)")
	serve := flag.String("serve", "", "host:port of gpuprof serve to attack (empty: none)")
	conns := flag.Int("conns", 500, "connections held against each target")
	flooders := flag.Int("flood", 8, "connections flooding bad requests against each target")
	duration := flag.Duration("duration", 60*time.Second, "how long to attack")
	src := flag.String("src", "", "comma-separated local addresses to connect to serve from, in turn (e.g. 127.0.0.1,127.0.0.2)")
	junk := flag.Int("junk", 0, "connections sending serve plausible junk munge credentials (each costs an unmunge)")
	flag.Parse()
	var srcs []net.IP
	for _, a := range strings.Split(*src, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		ip := net.ParseIP(a)
		if ip == nil {
			fmt.Fprintf(os.Stderr, "attackload: -src: %q is not an address\n", a)
			os.Exit(2)
		}
		srcs = append(srcs, ip)
	}
	if *socket == "" && *serve == "" {
		fmt.Fprintln(os.Stderr, "attackload: give -socket, -serve or both")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, *duration)
	defer cancelT()

	var targets []*target
	var wg sync.WaitGroup
	if *socket != "" {
		t := &target{name: "query-socket", network: "unix", addr: *socket, answers: map[int]int64{}}
		targets = append(targets, t)
		for i := range *conns {
			kind := "half"
			if i%2 == 1 {
				kind = "idle"
			}
			wg.Go(func() { t.hold(ctx, kind) })
		}
		bad := []string{
			"GET /v1/jobs?sort=bogus HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET /v1/jobs?limit=-1 HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET /v1/jobs?after_cluster=x&after_job=999 HTTP/1.1\r\nHost: x\r\n\r\n",
		}
		for range *flooders {
			wg.Go(func() { t.flood(ctx, slices.Repeat(bad, 16)) })
		}
	}
	if *serve != "" {
		t := &target{name: "serve", network: "tcp", addr: *serve, srcs: srcs, answers: map[int]int64{}}
		targets = append(targets, t)
		for i := range *conns {
			kind := [...]string{"half", "upload", "idle"}[i%3]
			wg.Go(func() { t.hold(ctx, kind) })
		}
		bad := []string{
			"GET /v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: MUNGE not-a-credential\r\n\r\n",
			"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: MUNGE MUNGE:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:\r\n\r\n",
		}
		for range *flooders {
			wg.Go(func() { t.flood(ctx, slices.Repeat(bad, 16)) })
		}
		// Junk the size of a real credential (base64 of random bytes),
		// different on every connection: each costs serve an unmunge.
		for i := range *junk {
			wg.Go(func() { t.flood(ctx, junkRequests(i, 16)) })
		}
	}
	start := time.Now()
	<-ctx.Done()
	wg.Wait()
	fmt.Printf("attack ran %s with %d held connections and %d flooders per target\n",
		time.Since(start).Round(time.Second), *conns, *flooders)
	for _, t := range targets {
		t.report()
	}
}

// junkRequests are n queries, each with a plausible munge credential of
// random bytes (as long as a real one, ~130 base64 characters).
func junkRequests(seed, n int) []string {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(time.Now().UnixNano())))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 96)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		out[i] = "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: MUNGE MUNGE:" + base64.StdEncoding.EncodeToString(b) + ":\r\n\r\n"
	}
	return out
}
