package collect

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestConnectionSharesFollowTheSender is issue 39's finding 6: an attacker
// on the victim's own host (binding 127.0.0.2-5, one host: hostKey) holds
// connections without end. Once a request on the victim's connection was
// authenticated, that connection counts in the victim's own share
// (Limits.ConnsPerSender), not in the host's unauthenticated one, so the
// attacker's connections never push it out. Before, the victim's idle
// keep-alive connection was the host's oldest and was closed: its next
// query needed a new connection (and lost its answer when the close won
// the race).
func TestConnectionSharesFollowTheSender(t *testing.T) {
	s, m, _ := newTestServer(t, ServerOptions{PushUIDs: []int{0},
		Limits: Limits{MaxConns: 512, ConnsPerPeer: 32, ConnsPerSender: 4, IdleTimeout: time.Minute}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { stop(); <-done })
	addr := ln.Addr().String()

	var dials atomic.Int32
	victim := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, a)
		},
		MaxIdleConnsPerHost: 1,
	}}
	query := func() error {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/jobs", nil)
		req.Header.Set("Authorization", signed(m, alice, "GET", "/v1/jobs", nil))
		resp, err := victim.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return &net.AddrError{Err: resp.Status, Addr: addr}
		}
		return nil
	}
	if err := query(); err != nil {
		t.Fatalf("victim's first query: %v", err)
	}

	// The attacker: 200 connections from 127.0.0.2-5, sending nothing.
	var held []net.Conn
	for i := range 200 {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%4))}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("attacker's connection %d: %v", i, err)
		}
		held = append(held, c)
	}
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	time.Sleep(300 * time.Millisecond) // all accepted

	for i := range 3 {
		if err := query(); err != nil {
			t.Errorf("victim's query %d during the attack: %v", i+2, err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the victim dialled %d times: its authenticated connection was pushed out by the host's others", n)
	}
}
