package keeper_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/journal"
	"github.com/brisvox/brisvox/cmd/internal/records/keeper"
	"github.com/brisvox/brisvox/cmd/internal/records/redact"
	"github.com/brisvox/brisvox/cmd/internal/records/sqlstore"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/carrier/twilio"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// The Twilio stream's ids and the caller's number as a TwiML
// <Parameter> passes it (customParameters): Twilio's start message has
// no caller number of its own. The number is Ofcom's drama range: no
// one's.
const (
	twAccountSID = "AC0123456789abcdef0123456789abcdef"
	twCallSID    = "CAfedcba9876543210fedcba9876543210"
	twStreamSID  = "MZ00112233445566778899aabbccddeeff"
	twFrom       = "+441632960177"
	agentFile    = "name = \"twilio test agent\"\n"
	answerText   = "It is half past three."
)

// named gives a mock provider a vendor and a model for the record
// (providers.Named); the mock's methods are promoted, so the stages find
// its optional interfaces as they would on the bare mock.
type namedSTT struct{ *providertest.MockSTT }

func (namedSTT) Vendor() string { return "mock" }
func (namedSTT) Model() string  { return "scripted-stt" }

type namedTTS struct{ *providertest.MockTTS }

func (namedTTS) Vendor() string { return "mock" }
func (namedTTS) Model() string  { return "scripted-tts" }

// usageLLM is the mock LLM reporting each response's tokens before its
// Done, as a vendor does (the mock alone reports none).
type usageLLM struct{ *providertest.MockLLM }

func (usageLLM) Vendor() string { return "mock" }
func (usageLLM) Model() string  { return "scripted-llm" }

func (l usageLLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	s, err := l.MockLLM.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &usageStream{LLMStream: s, in: len(req.Messages)}, nil
}

type usageStream struct {
	providers.LLMStream
	in, out int
	done    *providers.LLMEvent
}

func (s *usageStream) Recv() (providers.LLMEvent, error) {
	if s.done != nil {
		ev := *s.done
		s.done = nil
		return ev, nil
	}
	ev, err := s.LLMStream.Recv()
	if err != nil {
		return ev, err
	}
	switch ev.Kind {
	case providers.LLMText:
		s.out++
	case providers.LLMDone:
		s.done = &ev
		return providers.LLMEvent{Kind: providers.LLMUsage, Usage: providers.Usage{InputTokens: 10 * s.in, OutputTokens: s.out}}, nil
	}
	return ev, nil
}

// twilioAgent answers every call with the mocks, the STT scripted with
// the scenario's utterances (at the stream's 8 kHz).
type twilioAgent struct{ sc *sim.Scenario }

func (twilioAgent) Name() string { return "twilio test agent" }

func (twilioAgent) Digest() string {
	sum := sha256.Sum256([]byte(agentFile))
	return hex.EncodeToString(sum[:])
}

func (a twilioAgent) Session(serve.CallEnv) (session.Config, error) {
	return session.Config{
		STT: namedSTT{providertest.NewMockSTT(providertest.STTConfig{Rate: twilio.Rate}, a.sc.Utterances())},
		LLM: usageLLM{providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: answerText})},
		TTS: namedTTS{providertest.NewMockTTS(providertest.TTSConfig{})},
	}, nil
}

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// observed is the live events of the server's calls, as Observe got them.
type observed struct {
	mu     sync.Mutex
	ids    []messages.CallID
	events []messages.CallEvent
	ended  []messages.CallEnded
}

func (o *observed) event(id messages.CallID, e messages.CallEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Contains(o.ids, id) {
		o.ids = append(o.ids, id)
	}
	o.events = append(o.events, e)
}

func (o *observed) end(e messages.CallEnded) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, e)
}

func (o *observed) of(kind messages.EventKind) []messages.CallEvent {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []messages.CallEvent
	for _, e := range o.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (o *observed) endedCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ended)
}

// eventually polls cond until it holds, within d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
	}
}

