package providertest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// The bot's synthetic voice: a square wave, clearly non-silent and unlike
// the caller's 200 Hz, so an echo would be told apart.
const (
	ttsToneHz    = 440
	ttsAmplitude = 6000
)

// TTSConfig sets the mock TTS's latencies and pacing. Zero values take the
// defaults.
type TTSConfig struct {
	// ConnectLatency is how long Connect takes (default 0).
	ConnectLatency time.Duration
	// FirstByte is the time from a context's first Push to its first event
	// (default 200ms).
	FirstByte time.Duration
	// Rate is the sample rate of the audio (default 16000).
	Rate int
	// WordDuration is how much audio a word makes, rounded to whole 20 ms
	// frames, at least one (default 120ms + 20ms per rune).
	WordDuration func(word string) time.Duration
	// Chunk is the length of one audio event (default 40ms).
	Chunk time.Duration
	// Paced makes the audio come in real time, one Chunk per Chunk, and
	// Flushed when the last chunk's time is over; by default all the audio
	// of the words available comes at once, as from a fast synthesizer,
	// with Flushed right after it.
	Paced bool
	// PacedLead, with Paced, runs the audio this far ahead of real time,
	// as a streaming synthesizer keeps its client's buffer: the first
	// PacedLead of a context's audio comes at once with its first chunk,
	// then each chunk PacedLead before its time (Flushed too). Zero: each
	// chunk comes at its time, and a client that plays as it receives has
	// no margin for a late one.
	PacedLead time.Duration
	// Unrecorded keeps no record of what was said: Texts, ContextWords,
	// WordLog and ContextOf find nothing. For load runs, where the record
	// grows with every answer and keeps every audio chunk alive.
	Unrecorded bool
}

// defaultWordDuration is the default of TTSConfig.WordDuration.
func defaultWordDuration(word string) time.Duration {
	return 120*time.Millisecond + 20*time.Millisecond*time.Duration(utf8.RuneCountInString(word))
}

// withDefaults fills the zero fields.
func (c TTSConfig) withDefaults() TTSConfig {
	if c.FirstByte == 0 {
		c.FirstByte = 200 * time.Millisecond
	}
	if c.Rate == 0 {
		c.Rate = 16000
	}
	if c.WordDuration == nil {
		c.WordDuration = defaultWordDuration
	}
	if c.Chunk == 0 {
		c.Chunk = 40 * time.Millisecond
	}
	return c
}

// Validate rejects negative durations and rates below one sample per frame.
func (c TTSConfig) Validate() error {
	c = c.withDefaults()
	if c.ConnectLatency < 0 || c.FirstByte < 0 || c.Chunk < 0 || c.Rate < 50 || c.PacedLead < 0 {
		return fmt.Errorf("%w: tts latency %v, first byte %v, chunk %v, rate %d",
			ErrInvalidConfig, c.ConnectLatency, c.FirstByte, c.Chunk, c.Rate)
	}
	return nil
}

// MockTTS is a scripted speech synthesizer: every word becomes a tone whose
// length depends on the word, announced by a word event with its offset.
// Safe for concurrent use.
type MockTTS struct {
	mockBase
	cfg    TTSConfig
	cfgErr error
	texts  []string
	// words are the word events delivered, per context id, in order.
	words map[string][]Word
	// chunks names the context of every audio chunk delivered, by the
	// chunk's first sample (the played-words oracle, clips.go).
	chunks map[*int16]string
}

var _ providers.TTS = (*MockTTS)(nil)

// NewMockTTS makes a mock synthesizer. An invalid cfg makes every Connect
// fail with ErrInvalidConfig.
func NewMockTTS(cfg TTSConfig) *MockTTS {
	return &MockTTS{cfg: cfg.withDefaults(), cfgErr: cfg.Validate()}
}

// Config is the mock's configuration, defaults filled in.
func (m *MockTTS) Config() TTSConfig { return m.cfg }

// Texts lists every text piece accepted by a Push, in order, over all
// sessions: what the bot was asked to say.
func (m *MockTTS) Texts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.texts)
}

// ContextWords returns the words delivered, per context id, with their
// offsets: what the bot said and where in each context's audio.
func (m *MockTTS) ContextWords() map[string][]Word {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]Word, len(m.words))
	for id, ws := range m.words {
		out[id] = slices.Clone(ws)
	}
	return out
}

