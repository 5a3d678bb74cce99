package opclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// readAll parses a whole stream.
func readAll(in []byte, max int) ([]sseEvent, error) {
	p := newSSEReader(bytes.NewReader(in), max)
	var out []sseEvent
	for {
		ev, err := p.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// TestSSEParse: the standard's parsing rules. Mutations caught (each
// seen failing): "\r" alone not ending a line (the CR case joins two
// events); the one space after the colon not stripped; an event without
// data dispatched.
func TestSSEParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // name|data|id
	}{
		{"server's", "event: snapshot\ndata: {\"a\":1}\n\n: keepalive\n\nevent: call\ndata: {}\n\n", []string{"snapshot|{\"a\":1}|", "call|{}|"}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\n", []string{"a|1|"}},
		{"cr", "event: a\rdata: 1\r\revent: b\rdata: 2\r\r", []string{"a|1|", "b|2|"}},
		{"multi-line data", "data: x\ndata:y\ndata\n\n", []string{"message|x\ny\n|"}},
		{"one space only", "data:  two\n\n", []string{"message| two|"}},
		{"no data no event", "event: lost\n\ndata: kept\n\n", []string{"message|kept|"}},
		{"incomplete at the end", "data: done\n\ndata: cut", []string{"message|done|"}},
		{"bom", "\xef\xbb\xbfdata: b\n\n", []string{"message|b|"}},
		{"id and retry", "id: 7\nretry: 10\ndata: d\n\n", []string{"message|d|7"}},
		{"unknown field", "foo: bar\ndata: d\n\n", []string{"message|d|"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := readAll([]byte(tc.in), 1<<10)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("err %v", err)
			}
			var got []string
			for _, e := range evs {
				got = append(got, e.Name+"|"+string(e.Data)+"|"+e.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := readAll([]byte("data: "+strings.Repeat("x", 100)+"\n\n"), 64); !errors.Is(err, errEventTooLong) {
		t.Errorf("a long line: %v", err)
	}
	if _, err := readAll([]byte(strings.Repeat("data: xxxxxxxx\n", 20)+"\n"), 64); !errors.Is(err, errEventTooLong) {
		t.Errorf("a long event: %v", err)
	}
}

// encodeSSE writes events as the server does.
func encodeSSE(evs []sseEvent) []byte {
	var b bytes.Buffer
	for _, e := range evs {
		fmt.Fprintf(&b, "event: %s\n", e.Name)
		if e.ID != "" {
			fmt.Fprintf(&b, "id: %s\n", e.ID)
		}
		for _, l := range strings.Split(string(e.Data), "\n") {
			fmt.Fprintf(&b, "data: %s\n", l)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// FuzzSSE: the parser of the server's stream takes any bytes without
// panicking or exceeding its bound, and what it parsed, written out
// again, parses to the same events.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"event: snapshot\ndata: {\"node\":\"n1\",\"calls\":[],\"nodes\":[]}\n\n",
		": keepalive\n\n",
		"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r",
		"data:x\ndata\n\nid: 1\x00\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 4 << 10
		evs, err := readAll(in, max)
		if !errors.Is(err, io.EOF) && !errors.Is(err, errEventTooLong) {
			t.Fatalf("err %v", err)
		}
		for _, e := range evs {
			if len(e.Data) > max || strings.ContainsAny(e.Name, "\r\n") || bytes.IndexByte(e.Data, '\r') >= 0 || strings.ContainsAny(e.ID, "\r\n\x00") {
				t.Fatalf("event %q", e)
			}
		}
		var keep []sseEvent
		for _, e := range evs {
			// The writer's form cannot say an empty name or a name or
			// id starting with a space (their space is stripped).
			if e.Name != "" && !strings.HasPrefix(e.Name, " ") && !strings.HasPrefix(e.ID, " ") {
				keep = append(keep, e)
			}
		}
		again, err := readAll(encodeSSE(keep), 1<<20)
		if !errors.Is(err, io.EOF) || fmt.Sprintf("%q", again) != fmt.Sprintf("%q", keep) {
			t.Fatalf("round trip: %q -> %q (%v)", keep, again, err)
		}
	})
}

// TestEvents: the stream decodes the server's events, skips a kind it
// does not know, ends with io.EOF when the server ends it, and with the
// caller's context otherwise; a stream that is not one is ErrProtocol.
// Mutations caught: an unknown kind returned as an error (the stream
// would break on a newer server); a clean end reported as unreachable.
func TestEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	hold := make(chan struct{})
	c, stop := serveAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("x") != "" {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: snapshot\ndata: {\"node\":\"n1\",\"calls\":[{\"id\":\"c1\",\"node\":\"n1\"}],\"nodes\":[{\"node\":\"n1\"}]}\n\n")
		io.WriteString(w, "event: future\ndata: {}\n\n: keepalive\n\n")
		io.WriteString(w, "event: call\ndata: {\"id\":\"c1\",\"state\":\"speaking\"}\n\n")
		io.WriteString(w, "event: ended\ndata: {\"id\":\"c1\",\"node\":\"n1\",\"reason\":\"hangup\"}\n\n")
		io.WriteString(w, "event: node_left\ndata: {\"node\":\"n2\"}\n\n")
		w.(http.Flusher).Flush()
		if r.Header.Get("X-Hold") != "" {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
	})
	defer stop()
	defer close(hold)
	st, err := c.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == EventCall && ev.Call.State != "speaking" || ev.Kind == EventSnapshot && ev.Snapshot.Calls[0].ID != "c1" {
			t.Errorf("event %+v", ev)
		}
	}
	st.Close()
	if fmt.Sprint(kinds) != "[snapshot call ended node_left]" {
		t.Errorf("kinds %v", kinds)
	}

	// A held stream ends with its context.
	hc := &http.Client{Transport: holdTransport{c.own}}
	c2, err := New(Config{Addr: c.Addr(), Token: testToken, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err = c2.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := st.Next(); err != nil {
			t.Fatal(err)
		}
	}
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := st.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
	st.Close()
}

// holdTransport asks the test server to hold the stream open.
type holdTransport struct{ rt http.RoundTripper }

func (h holdTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Hold", "1")
	return h.rt.RoundTrip(r)
}
