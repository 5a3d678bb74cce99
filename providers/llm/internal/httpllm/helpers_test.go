package httpllm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

const testKey = "sk-test-SECRET"

var errInvalid = errors.New("test: invalid config")

// testURL is any URL: the pipe listener answers whatever the address.
const testURL = "http://" + openaimock.PipeAddr + "/v1/chat"

// testStreamConfig: distinct deadlines so a wrong phase shows in the time.
var testStreamConfig = StreamConfig{
	ConnectTimeout: time.Second, FirstEventTimeout: 2 * time.Second, IdleTimeout: 3 * time.Second,
	MaxLineBytes: 1024, CutDetail: "stream ended before the end",
}

// textDecoder is a Decoder of test data: "done" ends the response, "bad"
// is a Protocol (after appending an event that must be dropped), any other
// data is one LLMText of it. At the body's clean end, End completes the
// response with an LLMText "end" when complete is set, else it is a cut.
type textDecoder struct {
	complete bool
	stop     string
	ends     int // End calls
}

var _ Decoder = (*textDecoder)(nil)

func (d *textDecoder) Decode(data []byte, evs []providers.LLMEvent) ([]providers.LLMEvent, bool, error) {
	switch string(data) {
	case "done":
		return evs, true, nil
	case "bad":
		return append(evs, providers.LLMEvent{Kind: providers.LLMText, Text: "dropped"}), false, &providers.Protocol{Detail: "bad data"}
	}
	return append(evs, providers.LLMEvent{Kind: providers.LLMText, Text: string(data)}), false, nil
}

func (d *textDecoder) End(evs []providers.LLMEvent) ([]providers.LLMEvent, error) {
	d.ends++
	if !d.complete {
		return evs, Cut("stream ended early", io.EOF)
	}
	return append(evs, providers.LLMEvent{Kind: providers.LLMText, Text: "end"}), nil
}

func (d *textDecoder) StopReason() string { return d.stop }

// sse frames data as events.
func sse(data ...string) string {
	var b bytes.Buffer
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

// drain reads s to its end: the texts (LLMDone as "<done:stop>") and the
// error that ended it (nil for io.EOF).
func drain(t *testing.T, s providers.LLMStream) ([]string, error) {
	t.Helper()
	var got []string
	for range 10000 {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		if ev.Kind == providers.LLMDone {
			got = append(got, "<done:"+ev.StopReason+">")
			continue
		}
		got = append(got, ev.Text)
	}
	t.Fatal("stream did not end")
	return nil, nil
}

// countingBody is a body that counts its reads and closes.
type countingBody struct {
	r      io.Reader
	read   int
	closes atomic.Int32
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error {
	b.closes.Add(1)
	return nil
}

// served is a Client on an in-memory server running h (made inside the
// caller's synctest bubble, or not), with the connections it accepted
// counted. Both are closed at the end of the test.
func served(t *testing.T, h http.HandlerFunc) (*Client, *atomic.Int32) {
	t.Helper()
	l := openaimock.NewPipeListener()
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := NewClient(ClientConfig{
		StreamConfig: testStreamConfig, DialContext: l.DialContext, Key: testKey,
		Header: http.Header{"Authorization": {"Bearer " + testKey}}, InvalidConfig: errInvalid,
	})
	t.Cleanup(c.CloseIdle)
	return c, &conns
}

// eventStream answers with the events of body, flushed, then stalls for
// stall (0: none) and writes rest.
func eventStream(w http.ResponseWriter, r *http.Request, body string, stall time.Duration, rest string) {
	_, _ = io.Copy(io.Discard, r.Body) // a done request body: the server then watches the connection
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
	w.(http.Flusher).Flush()
	if stall > 0 {
		select {
		case <-time.After(stall):
		case <-r.Context().Done():
			return
		}
	}
	_, _ = io.WriteString(w, rest)
}

// openText opens a stream of c with a textDecoder.
func openText(ctx context.Context, c *Client, dec *textDecoder) (*Stream, error) {
	s := &Stream{}
	if err := c.Open(ctx, s, testURL, []byte(`{}`), dec); err != nil {
		return nil, err
	}
	return s, nil
}
