package pcmws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// TestHangupCloseCodes: the way the server ends a call is the close code
// the client reads: 1013 try later and 1011 internal for a call ended
// for capacity or an error, never 1000. Mutation caught (seen failing):
// CloseCode giving 1000 for every kind (the defect's "closed with 1000").
func TestHangupCloseCodes(t *testing.T) {
	for _, tc := range []struct {
		kind conn.EndKind
		code websocket.StatusCode
	}{
		{conn.EndTryLater, websocket.StatusTryAgainLater},
		{conn.EndInternal, websocket.StatusInternalError},
		{conn.EndGoingAway, websocket.StatusGoingAway},
		{conn.EndNormal, websocket.StatusNormalClosure},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			inBubble(t, Config{}, func(r *rig) {
				f, call := r.open("/pcm")
				call.Hangup(tc.kind, "the call could not be started")
				if ce := f.readClose(); ce.Code != tc.code || ce.Reason != "the call could not be started" {
					t.Fatalf("close %+v, want %d", ce, tc.code)
				}
				<-call.Done()
			})
		})
	}
}

// errorMsg is the server's error message.
type errorMsg struct {
	Type  string `json:"type"`
	Error string `json:"error"`
}

// readError reads the next message, which must be an error message of
// exactly the documented shape.
func (f *fakeClient) readError() string {
	f.t.Helper()
	typ, b, err := f.ws.Read(context.Background())
	if err != nil || typ != websocket.MessageText {
		f.t.Fatalf("read %v %q: %v", typ, b, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m errorMsg
	if err := dec.Decode(&m); err != nil || m.Type != "error" || m.Error == "" {
		f.t.Fatalf("not an error message: %q (%v)", b, err)
	}
	return m.Error
}

// TestClientToldItsMistakes: each kind of bad message is answered with
// one error message {"type":"error","error":...} (the WebRTC websocket's
// shape) saying what was wrong and quoting nothing of the message, and
// the call goes on. The defect: they were counted and dropped silently.
// Mutation caught (seen failing): no reply (the read times out).
func TestClientToldItsMistakes(t *testing.T) {
	cases := []struct {
		name string
		typ  websocket.MessageType
		msg  string
		want string
	}{
		{"invalid JSON", websocket.MessageText, `{"type":"mark",`, "invalid JSON"},
		{"trailing data", websocket.MessageText, `{"type":"hangup"} secret`, "invalid JSON"},
		{"not an object", websocket.MessageText, `["hangup"]`, "invalid JSON"},
		{"no type", websocket.MessageText, `{"name":"x"}`, `needs a string "type"`},
		{"unknown type", websocket.MessageText, `{"type":"secret-dance"}`, "unknown type"},
		{"mark without a name", websocket.MessageText, `{"type":"mark"}`, `a mark needs a string "name"`},
		{"odd-length audio", websocket.MessageBinary, "\x01\x02\x03", "odd-length audio"},
		{"oversized", websocket.MessageBinary, strings.Repeat("\x00", 4098), "too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, Config{Limits: Limits{MaxMessageBytes: 4096}}, func(r *rig) {
				f, call := r.open("/pcm?rate=8000")
				f.sendRaw(tc.typ, []byte(tc.msg))
				got := f.readError()
				if !strings.Contains(got, tc.want) || strings.Contains(got, "secret") {
					t.Fatalf("error %q, want it to say %q", got, tc.want)
				}
				survives(t, f, call)
				if r.h.Stats()["error_replies"] != 1 {
					t.Fatalf("error_replies %d", r.h.Stats()["error_replies"])
				}
			})
		})
	}
}

// TestErrorRepliesBounded: a flood of bad messages gets at most one
// error message each, a burst of errorBurst and then one per second, and
// the MaxBadMessages run still closes the call. Mutation caught (seen
// failing): no budget (an error per bad message: 30 replies).
func TestErrorRepliesBounded(t *testing.T) {
	inBubble(t, Config{Limits: Limits{MaxBadMessages: 40}}, func(r *rig) {
		f, call := r.open("/pcm?rate=8000")
		replies := 0
		flood := func(n int) {
			for range n {
				f.sendRaw(websocket.MessageBinary, []byte{1})
			}
			synctest.Wait()
			for uint64(replies) < r.h.Stats()["error_replies"] {
				f.readError()
				replies++
			}
		}
		flood(30)
		time.Sleep(2 * time.Second) // two tokens back
		flood(9)
		f.sendRaw(websocket.MessageBinary, []byte{1}) // the 40th in a row
		if ce := f.readClose(); ce.Code != websocket.StatusPolicyViolation {
			t.Fatalf("close %+v, want the bad-message bound's 1008", ce)
		}
		<-call.Done()
		st := r.h.Stats()
		if replies != errorBurst+2 || st["errors_unsent"] != 39-uint64(replies) {
			t.Fatalf("%d replies to 39 bad messages (%d unsent), want %d", replies, st["errors_unsent"], errorBurst+2)
		}
		if !errors.Is(call.Err(), conn.ErrProtocol) {
			t.Fatalf("end %v, want a protocol error", call.Err())
		}
	})
}

