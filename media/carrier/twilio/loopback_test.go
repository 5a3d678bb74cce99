package twilio

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// TestRealLoopbackStream catches what the in-memory pipe hides: the real
// TCP dial and HTTP upgrade, a close handshake over a socket, and
// goroutines left after Close. The call hangs up from our side. Mutation
// caught: Close not hanging up (the client never gets a close frame: its
// read fails with a lost connection after the handler's Close).
func TestRealLoopbackStream(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	before := goleak.IgnoreCurrent()
	calls := make(chan *Call, 1)
	h, err := New(Config{OnCall: func(c *Call) { calls <- c }})
	if err != nil {
		t.Fatal(err)
	}
	srv := carriertest.NewLoopbackServer(h)
	ws, _, err := srv.Dial(context.Background(), "/media")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeTwilio{t: t, ws: ws}
	f.connected()
	f.start("audio/x-mulaw", 8000, 1, nil)
	call := <-calls
	mu := mulawOf(tone(0, 320))
	f.media(mu, 1, 0)
	fr := messages.NewPooledFrame(Rate, nil)
	var got []int16
	for range 2 {
		if err := call.ReadFrame(context.Background(), fr); err != nil {
			t.Fatal(err)
		}
		got = append(got, fr.PCM...)
	}
	if !slices.Equal(got, heard(mu)) {
		t.Fatal("frames differ from the chunk sent")
	}
	if err := call.WriteFrame(&messages.OutputAudio{Epoch: 1, Rate: Rate, PCM: tone(0, 160)}); err != nil {
		t.Fatal(err)
	}
	if o := f.read(); o.Event != "media" {
		t.Fatalf("got %+v", o)
	}
	_ = call.Close()
	if ce := f.readClose(); ce.Code != websocket.StatusNormalClosure || ce.Reason != "call ended" {
		t.Fatalf("close %+v", ce)
	}
	<-call.Done()
	if err := call.ReadFrame(context.Background(), fr); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("ReadFrame after the hang-up: %v", err)
	}
	_ = ws.CloseNow()
	h.Close()
	srv.Close()
	goleak.VerifyNone(t, before)
}
