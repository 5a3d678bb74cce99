package providertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// ttsAction is one call of a test on a TTS session at a time.
type ttsAction struct {
	at    time.Duration
	op    string // push, flush, cancel
	ctx   string
	text  string
	errIs error // the call's expected error
}

// runTTS plays actions against a new session of m, waits until, closes the
// session and returns what arrived.
func runTTS(t *testing.T, m *MockTTS, actions []ttsAction, until time.Duration) []stamped[providers.TTSEvent] {
	t.Helper()
	t0 := time.Now()
	s, err := m.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := record(t0, s.Events())
	for _, a := range actions {
		time.Sleep(a.at - time.Since(t0))
		var err error
		switch a.op {
		case "push":
			err = s.Push(a.ctx, a.text)
		case "flush":
			err = s.Flush(a.ctx)
		case "cancel":
			err = s.Cancel(a.ctx)
		}
		if !errors.Is(err, a.errIs) || (err == nil) != (a.errIs == nil) {
			t.Errorf("%s %q at %v = %v, want %v", a.op, a.ctx, a.at, err, a.errIs)
		}
	}
	time.Sleep(until - time.Since(t0))
	s.Close()
	return rec.wait()
}

// summary writes an event as "at kind ctx detail" for comparisons.
func summary(e stamped[providers.TTSEvent]) string {
	ev := e.ev
	switch ev.Kind {
	case providers.TTSWord:
		return fmt.Sprintf("%v word %s %q@%v", e.at, ev.ContextID, ev.Word, ev.Offset)
	case providers.TTSAudio:
		return fmt.Sprintf("%v audio %s %v", e.at, ev.ContextID, time.Duration(len(ev.PCM))*time.Second/time.Duration(ev.Rate))
	case providers.TTSFlushed:
		return fmt.Sprintf("%v flushed %s", e.at, ev.ContextID)
	case providers.TTSCancelled:
		return fmt.Sprintf("%v cancelled %s", e.at, ev.ContextID)
	case providers.TTSError:
		return fmt.Sprintf("%v error %v", e.at, ev.Err)
	}
	return fmt.Sprintf("%v kind %d", e.at, ev.Kind)
}

func summaries(evs []stamped[providers.TTSEvent]) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = summary(e)
	}
	return out
}

// audio lists n audio summaries of one context at one time; the last one
// is short when rest > 0.
func audio(at string, ctx string, n int, rest time.Duration) []string {
	var out []string
	for range n {
		out = append(out, fmt.Sprintf("%s audio %s 40ms", at, ctx))
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("%s audio %s %v", at, ctx, rest))
	}
	return out
}

