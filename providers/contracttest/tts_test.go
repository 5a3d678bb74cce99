package contracttest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// newTTSHarness makes the mock TTS harness with a 2 s io timeout and a
// 50 ms connect, paced (one 40 ms chunk per 40 ms) or not (a burst).
func newTTSHarness(t *testing.T, paced bool) *MockTTSHarness {
	t.Helper()
	h, err := NewMockTTSHarness(MockTTSHarnessConfig{
		TTS:       providertest.TTSConfig{ConnectLatency: 50 * time.Millisecond, Paced: paced},
		IOTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// mustTTS unwraps a provider made by a constructor with an error; the
// arguments are the tests' own, so an error is a bug of the test.
func mustTTS(p providers.TTS, err error) providers.TTS {
	if err != nil {
		panic(err)
	}
	return p
}

// referenceTTS is the mock behind the reference deadlines.
func referenceTTS(h *MockTTSHarness) providers.TTS {
	return mustTTS(TTSWithDeadlines(h.Provider(), Uniform(h.IOTimeout())))
}

// runTTSSuite runs the TTS suite; it must be called inside a bubble.
func runTTSSuite(t *testing.T, p providers.TTS, h TTSHarness) Report {
	t.Helper()
	rep, err := RunTTS(t.Context(), p, h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Checks), len(TTSCheckNames()); got != want {
		t.Fatalf("%d checks reported, want %d", got, want)
	}
	return rep
}

// The paced mock (a real-time synthesizer) and the unpaced one (a burst of
// audio queued when the first chunk is read) both pass the whole suite,
// cancel included: what is buffered at the cancel is not counted.
// Mutations caught (unpaced): counting the buffered events in cancel;
// TTSWithDeadlines relaying a cancelled context's events from its own
// buffer (66 events after the cancel); its relay not ending with the
// caller's context (the abandoned session of no_goroutine_leak leaks it,
// and the bubble deadlocks).
func TestMockTTSPassesTheSuite(t *testing.T) {
	for _, tt := range []struct {
		name  string
		paced bool
	}{{"paced", true}, {"unpaced", false}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newTTSHarness(t, tt.paced)
				start := time.Now()
				rep := runTTSSuite(t, referenceTTS(h), h)
				t.Logf("suite took %v of virtual time\n%v", time.Since(start), rep)
				if !rep.Passed() {
					t.Fatalf("the reference mock fails:\n%v", rep)
				}
			})
		})
	}
}

