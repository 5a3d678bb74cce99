package wsmock

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
)

// script is a Looper the client drives with text messages: "n<k>" queues
// k answers, "cancel" drops what is queued and queues "cancelled", "bye"
// queues an answer whose SendNext ends the session, "end" ends it at
// once, "hold" waits for the client to go and for the bubble to settle
// (so that what the client sent before it went waits in the Inbox). After
// "n<k>" it lets the bubble settle, so that a message the client sent
// meanwhile waits in the Inbox when the loop looks.
type script struct {
	c       *Conn
	pace    time.Duration
	queue   []string
	handled []string
}

var _ Looper = (*script)(nil)

func (s *script) Handle(m Message) bool {
	cmd := string(m.Data)
	s.handled = append(s.handled, cmd)
	switch {
	case cmd == "end":
		return false
	case cmd == "hold":
		<-s.c.Gone()
		synctest.Wait()
	case cmd == "cancel":
		s.queue = append(s.queue[:0], "cancelled")
	case cmd == "bye":
		s.queue = append(s.queue, "bye")
	case strings.HasPrefix(cmd, "n"):
		k, _ := strconv.Atoi(cmd[1:])
		for i := range k {
			s.queue = append(s.queue, "a"+strconv.Itoa(i))
		}
		synctest.Wait()
	}
	return true
}

func (s *script) Queued() bool        { return len(s.queue) > 0 }
func (s *script) Pace() time.Duration { return s.pace }

func (s *script) SendNext() bool {
	m := s.queue[0]
	s.queue = s.queue[1:]
	if m == "bye" {
		return false
	}
	return s.c.Send([]byte(m)) == nil
}

// rig is a mock serving script over an in-memory pipe and a client of it.
type rig struct {
	client *websocket.Conn
	served chan *script // the script, once Loop returned
}

// newRig must run inside a testing/synctest bubble.
func newRig(t *testing.T, pace time.Duration) *rig {
	t.Helper()
	r := &rig{served: make(chan *script, 1)}
	l := NewPipeListener()
	srv := New(func(c *Conn) {
		s := &script{c: c, pace: pace}
		Loop(c, s)
		r.served <- s
	}, WithListener(l))
	t.Cleanup(srv.Close)
	tr := &http.Transport{DialContext: l.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	c, _, err := websocket.Dial(context.Background(), srv.URL("/"), &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	r.client = c
	return r
}

func (r *rig) send(t *testing.T, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if err := r.client.Write(context.Background(), websocket.MessageText, []byte(m)); err != nil {
			t.Fatalf("write %q: %v", m, err)
		}
	}
}

// read returns the next answer; "" when the connection ended or nothing
// came within a minute.
func (r *rig) read() string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, data, err := r.client.Read(ctx)
	if err != nil {
		return ""
	}
	return string(data)
}

// done returns what the script handled once Loop returned by itself,
// failing the test if it is still serving a minute on.
func (r *rig) done(t *testing.T) []string {
	t.Helper()
	select {
	case s := <-r.served:
		return s.handled
	case <-time.After(time.Minute):
		t.Fatal("Loop did not return")
		return nil
	}
}

// Mutation caught: the pace ignored ("paced" gets every answer at once),
// or waited for when there is none ("unpaced" late).
func TestPace(t *testing.T) {
	for _, tc := range []struct {
		name string
		pace time.Duration
		want []time.Duration
	}{
		{"paced", 100 * time.Millisecond, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}},
		{"unpaced", 0, []time.Duration{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, tc.pace)
				start := time.Now()
				r.send(t, "n3")
				var at []time.Duration
				for range 3 {
					if a := r.read(); a == "" {
						t.Fatalf("answer %d missing", len(at))
					}
					at = append(at, time.Since(start))
				}
				if !slices.Equal(at, tc.want) {
					t.Errorf("answers at %v, want %v", at, tc.want)
				}
				r.send(t, "end")
				if got := r.done(t); !slices.Equal(got, []string{"n3", "end"}) {
					t.Errorf("handled %q", got)
				}
			})
		})
	}
}

// Mutation caught: an unpaced loop that sends what is queued before it
// looks at what the client sent (a cancel would let the 1000 answers
// through); a paced one that does not wake for the client's message.
func TestAClientMessageGoesFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		pace time.Duration
	}{{"unpaced", 0}, {"paced", time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, tc.pace)
				start := time.Now()
				r.send(t, "n1000", "cancel")
				before := 0
				for a := r.read(); a != "cancelled"; a = r.read() {
					if a == "" {
						t.Fatalf("no cancelled after %d answers", before)
					}
					before++
				}
				if before != 0 {
					t.Errorf("%d answers sent before the cancel was read, want 0", before)
				}
				if took, want := time.Since(start), tc.pace; took != want {
					t.Errorf("cancelled after %v, want %v", took, want)
				}
				r.send(t, "end")
				r.done(t)
			})
		})
	}
}

// Mutations caught: a false Handle not ending the session ("end" with and
// without answers queued), a false SendNext not ending it ("bye"); the
// connection not dropped at the end (the client's read would not end).
func TestTheSessionEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []string
		pace time.Duration
	}{
		{"end", []string{"end"}, 0},
		{"end while paced", []string{"n5", "end"}, time.Second},
		{"bye", []string{"bye"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, tc.pace)
				r.send(t, tc.msgs...)
				if got := r.done(t); !slices.Equal(got, tc.msgs) {
					t.Errorf("handled %q, want %q", got, tc.msgs)
				}
				if a := r.read(); a != "" {
					t.Errorf("answer %q after the end", a)
				}
			})
		})
	}
}

// Mutation caught: the Inbox giving up on what it read once the client
// has gone (a forwarder that also selects on Gone): the client's last
// message before it went ("x") would not be handled, nor recorded by a
// mock.
func TestTheLastMessageBeforeTheClientWent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 0)
		r.send(t, "hold", "x")
		_ = r.client.CloseNow()
		if got := r.done(t); !slices.Equal(got, []string{"hold", "x"}) {
			t.Errorf("handled %q, want [hold x]", got)
		}
	})
}
