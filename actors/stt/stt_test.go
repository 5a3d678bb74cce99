package stt

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/rs/zerolog"
)

// markerSession records what the stt actor asked of it, in order: "audio",
// "start" (SpeechStarted) and "finalize".
type markerSession struct {
	mu     sync.Mutex
	log    []string
	events chan providers.STTEvent
	once   sync.Once
}

var (
	_ providers.STTSession   = (*markerSession)(nil)
	_ providers.SpeechMarker = (*markerSession)(nil)
	_ providers.STTSession   = plainSession{}
)

func newMarkerSession() *markerSession {
	return &markerSession{events: make(chan providers.STTEvent, 4)}
}

func (s *markerSession) record(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, what)
	return nil
}

func (s *markerSession) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *markerSession) SendAudio([]int16) error           { return s.record("audio") }
func (s *markerSession) Finalize() error                   { return s.record("finalize") }
func (s *markerSession) SpeechStarted() error              { return s.record("start") }
func (s *markerSession) Events() <-chan providers.STTEvent { return s.events }
func (s *markerSession) Close() error {
	s.once.Do(func() { close(s.events) })
	return nil
}

// fail makes the session fail, as a provider does: one event with Err.
func (s *markerSession) fail(err error) { s.events <- providers.STTEvent{Err: err} }

func (p plainSession) SendAudio(pcm []int16) error       { return p.s.SendAudio(pcm) }
func (p plainSession) Finalize() error                   { return p.s.Finalize() }
func (p plainSession) Events() <-chan providers.STTEvent { return p.s.Events() }
func (p plainSession) Close() error                      { return p.s.Close() }

func frame() *messages.AudioFrame { return &messages.AudioFrame{Rate: 16000, PCM: make([]int16, 320)} }
func started() *messages.SpeechStarted {
	return &messages.SpeechStarted{At: time.Now(), DetectedAt: time.Now()}
}
func stopped() *messages.SpeechStopped {
	return &messages.SpeechStopped{At: time.Now(), DetectedAt: time.Now()}
}

// plainSession is a session without SpeechStarted (a vendor's stream).
type plainSession struct{ s *markerSession }

// gatedSTT's Connect waits until release (at once when open), then makes
// a markerSession, offered as a SpeechMarker or as a plain session.
type gatedSTT struct {
	marker bool
	gate   chan struct{}

	mu       sync.Mutex
	sessions []*markerSession
}

var _ providers.STT = (*gatedSTT)(nil)

func newGatedSTT(marker, open bool) *gatedSTT {
	p := &gatedSTT{marker: marker, gate: make(chan struct{})}
	if open {
		close(p.gate)
	}
	return p
}

func (p *gatedSTT) Connect(ctx context.Context) (providers.STTSession, error) {
	select {
	case <-p.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s := newMarkerSession()
	p.mu.Lock()
	p.sessions = append(p.sessions, s)
	p.mu.Unlock()
	if p.marker {
		return s, nil
	}
	return plainSession{s}, nil
}

func (p *gatedSTT) Warm(context.Context) error { return nil }

// release lets the Connects through.
func (p *gatedSTT) release() { close(p.gate) }

// made is the sessions Connect made, in order.
func (p *gatedSTT) made() []*markerSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sessions)
}

func (p *gatedSTT) last() *markerSession {
	m := p.made()
	return m[len(m)-1]
}

// TestSpeechStartReachesTheSession: the VAD's speech start reaches a
// session that holds a recognizer only while the caller speaks, in its
// place among the frames and finalizes, also when it was owed while the
// session connected, and again first thing after a restart mid utterance;
// a session without SpeechStarted streams as before. No goroutine is left
// once the actor stopped.
// Mutations caught (seen failing): SpeechStarted not passed on ("open
// session"), dropped while connecting or sent after the buffered frames
// ("connected after the speech started": start after the audio), the
// finalize owed sent after all buffered frames (the old order: the second
// utterance's frame before the finalize), and a restart that forgets the
// caller is speaking ("restart mid utterance": no start).
func TestSpeechStartReachesTheSession(t *testing.T) {
	type step func(t *testing.T, sys *kit.System, pid *actor.PID, p *gatedSTT)
	send := func(msgs ...func() any) step {
		return func(t *testing.T, sys *kit.System, pid *actor.PID, _ *gatedSTT) {
			for _, m := range msgs {
				sys.Root.Send(pid, m())
			}
		}
	}
	var (
		f     = func() any { return frame() }
		start = func() any { return started() }
		stop  = func() any { return stopped() }
	)
	release := func(_ *testing.T, _ *kit.System, _ *actor.PID, p *gatedSTT) { p.release() }
	failSession := func(_ *testing.T, _ *kit.System, _ *actor.PID, p *gatedSTT) {
		p.last().fail(&providers.Disconnected{Cause: errors.New("the line dropped")})
	}
	cases := []struct {
		name   string
		marker bool
		open   bool
		steps  []step
		want   [][]string // each session's calls, in order
	}{
		{name: "open session", marker: true, open: true,
			steps: []step{send(f, start, f, stop)},
			want:  [][]string{{"audio", "start", "audio", "finalize"}}},
		{name: "connected after the speech started", marker: true,
			steps: []step{send(f, start, f, stop, f, start, f), release},
			want:  [][]string{{"audio", "start", "audio", "finalize", "audio", "start", "audio"}}},
		{name: "start before any frame", marker: true,
			steps: []step{send(start, start, f), release},
			want:  [][]string{{"start", "audio"}}},
		{name: "restart mid utterance", marker: true, open: true,
			steps: []step{send(start, f), failSession, send(f, stop)},
			want:  [][]string{{"start", "audio"}, {"start", "audio", "finalize"}}},
		{name: "session without SpeechStarted", open: true,
			steps: []step{send(f, start, f, stop)},
			want:  [][]string{{"audio", "audio", "finalize"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				sys := kit.NewSystem(zerolog.Nop())
				turn := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
				p := newGatedSTT(c.marker, c.open)
				pid := sys.Root.Spawn(Props(p, kit.Peers{Turn: turn}))
				for _, s := range c.steps {
					synctest.Wait() // the actor has handled the step before
					s(t, sys, pid, p)
				}
				synctest.Wait()
				made := p.made()
				if len(made) != len(c.want) {
					t.Fatalf("%d sessions made, want %d", len(made), len(c.want))
				}
				for i, s := range made {
					if got := s.calls(); !slices.Equal(got, c.want[i]) {
						t.Errorf("session %d got %v, want %v", i, got, c.want[i])
					}
				}
				if err := sys.Root.StopFuture(pid).Wait(); err != nil {
					t.Fatal(err)
				}
				if err := sys.Root.StopFuture(turn).Wait(); err != nil {
					t.Fatal(err)
				}
				// protoactor's dead-letter throttle runs on a ticker for a
				// period after a dead letter (sim.RunTogether does the same).
				time.Sleep(sys.Config.DeadLetterThrottleInterval + messages.FrameDuration)
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Errorf("%d goroutines left after the actor stopped", n)
				}
			})
		})
	}
}

