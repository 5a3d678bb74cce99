package wsconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// deafServer accepts websockets and never reads, so a client's writes on
// the in-memory pipe block: the send queue fills, writes time out. It
// answers nothing to a close frame either.
func deafServer(t *testing.T, l *wsmock.PipeListener) {
	t.Helper()
	release := make(chan struct{})
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		<-release
		_ = c.CloseNow()
	})}}
	srv.Start()
	t.Cleanup(func() { close(release); srv.Close() })
}

func dialDeaf(t *testing.T, mutate func(*Config)) *Session {
	t.Helper()
	l := wsmock.NewPipeListener()
	deafServer(t, l)
	cfg := Config{URL: "ws://" + wsmock.PipeAddr + "/x", DialContext: l.DialContext, QueueFrames: 4,
		WriteTimeout: time.Second, CloseTimeout: 500 * time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Dial(context.Background(), Handler{OnMessage: func(*Session, bool, []byte) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Catches: a Send that blocks on a full queue, drops not counted, a
// write to a peer that stopped reading never timing out.
func TestFullQueueAndWriteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := dialDeaf(t, nil)
		full := 0
		if err := s.Send(true, make([]byte, 640)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the writer is blocked writing it
		for range 9 {
			if errors.Is(s.Send(true, make([]byte, 640)), ErrQueueFull) {
				full++
			}
		}
		// One frame is in the blocked write, four queued.
		if full != 5 || s.Stats().Dropped != 5 {
			t.Errorf("%d refused, %d counted, want 5", full, s.Stats().Dropped)
		}
		start := time.Now()
		<-s.Done()
		if took := time.Since(start); took != time.Second {
			t.Errorf("failed after %v, want the 1 s write timeout", took)
		}
		if tm, ok := errors.AsType[*providers.Timeout](s.Err()); !ok || tm.Op != "write" {
			t.Errorf("err %v, want Timeout{write}", s.Err())
		}
		if err := s.Send(false, []byte("x")); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("Send after the end: %v", err)
		}
	})
}

// Catches: a Close that waits the library's own 5 s for a close reply,
// instead of CloseTimeout.
func TestCloseIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := dialDeaf(t, func(c *Config) { c.Goodbye = [][]byte{[]byte(`{"type":"bye"}`)} })
		start := time.Now()
		_ = s.Close()
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("Close took %v, over the 500 ms bound", took)
		}
		if s.Err() != nil {
			t.Errorf("Err after Close: %v", s.Err())
		}
	})
}

// Catches: a reply deadline that does not fire, or fires after being
// disarmed.
func TestReplyDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := dialDeaf(t, func(c *Config) { c.ReplyOp = "answer" })
		s.ExpectReplyBy(time.Now().Add(time.Second))
		s.ExpectReplyBy(time.Time{})
		time.Sleep(2 * time.Second)
		if s.Err() != nil {
			t.Fatalf("disarmed deadline fired: %v", s.Err())
		}
		start := time.Now()
		s.ExpectReplyBy(start.Add(time.Second))
		<-s.Done()
		if tm, ok := errors.AsType[*providers.Timeout](s.Err()); !ok || tm.Op != "answer" || time.Since(start) != time.Second {
			t.Errorf("err %v after %v", s.Err(), time.Since(start))
		}
	})
}

// Catches: URLs and sizes Validate lets through.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"ws", Config{URL: "ws://h/x"}, true},
		{"wss with query", Config{URL: "wss://h/x?a=1"}, true},
		{"http", Config{URL: "http://h/x"}, false},
		{"credentials", Config{URL: "wss://u:p@h/x"}, false},
		{"negative", Config{URL: "ws://h", ReadLimit: -1}, false},
		{"keep-alive without message", Config{URL: "ws://h", KeepAlive: time.Second}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// Catches: a Ping that does not wait for the pong (the deaf case would
// pass), one that ends the session when the pong is late (the Send after
// it would fail), pongs not counted, a Ping on an ended session that
// writes anyway instead of ErrClosed, a Ping written under the write
// deadline of the last frame, long past (the second live ping fails with
// an i/o timeout; seen with the Aura adapter's probe).
func TestPing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noPong bool
		want   error
	}{
		{name: "live", want: nil},
		{name: "deaf", noPong: true, want: context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := wsmock.NewPipeListener()
				srv := wsmock.New(func(c *wsmock.Conn) { <-c.Gone() }, wsmock.WithListener(l))
				defer srv.Close()
				srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall}, NoPong: tc.noPong})
				d, err := New(Config{URL: srv.URL("/x"), DialContext: l.DialContext})
				if err != nil {
					t.Fatal(err)
				}
				s, err := d.Dial(context.Background(), Handler{OnMessage: func(*Session, bool, []byte) error { return nil }})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				start := time.Now()
				err = s.Ping(ctx)
				cancel()
				if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
					t.Fatalf("Ping: %v, want %v", err, tc.want)
				}
				if took := time.Since(start); tc.noPong && took != time.Second {
					t.Errorf("gave up after %v, want the 1 s context", took)
				}
				if got, want := s.Stats().Pongs, int64(1); tc.noPong == (got == want) {
					t.Errorf("%d pongs counted", got)
				}
				if srv.Pings() != 1 {
					t.Errorf("the server read %d pings, want 1", srv.Pings())
				}
				if err := s.Send(false, []byte("{}")); err != nil {
					t.Errorf("Send after the ping: %v", err)
				}
				if !tc.noPong {
					synctest.Wait()
					time.Sleep(2 * DefaultWriteTimeout)
					if err := s.Ping(context.Background()); err != nil {
						t.Errorf("a ping %v after the last frame: %v", 2*DefaultWriteTimeout, err)
					}
				}
				_ = s.Close()
				if err := s.Ping(context.Background()); !errors.Is(err, providers.ErrClosed) {
					t.Errorf("Ping after Close: %v, want ErrClosed", err)
				}
			})
		})
	}
}
