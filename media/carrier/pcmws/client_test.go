package pcmws

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/coder/websocket"
)

// fakeClient is the client side of the protocol.
type fakeClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func (f *fakeClient) sendRaw(typ websocket.MessageType, b []byte) {
	f.t.Helper()
	if err := f.ws.Write(context.Background(), typ, b); err != nil {
		f.t.Fatalf("client write: %v", err)
	}
}

func (f *fakeClient) audio(pcm []int16) { f.sendRaw(websocket.MessageBinary, s16le(pcm)) }

func (f *fakeClient) control(v any) {
	f.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Fatal(err)
	}
	f.sendRaw(websocket.MessageText, b)
}

// serverMsg is a message the server sent: audio, or a control.
type serverMsg struct {
	PCM  []int16
	Type string          `json:"type"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

func (f *fakeClient) read() serverMsg {
	f.t.Helper()
	typ, b, err := f.ws.Read(context.Background())
	if err != nil {
		f.t.Fatalf("client read: %v", err)
	}
	if typ == websocket.MessageBinary {
		if len(b)%2 != 0 {
			f.t.Fatalf("odd audio message of %d bytes", len(b))
		}
		pcm := make([]int16, len(b)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return serverMsg{PCM: pcm, Type: "audio"}
	}
	var m serverMsg
	if err := json.Unmarshal(b, &m); err != nil {
		f.t.Fatalf("server text %q: %v", b, err)
	}
	return m
}

func (f *fakeClient) readClose() websocket.CloseError {
	f.t.Helper()
	for {
		_, _, err := f.ws.Read(context.Background())
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			f.t.Fatalf("connection ended without a close frame: %v", err)
		}
		return ce
	}
}

func s16le(pcm []int16) []byte {
	b := make([]byte, 0, 2*len(pcm))
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

// tone is n samples of a 440 Hz tone at rate from sample off.
func tone(rate, off, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(off+i)/float64(rate)))
	}
	return out
}

type rig struct {
	t     *testing.T
	h     *Handler
	srv   *carriertest.Server
	calls chan *Call
}

// inBubble runs fn in a synctest bubble with a handler of cfg served on
// an in-memory listener, and checks that nothing is left after Close.
func inBubble(t *testing.T, cfg Config, fn func(r *rig)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		r := &rig{t: t, calls: make(chan *Call, 4)}
		cfg.OnCall = func(c *Call) { r.calls <- c }
		h, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.h = h
		r.srv = carriertest.NewPipeServer(h)
		fn(r)
		h.Close()
		r.srv.Close()
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left behind", n)
		}
	})
}

func (r *rig) dial(path string) *fakeClient {
	r.t.Helper()
	ws, _, err := r.srv.Dial(context.Background(), path)
	if err != nil {
		r.t.Fatalf("dial: %v", err)
	}
	r.t.Cleanup(func() { _ = ws.CloseNow() })
	return &fakeClient{t: r.t, ws: ws}
}

func (r *rig) open(path string) (*fakeClient, *Call) {
	r.t.Helper()
	f := r.dial(path)
	return f, <-r.calls
}
