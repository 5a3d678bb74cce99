package opclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

const testToken = "op-token-0123456789abcdef"

// serveAPI runs h on 127.0.0.1 (httptest) and a client of it.
func serveAPI(t *testing.T, h http.HandlerFunc) (*Client, func()) {
	t.Helper()
	srv := httptest.NewServer(h)
	c, err := New(Config{Addr: srv.URL, Token: testToken, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() { c.Close(); srv.Close() }
}

func answer(status int, ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// TestConfigValidate: an address that is not an http(s) URL, one with a
// password, a short token or one with a space make no client, and the
// token is in no error. Mutation caught: the length check dropped (a
// 12-character token accepted).
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"ok", Config{Addr: "http://localhost:8000", Token: testToken}, true},
		{"https with a prefix", Config{Addr: "https://ops.example/brisvox/", Token: testToken}, true},
		{"no scheme", Config{Addr: "localhost:8000", Token: testToken}, false},
		{"ftp", Config{Addr: "ftp://localhost", Token: testToken}, false},
		{"userinfo", Config{Addr: "http://u:p@localhost", Token: testToken}, false},
		{"query", Config{Addr: "http://localhost/?a=1", Token: testToken}, false},
		{"short token", Config{Addr: "http://localhost", Token: "secret-short"}, false},
		{"token with a space", Config{Addr: "http://localhost", Token: "op-token 0123456789abcdef"}, false},
		{"negative timeout", Config{Addr: "http://localhost", Token: testToken, Timeout: -time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("New: %v, want ok %v", err, tc.ok)
			}
			if err != nil && tc.cfg.Token != "" && strings.Contains(err.Error(), tc.cfg.Token) {
				t.Errorf("the token is in the error: %v", err)
			}
		})
	}
}

