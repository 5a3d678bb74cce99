package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/media/conn"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/coder/websocket"
)

// sdpLines joins SDP lines with CRLF.
func sdpLines(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

// sdpHead is a session part with ICE credentials and a fingerprint, so
// that pion would take the media part if it is acceptable.
var sdpHead = []string{
	"v=0",
	"o=- 4611731400430051336 2 IN IP4 127.0.0.1",
	"s=-",
	"t=0 0",
	"a=fingerprint:sha-256 7B:8B:F0:65:5F:78:E2:51:3B:AC:6F:F3:3F:46:1B:35:DC:B8:5F:64:1A:24:C2:43:F0:A1:58:D0:A1:2C:19:08",
	"a=ice-ufrag:abcd",
	"a=ice-pwd:abcdefghijklmnopqrstuvwx",
	"a=group:BUNDLE 0",
}

func offerBody(sdp string) string {
	b, _ := json.Marshal(map[string]string{"type": "offer", "sdp": sdp})
	return string(b)
}

// postOffer posts body to the server and decodes the JSON answer.
func postOffer(t *testing.T, base, contentType, body string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/offer", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("response %d is not a json object: %q", resp.StatusCode, data)
	}
	return resp.StatusCode, m
}

// TestBadOffers: each bad offer gets its status, a JSON reason and its
// counter, and leaves no call and no goroutine behind.
// Mutations caught: a check of ParseOffer removed (no audio or no Opus
// accepted: 200 instead of 400/415), statusOf mapping a reason to another
// status or counter, the body limit not applied (413 becomes 400).
func TestBadOffers(t *testing.T) {
	opusAudio := []string{
		"m=audio 9 UDP/TLS/RTP/SAVPF 111",
		"c=IN IP4 0.0.0.0",
		"a=mid:0",
		"a=sendrecv",
		"a=rtpmap:111 opus/48000/2",
	}
	cases := []struct {
		name        string
		contentType string
		body        string
		status      int
		counter     string
	}{
		{"not json", "application/json", `{"type":"offer",`, 400, "bad_offer_json"},
		{"not an object", "application/json", `["offer"]`, 400, "bad_offer_json"},
		{"unknown field", "application/json", `{"type":"offer","sdp":"v=0","x":1}`, 400, "bad_offer_json"},
		{"an answer", "application/json", `{"type":"answer","sdp":"v=0\r\n"}`, 400, "bad_offer_json"},
		{"empty sdp", "application/json", `{"type":"offer","sdp":""}`, 400, "bad_offer_sdp"},
		{"malformed sdp", "application/json", offerBody("this is not sdp\r\nm=audio\r\n"), 400, "bad_offer_sdp"},
		{"oversized", "application/json", offerBody(strings.Repeat("a", 70<<10)), 413, "bad_offer_too_large"},
		{"not json content", "text/plain", offerBody(sdpLines(append(sdpHead, opusAudio...)...)), 415, "bad_offer_content_type"},
		{"no audio", "application/json", offerBody(sdpLines(append(sdpHead,
			"m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:0", "a=rtpmap:96 VP8/90000")...)), 400, "bad_offer_no_audio"},
		{"pcmu only", "application/json", offerBody(sdpLines(append(sdpHead,
			"m=audio 9 UDP/TLS/RTP/SAVPF 0 8", "c=IN IP4 0.0.0.0", "a=mid:0", "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000")...)), 415, "bad_offer_no_opus"},
		{"opus rtpmap not in the formats", "application/json", offerBody(sdpLines(append(sdpHead,
			"m=audio 9 UDP/TLS/RTP/SAVPF 0", "c=IN IP4 0.0.0.0", "a=mid:0", "a=rtpmap:0 PCMU/8000", "a=rtpmap:111 opus/48000/2")...)), 415, "bad_offer_no_opus"},
		{"no ice credentials", "application/json", offerBody(sdpLines(append([]string{
			"v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0"}, opusAudio...)...)), 400, "bad_offer_refused_by_peer"},
	}
	ts := startServer(t, testConfig())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ts.srv.Stats()[tc.counter]
			status, m := postOffer(t, ts.base, tc.contentType, tc.body)
			if status != tc.status {
				t.Fatalf("status %d (%v), want %d", status, m, tc.status)
			}
			if m["error"] == "" {
				t.Fatalf("no reason in %v", m)
			}
			if got := ts.srv.Stats()[tc.counter]; got != before+1 {
				t.Fatalf("counter %s went %d -> %d, want +1", tc.counter, before, got)
			}
			if n := ts.srv.Calls(); n != 0 {
				t.Fatalf("%d calls live after a bad offer", n)
			}
		})
	}
}