// Each broken TTS double must fail exactly the checks it targets, and the
// conformant variations (LeadingSilence, an adapter that connects on its
// first push under a harness that says so) pass everything. Mutations
// seen failing this test (applied, run, reverted): cancel without its
// CancelSlackEvents limit (stragglers_3); the quiet window after Flushed
// (late_audio); the audio-past-the-last-word demand (truncated); the
// no-made-up-words demand (declares_no_words); the demand that Connect
// fails when faults act at connect (connects_on_first_push_undeclared);
// the quiet window after the ack together with the follow-up context
// (ack_then_keeps_streaming, dies_after_cancel; either alone still
// catches both: the quiet window sees DiesAfterCancel's events close, the
// follow-up sees AckThenKeepsStreaming's stale events).
func TestBrokenTTSDoublesFailExactlyTheirChecks(t *testing.T) {
	timeoutStalls := []string{CheckTimeoutConnect, CheckTimeoutFirst, CheckTimeoutIdle}
	allTimeouts := []string{CheckTimeoutConnect, CheckTimeoutConnectSlow, CheckTimeoutFirst, CheckTimeoutFirstSlow, CheckTimeoutIdle}
	type built struct {
		p providers.TTS
		h TTSHarness
	}
	for _, tt := range []struct {
		name  string
		build func(t *testing.T, h *MockTTSHarness) built
		want  []string
	}{
		{
			name:  "leading_silence",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{LeadingSilence(referenceTTS(h)), h} },
		},
		{
			name: "connects_on_first_push",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{ConnectsOnFirstPush(referenceTTS(h)), OpensNothingAtConnect(h)}
			},
		},
		{
			// The harness does not say that faults come after the first
			// text: the refusals and the stalled connect are not seen at
			// Connect.
			name: "connects_on_first_push_undeclared",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{ConnectsOnFirstPush(referenceTTS(h)), h}
			},
			want: []string{CheckErrorMapping, CheckTimeoutConnect},
		},
		{
			// The other way round: an adapter that connects at Connect
			// under a harness that says it opens nothing there. Its
			// refusals and stalled connect come from Connect instead of
			// after the first text. Catches: the Connect error wrapped
			// with %w into the failure, where errors.As still finds the
			// Rejected and the Timeout (nothing failed).
			name: "opens_at_connect_declared_lazy",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{referenceTTS(h), OpensNothingAtConnect(h)}
			},
			want: []string{CheckErrorMapping, CheckTimeoutConnect},
		},
		{
			// The FaultsAtConnect-false branch can fail: the first request
			// has no deadline.
			name: "connects_on_first_push_connect_hangs",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{ConnectsOnFirstPush(mustTTS(ConnectHangsTTS(h.Provider(), h.IOTimeout()))), OpensNothingAtConnect(h)}
			},
			want: []string{CheckTimeoutConnect},
		},
		{
			name: "connects_on_first_push_mis_mapped",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{MisMappedTTS(ConnectsOnFirstPush(referenceTTS(h))), OpensNothingAtConnect(h)}
			},
			want: []string{CheckErrorMapping},
		},
		{
			name:  "dead_cancel",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{DeadCancel(referenceTTS(h)), h} },
			want:  []string{CheckCancel},
		},
		{
			name:  "ignores_cancel",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{IgnoresCancel(referenceTTS(h)), h} },
			want:  []string{CheckCancel},
		},
		{
			name:  "delayed_cancel",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{DelayedCancel(referenceTTS(h)), h} },
			want:  []string{CheckCancel},
		},
		{
			name:  "ack_then_keeps_streaming",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{AckThenKeepsStreaming(referenceTTS(h)), h} },
			want:  []string{CheckCancel},
		},
		{
			name:  "dies_after_cancel",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{DiesAfterCancel(referenceTTS(h)), h} },
			want:  []string{CheckCancel},
		},
		{
			name:  "stragglers_2",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{Stragglers(referenceTTS(h), 2), h} },
		},
		{
			name:  "stragglers_3",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{Stragglers(referenceTTS(h), 3), h} },
			want:  []string{CheckCancel},
		},
		{
			// Both checks demand audio past the last word's start.
			name:  "truncated",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{Truncated(referenceTTS(h)), h} },
			want:  []string{CheckAudioAndWords, CheckFlush},
		},
		{
			name:  "late_audio",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{LateAudio(referenceTTS(h)), h} },
			want:  []string{CheckAudioAndWords, CheckFlush},
		},
		{
			name:  "declares_no_words",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{referenceTTS(h), DeclaresNoWords(h)} },
			want:  []string{CheckAudioAndWords, CheckFlush},
		},
		{
			name: "leaky",
			build: func(t *testing.T, h *MockTTSHarness) built {
				p := NewLeakyTTS(referenceTTS(h))
				t.Cleanup(p.Release)
				return built{p, h}
			},
			want: []string{CheckGoroutineLeak},
		},
		{
			name:  "mis_mapped",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{MisMappedTTS(referenceTTS(h)), h} },
			want:  []string{CheckErrorMapping},
		},
		{
			name:  "stale_session",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{StaleSessionTTS(referenceTTS(h)), h} },
			want:  []string{CheckReconnect, CheckTimeoutConnect},
		},
		{
			name:  "warm_fails",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{WarmFailsTTS(referenceTTS(h)), h} },
			want:  []string{CheckWarm},
		},
		{
			name:  "warm_hangs",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{WarmHangsTTS(referenceTTS(h)), h} },
			want:  []string{CheckWarm},
		},
		{
			name:  "warm_slows",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{WarmSlowsTTS(referenceTTS(h)), h} },
			want:  []string{CheckWarm},
		},
		{
			name: "connect_hangs",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{mustTTS(ConnectHangsTTS(h.Provider(), h.IOTimeout())), h}
			},
			want: []string{CheckTimeoutConnect},
		},
		{
			name: "no_idle_timeout",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{mustTTS(NoIdleTimeoutTTS(h.Provider(), h.IOTimeout())), h}
			},
			want: []string{CheckTimeoutIdle},
		},
		{
			name: "deadline_1500ms",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{mustTTS(TTSWithDeadlines(h.Provider(), Uniform(1500*time.Millisecond))), h}
			},
			want: timeoutStalls,
		},
		{
			name: "deadline_500ms",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{mustTTS(TTSWithDeadlines(h.Provider(), Uniform(500*time.Millisecond))), h}
			},
			want: allTimeouts,
		},
		{
			name: "deadline_3s",
			build: func(t *testing.T, h *MockTTSHarness) built {
				return built{mustTTS(TTSWithDeadlines(h.Provider(), Uniform(3*time.Second))), h}
			},
			want: timeoutStalls,
		},
		{
			name:  "no_deadlines",
			build: func(t *testing.T, h *MockTTSHarness) built { return built{h.Provider(), h} },
			want:  timeoutStalls,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newTTSHarness(t, true)
				b := tt.build(t, h)
				rep := runTTSSuite(t, b.p, b.h)
				if got := failedNames(rep); !slices.Equal(got, tt.want) {
					t.Fatalf("failed checks %q, want %q\n%v", got, tt.want, rep)
				}
				for _, c := range rep.Failures() {
					if c.Detail == "" {
						t.Errorf("%s failed without a detail", c.Name)
					}
				}
			})
		})
	}
}

