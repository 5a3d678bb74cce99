package serve

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// ringingDialer is a trunk whose callee answers after ring: the call
// then starts as the SIP mount starts it (StartDialed).
type ringingDialer struct {
	s    *Server
	ring time.Duration
	mu   sync.Mutex
	conn *fakeConn
}

func (d *ringingDialer) Trunks() []string { return []string{"carrier"} }

func (d *ringingDialer) Dial(ctx context.Context, req DialRequest) (messages.CallID, error) {
	select {
	case <-time.After(d.ring):
	case <-ctx.Done():
		return "", &DialError{Outcome: DialCancelled}
	}
	c := newFakeConn("sip-out-setup", sim.NewScenario("callee").Silence(10*time.Second))
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	if err := d.s.StartDialed(c, req); err != nil {
		return "", err
	}
	return messages.CallID(c.ID()), nil
}

// greeter speaks an outbound greeting: at once when speakFirst, else
// after wait unless the callee spoke (a silent callee here).
type greeter struct {
	speakFirst bool
	wait       time.Duration
	firstByte  time.Duration
}

func (greeter) Name() string { return "test agent" }

func (g greeter) Session(env CallEnv) (session.Config, error) {
	cfg := session.Config{
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, nil),
		LLM:      providertest.NewMockLLM(providertest.LLMConfig{}),
		TTS:      providertest.NewMockTTS(providertest.TTSConfig{FirstByte: g.firstByte}),
		Greeting: "Hello, this is the clinic calling about your visit.",
	}
	if env.Dial != nil && (!g.speakFirst || env.Dial.WaitForCallee) {
		cfg.GreetAfter = g.wait
	}
	return cfg, nil
}

// TestOutboundSetupFormula pins an outbound call's set-up in virtual
// time, as s01 pins an answer: from the operator's request (the INVITE
// sent) to the agent's first audio at the callee is exactly the ring
// (the callee's) plus the greeting's wait (none when the agent speaks
// first; first_words_wait for a silent callee) plus the TTS first byte:
// the engine adds nothing of its own. Mutation caught (seen failing):
// the session not handing GreetAfter to the turn (the two waiting rows
// greet 3 s early).
func TestOutboundSetupFormula(t *testing.T) {
	cases := []struct {
		name       string
		speakFirst bool
		body       string
		wantAfter  time.Duration
	}{
		{"speak first", true, `{"trunk":"carrier","to":"+15551234"}`, 0},
		{"wait for the callee", false, `{"trunk":"carrier","to":"+15551234"}`, 3 * time.Second},
		{"speak first, dial asks to wait", true, `{"trunk":"carrier","to":"+15551234","wait_for_callee":true}`, 3 * time.Second},
	}
	const ring, firstByte = 2500 * time.Millisecond, 180 * time.Millisecond
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := greeter{speakFirst: tc.speakFirst, wait: 3 * time.Second, firstByte: firstByte}
				s, ln, stop := serving(t, Config{MaxCalls: 1}, g)
				d := &ringingDialer{s: s, ring: ring}
				if err := s.EnableDial(testToken, d); err != nil {
					t.Fatal(err)
				}
				asked := time.Now()
				if code, _, out := post(t, ln, testToken, tc.body); code != http.StatusCreated {
					t.Fatalf("dial: %d %v", code, out)
				}
				time.Sleep(6 * time.Second)
				d.mu.Lock()
				c := d.conn
				d.mu.Unlock()
				recs, _ := c.Records()
				var first time.Time
				for _, r := range recs {
					if r.Kind == sim.RecordAudio {
						first = r.At
						break
					}
				}
				if first.IsZero() {
					t.Fatal("the callee heard nothing")
				}
				want := ring + tc.wantAfter + firstByte
				if got := first.Sub(asked); got != want {
					t.Errorf("set-up %v (request to the callee's first audio), want exactly %v = ring %v + wait %v + TTS first byte %v",
						got, want, ring, tc.wantAfter, firstByte)
				}
				if err := stop(); err != nil {
					t.Error(err)
				}
				time.Sleep(2 * time.Second) // protoactor's dead-letter throttle runs out
			})
		})
	}
}
