package webrtc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/coder/websocket"
)

// TestVanishedClient: a connected caller that disappears from the network
// (its socket drops everything both ways: no DTLS close, no bye) ends the
// call with ErrClientGone, which the engine reads as "vanished", once ICE
// consent is lost; every goroutine of the call stops (the leak check of
// startServer). The time to detect it is logged, not asserted: with the
// defaults it is ICEDisconnectedTimeout + ICEFailedTimeout plus up to a
// keepalive interval after the last packet.
// Mutations caught: the Failed state mapped to nothing (the call would
// never end) or to ErrICEFailed; ErrClientGone not wrapping
// conn.ErrVanished (the reason reads "hangup").
func TestVanishedClient(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, seconds")
	}
	cases := []struct {
		name                            string
		disconnected, failed, keepalive time.Duration
	}{
		{"fast timeouts", time.Second, time.Second, 200 * time.Millisecond},
		{"defaults", 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.ICEDisconnectedTimeout, cfg.ICEFailedTimeout, cfg.ICEKeepalive = tc.disconnected, tc.failed, tc.keepalive
			ts := startServer(t, cfg)
			ctx := testCtx(t, 40*time.Second)
			cl, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
			gone := time.Now()
			cl.Vanish()
			err := drainUntilEnd(ctx, c)
			detect := time.Since(gone)
			if !errors.Is(err, ErrClientGone) || !errors.Is(err, conn.ErrClosed) {
				t.Fatalf("ReadFrame ended with %v, want ErrClosed wrapping ErrClientGone", err)
			}
			if r := conn.ReasonOf(err); r != conn.ReasonVanished {
				t.Fatalf("reason %q, want %q", r, conn.ReasonVanished)
			}
			c.Close()
			if ts.srv.Stats()["end_client_vanished"] != 1 {
				t.Fatalf("not counted: %v", ts.srv.Stats())
			}
			t.Logf("vanished client detected after %v", detect.Round(10*time.Millisecond))
		})
	}
}

// TestNoMedia: a caller whose ICE agent goes on answering but which sends
// no RTP any more ends the call after MediaTimeout, as vanished.
// Mutation caught: the media clock not checking the last RTP time (the
// call lasts until the watchdog).
func TestNoMedia(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, seconds")
	}
	cfg := testConfig()
	cfg.MediaTimeout = time.Second
	ts := startServer(t, cfg)
	ctx := testCtx(t, 20*time.Second)
	cl, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
	// More than the timeout with media flowing: a sending caller stays.
	readFrames(t, ctx, c, 75)
	stopped := time.Now()
	cl.StopMedia()
	err := drainUntilEnd(ctx, c)
	if !errors.Is(err, ErrNoMedia) || conn.ReasonOf(err) != conn.ReasonVanished {
		t.Fatalf("ReadFrame ended with %v, want ErrNoMedia (vanished)", err)
	}
	c.Close()
	if ts.srv.Stats()["end_no_media"] != 1 {
		t.Fatalf("not counted: %v", ts.srv.Stats())
	}
	t.Logf("no media detected after %v (timeout %v)", time.Since(stopped).Round(10*time.Millisecond), cfg.MediaTimeout)
}