func join(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

func TestMockTTSEvents(t *testing.T) {
	// Default word durations: "Hello" 220ms, "there" 220ms, "Hi" 160ms.
	tests := []struct {
		name    string
		cfg     TTSConfig
		actions []ttsAction
		until   time.Duration
		want    []string
	}{
		{
			name: "first byte after the first push, offsets add up, flushed after the last audio",
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hello there"},
				{at: 500 * ms, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want: join(
				`200ms word a "Hello"@0s`, audio("200ms", "a", 5, 20*ms),
				`500ms word a "there"@220ms`, audio("500ms", "a", 5, 20*ms),
				"500ms flushed a"),
		},
		{
			// Mutation: splitting each push on its own gives "Hel" and "lo".
			name: "a word split across pushes is joined",
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hel"},
				{at: 10 * ms, op: "push", ctx: "a", text: "lo th"},
				{at: 20 * ms, op: "push", ctx: "a", text: "ere"},
				{at: 30 * ms, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want: join(
				`200ms word a "Hello"@0s`, audio("200ms", "a", 5, 20*ms),
				`200ms word a "there"@220ms`, audio("200ms", "a", 5, 20*ms),
				"200ms flushed a"),
		},
		{
			name: "first event waits for the first complete word",
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hel"},
				{at: 300 * ms, op: "push", ctx: "a", text: "lo "},
				{at: 300 * ms, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want:  join(`300ms word a "Hello"@0s`, audio("300ms", "a", 5, 20*ms), "300ms flushed a"),
		},
		{
			name: "paced audio comes one chunk per chunk",
			cfg:  TTSConfig{Paced: true, FirstByte: 100 * ms},
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hi Hi"},
				{at: 0, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want: []string{
				`100ms word a "Hi"@0s`, "100ms audio a 40ms", "140ms audio a 40ms", "180ms audio a 40ms", "220ms audio a 40ms",
				`260ms word a "Hi"@160ms`, "260ms audio a 40ms", "300ms audio a 40ms", "340ms audio a 40ms", "380ms audio a 40ms",
				"420ms flushed a",
			},
		},
		{
			// Mutation: a lead counted per word (from each word's first
			// chunk) gives the second word's chunks 40 ms later.
			name: "paced audio with a lead runs that far ahead of its time",
			cfg:  TTSConfig{Paced: true, FirstByte: 100 * ms, PacedLead: 80 * ms},
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hi Hi"},
				{at: 0, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want: []string{
				`100ms word a "Hi"@0s`, "100ms audio a 40ms", "100ms audio a 40ms", "100ms audio a 40ms", "140ms audio a 40ms",
				`180ms word a "Hi"@160ms`, "180ms audio a 40ms", "220ms audio a 40ms", "260ms audio a 40ms", "300ms audio a 40ms",
				"340ms flushed a",
			},
		},
		{
			name: "contexts are synthesized one at a time in order of opening",
			cfg:  TTSConfig{Paced: true, FirstByte: 100 * ms},
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hi"},
				{at: 10 * ms, op: "push", ctx: "b", text: "Hi"},
				{at: 20 * ms, op: "flush", ctx: "b"},
				{at: 30 * ms, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want: []string{
				`100ms word a "Hi"@0s`, "100ms audio a 40ms", "140ms audio a 40ms", "180ms audio a 40ms", "220ms audio a 40ms",
				"260ms flushed a",
				`260ms word b "Hi"@0s`, "260ms audio b 40ms", "300ms audio b 40ms", "340ms audio b 40ms", "380ms audio b 40ms",
				"420ms flushed b",
			},
		},
		{
			// Mutation: leaving nothing of a after the ack is the contract;
			// an implementation that only stops new words would send more audio.
			name: "cancel drops what is owed and acknowledges at once",
			cfg:  TTSConfig{Paced: true},
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hello there"},
				{at: 0, op: "flush", ctx: "a"},
				{at: 290 * ms, op: "cancel", ctx: "a"},
				{at: 300 * ms, op: "push", ctx: "a", text: "more", errIs: ErrContextClosed},
			},
			until: time.Second,
			want: []string{
				`200ms word a "Hello"@0s`, "200ms audio a 40ms", "240ms audio a 40ms", "280ms audio a 40ms",
				"290ms cancelled a",
			},
		},
		{
			name: "cancelling the head lets the next context start",
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hello "},
				{at: 0, op: "push", ctx: "b", text: "Hi"},
				{at: 0, op: "flush", ctx: "b"},
				{at: 500 * ms, op: "cancel", ctx: "a"},
			},
			until: time.Second,
			want: join(
				`200ms word a "Hello"@0s`, audio("200ms", "a", 5, 20*ms),
				"500ms cancelled a",
				`500ms word b "Hi"@0s`, audio("500ms", "b", 4, 0),
				"500ms flushed b"),
		},
		{
			name: "cancel before the first byte, of an unknown and of a finished context",
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "Hello"},
				{at: 100 * ms, op: "cancel", ctx: "a"},
				{at: 100 * ms, op: "cancel", ctx: "nobody"},
				{at: 200 * ms, op: "flush", ctx: "a", errIs: ErrContextClosed},
			},
			until: time.Second,
			want:  []string{"100ms cancelled a", "100ms cancelled nobody"},
		},
		{
			name: "flush of a context never pushed is flushed at once",
			actions: []ttsAction{
				{at: 50 * ms, op: "flush", ctx: "a"},
				{at: 60 * ms, op: "push", ctx: "a", text: "late", errIs: ErrContextClosed},
			},
			until: time.Second,
			want:  []string{"50ms flushed a"},
		},
		{
			name: "custom word duration rounds to frames",
			cfg:  TTSConfig{WordDuration: func(string) time.Duration { return 45 * ms }, Chunk: 20 * ms},
			actions: []ttsAction{
				{at: 0, op: "push", ctx: "a", text: "x y"},
				{at: 0, op: "flush", ctx: "a"},
			},
			until: time.Second,
			want: []string{
				`200ms word a "x"@0s`, "200ms audio a 20ms", "200ms audio a 20ms",
				`200ms word a "y"@40ms`, "200ms audio a 20ms", "200ms audio a 20ms",
				"200ms flushed a",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := summaries(runTTS(t, NewMockTTS(tc.cfg), tc.actions, tc.until))
				if !slices.Equal(got, tc.want) {
					t.Fatalf("events:\n%q\nwant:\n%q", got, tc.want)
				}
			})
		})
	}
}

func TestMockTTSAudioIsATone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockTTS(TTSConfig{Rate: 8000})
		evs := runTTS(t, m, []ttsAction{{op: "push", ctx: "a", text: "tone "}}, time.Second)
		var pcms [][]int16
		for _, e := range evs {
			if e.ev.Kind == providers.TTSAudio {
				if e.ev.Rate != 8000 {
					t.Fatalf("rate %d", e.ev.Rate)
				}
				pcms = append(pcms, e.ev.PCM)
			}
		}
		if len(pcms) < 2 || len(pcms[0]) != 320 {
			t.Fatalf("audio chunks %d, first of %d samples", len(pcms), len(pcms[0]))
		}
		for _, pcm := range pcms {
			var sum float64
			for _, v := range pcm {
				sum += float64(v) * float64(v)
			}
			if rms2 := sum / float64(len(pcm)); rms2 < 3000*3000 {
				t.Fatalf("chunk RMS^2 %v is too low", rms2)
			}
		}
		// Each event has its own buffer: the receiver owns it.
		if &pcms[0][0] == &pcms[1][0] {
			t.Fatal("audio events share a buffer")
		}
		if got := m.Texts(); !slices.Equal(got, []string{"tone "}) {
			t.Fatalf("Texts() = %q", got)
		}
	})
}