// ContextOf names the context that delivered the audio chunk pcm (the
// very slice of the event).
func (m *MockTTS) ContextOf(pcm []int16) (string, bool) {
	if len(pcm) == 0 {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.chunks[&pcm[0]]
	return id, ok
}

// WordLog is ContextWords keyed by epoch, for the contexts named after
// their epoch as the tts actor names them ("e" and the epoch number);
// other ids are left out.
func (m *MockTTS) WordLog() map[messages.Epoch][]Word {
	out := map[messages.Epoch][]Word{}
	for id, ws := range m.ContextWords() {
		n, err := strconv.ParseUint(strings.TrimPrefix(id, "e"), 10, 64)
		if err != nil || !strings.HasPrefix(id, "e") {
			continue
		}
		out[messages.Epoch(n)] = ws
	}
	return out
}

// Connect opens a session after ConnectLatency, taking the next injected
// fault. The session ends when ctx is cancelled or Close is called.
func (m *MockTTS) Connect(ctx context.Context) (providers.TTSSession, error) {
	m.mu.Lock()
	f := m.connectLocked()
	cfg, cfgErr := m.cfg, m.cfgErr
	m.mu.Unlock()
	if cfgErr != nil {
		return nil, cfgErr
	}
	if err := connectWait(ctx, cfg.ConnectLatency, f); err != nil {
		return nil, err
	}
	s := &ttsSession{m: m, cfg: cfg, open: map[string]*ttsContext{}, closed: map[string]bool{}}
	s.pump = newPump[providers.TTSEvent](ctx, &m.mu, s, f, func(err error) providers.TTSEvent {
		return providers.TTSEvent{Kind: providers.TTSError, Err: err}
	})
	s.pump.start()
	return s, nil
}

// ttsWord is a complete word of a context and when its text was complete.
type ttsWord struct {
	text  string
	avail time.Time
	dur   time.Duration
}

// ttsContext is one context of a session: its words and how far their
// audio has gone out.
type ttsContext struct {
	id        string
	pushed    bool
	firstPush time.Time
	// partial is the start of a word whose end has not been pushed yet.
	partial string
	words   []ttsWord
	// wi is the word being sent; chunk is its next audio chunk, -1 while
	// its word event is still owed.
	wi    int
	chunk int
	// offset is the context's audio sent so far.
	offset time.Duration
	// cursor is the earliest time of the context's next event.
	cursor time.Time
	// paceStart is when the context's first audio chunk came (Paced
	// with a lead: chunk offsets count from it).
	paceStart time.Time
	flushed   bool
	flushAt   time.Time
}

// ttsAck is an owed Cancelled event.
type ttsAck struct {
	id string
	at time.Time
}

// ttsStep is the kind of the next owed event.
type ttsStep int

const (
	ttsStepNone ttsStep = iota
	ttsStepAck
	ttsStepWord
	ttsStepAudio
	ttsStepFlushed
)

// ttsSession is one session of a MockTTS. Contexts are synthesized one at
// a time in the order they were opened, like a real synthesizer. Its state
// is guarded by the mock's lock.
type ttsSession struct {
	m    *MockTTS
	cfg  TTSConfig
	pump *pump[providers.TTSEvent]

	// contexts are the open contexts in order of opening; contexts[0] is
	// being synthesized.
	contexts []*ttsContext
	open     map[string]*ttsContext
	// closed holds the ids that were flushed or cancelled.
	closed map[string]bool
	acks   []ttsAck
	// activeAt is when contexts[0] got its turn (the end of the one before).
	activeAt time.Time
}

var _ providers.TTSSession = (*ttsSession)(nil)

// Push adds text to a context, opening it on first use. A word cut between
// two pushes is joined: a word is complete when whitespace follows it or at
// Flush.
func (s *ttsSession) Push(contextID, text string) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.pump.errLocked(); err != nil {
		return err
	}
	if s.closed[contextID] {
		return fmt.Errorf("%w: push to %q", ErrContextClosed, contextID)
	}
	if !s.cfg.Unrecorded {
		s.m.texts = append(s.m.texts, text)
	}
	c := s.contextLocked(contextID)
	now := time.Now()
	if !c.pushed {
		c.pushed, c.firstPush = true, now
	}
	buf := c.partial + text
	start := -1
	for i, r := range buf {
		switch {
		case !unicode.IsSpace(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			s.addWordLocked(c, buf[start:i], now)
			start = -1
		}
	}
	c.partial = ""
	if start >= 0 {
		c.partial = buf[start:]
	}
	s.pump.pokeLocked()
	return nil
}

// contextLocked returns the open context id, opening it if needed.
func (s *ttsSession) contextLocked(id string) *ttsContext {
	c := s.open[id]
	if c == nil {
		c = &ttsContext{id: id, chunk: -1}
		s.open[id] = c
		s.contexts = append(s.contexts, c)
	}
	return c
}

// addWordLocked appends a complete word available from now.
func (s *ttsSession) addWordLocked(c *ttsContext, word string, now time.Time) {
	d := s.cfg.WordDuration(word)
	n := (d + messages.FrameDuration/2) / messages.FrameDuration
	d = max(n, 1) * messages.FrameDuration
	c.words = append(c.words, ttsWord{text: word, avail: now, dur: d})
}

// Flush completes the context's last word and owes Flushed after its last
// audio. Flushing a context never pushed to opens it empty.
func (s *ttsSession) Flush(contextID string) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.pump.errLocked(); err != nil {
		return err
	}
	if s.closed[contextID] {
		return fmt.Errorf("%w: flush of %q", ErrContextClosed, contextID)
	}
	c := s.contextLocked(contextID)
	now := time.Now()
	if c.partial != "" {
		s.addWordLocked(c, c.partial, now)
		c.partial = ""
	}
	c.flushed, c.flushAt = true, now
	s.closed[contextID] = true
	s.pump.pokeLocked()
	return nil
}

