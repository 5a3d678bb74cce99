package providertest

import (
	"context"
	"fmt"
	"time"
	"unicode"

	"github.com/brisvox/brisvox/providers"
)

// sttSpeechRMS is the RMS above which a 20 ms chunk of audio counts as
// speech for the mock STT; the scenario's speech is far above it.
const sttSpeechRMS = 500

// STTConfig sets the mock STT's latencies. Zero values take the defaults.
type STTConfig struct {
	// ConnectLatency is how long Connect takes (default 0).
	ConnectLatency time.Duration
	// InterimEvery is how much speech audio of the current utterance
	// yields one more interim (default 200ms).
	InterimEvery time.Duration
	// FinalLatency is the time from Finalize to its final (default 150ms).
	FinalLatency time.Duration
	// Rate is the sample rate of the audio sent (default 16000).
	Rate int
}

// withDefaults fills the zero fields.
func (c STTConfig) withDefaults() STTConfig {
	if c.InterimEvery == 0 {
		c.InterimEvery = 200 * time.Millisecond
	}
	if c.FinalLatency == 0 {
		c.FinalLatency = 150 * time.Millisecond
	}
	if c.Rate == 0 {
		c.Rate = 16000
	}
	return c
}

// Validate rejects negative durations and rates below one sample per frame.
func (c STTConfig) Validate() error {
	c = c.withDefaults()
	if c.ConnectLatency < 0 || c.InterimEvery < 0 || c.FinalLatency < 0 || c.Rate < 50 {
		return fmt.Errorf("%w: stt %+v", ErrInvalidConfig, c)
	}
	return nil
}

// sttUtterance is one scripted utterance with the byte offsets where its
// words end, so an interim is a substring and costs no allocation.
type sttUtterance struct {
	text     string
	wordEnds []int
}

// MockSTT is a scripted speech-to-text service. It recognizes the
// utterances of its script in order, one per Finalize that follows speech:
// the recognizer never hears words, it counts speech audio. The script and
// the position in it belong to the MockSTT, not to a session, so a session
// that reconnects mid-utterance continues the same utterance. Safe for
// concurrent use.
type MockSTT struct {
	mockBase
	cfg    STTConfig
	cfgErr error
	utts   []sttUtterance

	// pos is the utterance being spoken; speech and interims count its
	// speech audio and the interims sent since the last final.
	pos       int
	speech    time.Duration
	interims  int
	finalizes int
}

var _ providers.STT = (*MockSTT)(nil)

// NewMockSTT makes a mock that recognizes utterances in order. An invalid
// cfg makes every Connect fail with ErrInvalidConfig.
func NewMockSTT(cfg STTConfig, utterances []string) *MockSTT {
	m := &MockSTT{cfg: cfg.withDefaults(), cfgErr: cfg.Validate()}
	for _, u := range utterances {
		m.utts = append(m.utts, sttUtterance{text: u, wordEnds: wordEnds(u)})
	}
	return m
}

// wordEnds lists the byte offsets where the words of s end.
func wordEnds(s string) []int {
	var ends []int
	in := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			if in {
				ends = append(ends, i)
			}
			in = false
			continue
		}
		in = true
	}
	if in {
		ends = append(ends, len(s))
	}
	return ends
}

// Config is the mock's configuration, defaults filled in.
func (m *MockSTT) Config() STTConfig { return m.cfg }

// Finalizes counts the Finalize calls that live sessions accepted.
func (m *MockSTT) Finalizes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.finalizes
}

// Connect opens a session after ConnectLatency, taking the next injected
// fault. The session ends when ctx is cancelled or Close is called.
func (m *MockSTT) Connect(ctx context.Context) (providers.STTSession, error) {
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
	s := &sttSession{m: m, cfg: cfg}
	s.pump = newPump[providers.STTEvent](ctx, &m.mu, s, f, func(err error) providers.STTEvent {
		return providers.STTEvent{Err: err}
	})
	s.pump.start()
	return s, nil
}

