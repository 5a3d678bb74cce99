package openaispeech

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
	"github.com/brisvox/brisvox/providers/tts/openaispeech/speechmock"
)

// TestConfigValidate: the presets pass; each bad field is refused with
// ErrInvalidConfig. Mutation seen failing: the Speed range not checked.
func TestConfigValidate(t *testing.T) {
	good := OpenAI("tts-1", "alloy")
	cases := []struct {
		name   string
		mutate func(*Config)
		ok     bool
	}{
		{"openai preset", func(*Config) {}, true},
		{"local preset", func(c *Config) { *c = Local("http://localhost:8880/v1", "kokoro", "af_sky") }, true},
		{"ftp url", func(c *Config) { c.BaseURL = "ftp://x/v1" }, false},
		{"credentials in url", func(c *Config) { c.BaseURL = "https://u:p@x/v1" }, false},
		{"no model", func(c *Config) { c.Model = " " }, false},
		{"no voice", func(c *Config) { c.Voice = "" }, false},
		{"mp3", func(c *Config) { c.Format = "mp3" }, false},
		{"speed too high", func(c *Config) { c.Speed = 4.5 }, false},
		{"speed too low", func(c *Config) { c.Speed = 0.1 }, false},
		{"pcm rate", func(c *Config) { c.PCMRate = 100 }, false},
		{"negative timeout", func(c *Config) { c.IdleTimeout = -time.Second }, false},
		{"negative bound", func(c *Config) { c.MaxQueuedBytes = -1 }, false},
		{"tiny read buffer", func(c *Config) { c.ReadBytes = 10 }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := good
			c.mutate(&cfg)
			err := cfg.Validate()
			if c.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("%v", err)
			}
		})
	}
}

// TestNewReadsTheKey: a named but empty variable is ErrMissingKey naming
// the variable; the adapter prints no key. Mutation seen failing:
// GoString removed (%#v prints the key field).
func TestNewReadsTheKey(t *testing.T) {
	t.Setenv(testKeyEnv, "")
	cfg := OpenAI("tts-1", "alloy")
	cfg.APIKeyEnv = testKeyEnv
	if _, err := New(cfg); !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), testKeyEnv) {
		t.Fatalf("%v", err)
	}
	t.Setenv(testKeyEnv, testKey)
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(f, a); strings.Contains(s, testKey) {
			t.Fatalf("%s prints the key: %s", f, s)
		}
	}
	if a.EmitsWords() || a.FaultsAtConnect() {
		t.Fatal("the adapter claims word timings or faults at connect")
	}
}

// TestWarm: Warm opens a pooled connection with the key; a server without
// the model list is warm all the same; a refusal is a Rejected; a stall is
// a Timeout at ConnectTimeout. Mutations seen failing: 404 taken as a
// refusal; Warm unbounded (the stall waits an hour).
func TestWarm(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		check   func(error) bool
		after   time.Duration
	}{
		{"models", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"data":[]}`)) }, func(err error) bool { return err == nil }, 0},
		{"no model list", func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }, func(err error) bool { return err == nil }, 0},
		{"bad key", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"bad key `+testKey+`"}}`, http.StatusUnauthorized)
		}, rejected(401), 0},
		{"stall", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, timeout("warm"), testTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				leakCheck(t)
				t.Setenv(testKeyEnv, testKey)
				l := openaimock.NewPipeListener()
				srv := &http.Server{Handler: c.handler}
				done := make(chan struct{})
				go func() { _ = srv.Serve(l); close(done) }()
				defer func() { _ = srv.Close(); <-done }()
				cfg := OpenAI("tts-1", "alloy")
				cfg.BaseURL, cfg.APIKeyEnv, cfg.ConnectTimeout = "http://"+openaimock.PipeAddr+"/v1", testKeyEnv, testTimeout
				cfg.DialContext = l.DialContext
				a, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				start := time.Now()
				err = a.Warm(t.Context())
				if !c.check(err) || time.Since(start) != c.after {
					t.Fatalf("%v after %v", err, time.Since(start))
				}
				if err != nil && strings.Contains(err.Error(), testKey) {
					t.Fatalf("the key in %v", err)
				}
			})
		})
	}
}

// TestConnectAfterCancel: a done context is refused; a live one opens
// nothing (no connection until the first text). Mutation seen failing:
// Connect warming the pool.
func TestConnectAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, speechmock.Response{}, nil)
		s := r.connect(t.Context())
		synctest.Wait()
		if r.srv.Conns() != 0 {
			t.Fatalf("%d connections before the first text", r.srv.Conns())
		}
		_ = s.Close()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := r.a.Connect(ctx); err == nil {
			t.Fatal("connect on a done context")
		}
		var _ providers.TTS = r.a
	})
}