// TestInvalidUTF8 closes the call with 1007, a protocol error. The
// defect: invalid UTF-8 in a text frame was accepted. Mutation caught
// (seen failing): no UTF-8 check (the message is answered as bad JSON
// and the call goes on).
func TestInvalidUTF8(t *testing.T) {
	inBubble(t, Config{}, func(r *rig) {
		f, call := r.open("/pcm")
		f.sendRaw(websocket.MessageText, []byte("{\"type\":\"mark\",\"name\":\"\xff\xfe\"}"))
		if ce := f.readClose(); ce.Code != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("close %+v, want 1007", ce)
		}
		<-call.Done()
		if !errors.Is(call.Err(), conn.ErrProtocol) || conn.ReasonOf(call.Err()) != conn.ReasonProtocol {
			t.Fatalf("end %v", call.Err())
		}
		if r.h.Stats()["invalid_utf8"] != 1 {
			t.Fatalf("invalid_utf8 %d", r.h.Stats()["invalid_utf8"])
		}
	})
}

// TestAllowedOrigins: a browser's request from a listed origin (scheme,
// host and port) is upgraded, as are clients without Origin and the
// server's own pages; any other origin gets 403 with a body naming the
// setting, before admission. The defect: no setting allowed another
// origin. Mutations caught (each seen failing): the origin compared
// without its scheme (http://app.example passes), no OriginPatterns for
// the websocket accept (every listed origin refused by its own check).
func TestAllowedOrigins(t *testing.T) {
	allowed := []string{"https://app.example", "http://[::1]:8080", "HTTPS://Other.Example:8443/"}
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"https://app.example", true},
		{"https://APP.example", true},
		{"http://[::1]:8080", true},
		{"https://other.example:8443", true},
		{"http://pipe.invalid:80", true}, // the server's own host
		{"http://app.example", false},
		{"https://app.example:444", false},
		{"https://evil.example", false},
		{"https://app.example.evil", false},
		{"null", false},
		{"http://[::1]:8081", false},
	}
	synctest.Test(t, func(t *testing.T) {
		adm := &carriertest.Admitter{Limit: 100}
		h, err := New(Config{AllowedOrigins: allowed, Admit: adm.Admit, OnCall: func(*Call) {}})
		if err != nil {
			t.Fatal(err)
		}
		srv := carriertest.NewPipeServer(h)
		for _, tc := range cases {
			var hdr http.Header
			if tc.origin != "" {
				hdr = carriertest.Header("Origin", tc.origin)
			}
			c, resp, body, err := carriertest.DialRaw(context.Background(), srv, "/pcm", hdr)
			if tc.ok {
				if err != nil {
					t.Errorf("origin %q refused: %v %s", tc.origin, err, body)
					continue
				}
				c.Close()
				continue
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "AllowedOrigins") {
				t.Errorf("origin %q: %v %s, want 403 naming AllowedOrigins", tc.origin, err, body)
			}
		}
		h.Close()
		srv.Close()
		if want := countTrue(cases); adm.Admitted() != want {
			t.Fatalf("%d admitted, want %d (a refused origin took a slot)", adm.Admitted(), want)
		}
	})
	for _, bad := range []string{"app.example", "ftp://app.example", "https://app.example/path", "https://", "https://u@app.example"} {
		if _, err := New(Config{AllowedOrigins: []string{bad}, OnCall: func(*Call) {}}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("AllowedOrigins %q accepted: %v", bad, err)
		}
	}
}

func countTrue(cases []struct {
	origin string
	ok     bool
}) int {
	n := 0
	for _, c := range cases {
		if c.ok {
			n++
		}
	}
	return n
}

// TestLogLinesStrictJSON: every line the handler logs over calls that
// start, refuse and end is one JSON object with no key twice. Mutation
// caught (seen failing): a call logger made With() the call id and the
// end line adding call_id again (the defect of "webrtc call ended").
func TestLogLinesStrictJSON(t *testing.T) {
	var log carriertest.LogBuffer
	inBubble(t, Config{Logger: zerolog.New(&log), Admit: (&carriertest.Admitter{Limit: 1}).Admit}, func(r *rig) {
		f, call := r.open("/pcm")
		if _, resp, err := r.srv.Dial(context.Background(), "/pcm"); err == nil || resp.StatusCode != 503 {
			t.Fatalf("second call: %v", err)
		}
		f.sendRaw(websocket.MessageText, []byte("\xff"))
		<-call.Done()
	})
	if n := carriertest.StrictJSONLines(t, log.Bytes()); n < 3 {
		t.Fatalf("%d log lines, want start, refusal and end:\n%s", n, log.Bytes())
	}
}
