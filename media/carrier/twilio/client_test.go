package twilio

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/coder/websocket"
)

// fakeTwilio is the Twilio side of a stream, speaking its message shapes.
type fakeTwilio struct {
	t   *testing.T
	ws  *websocket.Conn
	seq int
}

// send writes one JSON text message.
func (f *fakeTwilio) send(v any) {
	f.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Fatal(err)
	}
	f.sendRaw(websocket.MessageText, b)
}

func (f *fakeTwilio) sendRaw(typ websocket.MessageType, b []byte) {
	f.t.Helper()
	if err := f.ws.Write(context.Background(), typ, b); err != nil {
		f.t.Fatalf("client write: %v", err)
	}
}

func (f *fakeTwilio) next() string {
	f.seq++
	return itoa(f.seq)
}

func (f *fakeTwilio) connected() {
	f.send(map[string]string{"event": "connected", "protocol": "Call", "version": "1.0.0"})
}

func (f *fakeTwilio) start(encoding string, rate, channels int, params map[string]string) {
	f.send(map[string]any{
		"event": "start", "sequenceNumber": f.next(), "streamSid": testStreamSID,
		"start": map[string]any{
			"streamSid": testStreamSID, "accountSid": testAccount, "callSid": testCallSID,
			"tracks": []string{"inbound"}, "customParameters": params,
			"mediaFormat": map[string]any{"encoding": encoding, "sampleRate": rate, "channels": channels},
		},
	})
}

// media sends mulaw as chunk number chunk at tsMS (no timestamp or chunk
// when negative).
func (f *fakeTwilio) media(mulaw []byte, chunk, tsMS int) {
	body := map[string]string{"track": "inbound", "payload": base64.StdEncoding.EncodeToString(mulaw)}
	if chunk >= 0 {
		body["chunk"] = itoa(chunk)
	}
	if tsMS >= 0 {
		body["timestamp"] = itoa(tsMS)
	}
	f.send(map[string]any{"event": "media", "sequenceNumber": f.next(), "streamSid": testStreamSID, "media": body})
}

func (f *fakeTwilio) mark(name string) {
	f.send(map[string]any{"event": "mark", "sequenceNumber": f.next(), "streamSid": testStreamSID, "mark": map[string]string{"name": name}})
}

func (f *fakeTwilio) dtmf(digit string) {
	f.send(map[string]any{"event": "dtmf", "sequenceNumber": f.next(), "streamSid": testStreamSID,
		"dtmf": map[string]string{"track": "inbound_track", "digit": digit}})
}

func (f *fakeTwilio) stop() {
	f.send(map[string]any{"event": "stop", "sequenceNumber": f.next(), "streamSid": testStreamSID,
		"stop": map[string]string{"accountSid": testAccount, "callSid": testCallSID}})
}

// outbound is a message the server sent.
type outbound struct {
	Event     string `json:"event"`
	StreamSID string `json:"streamSid"`
	Media     struct {
		Payload string `json:"payload"`
	} `json:"media"`
	Mark struct {
		Name string `json:"name"`
	} `json:"mark"`
}

// read reads the next server message.
func (f *fakeTwilio) read() outbound {
	f.t.Helper()
	typ, b, err := f.ws.Read(context.Background())
	if err != nil {
		f.t.Fatalf("client read: %v", err)
	}
	var o outbound
	if typ != websocket.MessageText || json.Unmarshal(b, &o) != nil {
		f.t.Fatalf("server sent %v %q", typ, b)
	}
	if o.StreamSID != testStreamSID {
		f.t.Fatalf("server message for stream %q", o.StreamSID)
	}
	return o
}

// readClose reads until the server closes and returns its close error.
func (f *fakeTwilio) readClose() websocket.CloseError {
	f.t.Helper()
	for {
		_, _, err := f.ws.Read(context.Background())
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !asCloseError(err, &ce) {
			f.t.Fatalf("connection ended without a close frame: %v", err)
		}
		return ce
	}
}

func asCloseError(err error, ce *websocket.CloseError) bool { return errors.As(err, ce) }

// rig is a handler served in a synctest bubble with a client dialled.
type rig struct {
	t     *testing.T
	h     *Handler
	srv   *carriertest.Server
	calls chan *Call
	base  leaktest.Set
}

// inBubble runs fn in a synctest bubble with a handler of cfg (OnCall
// filled in) served on an in-memory listener, and checks at the end that
// the handler, once closed, left no goroutine.
func inBubble(t *testing.T, cfg Config, fn func(r *rig)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		r := &rig{t: t, calls: make(chan *Call, 4), base: leaktest.Snapshot()}
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
		if n := leaktest.Snapshot().NewSince(r.base); n != 0 {
			t.Fatalf("%d goroutines left behind", n)
		}
	})
}

// dial opens a stream to the handler.
func (r *rig) dial() *fakeTwilio {
	r.t.Helper()
	ws, _, err := r.srv.Dial(context.Background(), "/twilio")
	if err != nil {
		r.t.Fatalf("dial: %v", err)
	}
	f := &fakeTwilio{t: r.t, ws: ws}
	r.t.Cleanup(func() { _ = ws.CloseNow() })
	return f
}

// open dials, sends connected and a good start, and returns the call.
func (r *rig) open() (*fakeTwilio, *Call) {
	r.t.Helper()
	f := r.dial()
	f.connected()
	f.start("audio/x-mulaw", 8000, 1, map[string]string{"caller": "+15550100"})
	return f, <-r.calls
}

// tone is n samples of a 440 Hz tone from sample offset off.
func tone(off, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(off+i)/8000))
	}
	return out
}

// mulawOf encodes pcm.
func mulawOf(pcm []int16) []byte {
	out := make([]byte, len(pcm))
	media.MulawEncode(out, pcm)
	return out
}

// heard is what the server should hand on for mulaw.
func heard(mulaw []byte) []int16 {
	out := make([]int16, len(mulaw))
	media.MulawDecode(out, mulaw)
	return out
}
