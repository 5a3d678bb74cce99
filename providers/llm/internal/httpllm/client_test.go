package httpllm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// TestOpenRequest: the POST carries the body, the vendor's headers, JSON
// and event-stream types, and asks for no compression.
// Mutation seen failing: DisableCompression off (Accept-Encoding gzip
// sent).
func TestOpenRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got http.Header
		var body, method string
		cl, _ := served(t, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got, body, method = r.Header.Clone(), string(b), r.Method
			mu.Unlock()
			eventStream(w, r, sse("done"), 0, "")
		})
		s := &Stream{}
		if err := cl.Open(t.Context(), s, testURL, []byte(`{"model":"m"}`), &textDecoder{}); err != nil {
			t.Fatal(err)
		}
		if _, err := drain(t, s); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		want := map[string]string{
			"Authorization": "Bearer " + testKey, "Content-Type": "application/json",
			"Accept": "text/event-stream", "Accept-Encoding": "",
		}
		for k, v := range want {
			if got.Get(k) != v {
				t.Errorf("%s: %q, want %q", k, got.Get(k), v)
			}
		}
		if method != http.MethodPost || body != `{"model":"m"}` {
			t.Errorf("%s %q", method, body)
		}
	})
}

// TestOpenRefused: what a request that does not become a stream returns.
// Mutations seen failing: a redirect followed (the 307 case gets the
// stream); the key not redacted from the excerpt; a JSON answer read as
// events.
func TestOpenRefused(t *testing.T) {
	cases := []struct {
		name  string
		url   string
		h     http.HandlerFunc
		check func(error) bool
	}{
		{"status with key echoed", testURL, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"bad key `+testKey+`"}}`)
		}, func(err error) bool {
			var rej *providers.Rejected
			return errors.As(err, &rej) && rej.Status == 401 && rej.Detail == "bad key [redacted]" && !strings.Contains(err.Error(), testKey)
		}},
		{"redirect", testURL, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				eventStream(w, r, sse("done"), 0, "")
				return
			}
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, func(err error) bool {
			var rej *providers.Rejected
			return errors.As(err, &rej) && rej.Status == http.StatusTemporaryRedirect
		}},
		{"JSON instead of events", testURL, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{}`)
		}, func(err error) bool { return errors.Is(err, providers.ErrProtocol) }},
		{"connection dropped", testURL, func(w http.ResponseWriter, r *http.Request) {
			c, _, _ := w.(http.Hijacker).Hijack()
			_ = c.Close()
		}, func(err error) bool { return errors.Is(err, providers.ErrDisconnected) }},
		{"URL that does not parse", "http://h/\x7f", nil, func(err error) bool { return errors.Is(err, errInvalid) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cl, _ := served(t, c.h)
				s := &Stream{}
				err := cl.Open(t.Context(), s, c.url, []byte(`{}`), &textDecoder{})
				if !c.check(err) {
					t.Fatalf("error %v", err)
				}
			})
		})
	}
}

// TestConnectionReuse: Warm and two streams that end at the vendor's end
// (with the body's end still unread) use one connection.
// Mutations seen failing: Warm not reading the list to its end, or no
// drain after done (2 or 3 connections).
func TestConnectionReuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, conns := served(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				_, _ = io.WriteString(w, strings.Repeat(`{"id":"model"}`, 1000))
				return
			}
			eventStream(w, r, sse("a", "done"), 0, "")
		})
		if err := cl.Warm(t.Context(), testURL); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			s, err := openText(t.Context(), cl, &textDecoder{})
			if err != nil {
				t.Fatal(err)
			}
			// Read to LLMDone only: the stream, not the test, drains.
			for ev, err := s.Recv(); ev.Kind != providers.LLMDone; ev, err = s.Recv() {
				if err != nil {
					t.Fatal(err)
				}
			}
			_ = s.Close()
			synctest.Wait()
		}
		if n := conns.Load(); n != 1 {
			t.Fatalf("%d connections, want 1", n)
		}
	})
}

// TestWarm: a refusal is a Rejected, a stall a Timeout "warm" at
// ConnectTimeout.
// Mutation seen failing: Warm without its deadline (the stall runs to the
// caller's 1 min).
func TestWarm(t *testing.T) {
	cases := []struct {
		name  string
		h     http.HandlerFunc
		check func(error) bool
		at    time.Duration
	}{
		{"refused", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }, func(err error) bool {
			var rej *providers.Rejected
			return errors.As(err, &rej) && rej.Status == 403
		}, 0},
		{"stalled", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, func(err error) bool {
			var to *providers.Timeout
			return errors.As(err, &to) && to.Op == "warm"
		}, time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cl, _ := served(t, c.h)
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				start := time.Now()
				err := cl.Warm(ctx, testURL)
				if !c.check(err) || time.Since(start) != c.at {
					t.Fatalf("after %v: %v", time.Since(start), err)
				}
			})
		})
	}
}

// TestClientPrintsNoKey: %v, %+v and %#v of a Client hold no key.
// Mutation seen failing: String removed (%+v prints the header).
func TestClientPrintsNoKey(t *testing.T) {
	c := NewClient(ClientConfig{StreamConfig: testStreamConfig, Key: testKey, Header: http.Header{"X-Api-Key": {testKey}}})
	defer c.CloseIdle()
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(f, c); strings.Contains(s, testKey) {
			t.Fatalf("%s prints the key: %s", f, s)
		}
	}
}
