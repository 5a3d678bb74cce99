package providertest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// sttStep is one action of a test caller on an STT session.
type sttStep struct {
	speech   int // frames of speech, each sent when it is complete (20 ms after the last)
	silence  int // frames of silence, likewise
	finalize bool
	wait     time.Duration
}

// play runs steps against s at the pace of real audio.
func play(t *testing.T, s providers.STTSession, steps []sttStep) {
	t.Helper()
	speech, quiet := make([]int16, 320), make([]int16, 320)
	for i := range speech {
		speech[i] = 8000
	}
	send := func(n int, pcm []int16) {
		for range n {
			time.Sleep(20 * ms)
			if err := s.SendAudio(pcm); err != nil {
				t.Fatalf("SendAudio: %v", err)
			}
		}
	}
	for _, st := range steps {
		send(st.speech, speech)
		send(st.silence, quiet)
		if st.finalize {
			if err := s.Finalize(); err != nil {
				t.Fatalf("Finalize: %v", err)
			}
		}
		time.Sleep(st.wait)
	}
}

// sttWant is an expected STT event and its arrival time.
type sttWant struct {
	at    time.Duration
	text  string
	final bool
	err   error // matched with errors.Is
}

func checkSTT(t *testing.T, got []stamped[providers.STTEvent], want []sttWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.at != w.at || g.ev.Text != w.text || g.ev.Final != w.final || !errors.Is(g.ev.Err, w.err) || (w.err == nil) != (g.ev.Err == nil) {
			t.Errorf("event %d = %+v at %v, want %+v", i, g.ev, g.at, w)
		}
		if g.ev.Final && g.ev.FromFinalize != true {
			t.Errorf("event %d: final without FromFinalize", i)
		}
	}
}

func TestMockSTTTranscripts(t *testing.T) {
	utts := []string{"one two three four", "five six"}
	tests := []struct {
		name  string
		cfg   STTConfig
		steps []sttStep
		want  []sttWant
	}{
		{
			name:  "interims grow a word per 200ms of speech, final FinalLatency after Finalize",
			steps: []sttStep{{speech: 30, silence: 5, finalize: true, wait: time.Second}},
			want: []sttWant{
				{at: 200 * ms, text: "one"},
				{at: 400 * ms, text: "one two"},
				{at: 600 * ms, text: "one two three"},
				{at: 850 * ms, text: "one two three four", final: true},
			},
		},
		{
			name:  "custom latencies",
			cfg:   STTConfig{InterimEvery: 100 * ms, FinalLatency: 40 * ms},
			steps: []sttStep{{speech: 12, finalize: true, wait: time.Second}},
			want: []sttWant{
				{at: 100 * ms, text: "one"},
				{at: 200 * ms, text: "one two"},
				{at: 280 * ms, text: "one two three four", final: true},
			},
		},
		{
			// Mutation: letting k pass the word count panics or repeats.
			name:  "interims stop growing at the word count",
			cfg:   STTConfig{InterimEvery: 40 * ms},
			steps: []sttStep{{speech: 10, finalize: true, wait: 200 * ms}},
			want: []sttWant{
				{at: 40 * ms, text: "one"},
				{at: 80 * ms, text: "one two"},
				{at: 120 * ms, text: "one two three"},
				{at: 160 * ms, text: "one two three four"},
				{at: 200 * ms, text: "one two three four"},
				{at: 350 * ms, text: "one two three four", final: true},
			},
		},
		{
			// Mutation: advancing on an empty finalize would skip "one two three four".
			name: "finalize without speech gives an empty final and keeps the utterance",
			steps: []sttStep{
				{silence: 5, finalize: true, wait: 200 * ms},
				{speech: 5, finalize: true, wait: 200 * ms},
				{speech: 10, finalize: true, wait: 200 * ms},
				{speech: 1, finalize: true, wait: 200 * ms},
			},
			want: []sttWant{
				{at: 250 * ms, final: true},
				{at: 550 * ms, text: "one two three four", final: true},
				{at: 800 * ms, text: "five"},
				{at: 950 * ms, text: "five six", final: true},
				// The script is exhausted: speech gives an empty final.
				{at: 1170 * ms, final: true},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockSTT(tc.cfg, utts)
				t0 := time.Now()
				s, err := m.Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				rec := record(t0, s.Events())
				play(t, s, tc.steps)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				checkSTT(t, rec.wait(), tc.want)
			})
		})
	}
}