// instantTTS answers at once, in no virtual time: Connect returns at
// once and a Flush queues one audio chunk and the Flushed.
type instantTTS struct{}

func (instantTTS) Connect(context.Context) (providers.TTSSession, error) {
	return &instantSession{events: make(chan providers.TTSEvent, 2)}, nil
}

func (instantTTS) Warm(context.Context) error { return nil }

type instantSession struct {
	events chan providers.TTSEvent
	once   sync.Once
}

func (s *instantSession) Push(string, string) error { return nil }

func (s *instantSession) Flush(id string) error {
	s.events <- providers.TTSEvent{Kind: providers.TTSAudio, ContextID: id, Rate: 16000, PCM: make([]int16, 320)}
	s.events <- providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: id}
	return nil
}

func (s *instantSession) Cancel(string) error               { return nil }
func (s *instantSession) Events() <-chan providers.TTSEvent { return s.events }

func (s *instantSession) Close() error {
	s.once.Do(func() { close(s.events) })
	return nil
}

// A service whose first audio comes in no virtual time (an unpaced mock
// on an in-memory pipe) passes warm: its time to audio is 0, which is a
// time, not "no audio". Catches: timeToAudio using first == 0 as "no
// audio seen yet" (warm then fails with "cold session: no audio before
// Flushed").
func TestWarmAcceptsAnInstantService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newTTSHarness(t, false)
		r := &ttsRun{suite: newSuite(t.Context(), Config{}, h.IOTimeout()), p: instantTTS{}, h: h,
			words: true, atConnect: true}
		if err := r.warm(); err != nil {
			t.Fatalf("warm over an instant service: %v", err)
		}
	})
}

// The held-text checks run only for a harness that holds text, and each
// can fail: over the reference (its Push owes an answer) the slow LLM is
// cut off; over FlushOwesOnly (nothing armed for held text) the stalled
// service is waited for until the suite's bound. A harness that holds no
// text gets the plain suite. Mutations seen failing this test (applied,
// run, reverted): held_text_stalled without its injected stall (the
// reference then speaks, so held_text_stalled fails for it too);
// held_text_slow_llm without the LLM's pause (the reference passes it);
// FlushOwesOnly owing on Push all the same (it passes held_text_stalled).
func TestHeldTextChecksBite(t *testing.T) {
	for _, tt := range []struct {
		name      string
		build     func(h *MockTTSHarness) (providers.TTS, TTSHarness)
		wantNames int
		want      []string
	}{
		{
			name:      "reference_holds_no_text",
			build:     func(h *MockTTSHarness) (providers.TTS, TTSHarness) { return referenceTTS(h), h },
			wantNames: len(TTSCheckNames()),
		},
		{
			name:      "reference_holds_text",
			build:     func(h *MockTTSHarness) (providers.TTS, TTSHarness) { return referenceTTS(h), HoldsText(h) },
			wantNames: len(TTSCheckNames()) + 2,
			want:      []string{CheckHeldTextSlowLLM},
		},
		{
			name: "flush_owes_only",
			build: func(h *MockTTSHarness) (providers.TTS, TTSHarness) {
				return mustTTS(FlushOwesOnly(h.Provider(), Uniform(h.IOTimeout()))), HoldsText(h)
			},
			wantNames: len(TTSCheckNames()) + 2,
			want:      []string{CheckTimeoutHeldStalled},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newTTSHarness(t, true)
				p, hh := tt.build(h)
				rep, err := RunTTS(t.Context(), p, hh, Config{})
				if err != nil {
					t.Fatal(err)
				}
				if got := len(rep.Checks); got != tt.wantNames || got != len(TTSCheckNamesFor(hh)) {
					t.Fatalf("%d checks reported, want %d", got, tt.wantNames)
				}
				if got := failedNames(rep); !slices.Equal(got, tt.want) {
					t.Fatalf("failed checks %q, want %q\n%v", got, tt.want, rep)
				}
			})
		})
	}
}
