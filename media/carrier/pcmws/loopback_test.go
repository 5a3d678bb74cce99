package pcmws

import (
	"context"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// TestRealLoopbackCall: the protocol over a real TCP socket, with the
// handler's Close hanging up a live call (StatusGoingAway) and nothing
// left behind. Mutation caught: the registry not hanging up live calls
// (Close would wait for the idle timeout: the client sees a lost
// connection instead of 1001).
func TestRealLoopbackCall(t *testing.T) {
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
	ws, _, err := srv.Dial(context.Background(), "/pcm?rate=24000")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeClient{t: t, ws: ws}
	call := <-calls
	pcm := tone(24000, 0, 480)
	f.audio(pcm)
	fr := messages.NewPooledFrame(24000, nil)
	if err := call.ReadFrame(context.Background(), fr); err != nil || !slices.Equal(fr.PCM, pcm) {
		t.Fatalf("frame: %v", err)
	}
	if err := call.WriteFrame(&messages.OutputAudio{Epoch: 1, Rate: 24000, PCM: pcm}); err != nil {
		t.Fatal(err)
	}
	if m := f.read(); !slices.Equal(m.PCM, pcm) {
		t.Fatal("audio out differs")
	}
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	if ce := f.readClose(); ce.Code != websocket.StatusGoingAway {
		t.Fatalf("close %+v", ce)
	}
	<-closed
	_ = ws.CloseNow()
	srv.Close()
	goleak.VerifyNone(t, before)
}
