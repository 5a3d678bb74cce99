package session_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/rs/zerolog"
)

// benchConn feeds the caller's audio as fast as the tree takes it (or not
// at all, idle) and drops the bot's.
type benchConn struct {
	idle bool
	// credit holds one token per frame the tree may take: the STT gives it
	// back when a frame arrived, which bounds the frames in flight.
	credit chan struct{}
	frame  []int16
	start  time.Time
	seq    uint64
}

func (c *benchConn) InputRate() int  { return 16000 }
func (c *benchConn) OutputRate() int { return 16000 }
func (c *benchConn) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	if c.idle {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-c.credit:
	case <-ctx.Done():
		return ctx.Err()
	}
	copy(f.PCM, c.frame)
	f.Start = c.start.Add(time.Duration(c.seq) * messages.FrameDuration)
	f.Seq, f.Rate = c.seq, 16000
	c.seq++
	return nil
}
func (c *benchConn) WriteFrame(*messages.OutputAudio) error { return nil }
func (c *benchConn) Clear(messages.Epoch) error             { return nil }
func (c *benchConn) Mark(string) error                      { return nil }
func (c *benchConn) OnMarkEcho(func(string))                {}
func (c *benchConn) Close() error                           { return nil }

// countingSTT signals every frame it receives on a channel, so the
// benchmark can wait for a frame to cross the whole input path.
type countingSTT struct {
	got, credit chan struct{}
	events      chan providers.STTEvent
	once        sync.Once
}

func (s *countingSTT) Connect(context.Context) (providers.STTSession, error) { return s, nil }
func (s *countingSTT) Warm(context.Context) error                            { return nil }
func (s *countingSTT) SendAudio([]int16) error {
	// Never block the stt actor: it must stay able to stop.
	select {
	case s.got <- struct{}{}:
	default:
	}
	select {
	case s.credit <- struct{}{}:
	default:
	}
	return nil
}
func (s *countingSTT) Finalize() error                   { return nil }
func (s *countingSTT) Events() <-chan providers.STTEvent { return s.events }
func (s *countingSTT) Close() error {
	s.once.Do(func() { close(s.events) })
	return nil
}

// dispatchers are the two ways a call tree's mailboxes run: on the
// system's long-lived workers (kit.WithWorkers, the server's) and on a
// goroutine per schedule (protoactor's default, a system without workers).
var dispatchers = []struct {
	name string
	opts []kit.SystemOption
}{
	{"workers", []kit.SystemOption{kit.WithWorkers(0)}},
	{"goroutines", nil},
}

// BenchmarkInputFrame is the cost of one 20 ms frame from the transport's
// reader through vad to the STT provider, frames back to back.
func BenchmarkInputFrame(b *testing.B) {
	for _, d := range dispatchers {
		b.Run(d.name, func(b *testing.B) { benchInputFrame(b, kit.NewSystem(zerolog.Nop(), d.opts...)) })
	}
}

func benchInputFrame(b *testing.B, sys *kit.System) {
	defer sys.Shutdown()
	// Eight frames may be in flight: the first ones wait in the stt actor
	// until its provider session is connected.
	credit := make(chan struct{}, 8)
	for range cap(credit) {
		credit <- struct{}{}
	}
	stt := &countingSTT{got: make(chan struct{}, 8), credit: credit, events: make(chan providers.STTEvent)}
	conn := &benchConn{frame: make([]int16, 320), start: time.Now(), credit: credit}
	ended := make(chan messages.CallEnded, 1)
	props, err := session.Props(session.Config{
		Call: "bench", Conn: conn, STT: stt,
		LLM: providertest.NewMockLLM(providertest.LLMConfig{}), TTS: providertest.NewMockTTS(providertest.TTSConfig{}), Log: zerolog.Nop(),
		OnEnd: func(e messages.CallEnded) { ended <- e },
	})
	if err != nil {
		b.Fatal(err)
	}
	pid := sys.Root.Spawn(props)
	for range 100 { // warm up: pools, mailbox rings
		<-stt.got
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		<-stt.got
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/frame")
	sys.Root.Stop(pid)
	<-ended
}

// BenchmarkCallSpawnStop is the cost of a whole call tree: spawned through
// the switchboard, connected to its (mock) providers, hung up and gone.
// B/op is everything the call allocated, an upper bound of its memory.
func BenchmarkCallSpawnStop(b *testing.B) {
	for _, d := range dispatchers {
		b.Run(d.name, func(b *testing.B) { benchCallSpawnStop(b, kit.NewSystem(zerolog.Nop(), d.opts...)) })
	}
}

func benchCallSpawnStop(b *testing.B, sys *kit.System) {
	defer sys.Shutdown()
	board := sys.Root.Spawn(switchboard.Props())
	ended := make(chan messages.CallEnded, 1)
	llm, tts := providertest.NewMockLLM(providertest.LLMConfig{}), providertest.NewMockTTS(providertest.TTSConfig{})
	stt := providertest.NewMockSTT(providertest.STTConfig{}, nil)
	var once sync.Once
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := messages.CallID("call-" + itoa(i))
		props, err := session.Props(session.Config{
			Call: id, Conn: &benchConn{idle: true}, STT: stt, LLM: llm, TTS: tts, Log: zerolog.Nop(),
			OnEnd: func(e messages.CallEnded) { ended <- e },
		})
		if err != nil {
			b.Fatal(err)
		}
		res, err := sys.Root.RequestFuture(board, &switchboard.StartCall{Call: id, Props: props}, 5*time.Second).Result()
		if err != nil || res.(*switchboard.CallStarted).Err != nil {
			b.Fatal(err, res)
		}
		sys.Root.Send(board, &switchboard.ToCall{Call: id, Msg: &messages.Hangup{Reason: "bench"}})
		<-ended
	}
	b.StopTimer()
	once.Do(func() {
		if err := sys.Root.StopFuture(board).Wait(); err != nil {
			b.Error(err)
		}
	})
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf [20]byte
	n := len(buf)
	for ; i > 0; i /= 10 {
		n--
		buf[n] = byte('0' + i%10)
	}
	return string(buf[n:])
}