// TestErrorMapping: each answer of the operator API, and each failure to
// get one, maps to its error; the token is never in it, even when the
// server echoes it. Mutations caught (each seen failing): a 404 on a
// node mapped as an unknown call; the stages of a 400 dropped; the
// redaction of the server's text removed (the token echoed).
func TestErrorMapping(t *testing.T) {
	defer goleak.VerifyNone(t)
	jsonCT := "application/json"
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		do   func(*Client) error
		want error
		has  string
	}{
		{"401", answer(401, jsonCT, `{"error":"a valid operator token is required"}`), listCall, ErrUnauthorized, "token is required"},
		{"401 from a proxy", answer(401, "text/html", `<html>no</html>`), listCall, ErrUnauthorized, ""},
		{"404 call", answer(404, jsonCT, `{"error":"serve: unknown call: c9"}`), showCall, ErrUnknownCall, "c9"},
		{"404 node", answer(404, jsonCT, `{"error":"serve: unknown node: \"n9\""}`), drainNode, ErrUnknownNode, "n9"},
		{"404 without the API", answer(404, "text/plain; charset=utf-8", "404 page not found\n"), listCall, ErrProtocol, "--operator-token-env"},
		{"400 stage", answer(400, jsonCT, `{"error":"serve: unknown stage: \"mixer\"","stages":["transport","vad","stt"]}`), restartMixer, ErrUnknownStage, "want one of transport, vad, stt"},
		{"409", answer(409, jsonCT, `{"error":"serve: refused: the node is shutting down"}`), undrainNode, ErrRefused, "shutting down"},
		{"502", answer(502, jsonCT, `{"error":"serve: call c1 did not answer: future: timeout"}`), showCall, ErrNoAnswer, "did not answer"},
		{"500", answer(500, jsonCT, `{"error":"boom"}`), listCall, ErrProtocol, "500"},
		{"garbage body", answer(200, jsonCT, `{"calls": [`), listCall, ErrProtocol, ""},
		{"html 200", answer(200, "text/html", `<html></html>`), listCall, ErrProtocol, "text/html"},
		{"missing key", answer(200, jsonCT, `{"node":"n1"}`), listCall, ErrProtocol, `"calls"`},
		{"echoed token", answer(409, jsonCT, `{"error":"refused `+testToken+`"}`), undrainNode, ErrRefused, "[token]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, stop := serveAPI(t, tc.h)
			defer stop()
			err := tc.do(c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.has) {
				t.Errorf("err %q lacks %q", err, tc.has)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the token is in the error: %v", err)
			}
			var se *StageError
			if errors.Is(tc.want, ErrUnknownStage) && (!errors.As(err, &se) || se.Stage != "mixer" || !slices.Contains(se.Stages, "stt")) {
				t.Errorf("stage error %#v", se)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, err := New(Config{Addr: "http://" + addr, Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := listCall(c); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("err %v, want ErrUnreachable (connection refused)", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		c, err := New(Config{Addr: srv.URL, Token: testToken, Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := listCall(c); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "within 50ms") {
			t.Errorf("err %v, want ErrUnreachable (no answer within 50ms)", err)
		}
	})
}

func listCall(c *Client) error     { _, err := c.List(context.Background()); return err }
func showCall(c *Client) error     { _, err := c.Show(context.Background(), "c9"); return err }
func drainNode(c *Client) error    { _, err := c.Drain(context.Background(), "n9"); return err }
func undrainNode(c *Client) error  { _, err := c.Undrain(context.Background(), "n1"); return err }
func restartMixer(c *Client) error { return c.Restart(context.Background(), "c1", "mixer") }

// TestRequests: each method sends its method and path (the id escaped),
// the bearer token, and decodes the answer. Mutation caught: the id not
// escaped (a/b reaches the server as two path elements).
func TestRequests(t *testing.T) {
	defer goleak.VerifyNone(t)
	var got []string
	c, stop := serveAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(401)
			return
		}
		got = append(got, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/restart"):
			_, _ = io.WriteString(w, `{"call":"a/b","restarted":"stt"}`)
		case strings.HasSuffix(r.URL.Path, "/hangup"):
			w.WriteHeader(202)
			_, _ = io.WriteString(w, `{"call":"a/b","hangup":true}`)
		case strings.HasSuffix(r.URL.Path, "/drain"):
			_, _ = io.WriteString(w, `{"node":"n1","self":true,"live_calls":2,"max_calls":4,"draining":true,"drain":{"by":"operator","started":"2026-12-03T14:00:00Z","live_at_start":2},"uptime_ms":5}`)
		case r.URL.Path == "/operator/nodes":
			_, _ = io.WriteString(w, `{"nodes":[{"node":"n1","self":true,"live_calls":0,"max_calls":4,"draining":false,"uptime_ms":5,"admission":{"load":0.41,"ceiling":0.8}}]}`)
		case r.URL.Path == "/operator/calls":
			_, _ = io.WriteString(w, `{"node":"n1","calls":[{"id":"a/b","node":"n1","transport":"pcm","agent":"demo","state":"listening","started":"2026-12-03T14:00:00Z","age_ms":4000,"turns":1,"last_turn_ms":412.5,"restarts":0,"future":1}]}`)
		default:
			_, _ = io.WriteString(w, `{"call":{"id":"a/b"},"tree":{"name":"session","state":"running","mailbox":0,"restarts":0,"children":[{"name":"stt","state":"running","mailbox":1,"restarts":1}]},"turns":[{"epoch":1,"at":"2026-12-03T14:00:05Z","marks_ms":{"vad_stop":0,"first_audio_out":640.2}}]}`)
		}
	})
	defer stop()
	ctx := context.Background()
	l, err := c.List(ctx)
	if err != nil || len(l.Calls) != 1 || *l.Calls[0].LastTurnMS != 412.5 || !strings.Contains(string(l.JSON()), `"future"`) {
		t.Fatalf("List: %+v %v", l, err)
	}
	d, err := c.Show(ctx, "a/b")
	if err != nil || d.Tree.Children[0].Restarts != 1 || d.Turns[0].MarksMS[MarkFirstAudioOut] != 640.2 {
		t.Fatalf("Show: %+v %v", d, err)
	}
	if err := c.Restart(ctx, "a/b", "stt"); err != nil {
		t.Fatal(err)
	}
	if err := c.Hangup(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	n, err := c.Nodes(ctx)
	if err != nil || n.Nodes[0].Admission.Load != 0.41 {
		t.Fatalf("Nodes: %+v %v", n, err)
	}
	if ni, err := c.Drain(ctx, "n1"); err != nil || !ni.Draining || ni.Drain.By != "operator" {
		t.Fatalf("Drain: %+v %v", ni, err)
	}
	if _, err := c.Undrain(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /operator/calls?", "GET /operator/calls/a%2Fb?", "POST /operator/calls/a%2Fb/restart?stage=stt",
		"POST /operator/calls/a%2Fb/hangup?", "GET /operator/nodes?", "POST /operator/nodes/n1/drain?", "DELETE /operator/nodes/n1/drain?",
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests:\n%q\nwant\n%q", got, want)
	}
}