// twilioCaller is Twilio's side of a Media Stream in real time: a media
// message of 20 ms of 8 kHz mu-law every 20 ms (the scenario's frames,
// then silence), each mark echoed at once (it plays as it receives), the
// bot's media frames counted.
type twilioCaller struct {
	t      *testing.T
	ws     *websocket.Conn
	wmu    sync.Mutex
	seq    int
	cancel context.CancelFunc
	send   sync.WaitGroup
	read   chan struct{}
	frames atomic.Int64
	marks  atomic.Int64
}

func dialTwilio(t *testing.T, url string, sc *sim.Scenario) *twilioCaller {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ws, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &twilioCaller{t: t, ws: ws, cancel: cancel, read: make(chan struct{})}
	t.Cleanup(func() {
		c.stopMedia()
		_ = ws.CloseNow()
		<-c.read
	})
	c.write(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"})
	c.write(map[string]any{
		"event": "start", "sequenceNumber": "", "streamSid": twStreamSID,
		"start": map[string]any{
			"streamSid": twStreamSID, "accountSid": twAccountSID, "callSid": twCallSID,
			"tracks": []string{"inbound"}, "customParameters": map[string]string{"From": twFrom},
			"mediaFormat": map[string]any{"encoding": "audio/x-mulaw", "sampleRate": twilio.Rate, "channels": 1},
		},
	})
	go func() {
		defer close(c.read)
		for {
			typ, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				Event string `json:"event"`
				Mark  struct {
					Name string `json:"name"`
				} `json:"mark"`
			}
			if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
				continue
			}
			switch m.Event {
			case "media":
				c.frames.Add(1)
			case "mark":
				c.marks.Add(1)
				c.write(map[string]any{"event": "mark", "sequenceNumber": "", "streamSid": twStreamSID, "mark": map[string]string{"name": m.Mark.Name}})
			}
		}
	}()
	c.send.Go(func() {
		tick := time.NewTicker(messages.FrameDuration)
		defer tick.Stop()
		pcm := make([]int16, twilio.Rate/50)
		mu := make([]byte, len(pcm))
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sc.FillFrame(i, twilio.Rate, pcm)
			media.MulawEncode(mu, pcm)
			if !c.write(map[string]any{"event": "media", "sequenceNumber": "", "streamSid": twStreamSID, "media": map[string]string{
				"track": "inbound", "chunk": strconv.Itoa(i + 1), "timestamp": strconv.Itoa(i * 20), "payload": base64.StdEncoding.EncodeToString(mu),
			}}) {
				return
			}
		}
	})
	return c
}

func (c *twilioCaller) next() string {
	c.seq++
	return strconv.Itoa(c.seq)
}

// write sends one message (false: the stream is gone).
func (c *twilioCaller) write(v map[string]any) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, ok := v["sequenceNumber"]; ok {
		v["sequenceNumber"] = c.next()
	}
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Error(err)
		return false
	}
	return c.ws.Write(context.Background(), websocket.MessageText, b) == nil
}

func (c *twilioCaller) stopMedia() {
	c.cancel()
	c.send.Wait()
}

// stop ends the stream as Twilio does when the call ends (a stop
// message) and waits until the server closed the websocket.
func (c *twilioCaller) stop(t *testing.T) {
	t.Helper()
	c.stopMedia()
	c.write(map[string]any{"event": "stop", "sequenceNumber": "", "streamSid": twStreamSID,
		"stop": map[string]string{"accountSid": twAccountSID, "callSid": twCallSID}})
	select {
	case <-c.read:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the stream after the stop")
	}
}