func TestMockTTSFaults(t *testing.T) {
	actions := []ttsAction{{at: 0, op: "push", ctx: "a", text: "Hi Hi"}, {at: 0, op: "flush", ctx: "a"}}
	cfg := TTSConfig{Paced: true, FirstByte: 100 * ms}
	tests := []struct {
		name  string
		fault Fault
		want  []string
	}{
		{
			name:  "disconnect before event 2",
			fault: Fault{Kind: FaultDisconnect, BeforeEvent: 2},
			want:  []string{`100ms word a "Hi"@0s`, "100ms audio a 40ms", "140ms error " + (&providers.Disconnected{}).Error()},
		},
		{
			name:  "protocol before event 0",
			fault: Fault{Kind: FaultProtocol},
			want:  []string{"100ms error " + (&providers.Protocol{Detail: "injected fault"}).Error()},
		},
		{
			name:  "delay shifts exactly",
			fault: Fault{Kind: FaultDelay, BeforeEvent: 2, Duration: 15 * ms},
			want: []string{
				`100ms word a "Hi"@0s`, "100ms audio a 40ms", "155ms audio a 40ms", "195ms audio a 40ms", "235ms audio a 40ms",
				`275ms word a "Hi"@160ms`, "275ms audio a 40ms", "315ms audio a 40ms", "355ms audio a 40ms", "395ms audio a 40ms",
				"435ms flushed a",
			},
		},
		{
			name:  "stall with a duration resumes with what fell due",
			fault: Fault{Kind: FaultStall, BeforeEvent: 2, Duration: 100 * ms},
			want: []string{
				`100ms word a "Hi"@0s`, "100ms audio a 40ms", "240ms audio a 40ms", "240ms audio a 40ms", "240ms audio a 40ms",
				`260ms word a "Hi"@160ms`, "260ms audio a 40ms", "300ms audio a 40ms", "340ms audio a 40ms", "380ms audio a 40ms",
				"420ms flushed a",
			},
		},
		{
			name:  "stall forever",
			fault: Fault{Kind: FaultStall, BeforeEvent: 2},
			want:  []string{`100ms word a "Hi"@0s`, "100ms audio a 40ms"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockTTS(cfg)
				m.Inject(tc.fault)
				got := summaries(runTTS(t, m, actions, time.Second))
				if !slices.Equal(got, tc.want) {
					t.Fatalf("events:\n%q\nwant:\n%q", got, tc.want)
				}
			})
		})
	}
}

func TestMockTTSDisconnectEndsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockTTS(TTSConfig{})
		m.Inject(Fault{Kind: FaultDisconnect})
		s, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Push("a", "hello "); err != nil {
			t.Fatal(err)
		}
		ev, ok := <-s.Events()
		if !ok || ev.Kind != providers.TTSError || !errors.Is(ev.Err, providers.ErrDisconnected) {
			t.Fatalf("event %+v, %v; want a TTSError with Disconnected", ev, ok)
		}
		var disc *providers.Disconnected
		if !errors.As(ev.Err, &disc) {
			t.Fatalf("error %T, want *providers.Disconnected", ev.Err)
		}
		if _, ok := <-s.Events(); ok {
			t.Fatal("Events still open after the failure")
		}
		if err := s.Push("a", "more"); !errors.Is(err, providers.ErrDisconnected) {
			t.Fatalf("Push after the failure = %v", err)
		}
		s.Close()
	})
}