func TestMockSTTFinalFields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockSTT(STTConfig{}, []string{"hello"})
		s, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		play(t, s, []sttStep{{speech: 2, finalize: true}})
		ev := <-s.Events()
		want := providers.STTEvent{Text: "hello", Final: true, SpeechFinal: true, FromFinalize: true}
		if ev != want {
			t.Fatalf("final = %+v, want %+v", ev, want)
		}
		play(t, s, []sttStep{{finalize: true}})
		ev = <-s.Events()
		if want := (providers.STTEvent{Final: true, FromFinalize: true}); ev != want {
			t.Fatalf("empty final = %+v, want %+v", ev, want)
		}
		if got := m.Finalizes(); got != 2 {
			t.Fatalf("Finalizes() = %d, want 2", got)
		}
	})
}

func TestMockSTTFaults(t *testing.T) {
	utts := []string{"one two three four"}
	tests := []struct {
		name     string
		fault    Fault
		steps    []sttStep
		want     []sttWant
		sendErr  bool // SendAudio fails after the steps
		closedBy bool // the events channel closes by itself
	}{
		{
			name:     "disconnect before event 1",
			fault:    Fault{Kind: FaultDisconnect, BeforeEvent: 1},
			steps:    []sttStep{{speech: 20}},
			want:     []sttWant{{at: 200 * ms, text: "one"}, {at: 400 * ms, err: providers.ErrDisconnected}},
			sendErr:  true,
			closedBy: true,
		},
		{
			name:     "protocol before event 0",
			fault:    Fault{Kind: FaultProtocol},
			steps:    []sttStep{{speech: 10}},
			want:     []sttWant{{at: 200 * ms, err: providers.ErrProtocol}},
			sendErr:  true,
			closedBy: true,
		},
		{
			name:  "delay shifts event 1 and later",
			fault: Fault{Kind: FaultDelay, BeforeEvent: 1, Duration: 70 * ms},
			steps: []sttStep{{speech: 30, finalize: true, wait: time.Second}},
			want: []sttWant{
				{at: 200 * ms, text: "one"},
				{at: 470 * ms, text: "one two"},
				{at: 670 * ms, text: "one two three"},
				{at: 820 * ms, text: "one two three four", final: true},
			},
		},
		{
			name:  "stall with a duration resumes with what fell due",
			fault: Fault{Kind: FaultStall, BeforeEvent: 1, Duration: 300 * ms},
			steps: []sttStep{{speech: 30, finalize: true, wait: time.Second}},
			want: []sttWant{
				{at: 200 * ms, text: "one"},
				{at: 700 * ms, text: "one two"},
				{at: 700 * ms, text: "one two three"},
				{at: 750 * ms, text: "one two three four", final: true},
			},
		},
		{
			name:  "stall forever delivers nothing more",
			fault: Fault{Kind: FaultStall, BeforeEvent: 1},
			steps: []sttStep{{speech: 30, finalize: true, wait: time.Second}},
			want:  []sttWant{{at: 200 * ms, text: "one"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockSTT(STTConfig{}, utts)
				m.Inject(tc.fault)
				t0 := time.Now()
				s, err := m.Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				rec := record(t0, s.Events())
				play(t, s, tc.steps)
				if tc.closedBy {
					// The session ended by itself: the recorder sees the close.
					rec.wait()
				}
				err = s.SendAudio(make([]int16, 320))
				if (err != nil) != tc.sendErr {
					t.Errorf("SendAudio after the steps = %v, want error %v", err, tc.sendErr)
				}
				if tc.sendErr && !errors.Is(err, tc.want[len(tc.want)-1].err) {
					t.Errorf("SendAudio error %v, want %v", err, tc.want[len(tc.want)-1].err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				checkSTT(t, rec.wait(), tc.want)
			})
		})
	}
}

func TestMockSTTConnectFaults(t *testing.T) {
	tests := []struct {
		name     string
		cfg      STTConfig
		fault    Fault
		timeout  time.Duration // the connect's context deadline, 0 for none
		wantTook time.Duration
		wantErr  error
		status   int
	}{
		{name: "connect latency", cfg: STTConfig{ConnectLatency: 80 * ms}, wantTook: 80 * ms},
		{name: "reject after the latency", cfg: STTConfig{ConnectLatency: 80 * ms},
			fault: Fault{Kind: FaultReject, Status: 429}, wantTook: 80 * ms, wantErr: providers.ErrRejected, status: 429},
		{name: "connect stall adds its duration", cfg: STTConfig{ConnectLatency: 80 * ms},
			fault: Fault{Kind: FaultConnectStall, Duration: time.Second}, wantTook: 1080 * ms},
		{name: "connect stall forever ends with the context", fault: Fault{Kind: FaultConnectStall},
			timeout: 3 * time.Second, wantTook: 3 * time.Second, wantErr: context.DeadlineExceeded},
		{name: "invalid config", cfg: STTConfig{FinalLatency: -1}, wantErr: ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockSTT(tc.cfg, nil)
				m.Inject(tc.fault)
				ctx := context.Background()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				t0 := time.Now()
				s, err := m.Connect(ctx)
				if took := time.Since(t0); took != tc.wantTook {
					t.Errorf("Connect took %v, want %v", took, tc.wantTook)
				}
				if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
					t.Fatalf("Connect error %v, want %v", err, tc.wantErr)
				}
				var rej *providers.Rejected
				if tc.status != 0 && (!errors.As(err, &rej) || rej.Status != tc.status) {
					t.Errorf("Connect error %v, want Rejected{%d}", err, tc.status)
				}
				if s != nil {
					s.Close()
				}
				if m.Connects() != 1 {
					t.Errorf("Connects() = %d, want 1", m.Connects())
				}
			})
		})
	}
}

func TestMockSTTFaultsAreConsumedInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockSTT(STTConfig{}, nil)
		m.Inject(Fault{Kind: FaultReject, Status: 503})
		m.Inject(Fault{Kind: FaultReject, Status: 401})
		for _, want := range []int{503, 401} {
			_, err := m.Connect(context.Background())
			var rej *providers.Rejected
			if !errors.As(err, &rej) || rej.Status != want {
				t.Fatalf("Connect = %v, want Rejected{%d}", err, want)
			}
		}
		s, err := m.Connect(context.Background())
		if err != nil {
			t.Fatalf("third Connect = %v", err)
		}
		s.Close()
		if m.Connects() != 3 {
			t.Fatalf("Connects() = %d, want 3", m.Connects())
		}
	})
}

func TestMockSTTReconnectContinuesUtterance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockSTT(STTConfig{}, []string{"one two three four", "five"})
		m.Inject(Fault{Kind: FaultDisconnect, BeforeEvent: 1})
		t0 := time.Now()
		s1, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec1 := record(t0, s1.Events())
		play(t, s1, []sttStep{{speech: 15}})
		s1.Close()
		s2, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec2 := record(t0, s2.Events())
		// Mutation: keeping the speech count per session would make this
		// interim "one" at 700ms.
		play(t, s2, []sttStep{{speech: 5, finalize: true, wait: time.Second}})
		s2.Close()
		checkSTT(t, rec1.wait(), []sttWant{{at: 200 * ms, text: "one"}})
		checkSTT(t, rec2.wait(), []sttWant{
			{at: 400 * ms, text: "one two"},
			{at: 550 * ms, text: "one two three four", final: true},
		})
	})
}

func TestMockSTTCloseDropsPendingFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockSTT(STTConfig{}, []string{"first", "second"})
		t0 := time.Now()
		s1, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec1 := record(t0, s1.Events())
		play(t, s1, []sttStep{{speech: 5, finalize: true, wait: 100 * ms}})
		s1.Close()
		if err := s1.Finalize(); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("Finalize after Close = %v, want ErrClosed", err)
		}
		checkSTT(t, rec1.wait(), nil)

		// The dropped final used up "first": the caller's next words are
		// the next utterance.
		s2, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec2 := record(t0, s2.Events())
		play(t, s2, []sttStep{{speech: 5, finalize: true, wait: time.Second}})
		s2.Close()
		checkSTT(t, rec2.wait(), []sttWant{{at: 450 * ms, text: "second", final: true}})
	})
}

func TestMockSTTContextEndsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockSTT(STTConfig{}, []string{"hello"})
		ctx, cancel := context.WithCancel(context.Background())
		s, err := m.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		for range s.Events() {
		}
		if err := s.SendAudio(make([]int16, 320)); !errors.Is(err, context.Canceled) {
			t.Fatalf("SendAudio after cancel = %v, want context.Canceled", err)
		}
		s.Close()
		s.Close()
	})
}

func TestMockSTTSendAudioDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	synctest.Test(t, func(t *testing.T) {
		m := NewMockSTT(STTConfig{InterimEvery: time.Hour}, []string{"a long utterance"})
		s, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		speech, quiet := make([]int16, 320), make([]int16, 320)
		for i := range speech {
			speech[i] = -9000
		}
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			pcm := quiet
			if i%2 == 0 {
				pcm = speech
			}
			if err := s.SendAudio(pcm); err != nil {
				t.Fatal(err)
			}
			i++
		})
		if allocs != 0 {
			t.Fatalf("SendAudio allocates %v times per call", allocs)
		}
	})
}

func BenchmarkMockSTTSendAudio(b *testing.B) {
	m := NewMockSTT(STTConfig{InterimEvery: time.Hour}, []string{"a long utterance"})
	s, err := m.Connect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pcm := make([]int16, 320)
	for i := range pcm {
		pcm[i] = 9000
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.SendAudio(pcm); err != nil {
			b.Fatal(err)
		}
	}
}