// filesHold fails the test for each secret in any byte of any file under
// dir (the database and its WAL, both journals).
func filesHold(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("%d files under %s, want the database and both journals", n, dir)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// TestTwilioCallRecord: a call through the Twilio Media Streams handler
// (mounted on serve.Server as `brisvox serve` mounts it, on a real
// loopback socket; the caller speaks Twilio's protocol: connected, a
// start with a callSid and the From number as a custom parameter, 8 kHz
// mu-law media every 20 ms, mark echoes, a stop), answered by the mock
// providers, leaves one complete record in a real records service
// (SQLite store, both journals, the redactor, numbers hashed). The
// record, read from the store after the service closed, is checked
// against the call's live events (serve.Config.Observe): transport
// twilio, inbound, end reason hangup (Twilio's stop), the agent and its
// digest, no parties (twilio.Call has no Parties: Twilio's start message
// names no caller, and a custom parameter is not taken for one), the
// answered turn's marks and its latency and stages equal to the live
// latency event's, the caller's line as the live user_turn and the bot's
// as the live bot words, the three mocks' usage. The callSid, the stream
// and account SIDs and the From number are in no byte of the database or
// the journals, nor in the log. Real time: skipped with -short.
//
// Mutations caught (each seen failing): the keeper not set in
// serve.Config (no record: store.Get fails); serve's callStart not asking
// the Conn for its transport (transport "unknown"); the record's latency
// not the live event's to the microsecond (build.go's LatencyMS rounded
// to whole milliseconds); the recognizer's audio counted at 16 kHz
// (actors/stt's sent: half the call's audio seconds); twilio.Call giving
// the From custom parameter and the callSid as its Parties (the record
// names parties).
func TestTwilioCallRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time call on loopback")
	}
	base := leaktest.Snapshot()
	ctx := context.Background()
	dir := t.TempDir()
	logs := &syncBuffer{}
	log := zerolog.New(logs)

	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	recJ, err := journal.Open(journal.Config{Dir: filepath.Join(dir, "journal"), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	liveJ, err := journal.Open(journal.Config{Dir: filepath.Join(dir, "live"), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := records.New(records.Config{Node: "twilio-node", Numbers: records.NumbersHash,
		NumberKey: []byte("twilio-test-number-key-0123456789"), Redactor: red, Log: log}, store, recJ, liveJ)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Recover(ctx); err != nil || n != 0 {
		t.Fatalf("recover: %d, %v", n, err)
	}
	svc.Start()

	sc := sim.NewScenario("twilio").Silence(600*time.Millisecond).Speak("What time is it?", time.Second).Silence(time.Minute)
	obs := &observed{}
	srv, err := serve.New(serve.Config{MaxCalls: 2, DrainTimeout: 2 * time.Second, IdleFree: -1, Node: "twilio-node", Log: log,
		Observe: obs.event, ObserveEnd: obs.end, Keeper: keeper.New(svc, nil, nil, log)}, twilioAgent{sc: sc})
	if err != nil {
		t.Fatal(err)
	}
	h, err := twilio.New(twilio.Config{OnCall: func(c *twilio.Call) { srv.Start(c) }, Admit: srv.Admit, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("/twilio", h, "twilio", h.Stats, h.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	// A failed check still stops the server and the service.
	shutdown := sync.OnceValue(func() error {
		stopServe()
		return <-served
	})
	closeSvc := sync.OnceValue(func() error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return svc.Close(cctx)
	})
	t.Cleanup(func() {
		_ = shutdown()
		_ = closeSvc()
		_ = store.Close()
		_ = recJ.Close()
		_ = liveJ.Close()
	})

	start := time.Now()
	c := dialTwilio(t, "ws://"+ln.Addr().String()+"/twilio", sc)
	eventually(t, 20*time.Second, "answered turn", func() bool {
		turns, done, lat := obs.of(messages.EventUserTurn), obs.of(messages.EventBotDone), obs.of(messages.EventLatency)
		return len(turns) == 1 && slices.ContainsFunc(done, func(e messages.CallEvent) bool { return e.Epoch == turns[0].Epoch }) &&
			slices.ContainsFunc(lat, func(e messages.CallEvent) bool { return e.Epoch == turns[0].Epoch })
	})
	if c.frames.Load() == 0 || c.marks.Load() == 0 {
		t.Errorf("the caller got %d media frames and %d marks of the answer", c.frames.Load(), c.marks.Load())
	}
	c.stop(t)
	eventually(t, 10*time.Second, "call's end", func() bool { return obs.endedCount() == 1 })
	live := time.Since(start)
	if err := shutdown(); err != nil {
		t.Errorf("serve: %v", err)
	}
	if err := closeSvc(); err != nil {
		t.Fatal(err)
	}

	if len(obs.ids) != 1 {
		t.Fatalf("calls observed: %v", obs.ids)
	}
	id := string(obs.ids[0])
	rec, err := store.Get(ctx, id)
	if err != nil {
		t.Fatalf("the record of call %s: %v", id, err)
	}
	checkTwilioRecord(t, rec, obs, twilioAgent{}.Digest())

	for _, err := range []error{store.Close(), recJ.Close(), liveJ.Close()} {
		if err != nil && !errors.Is(err, journal.ErrClosed) {
			t.Error(err)
		}
	}
	secrets := []string{twCallSID, twStreamSID, twAccountSID, twFrom, strings.TrimPrefix(twFrom, "+")}
	filesHold(t, dir, secrets...)
	logged := logs.String()
	if !strings.Contains(logged, `"call_id":"`+id+`","started":true`) || !strings.Contains(logged, "Twilio stopped the stream") {
		t.Errorf("the log (%d bytes) has no end of the stream %s", len(logged), id)
	}
	for _, s := range append(secrets, "What time is it", answerText) {
		if strings.Contains(logged, s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if left, stacks := leaktest.Settle(base, 5*time.Second); left != 0 {
		t.Errorf("%d goroutines left:\n%s", left, stacks)
	}
	t.Logf("a Twilio call's record checked (call %v, total %v)", live.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

func checkTwilioRecord(t *testing.T, rec *records.Record, obs *observed, digest string) {
	t.Helper()
	if rec.Version != records.SchemaVersion || rec.Node != "twilio-node" {
		t.Errorf("version %d node %q", rec.Version, rec.Node)
	}
	if rec.Transport != "twilio" || rec.Direction != "inbound" || rec.Trunk != "" {
		t.Errorf("transport %q direction %q trunk %q, want twilio inbound and no trunk", rec.Transport, rec.Direction, rec.Trunk)
	}
	if rec.Agent != "twilio test agent" || rec.AgentDigest != digest {
		t.Errorf("agent %q digest %q, want the test agent and %s", rec.Agent, rec.AgentDigest, digest)
	}
	if rec.EndReason != "hangup" || rec.GaveUp != "" {
		t.Errorf("end reason %q gave up %q, want hangup (Twilio's stop)", rec.EndReason, rec.GaveUp)
	}
	if rec.Started.IsZero() || rec.Answered.Before(rec.Started) || !rec.Ended.After(rec.Answered) || rec.Ended.Sub(rec.Started) > time.Minute {
		t.Errorf("started %v answered %v ended %v", rec.Started, rec.Answered, rec.Ended)
	}
	if rec.Caller != (records.Party{}) || rec.Callee != (records.Party{}) {
		t.Errorf("parties %+v %+v: a Twilio stream names none", rec.Caller, rec.Callee)
	}
	if len(rec.Failures) != 0 || len(rec.Restarts) != 0 || len(rec.Tools) != 0 || rec.Recording != nil || rec.TraceID != "" || len(rec.Redactions) != 0 {
		t.Errorf("failures %v restarts %v tools %v recording %v trace %q redactions %v, want none",
			rec.Failures, rec.Restarts, rec.Tools, rec.Recording, rec.TraceID, rec.Redactions)
	}

	turns := obs.of(messages.EventUserTurn)
	ep := turns[0].Epoch
	var words []string
	for _, e := range obs.of(messages.EventBotWord) {
		if e.Epoch == ep {
			words = append(words, e.Text)
		}
	}
	var latency messages.CallEvent
	for _, e := range obs.of(messages.EventLatency) {
		if e.Epoch == ep {
			latency = e
		}
	}
	var caller, bot *records.Line
	for i, l := range rec.Transcript {
		switch {
		case l.Epoch == uint64(ep) && l.Speaker == records.SpeakerCaller:
			caller = &rec.Transcript[i]
		case l.Epoch == uint64(ep) && l.Speaker == records.SpeakerBot:
			bot = &rec.Transcript[i]
		}
	}
	if len(rec.Transcript) != 2 || caller == nil || caller.Text != turns[0].Text || bot == nil || bot.Text != strings.Join(words, " ") || bot.Cut {
		t.Errorf("transcript %+v, want the caller's %q and the bot's %q in turn %d", rec.Transcript, turns[0].Text, strings.Join(words, " "), ep)
	}
	if turns[0].Text != "What time is it?" || strings.Join(words, " ") != answerText {
		t.Errorf("live: the caller said %q, the bot %q", turns[0].Text, words)
	}

	var tr *records.Turn
	for i := range rec.Turns {
		if rec.Turns[i].Epoch == uint64(ep) {
			tr = &rec.Turns[i]
		}
	}
	if len(rec.Turns) < 1 || tr == nil {
		t.Fatalf("turns %+v, want turn %d", rec.Turns, ep)
	}
	liveMarks := map[string]time.Time{}
	for k, at := range latency.Marks {
		liveMarks[k.String()] = at
	}
	for _, m := range []string{"vad_stop", "stt_final", "turn_end", "llm_request", "llm_first_token", "tts_first_audio", "first_audio_out"} {
		at, ok := tr.Marks[m]
		if !ok || at.Before(rec.Started) || at.After(rec.Ended) {
			t.Errorf("turn %d: mark %s %v (present %v), want one within the call", ep, m, at, ok)
		}
		if live := liveMarks[m]; ok && !live.Equal(at) {
			t.Errorf("turn %d: mark %s at %v, the live latency event's %v", ep, m, at, live)
		}
	}
	if tr.LatencyMS == 0 || tr.LatencyMS != ms(latency.Latency) {
		t.Errorf("turn %d: latency %.3f ms, the live event's %.3f ms", ep, tr.LatencyMS, ms(latency.Latency))
	}
	var sum, cum time.Duration
	var stages []records.Stage
	for _, s := range latency.Stages {
		before := cum.Microseconds()
		cum += s.D
		stages = append(stages, records.Stage{Name: s.Name, MS: float64(cum.Microseconds()-before) / 1000})
		sum += s.D
	}
	if !slices.Equal(tr.Stages, stages) || len(stages) == 0 || sum != latency.Latency {
		t.Errorf("turn %d: stages %v, the live event's %v", ep, tr.Stages, stages)
	}
	if len(tr.RoundFirstTokens) != 1 || !tr.RoundFirstTokens[0].Equal(tr.Marks["llm_first_token"]) || tr.BargeIn || tr.Cut || rec.BargeIns != 0 {
		t.Errorf("turn %d: round first tokens %v (llm_first_token %v), barge-in %v cut %v, barge-ins %d",
			ep, tr.RoundFirstTokens, tr.Marks["llm_first_token"], tr.BargeIn, tr.Cut, rec.BargeIns)
	}

	usage := map[string]records.Usage{}
	for _, u := range rec.Usage {
		usage[u.Kind] = u
	}
	// The recognizer is sent the whole stream, 8 kHz counted as 8 kHz:
	// about the call's length (not half of it).
	call := rec.Ended.Sub(rec.Started).Seconds()
	if u := usage[records.UsageSTT]; len(rec.Usage) != 3 || u.Vendor != "mock" || u.Model != "scripted-stt" || u.Requests < 1 ||
		u.AudioSeconds < 0.8*call || u.AudioSeconds > call+0.1 {
		t.Errorf("usage %+v: want stt by mock with the call's audio (%.2f s)", rec.Usage, call)
	}
	if u := usage[records.UsageLLM]; u.Vendor != "mock" || u.Model != "scripted-llm" || u.Requests != 1 || u.OutputTokens != len(words) || u.InputTokens < 10 {
		t.Errorf("llm usage %+v, want mock's one response of %d tokens", u, len(words))
	}
	if u := usage[records.UsageTTS]; u.Vendor != "mock" || u.Model != "scripted-tts" || u.Requests < 1 || u.Characters < len([]rune(answerText))-4 || u.AudioSeconds <= 0 {
		t.Errorf("tts usage %+v, want mock's with the answer's characters and audio", u)
	}
}