// sttItem is an owed event and its due time.
type sttItem struct {
	due time.Time
	ev  providers.STTEvent
}

// sttSession is one session of a MockSTT. Its state is guarded by the
// mock's lock.
type sttSession struct {
	m    *MockSTT
	cfg  STTConfig
	pump *pump[providers.STTEvent]
	// queue[head:] is owed, in order; the slice is reused so that steady
	// SendAudio does not allocate.
	queue []sttItem
	head  int
}

var _ providers.STTSession = (*sttSession)(nil)

// SendAudio counts the speech in pcm, 20 ms at a time, and sends the
// interims it earns at once. It neither blocks nor allocates (once the
// session's queue has grown) nor keeps pcm.
func (s *sttSession) SendAudio(pcm []int16) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.pump.errLocked(); err != nil {
		return err
	}
	n := s.cfg.Rate / 50
	for off := 0; off < len(pcm); off += n {
		chunk := pcm[off:min(off+n, len(pcm))]
		if !loud(chunk) {
			continue
		}
		s.m.speech += time.Duration(len(chunk)) * time.Second / time.Duration(s.cfg.Rate)
		s.interimsLocked()
	}
	return nil
}

// loud tells whether the RMS of chunk is above sttSpeechRMS.
func loud(chunk []int16) bool {
	var sum int64
	for _, v := range chunk {
		sum += int64(v) * int64(v)
	}
	return sum > sttSpeechRMS*sttSpeechRMS*int64(len(chunk))
}

// interimsLocked queues the interims the speech so far has earned: one per
// InterimEvery, each with one more word of the utterance.
func (s *sttSession) interimsLocked() {
	m := s.m
	if m.pos >= len(m.utts) {
		return
	}
	u := m.utts[m.pos]
	for m.speech >= time.Duration(m.interims+1)*s.cfg.InterimEvery {
		m.interims++
		if len(u.wordEnds) == 0 {
			continue
		}
		k := min(m.interims, len(u.wordEnds))
		s.enqueueLocked(time.Now(), providers.STTEvent{Text: u.text[:u.wordEnds[k-1]]})
	}
}

// enqueueLocked owes ev at due and wakes the pump.
func (s *sttSession) enqueueLocked(due time.Time, ev providers.STTEvent) {
	s.queue = append(s.queue, sttItem{due: due, ev: ev})
	s.pump.pokeLocked()
}

// Finalize owes, FinalLatency from now, the final of the current utterance
// if speech of it was heard since the last final (and moves the script on
// at once, so speech that follows belongs to the next utterance), or an
// empty final if not.
func (s *sttSession) Finalize() error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.pump.errLocked(); err != nil {
		return err
	}
	m := s.m
	m.finalizes++
	ev := providers.STTEvent{Final: true, FromFinalize: true}
	if m.speech > 0 {
		ev.SpeechFinal = true
		if m.pos < len(m.utts) {
			ev.Text = m.utts[m.pos].text
			m.pos++
		}
		m.speech, m.interims = 0, 0
	}
	s.enqueueLocked(time.Now().Add(s.cfg.FinalLatency), ev)
	return nil
}

// Events delivers the session's results; it closes when the session ends.
func (s *sttSession) Events() <-chan providers.STTEvent { return s.pump.out }

// Close ends the session, drops what is owed and waits for its goroutine.
func (s *sttSession) Close() error {
	s.pump.close()
	return nil
}

// nextLocked implements feed: the queue is delivered in order, so an event
// is never earlier than the one before it.
func (s *sttSession) nextLocked() (time.Time, bool) {
	if s.head == len(s.queue) {
		return time.Time{}, false
	}
	return s.queue[s.head].due, true
}

// popLocked implements feed.
func (s *sttSession) popLocked(time.Time) providers.STTEvent {
	ev := s.queue[s.head].ev
	s.queue[s.head] = sttItem{}
	s.head++
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	}
	return ev
}
