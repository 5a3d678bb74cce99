package opclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"
)

// The event stream's bounds: the server proves it is alive every 15 s
// (a keepalive comment), so a stream silent for three of them is dead;
// one event (the snapshot of every node's calls) is at most maxEvent.
const (
	StreamIdle = 45 * time.Second
	maxEvent   = 16 << 20
)

// The kinds of event on the stream.
const (
	EventSnapshot = "snapshot"
	EventCall     = "call"
	EventEnded    = "ended"
	EventNode     = "node"
	EventNodeLeft = "node_left"
)

// Snapshot is the stream's first event: every node's live calls and the
// nodes.
type Snapshot struct {
	Node  string        `json:"node"`
	Calls []CallSummary `json:"calls"`
	Nodes []NodeInfo    `json:"nodes"`
}

// Ended is a call's end.
type Ended struct {
	ID     string `json:"id"`
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// Event is one event of the stream; the field of its Kind is set.
type Event struct {
	Kind     string
	Snapshot *Snapshot
	// Call started or changed (state, turns, restarts).
	Call  *CallSummary
	Ended *Ended
	// Node changed (its live count, its drain).
	Node *NodeInfo
	// NodeLeft names a node that left the deployment.
	NodeLeft string
	// Data is the event's JSON as it came.
	Data json.RawMessage
}

// errIdle and errHeaders end a stream's request: no byte for StreamIdle,
// no answer within the client's timeout.
var (
	errIdle    = errors.New("opclient: the event stream was silent")
	errHeaders = errors.New("opclient: the event stream did not answer")
)

// Stream is the operator API's event stream. Next is called from one
// goroutine; Close from any, once or more.
type Stream struct {
	body   io.ReadCloser
	sse    *sseReader
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   *time.Timer
	once   sync.Once
	c      *Client
}

// Events opens the event stream. It ends with ctx, with Close, when the
// server shuts down (Next: io.EOF) or when it broke or went silent
// (ErrUnreachable).
func (c *Client) Events(ctx context.Context) (*Stream, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	req, err := c.request(sctx, http.MethodGet, []string{"events"}, nil)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	headers := time.AfterFunc(c.timeout, func() { cancel(errHeaders) })
	resp, err := c.hc.Do(req)
	headers.Stop()
	if err != nil {
		err = c.streamError(ctx, sctx, err)
		cancel(nil)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		cancel(nil)
		return nil, c.answerError(resp, body, target{})
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		cancel(nil)
		return nil, fmt.Errorf("%w: %s answered %s with %s, not an event stream", ErrProtocol, req.URL.Path, resp.Status, c.ctype(resp))
	}
	s := &Stream{body: resp.Body, ctx: sctx, cancel: cancel, c: c}
	s.idle = time.AfterFunc(StreamIdle, func() { cancel(errIdle) })
	s.sse = newSSEReader(&touchReader{r: resp.Body, idle: s.idle}, maxEvent)
	return s, nil
}

// Next is the stream's next event, skipping kinds this client does not
// know (a newer server's). io.EOF when the server ended the stream.
func (s *Stream) Next() (Event, error) {
	for {
		raw, err := s.sse.next()
		if err != nil {
			return Event{}, s.readError(err)
		}
		ev := Event{Kind: raw.Name, Data: json.RawMessage(raw.Data)}
		var v any
		switch raw.Name {
		case EventSnapshot:
			ev.Snapshot = &Snapshot{}
			v = ev.Snapshot
		case EventCall:
			ev.Call = &CallSummary{}
			v = ev.Call
		case EventEnded:
			ev.Ended = &Ended{}
			v = ev.Ended
		case EventNode:
			ev.Node = &NodeInfo{}
			v = ev.Node
		case EventNodeLeft:
			var left struct {
				Node string `json:"node"`
			}
			if err := json.Unmarshal(raw.Data, &left); err != nil || left.Node == "" {
				return Event{}, fmt.Errorf("%w: a %s event without a node: %.200q", ErrProtocol, raw.Name, raw.Data)
			}
			ev.NodeLeft = left.Node
			return ev, nil
		default:
			continue
		}
		if err := json.Unmarshal(raw.Data, v); err != nil {
			return Event{}, fmt.Errorf("%w: a %s event: %v", ErrProtocol, raw.Name, err)
		}
		switch {
		case ev.Call != nil && ev.Call.ID == "", ev.Ended != nil && ev.Ended.ID == "", ev.Node != nil && ev.Node.Node == "":
			return Event{}, fmt.Errorf("%w: a %s event without its id: %.200q", ErrProtocol, raw.Name, raw.Data)
		}
		return ev, nil
	}
}

// Close ends the stream's request. Next then returns the context's
// error.
func (s *Stream) Close() error {
	s.once.Do(func() {
		s.idle.Stop()
		s.cancel(context.Canceled)
		_ = s.body.Close()
	})
	return nil
}

// readError maps a read of the stream that failed.
func (s *Stream) readError(err error) error {
	switch {
	case errors.Is(err, errEventTooLong):
		return fmt.Errorf("%w: an event longer than %d bytes", ErrProtocol, maxEvent)
	case errors.Is(err, io.EOF) && s.ctx.Err() == nil:
		return io.EOF
	}
	cause := context.Cause(s.ctx)
	switch {
	case errors.Is(cause, errIdle):
		return fmt.Errorf("%w: no event or keepalive in %v", ErrUnreachable, StreamIdle)
	case cause != nil:
		return fmt.Errorf("opclient: the event stream: %w", cause)
	}
	return fmt.Errorf("%w: the event stream broke: %s", ErrUnreachable, s.c.redact(err.Error()))
}

// streamError maps the stream's request that got no answer.
func (c *Client) streamError(parent, sctx context.Context, err error) error {
	if parent.Err() != nil {
		return fmt.Errorf("opclient: the event stream: %w", context.Cause(parent))
	}
	if errors.Is(context.Cause(sctx), errHeaders) {
		return fmt.Errorf("%w: no answer within %v", ErrUnreachable, c.timeout)
	}
	return c.transportError(parent, "the event stream", err)
}

// touchReader puts off the stream's idle timer at every byte read.
type touchReader struct {
	r    io.Reader
	idle *time.Timer
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.idle.Reset(StreamIdle)
	}
	return n, err
}