// openWS opens the call's websocket as a raw client.
func openWS(t *testing.T, ctx context.Context, ts *testServer, c *Call) *websocket.Conn {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	ws, _, err := websocket.Dial(ctx, wsURL(ts.base, c.ID()), &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// TestWebsocketNotRead: a client that stops reading its websocket while
// events are sent fills the socket's buffers; the blocked write ends the
// call after WSWriteTimeout as "stopped reading", and nothing of the call
// is left.
// Mutation caught: a timed-out write only closing the websocket (the call
// goes on until the watchdog).
func TestWebsocketNotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	cfg := testConfig()
	cfg.WSWriteTimeout = 500 * time.Millisecond
	ts := startServer(t, cfg)
	ctx := testCtx(t, 30*time.Second)
	_, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
	_ = openWS(t, ctx, ts, c) // never read
	event := map[string]string{"text": strings.Repeat("x", 32<<10)}
	published := 0
	for c.Err() == nil {
		if err := c.Publish(event); err != nil {
			break
		}
		published++
		select {
		case <-c.Done():
		case <-ctx.Done():
			t.Fatal("the call did not end")
		case <-time.After(time.Millisecond):
		}
	}
	err := drainUntilEnd(ctx, c)
	if !errors.Is(err, ErrStalled) || conn.ReasonOf(err) != conn.ReasonStoppedReading {
		t.Fatalf("ReadFrame ended with %v, want ErrStalled (stopped reading)", err)
	}
	c.Close()
	if ts.srv.Stats()["end_websocket_not_read"] != 1 {
		t.Fatalf("not counted: %v", ts.srv.Stats())
	}
	t.Logf("%d events of 32 KiB published before the write blocked", published)
}

// TestWebsocketErrorsAndUTF8: a bad message is answered with exactly
// {"type": "error", "error": reason} and the call goes on; a text message
// that is not UTF-8 closes the websocket with 1007 and ends the call as a
// protocol error.
// Mutation caught: the UTF-8 check removed (the message is answered as
// an unknown type and the websocket stays open).
func TestWebsocketErrorsAndUTF8(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	ts := startServer(t, testConfig())
	ctx := testCtx(t, 30*time.Second)
	_, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
	ws := openWS(t, ctx, ts, c)
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"dance"}`)); err != nil {
		t.Fatal(err)
	}
	m := readUntil(t, ctx, ws, "error")
	if reason, ok := m["error"].(string); !ok || reason == "" || len(m) != 2 {
		t.Fatalf("error reply %v, want {type: error, error: reason}", m)
	}
	if c.Err() != nil {
		t.Fatalf("a bad message ended the call: %v", c.Err())
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte("{\"type\":\"bye\xff\"}")); err != nil {
		t.Fatal(err)
	}
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue
		}
		if got := websocket.CloseStatus(err); got != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("websocket ended with %v (status %d), want 1007", err, got)
		}
		break
	}
	err := drainUntilEnd(ctx, c)
	if !errors.Is(err, ErrInvalidUTF8) || conn.ReasonOf(err) != conn.ReasonProtocol {
		t.Fatalf("ReadFrame ended with %v, want ErrInvalidUTF8 (protocol error)", err)
	}
	c.Close()
	if st := ts.srv.Stats(); st["ws_invalid_utf8"] != 1 || st["end_protocol_error"] != 1 {
		t.Fatalf("not counted: %v", st)
	}
}

// TestHangupCloseCodes: the websocket of a call the server ends closes
// with the code of Hangup's kind, after the bye: a call not taken for
// capacity says try again later, never a normal closure; the server
// closing says going away.
// Mutation caught: Hangup's kind ignored (every websocket closes with
// 1000, as before issue 14).
func TestHangupCloseCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	cases := []struct {
		name  string
		kind  conn.EndKind
		close bool // Server.Close instead of Hangup
		want  websocket.StatusCode
	}{
		{"normal", conn.EndNormal, false, websocket.StatusNormalClosure},
		{"try later", conn.EndTryLater, false, websocket.StatusTryAgainLater},
		{"internal", conn.EndInternal, false, websocket.StatusInternalError},
		{"server closes", 0, true, websocket.StatusGoingAway},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, testConfig())
			ctx := testCtx(t, 20*time.Second)
			_, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
			ws := openWS(t, ctx, ts, c)
			// The websocket is served once a message round-trips.
			if err := ws.Write(ctx, websocket.MessageText, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			readUntil(t, ctx, ws, "error")
			closed := make(chan struct{})
			if tc.close {
				go func() {
					defer close(closed)
					ts.srv.Close()
				}()
			} else {
				close(closed)
				c.Hangup(tc.kind, "test")
			}
			readUntil(t, ctx, ws, "bye")
			for {
				_, _, err := ws.Read(ctx)
				if err == nil {
					continue
				}
				if got := websocket.CloseStatus(err); got != tc.want {
					t.Fatalf("closed with %v (%d), want %d", err, got, tc.want)
				}
				break
			}
			c.Close()
			<-closed
		})
	}
}
