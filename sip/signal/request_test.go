package signal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// TestRequestFromListener: a REGISTER sent with Server.Request leaves from
// our UDP listener's socket (the registrar sees that port) and returns the
// registrar's final answer; before Start it is refused.
// Mutation: dropping the Laddr pin (a fresh socket sends it) fails the
// source port check.
func TestRequestFromListener(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets: skipped under -short")
	}
	s, err := New(Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, Log: zerolog.Nop()}, answerWith(&fakeMedia{}))
	if err != nil {
		t.Fatal(err)
	}
	reg := func(target string) *sip.Request {
		var u sip.Uri
		if err := sip.ParseUri(target, &u); err != nil {
			t.Fatal(err)
		}
		req := sip.NewRequest(sip.REGISTER, u)
		host, port := s.ListenContact("udp")
		req.AppendHeader(sip.NewHeader("Contact", fmt.Sprintf("<sip:bot@%s:%d>", host, port)))
		req.AppendHeader(sip.NewHeader("Expires", "300"))
		return req
	}
	if _, err := s.Request(context.Background(), reg("sip:127.0.0.1:9")); !errors.Is(err, ErrRequest) {
		t.Fatalf("Request before Start = %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	registrar, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer registrar.Close()
	from := make(chan string, 1)
	go func() {
		buf := make([]byte, 8<<10)
		n, src, err := registrar.ReadFrom(buf)
		if err != nil {
			from <- ""
			return
		}
		m, err := sip.ParseMessage(buf[:n])
		if err != nil {
			from <- ""
			return
		}
		res := sip.NewResponseFromRequest(m.(*sip.Request), 200, "OK", nil)
		_, _ = registrar.WriteTo([]byte(res.String()), src)
		from <- src.String()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.Request(ctx, reg("sip:"+registrar.LocalAddr().String()))
	if err != nil {
		t.Fatalf("Request = %v", err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("answered %d", res.StatusCode)
	}
	_, port := s.ListenContact("udp")
	if src := <-from; !strings.HasSuffix(src, fmt.Sprintf(":%d", port)) {
		t.Fatalf("REGISTER came from %s, want our listener's port %d", src, port)
	}
}

// TestRequestRightAfterStart: a Request sent the instant Start returns
// leaves from our UDP listener, every time (sipgo joins the listener to
// its pool from the goroutine that serves it; Start waits for that).
// Mutation caught (seen failing): Start not waiting for its listeners'
// first read (most of the rounds fail "not sent").
func TestRequestRightAfterStart(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets: skipped under -short")
	}
	registrar, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		buf := make([]byte, 8<<10)
		for {
			n, src, err := registrar.ReadFrom(buf)
			if err != nil {
				return
			}
			m, err := sip.ParseMessage(buf[:n])
			if req, ok := m.(*sip.Request); err == nil && ok {
				res := sip.NewResponseFromRequest(req, 200, "OK", nil)
				_, _ = registrar.WriteTo([]byte(res.String()), src)
			}
		}
	}()
	defer func() { _ = registrar.Close(); <-served }()
	const rounds = 20
	failed := 0
	for range rounds {
		s, err := New(Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, Log: zerolog.Nop()}, answerWith(&fakeMedia{}))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		var u sip.Uri
		if err := sip.ParseUri("sip:"+registrar.LocalAddr().String(), &u); err != nil {
			t.Fatal(err)
		}
		req := sip.NewRequest(sip.OPTIONS, u)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := s.Request(ctx, req); err != nil {
			failed++
		}
		cancel()
		s.Close()
	}
	if failed > 0 {
		t.Errorf("%d of %d Requests right after Start failed", failed, rounds)
	}
}