// namedSTT is a gatedSTT that names itself (providers.Named).
type namedSTT struct{ *gatedSTT }

var _ providers.Named = namedSTT{}

func (namedSTT) Vendor() string { return "acme" }
func (namedSTT) Model() string  { return "ears-2" }

// TestSessionUsage: the audio sent to the provider goes in the call
// record, told at each finalize (the end of an utterance) and when the
// session ends (a restart after it failed, the actor's stop), each frame
// once; nothing for a session that never connected, nothing with nobody
// observing. Mutations caught (seen failing): the failed session's audio
// not told at the restart ("restart": 40 ms only), the count not reset
// after a finalize ("utterances": 40 ms then 60 ms), no report at the
// finalize ("utterances": one of 60 ms), a frame counted when buffered as
// well as when sent ("buffered then sent": 100 ms), and the observer check
// dropped with a plain send ("off").
func TestSessionUsage(t *testing.T) {
	type step func(p *gatedSTT, send func(n int))
	frames := func(n int) step { return func(_ *gatedSTT, send func(int)) { send(n) } }
	fail := func(p *gatedSTT, _ func(int)) {
		p.last().fail(&providers.Disconnected{Cause: errors.New("the line dropped")})
	}
	release := func(p *gatedSTT, _ func(int)) { p.release() }
	var pid *actor.PID
	var sys *kit.System
	stop := func(*gatedSTT, func(int)) { sys.Root.Send(pid, stopped()) }
	cases := []struct {
		name     string
		open     bool
		observed bool
		steps    []step
		want     []time.Duration
	}{
		{name: "one session", open: true, observed: true, steps: []step{frames(3)}, want: []time.Duration{60 * time.Millisecond}},
		{name: "restart", open: true, observed: true, steps: []step{frames(3), fail, frames(2)},
			want: []time.Duration{60 * time.Millisecond, 40 * time.Millisecond}},
		{name: "utterances", open: true, observed: true, steps: []step{frames(2), stop, frames(1)},
			want: []time.Duration{40 * time.Millisecond, 20 * time.Millisecond}},
		{name: "buffered then sent", observed: true, steps: []step{frames(2), release, frames(1)}, want: []time.Duration{60 * time.Millisecond}},
		{name: "never connected", observed: true, steps: []step{frames(2)}},
		{name: "off", open: true, steps: []step{frames(3), fail, frames(2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				sys = kit.NewSystem(zerolog.Nop())
				var (
					mu     sync.Mutex
					events []messages.CallEvent
				)
				session := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
					if e, ok := ctx.Message().(*messages.CallEvent); ok {
						mu.Lock()
						events = append(events, *e)
						mu.Unlock()
					}
				}))
				turn := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
				p := newGatedSTT(true, c.open)
				pid = sys.Root.Spawn(Props(namedSTT{p}, kit.Peers{Session: session, Turn: turn, Events: c.observed}))
				send := func(n int) {
					for range n {
						sys.Root.Send(pid, frame())
					}
				}
				for _, s := range c.steps {
					synctest.Wait()
					s(p, send)
				}
				synctest.Wait()
				for _, q := range []*actor.PID{pid, session, turn} {
					if err := sys.Root.StopFuture(q).Wait(); err != nil {
						t.Fatal(err)
					}
					synctest.Wait() // the stage's last event reaches the session before its stop
				}
				mu.Lock()
				var got []time.Duration
				for _, e := range events {
					if e.Kind != messages.EventUsage || e.Usage == nil {
						t.Errorf("event %v without usage", e.Kind)
						continue
					}
					if u := *e.Usage; u.Kind != messages.UsageSTT || u.Vendor != "acme" || u.Model != "ears-2" {
						t.Errorf("usage %+v, want stt acme ears-2", u)
					}
					got = append(got, e.Usage.Audio)
				}
				mu.Unlock()
				if !slices.Equal(got, c.want) {
					t.Errorf("audio per session %v, want %v", got, c.want)
				}
				time.Sleep(sys.Config.DeadLetterThrottleInterval + messages.FrameDuration)
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Errorf("%d goroutines left after the actor stopped", n)
				}
			})
		})
	}
}
