package openaispeech_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/providers/tts/openaispeech"
	"github.com/brisvox/brisvox/providers/tts/openaispeech/speechmock"
)

// contractIO is every deadline of the adapter (WithIOTimeout), as the
// suite judges it.
const contractIO = 2 * time.Second

// contractPace is the mock's time before each word's chunk, and each
// chunk is that much audio: a real-time synthesizer. It is above the
// suite's 100 ms timeout slack, so the starting points of the adapter's
// deadlines (the text sent, the last read) are apart by more than the
// slack and a deadline armed at the wrong one is caught. A 160 ms chunk
// (7680 bytes) fits the adapter's default 8 KiB read, so one chunk is one
// Audio event, as the suite's event-counted faults assume.
const contractPace = 160 * time.Millisecond

// contractSamplesPerWord is contractPace of audio at the mock's rate.
const contractSamplesPerWord = int(speechmock.Rate * contractPace / time.Second)

const contractKeyEnv = "BRISVOX_TEST_OPENAISPEECH_CONTRACT_KEY"

// contractSpeech is the mock's answer when no fault is injected: the
// input spoken at contractPace.
var contractSpeech = speechmock.Response{Pace: contractPace, SamplesPerWord: contractSamplesPerWord}

// contractHarness is the suite's TTSHarness over speechmock: a providertest.Fault
// is the scripted answer to the next speech request. Each session of the
// suite makes one request per context and the faulted sessions speak one
// context, so the next request is the faulted session's.
type contractHarness struct {
	srv *speechmock.Server
	a   *openaispeech.Adapter
	io  time.Duration
}

var _ contracttest.TTSHarness = (*contractHarness)(nil)

func (h *contractHarness) Reset()                      { h.srv.Reset() }
func (h *contractHarness) Inject(f providertest.Fault) { h.srv.Enqueue(speechFault(f)) }
func (h *contractHarness) IOTimeout() time.Duration    { return h.io }

// EmitsWords is the adapter's own answer (false: no word timings).
func (h *contractHarness) EmitsWords() bool { return h.a.EmitsWords() }

// FaultsAtConnect is the adapter's own answer (false: Connect opens
// nothing, the first request meets the connect faults).
func (h *contractHarness) FaultsAtConnect() bool { return h.a.FaultsAtConnect() }

// speechFault maps a suite fault to the mock's answer to one request.
// BeforeEvent counts audio chunks (one word, one Audio event each); a
// refusal and a stalled connect act before the response headers; a
// protocol violation is a body that ends inside a sample. A Duration of
// 0 is a stall until the client goes away.
func speechFault(f providertest.Fault) speechmock.Response {
	r := contractSpeech
	before := max(f.BeforeEvent, 0)
	forever := f.Duration
	if forever <= 0 {
		forever = speechmock.Forever
	}
	switch f.Kind {
	case providertest.FaultReject:
		r.Status = f.Status
		r.ErrorBody = `{"error":{"message":"refused by the contract suite","type":"contract"}}`
	case providertest.FaultConnectStall:
		r.StallHeaders = forever
	case providertest.FaultDisconnect:
		r.Cut, r.CutAfter = true, before
	case providertest.FaultStall:
		r.StallBefore, r.StallFor = before, forever
	case providertest.FaultDelay:
		r.StallBefore, r.StallFor = before, f.Duration
	case providertest.FaultProtocol:
		r.Violate, r.ViolateAfter = true, before
	}
	return r
}

// newContractRig starts the mock on an in-memory listener and an adapter
// requesting from it with io as its three deadlines (then mutate, if not
// nil, changes the config); the harness declares io. It must run in a
// synctest bubble. Both are closed at the end of the test.
func newContractRig(t *testing.T, io time.Duration, mutate func(*openaispeech.Config)) (*openaispeech.Adapter, *contractHarness) {
	t.Helper()
	l := openaimock.NewPipeListener()
	srv := speechmock.NewWithListener(l, contractSpeech)
	t.Setenv(contractKeyEnv, "sk-contract-key")
	cfg := openaispeech.OpenAI("tts-1", "alloy").WithIOTimeout(io)
	cfg.BaseURL, cfg.APIKeyEnv, cfg.DialContext = srv.URL(), contractKeyEnv, l.DialContext
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := openaispeech.New(cfg)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = a.Close()
		srv.Close()
	})
	return a, &contractHarness{srv: srv, a: a, io: io}
}