func TestMockTTSConnectFaults(t *testing.T) {
	tests := []struct {
		name     string
		cfg      TTSConfig
		fault    Fault
		timeout  time.Duration
		wantTook time.Duration
		wantErr  error
		status   int
	}{
		{name: "connect latency", cfg: TTSConfig{ConnectLatency: 30 * ms}, wantTook: 30 * ms},
		{name: "reject", fault: Fault{Kind: FaultReject, Status: 503}, wantErr: providers.ErrRejected, status: 503},
		{name: "connect stall", fault: Fault{Kind: FaultConnectStall, Duration: 400 * ms}, wantTook: 400 * ms},
		{name: "connect stall forever ends with the context", fault: Fault{Kind: FaultConnectStall},
			timeout: 2 * time.Second, wantTook: 2 * time.Second, wantErr: context.DeadlineExceeded},
		{name: "invalid config", cfg: TTSConfig{Chunk: -1}, wantErr: ErrInvalidConfig},
		{name: "negative lead", cfg: TTSConfig{Paced: true, PacedLead: -ms}, wantErr: ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockTTS(tc.cfg)
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

func TestMockTTSCloseWithBlockedReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Nobody reads: the pump fills the channel and must still end on Close.
		m := NewMockTTS(TTSConfig{Chunk: 20 * ms})
		s, err := m.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if err := s.Push("a", fmt.Sprintf("word%d ", i)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Push("a", "x"); !errors.Is(err, providers.ErrClosed) {
			t.Fatalf("Push after Close = %v", err)
		}
	})
}

func TestMockTTSWordLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockTTS(TTSConfig{})
		runTTS(t, m, []ttsAction{
			{op: "push", ctx: "e3", text: "Hello there"},
			{op: "flush", ctx: "e3"},
			{op: "push", ctx: "other", text: "x "},
		}, time.Second)
		want := []Word{{Text: "Hello"}, {Text: "there", Offset: 220 * ms}}
		if got := m.WordLog(); len(got) != 1 || !slices.Equal(got[3], want) {
			t.Fatalf("WordLog() = %+v, want epoch 3: %+v", got, want)
		}
		if got := m.ContextWords(); !slices.Equal(got["other"], []Word{{Text: "x"}}) {
			t.Fatalf("ContextWords() = %+v", got)
		}
	})
}

// TestMockTTSUnrecorded: an Unrecorded mock delivers the same events and
// keeps nothing of them. (Mutation caught: a record kept despite the
// flag, e.g. the chunk map still filled, which keeps every chunk alive.)
func TestMockTTSUnrecorded(t *testing.T) {
	actions := []ttsAction{{at: 0, op: "push", ctx: "a", text: "Hello there"}, {at: 0, op: "flush", ctx: "a"}}
	synctest.Test(t, func(t *testing.T) {
		kept := NewMockTTS(TTSConfig{Paced: true})
		bare := NewMockTTS(TTSConfig{Paced: true, Unrecorded: true})
		want, got := runTTS(t, kept, actions, time.Second), runTTS(t, bare, actions, time.Second)
		if !slices.Equal(summaries(got), summaries(want)) {
			t.Fatalf("unrecorded events %v, recorded %v", summaries(got), summaries(want))
		}
		if len(kept.Texts()) == 0 || len(kept.ContextWords()) == 0 {
			t.Fatal("the recorded mock kept nothing: the check below proves nothing")
		}
		if n, w := len(bare.Texts()), len(bare.ContextWords()); n != 0 || w != 0 {
			t.Errorf("unrecorded mock kept %d texts and %d contexts' words", n, w)
		}
		for _, e := range got {
			if e.ev.Kind != providers.TTSAudio {
				continue
			}
			if _, ok := bare.ContextOf(e.ev.PCM); ok {
				t.Fatal("unrecorded mock names the context of a chunk")
			}
		}
		for _, e := range want {
			if e.ev.Kind == providers.TTSAudio {
				if _, ok := kept.ContextOf(e.ev.PCM); !ok {
					t.Fatal("recorded mock does not name the context of its chunk")
				}
			}
		}
	})
}
