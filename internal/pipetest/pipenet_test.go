package pipetest

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// TestListener: a dial meets an accept on the two ends of one pipe; a
// dial with no accept ends with its context; after Close both fail with
// ErrListenerClosed (matching net.ErrClosed). Catches a Dial that returns
// before an Accept took the server end (the cancelled dial would then
// succeed) and a Close that does not release Accept (the bubble would
// deadlock).
func TestListener(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				t.Errorf("Accept: %v", err)
			}
			accepted <- c
		}()
		client, err := l.DialContext(context.Background(), "tcp", "ignored:1")
		if err != nil {
			t.Fatal(err)
		}
		server := <-accepted
		go func() { _, _ = client.Write([]byte("hi")); _ = client.Close() }()
		if b, err := io.ReadAll(server); err != nil || string(b) != "hi" {
			t.Fatalf("server read %q, %v", b, err)
		}
		_ = server.Close()

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := l.DialContext(ctx, "tcp", "ignored:1"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("dial without accept: %v, want the context's deadline", err)
		}

		acceptErr := make(chan error, 1)
		go func() { _, err := l.Accept(); acceptErr <- err }()
		synctest.Wait()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		_ = l.Close() // twice is fine
		if err := <-acceptErr; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
		}
		if _, err := l.DialContext(context.Background(), "tcp", "x:1"); !errors.Is(err, ErrListenerClosed) {
			t.Fatalf("dial after Close: %v, want ErrListenerClosed", err)
		}
		if l.Addr().String() != Addr || l.Addr().Network() != "pipe" {
			t.Fatalf("Addr %v", l.Addr())
		}
	})
}