// TestContractSuiteOverTheMock runs the TTS contract suite over the
// adapter and speechmock, joined by an in-memory pipe inside a synctest
// bubble, so every deadline is judged in virtual time (19.8 s of it, a few
// real milliseconds); the bubble fails the test if a goroutine is left.
// Mutations seen failing it (applied, run, reverted): the read timer armed
// once at the headers and never re-armed, so the body has one deadline
// (timeout/idle: a Timeout 1.84 s after the last event; caught only
// thanks to the mock's 160 ms pace, at 40 ms it passes); Cancel not ending
// the request in flight (cancel: no ack within 500 ms); a body ending
// inside a sample accepted (error_mapping: the protocol violation is
// flushed); a cut body reported as Protocol (error_mapping, reconnect).
func TestContractSuiteOverTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := newContractRig(t, contractIO, nil)
		start := time.Now()
		rep, err := contracttest.RunTTS(context.Background(), a, h, contracttest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\nvirtual %v", rep, time.Since(start))
		if !rep.Passed() {
			t.Fatalf("the adapter breaks the contract:\n%s", rep)
		}
		if got, want := len(rep.Checks), len(contracttest.TTSCheckNames()); got != want {
			t.Fatalf("%d checks ran, want %d", got, want)
		}
	})
}

// connectScopedHarness declares what the adapter is not: a session that
// opens its connection at Connect, where a refusal or a stalled connect
// must fail Connect itself.
type connectScopedHarness struct{ *contractHarness }

func (connectScopedHarness) FaultsAtConnect() bool { return true }

// The suite bites on this adapter: one whose deadlines are not the ones
// its harness declares fails exactly the timeout checks those deadlines
// govern, and a harness that declares connect-time faults for this
// request-scoped adapter fails exactly the checks that fault the connect.
func TestContractSuiteCatchesBrokenVariants(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*openaispeech.Config)
		// atConnect declares FaultsAtConnect true.
		atConnect bool
		want      []string
	}{
		{
			// An idle deadline of 3 s: the gap after the first chunk
			// times out 1 s late.
			name:   "idle_deadline_3s",
			mutate: func(c *openaispeech.Config) { c.IdleTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutIdle},
		},
		{
			// A first-audio deadline of 1 s (it runs from the text,
			// headers included): the stalled first chunk times out 1 s
			// early, the chunk late by 1 s (plus its 160 ms pace) is cut
			// off, and so is the audio after headers slow by 1 s.
			name:   "first_byte_deadline_1s",
			mutate: func(c *openaispeech.Config) { c.FirstByteTimeout = time.Second },
			want:   []string{contracttest.CheckTimeoutConnectSlow, contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutFirstSlow},
		},
		{
			// A header deadline of 800 ms: the stalled headers give up
			// early and headers slow by 1 s are cut off.
			name:   "header_deadline_800ms",
			mutate: func(c *openaispeech.Config) { c.ConnectTimeout = 800 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutConnect, contracttest.CheckTimeoutConnectSlow},
		},
		{
			// Connect succeeds where the declaration wants it refused
			// or timed out.
			name:      "declares_faults_at_connect",
			atConnect: true,
			want:      []string{contracttest.CheckErrorMapping, contracttest.CheckTimeoutConnect},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, contractIO, tc.mutate)
				var th contracttest.TTSHarness = h
				if tc.atConnect {
					th = connectScopedHarness{h}
				}
				rep, err := contracttest.RunTTS(context.Background(), a, th, contracttest.Config{})
				if err != nil {
					t.Fatal(err)
				}
				var failed []string
				for _, c := range rep.Failures() {
					failed = append(failed, c.Name)
				}
				if !slices.Equal(failed, tc.want) {
					t.Fatalf("failed checks %q, want %q\n%s", failed, tc.want, rep)
				}
			})
		})
	}
}