// TestAdmission: a refusing Admit answers 503 with its reason, and a
// closed server 503 too. Mutation caught: Admit not consulted.
func TestAdmission(t *testing.T) {
	cfg := testConfig()
	cfg.Admit = func() (conn.Admission, error) { return nil, errors.New("full") }
	ts := startServer(t, cfg)
	status, m := postOffer(t, ts.base, "application/json", `{"type":"offer","sdp":"v=0"}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(m["error"], "full") {
		t.Fatalf("status %d %v, want 503 with the admission reason", status, m)
	}
	if ts.srv.Stats()["offers_refused"] != 1 {
		t.Fatalf("refusal not counted: %v", ts.srv.Stats())
	}
	ts.srv.Close()
	cfg.Admit = nil
	ts2 := startServer(t, cfg)
	ts2.srv.Close()
	if status, _ := postOffer(t, ts2.base, "application/json", `{}`); status != http.StatusServiceUnavailable {
		t.Fatalf("closed server answered %d, want 503", status)
	}
}

// wsURL is the websocket address of call id.
func wsURL(base, id string) string {
	u, _ := url.Parse(base + "/ws")
	u.Scheme = "ws"
	u.RawQuery = url.Values{"call": {id}}.Encode()
	return u.String()
}

// readUntil reads websocket messages until one has type typ.
func readUntil(t *testing.T, ctx context.Context, ws *websocket.Conn, typ string) map[string]any {
	t.Helper()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("reading for %q: %v", typ, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("server sent non-json %q", data)
		}
		if m["type"] == typ {
			return m
		}
	}
}

// TestWebsocketBadInput: unknown and binary messages are answered with an
// error and counted, the websocket closes with 1008 after the bound while
// the call goes on, a second websocket is refused with 409, an unknown call
// with 404; a client without the websocket still connects.
// Mutations caught: the bad-message bound not enforced (the websocket
// stays open), the one-websocket rule dropped (the second is accepted),
// the answer sent before gathering (the caller without websocket never
// connects).
func TestWebsocketBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	cfg := testConfig()
	cfg.MaxBadWSMessages = 3
	ts := startServer(t, cfg)
	ctx := testCtx(t, 30*time.Second)
	cl, err := webrtctest.Dial(ctx, ts.base, webrtctest.Options{NoWebsocket: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := ts.nextCall(t, ctx)
	defer c.Close()
	if err := cl.WaitConnected(ctx); err != nil {
		t.Fatalf("a caller without websocket did not connect: %v", err)
	}
	if !strings.Contains(cl.Answer(), "a=candidate:") {
		t.Fatal("the answer holds no candidate: a client without websocket depends on peer-reflexive luck")
	}

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	if _, resp, err := websocket.Dial(ctx, wsURL(ts.base, "nope"), &websocket.DialOptions{HTTPClient: client}); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown call: %v, want 404", err)
	}
	ws, _, err := websocket.Dial(ctx, wsURL(ts.base, c.ID()), &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if _, resp, err := websocket.Dial(ctx, wsURL(ts.base, c.ID()), &websocket.DialOptions{HTTPClient: client}); err == nil || resp == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("second websocket: %v, want 409", err)
	}

	bad := []struct {
		typ  websocket.MessageType
		data string
	}{
		{websocket.MessageText, `{"type":"dance"}`},
		{websocket.MessageBinary, "\x00\xff\x13garbage"},
		{websocket.MessageText, `not json`},
	}
	for i, b := range bad {
		if err := ws.Write(ctx, b.typ, []byte(b.data)); err != nil {
			t.Fatal(err)
		}
		if m := readUntil(t, ctx, ws, "error"); m["error"] == "" {
			t.Fatalf("message %d: error reply without a reason", i)
		}
	}
	st := ts.srv.Stats()
	if st["ws_bad_messages"] != 2 || st["ws_binary_messages"] != 1 {
		t.Fatalf("counters %v, want 2 bad and 1 binary", st)
	}
	// The fourth bad message is beyond the bound of 3: closed with 1008.
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"candidate"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("websocket ended with %v, want 1008", err)
			}
			break
		}
	}
	if ts.srv.Stats()["ws_closed_for_bad_messages"] != 1 {
		t.Fatalf("abuse close not counted: %v", ts.srv.Stats())
	}
	if c.Err() != nil {
		t.Fatalf("the call ended with its websocket: %v", c.Err())
	}
}

// TestEventsAndHangup: events published before the websocket opens wait
// for it (the oldest dropped beyond EventBuffer, counted), later ones
// follow, and Hangup sends a bye with the reason before the peer
// connection closes.
// Mutations caught: Publish dropping the newest instead of the oldest,
// the bye not written (the test waits for it in vain).
func TestEventsAndHangup(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	cfg := testConfig()
	cfg.EventBuffer = 2
	ts := startServer(t, cfg)
	published := make(chan struct{})
	ts.srv.cfg.OnCall = func(c *Call) {
		for i := range 4 {
			if err := c.Publish(map[string]int{"n": i}); err != nil {
				t.Errorf("Publish: %v", err)
			}
		}
		close(published)
		ts.calls <- c
	}
	ctx := testCtx(t, 30*time.Second)
	cl, err := webrtctest.Dial(ctx, ts.base, webrtctest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := ts.nextCall(t, ctx)
	defer c.Close()
	<-published
	// The two kept wait for the websocket; once they are through, the
	// next one drops nothing.
	waitFor(t, ctx, cl, "two events", func() bool { return len(cl.Events()) >= 2 })
	if err := c.Publish(map[string]int{"n": 4}); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(func() {}); !errors.Is(err, ErrEncode) {
		t.Fatalf("Publish(func): %v, want ErrEncode", err)
	}
	waitFor(t, ctx, cl, "three events", func() bool { return len(cl.Events()) >= 3 })
	var got []string
	for _, e := range cl.Events() {
		got = append(got, fmt.Sprint(e["n"]))
	}
	if strings.Join(got, ",") != "2,3,4" {
		t.Fatalf("events %v, want 2,3,4 (0 and 1 dropped)", got)
	}
	if ts.srv.Stats()["events_dropped"] != 2 {
		t.Fatalf("drops not counted: %v", ts.srv.Stats())
	}
	if err := cl.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	c.Hangup(conn.EndNormal, "agent finished")
	waitFor(t, ctx, cl, "the bye", func() bool {
		ev := cl.Events()
		return len(ev) > 0 && ev[len(ev)-1]["type"] == "bye"
	})
	ev := cl.Events()
	if r, _ := ev[len(ev)-1]["reason"].(string); !strings.Contains(r, "agent finished") {
		t.Fatalf("bye reason %q", r)
	}
	c.Close()
	if !errors.Is(c.Err(), ErrHangup) {
		t.Fatalf("Err %v, want ErrHangup", c.Err())
	}
	if err := c.WriteFrame(nil); !errors.Is(err, ErrHangup) {
		t.Fatalf("WriteFrame after the end: %v", err)
	}
	if err := c.Publish(1); !errors.Is(err, ErrHangup) {
		t.Fatalf("Publish after the end: %v", err)
	}
}

// TestConnectTimeout: an offer whose candidates go nowhere (the caller's
// socket drops everything) ends at ConnectTimeout with ErrConnectTimeout.
// Mutation caught: the connect timer not armed (the call would wait for
// ICE's own failure, or forever).
func TestConnectTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	cfg := testConfig()
	cfg.ConnectTimeout = 1500 * time.Millisecond
	ts := startServer(t, cfg)
	ctx := testCtx(t, 30*time.Second)
	cl, err := webrtctest.Dial(ctx, ts.base, webrtctest.Options{Unreachable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := ts.nextCall(t, ctx)
	defer c.Close()
	err = drainUntilEnd(ctx, c)
	if !errors.Is(err, ErrConnectTimeout) {
		t.Fatalf("ReadFrame ended with %v, want ErrClosed wrapping ErrConnectTimeout", err)
	}
	c.Close()
	if ts.srv.Stats()["end_connect_timeout"] != 1 {
		t.Fatalf("not counted: %v", ts.srv.Stats())
	}
}

// drainUntilEnd reads frames until ReadFrame fails and returns the error,
// which must wrap conn.ErrClosed.
func drainUntilEnd(ctx context.Context, c *Call) error {
	f := newFrame(c)
	for {
		if err := c.ReadFrame(ctx, f); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("watchdog: %w", err)
			}
			return err
		}
	}
}

// TestDTLSFailure: a caller whose certificate does not match the offer's
// fingerprint connects ICE but fails DTLS; the call ends with
// ErrDTLSFailed. Mutation caught: failure() blaming ICE whatever ICE's
// state (the end would read ErrICEFailed).
func TestDTLSFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	ts := startServer(t, testConfig())
	ctx := testCtx(t, 30*time.Second)
	// No websocket: the call may fail and be gone before it would open.
	cl, err := webrtctest.Dial(ctx, ts.base, webrtctest.Options{BadFingerprint: true, NoWebsocket: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := ts.nextCall(t, ctx)
	defer c.Close()
	if err := drainUntilEnd(ctx, c); !errors.Is(err, ErrDTLSFailed) {
		t.Fatalf("ReadFrame ended with %v, want ErrClosed wrapping ErrDTLSFailed", err)
	}
	c.Close()
	if ts.srv.Stats()["end_dtls_failed"] != 1 {
		t.Fatalf("not counted: %v", ts.srv.Stats())
	}
}