// Cancel drops what the context still owes and acknowledges at once. Any
// id is acknowledged, even one unknown or finished, as a real service does.
func (s *ttsSession) Cancel(contextID string) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.pump.errLocked(); err != nil {
		return err
	}
	now := time.Now()
	if c := s.open[contextID]; c != nil {
		i := slices.Index(s.contexts, c)
		s.contexts = slices.Delete(s.contexts, i, i+1)
		delete(s.open, contextID)
		if i == 0 {
			s.activeAt = now
		}
	}
	s.closed[contextID] = true
	s.acks = append(s.acks, ttsAck{id: contextID, at: now})
	s.pump.pokeLocked()
	return nil
}

// Events delivers the session's events; it closes when the session ends.
func (s *ttsSession) Events() <-chan providers.TTSEvent { return s.pump.out }

// Close ends the session, drops what is owed and waits for its goroutine.
func (s *ttsSession) Close() error {
	s.pump.close()
	return nil
}

// peekLocked tells what is owed next and when: acks first, then the head
// context's words, audio and Flushed, none before its first byte.
func (s *ttsSession) peekLocked() (ttsStep, time.Time) {
	if len(s.acks) > 0 {
		return ttsStepAck, s.acks[0].at
	}
	if len(s.contexts) == 0 {
		return ttsStepNone, time.Time{}
	}
	c := s.contexts[0]
	gate := s.activeAt
	if c.pushed {
		gate = latest(gate, c.firstPush.Add(s.cfg.FirstByte))
	}
	if c.wi < len(c.words) {
		due := latest(gate, latest(c.words[c.wi].avail, c.cursor))
		if c.chunk < 0 {
			return ttsStepWord, due
		}
		return ttsStepAudio, due
	}
	if c.flushed {
		return ttsStepFlushed, latest(gate, latest(c.flushAt, c.cursor))
	}
	return ttsStepNone, time.Time{}
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextLocked implements feed.
func (s *ttsSession) nextLocked() (time.Time, bool) {
	step, due := s.peekLocked()
	return due, step != ttsStepNone
}

// popLocked implements feed: it makes the event peekLocked announced and
// moves the state past it.
func (s *ttsSession) popLocked(due time.Time) providers.TTSEvent {
	step, _ := s.peekLocked()
	if step == ttsStepAck {
		a := s.acks[0]
		s.acks = s.acks[1:]
		return providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: a.id}
	}
	c := s.contexts[0]
	switch step {
	case ttsStepWord:
		c.chunk = 0
		c.cursor = due
		if !s.cfg.Unrecorded {
			if s.m.words == nil {
				s.m.words = map[string][]Word{}
			}
			s.m.words[c.id] = append(s.m.words[c.id], Word{Text: c.words[c.wi].text, Offset: c.offset})
		}
		return providers.TTSEvent{Kind: providers.TTSWord, ContextID: c.id, Word: c.words[c.wi].text, Offset: c.offset}
	case ttsStepAudio:
		w := c.words[c.wi]
		from := time.Duration(c.chunk) * s.cfg.Chunk
		d := min(s.cfg.Chunk, w.dur-from)
		ev := providers.TTSEvent{Kind: providers.TTSAudio, ContextID: c.id, Rate: s.cfg.Rate, PCM: s.tone(c.offset, d)}
		if len(ev.PCM) > 0 && !s.cfg.Unrecorded {
			if s.m.chunks == nil {
				s.m.chunks = map[*int16]string{}
			}
			s.m.chunks[&ev.PCM[0]] = c.id
		}
		c.offset += d
		c.chunk++
		c.cursor = due
		switch {
		case s.cfg.Paced && s.cfg.PacedLead > 0:
			if c.paceStart.IsZero() {
				c.paceStart = due.Add(d - c.offset) // the time of the context's offset 0
			}
			c.cursor = latest(due, c.paceStart.Add(c.offset-s.cfg.PacedLead))
		case s.cfg.Paced:
			c.cursor = due.Add(d)
		}
		if from+d >= w.dur {
			c.wi++
			c.chunk = -1
		}
		return ev
	default: // ttsStepFlushed
		s.contexts = s.contexts[1:]
		delete(s.open, c.id)
		s.activeAt = due
		return providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: c.id}
	}
}

// tone makes d of the bot's voice starting at offset within its context;
// the phase runs on from the context's start. The slice is handed over.
func (s *ttsSession) tone(offset, d time.Duration) []int16 {
	rate := int64(s.cfg.Rate)
	first := int64(offset) * rate / int64(time.Second)
	pcm := make([]int16, int64(d)*rate/int64(time.Second))
	for j := range pcm {
		if (first+int64(j))*2*ttsToneHz/rate%2 == 0 {
			pcm[j] = ttsAmplitude
		} else {
			pcm[j] = -ttsAmplitude
		}
	}
	return pcm
}

// Word is one word the TTS spoke, at Offset in its context's audio.
type Word struct {
	Text   string
	Offset time.Duration
}
