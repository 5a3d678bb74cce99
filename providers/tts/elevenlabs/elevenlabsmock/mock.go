package elevenlabsmock

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/internal/wsmock"
)

// MaxContexts is the service's limit of open contexts per socket.
const MaxContexts = 5

// Style is how the server speaks a context.
type Style struct {
	// CharDuration is the audio per character, the space after each word
	// included (default 40 ms).
	CharDuration time.Duration
	// WordsPerChunk is how many words one audio message carries (default
	// 1).
	WordsPerChunk int
	// Latency is the time from a flush to its first audio message.
	Latency time.Duration
	// Pace is the time between two audio messages of a context (0: all at
	// once, as a synthesizer faster than real time).
	Pace time.Duration
	// LeadingSilence is audio before the first word of a context; the
	// alignment times of the first chunk are shifted by it.
	LeadingSilence time.Duration
	// SplitWords sends each chunk as two messages, cut in the middle of
	// its last word (characters and audio).
	SplitWords bool
	// OddSplit, with SplitWords, moves the last byte of the first half's
	// audio to the second half, so a sample is cut between two messages.
	OddSplit bool
	// NoTrailingSpace leaves out the space after the last word of a flush,
	// so only the end of the context ends that word.
	NoTrailingSpace bool
	// LoseEarlyClose plays the service's race: a close_context that comes
	// before the context's first audio drops its text, and isFinal comes
	// with no audio at all.
	LoseEarlyClose bool
	// SeparateAlignment sends each audio message as two: its alignment
	// (no audio) and then its audio (alignment null), paced as two
	// messages. The service puts both in one message; the contract suite
	// counts its faults in events and needs one message per event (a
	// word's alignment, its audio, isFinal).
	SeparateAlignment bool
}

func (st Style) withDefaults() Style {
	if st.CharDuration <= 0 {
		st.CharDuration = 40 * time.Millisecond
	}
	if st.WordsPerChunk <= 0 {
		st.WordsPerChunk = 1
	}
	return st
}

// Sample is the value of the i-th sample of every context's audio: a ramp
// that tells byte order, cuts and gaps apart.
func Sample(i int) int16 { return int16(i%20000 - 10000) }

// ClientMessage is one text message a client sent, as the server read it.
type ClientMessage struct {
	ContextID     string
	Text          *string
	Flush         bool
	CloseContext  bool
	CloseSocket   bool
	VoiceSettings json.RawMessage
	GenConfig     json.RawMessage
	// Raw is the message as sent.
	Raw string
}

// Server is the mock. Its methods are safe for concurrent use.
type Server struct {
	*wsmock.Server

	mu     sync.Mutex
	styles []Style
	def    Style
	msgs   []ClientMessage
}

// New starts a server; opts are wsmock's (WithListener).
func New(opts ...wsmock.Option) *Server {
	s := &Server{}
	s.Server = wsmock.New(s.session, opts...)
	return s
}

// URL is the service's root (ws://host), for Config.URL.
func (s *Server) URL() string { return s.Server.URL("") }

// SetStyle sets the style of the contexts no Script entry is left for.
func (s *Server) SetStyle(st Style) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = st
}

// Script queues styles: each context the server opens takes the next one,
// then the SetStyle one.
func (s *Server) Script(styles ...Style) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.styles = append(s.styles, styles...)
}

// Reset drops the script, the style, the recorded messages and the faults
// not yet used.
func (s *Server) Reset() {
	s.mu.Lock()
	s.styles, s.def, s.msgs = nil, Style{}, nil
	s.mu.Unlock()
	s.ClearFaults()
}

// Messages returns the client's text messages so far, over all sessions.
func (s *Server) Messages() []ClientMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ClientMessage(nil), s.msgs...)
}

func (s *Server) nextStyle() Style {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.styles) == 0 {
		return s.def.withDefaults()
	}
	st := s.styles[0]
	s.styles = s.styles[1:]
	return st.withDefaults()
}

// mctx is one context of a session.
type mctx struct {
	id      string
	style   Style
	text    strings.Builder
	queue   [][]byte // messages to send
	due     time.Time
	sent    int // audio messages sent
	closed  bool
	samples int // audio samples made so far
}

// sess is one socket.
type sess struct {
	srv      *Server
	c        *wsmock.Conn
	rate     int
	contexts map[string]*mctx
	order    []*mctx // creation order, for a fair schedule
	voice    json.RawMessage
	first    bool // the first message was read
}

func (s *Server) session(c *wsmock.Conn) {
	rate := 16000
	if f := c.Request().Query.Get("output_format"); strings.HasPrefix(f, "pcm_") {
		if r, err := strconv.Atoi(f[4:]); err == nil && r > 0 {
			rate = r
		}
	}
	ss := &sess{srv: s, c: c, rate: rate, contexts: map[string]*mctx{}}

	// The inbox hands the client's messages over, so that the loop can
	// pace the audio while it reads.
	inbox := wsmock.Forward(c)
	defer inbox.Close()
	in := inbox.C

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var tick <-chan time.Time
		if next := ss.nextDue(); next != nil {
			timer.Reset(max(time.Until(next.due), 0))
			tick = timer.C
		}
		select {
		case m, ok := <-in:
			if !ok {
				return
			}
			if !ss.onMessage(m) {
				return
			}
		case <-tick:
			if !ss.sendDue() {
				return
			}
		}
	}
}

// nextDue is the context whose next message is due first, nil when none.
func (ss *sess) nextDue() *mctx {
	var best *mctx
	for _, x := range ss.order {
		if len(x.queue) > 0 && (best == nil || x.due.Before(best.due)) {
			best = x
		}
	}
	return best
}

// sendDue sends every message that is due; false when the connection is
// gone.
func (ss *sess) sendDue() bool {
	now := time.Now()
	for _, x := range append([]*mctx(nil), ss.order...) {
		for len(x.queue) > 0 && !x.due.After(now) {
			msg := x.queue[0]
			x.queue = x.queue[1:]
			if ss.c.Send(msg) != nil {
				return false
			}
			x.sent++
			x.due = now.Add(x.style.Pace)
			if x.style.Pace > 0 {
				break
			}
		}
		if len(x.queue) == 0 && x.closed {
			if !ss.final(x) {
				return false
			}
		}
	}
	return true
}

// final sends isFinal and forgets the context.
func (ss *sess) final(x *mctx) bool {
	delete(ss.contexts, x.id)
	for i, y := range ss.order {
		if y == x {
			ss.order = append(ss.order[:i], ss.order[i+1:]...)
			break
		}
	}
	b, _ := json.Marshal(struct {
		IsFinal   bool   `json:"isFinal"`
		ContextID string `json:"contextId"`
	}{true, x.id})
	return ss.c.Send(b) == nil
}

// onMessage handles one client message; false ends the session.
func (ss *sess) onMessage(m wsmock.Message) bool {
	if m.Binary {
		_ = ss.c.CloseWith(1003, "binary messages are not supported")
		return false
	}
	var raw struct {
		Text          *string         `json:"text"`
		ContextID     string          `json:"context_id"`
		Flush         bool            `json:"flush"`
		CloseContext  bool            `json:"close_context"`
		CloseSocket   bool            `json:"close_socket"`
		VoiceSettings json.RawMessage `json:"voice_settings"`
		GenConfig     json.RawMessage `json:"generation_config"`
	}
	if err := json.Unmarshal(m.Data, &raw); err != nil {
		_ = ss.c.CloseWith(1008, "Invalid JSON message")
		return false
	}
	ss.srv.mu.Lock()
	ss.srv.msgs = append(ss.srv.msgs, ClientMessage{ContextID: raw.ContextID, Text: raw.Text, Flush: raw.Flush,
		CloseContext: raw.CloseContext, CloseSocket: raw.CloseSocket, VoiceSettings: raw.VoiceSettings,
		GenConfig: raw.GenConfig, Raw: string(m.Data)})
	ss.srv.mu.Unlock()

	if raw.VoiceSettings != nil {
		if ss.first && (ss.voice == nil || string(ss.voice) != string(raw.VoiceSettings)) {
			_ = ss.c.CloseWith(1008, "voice_settings field must be provided in the first message and then either be not provided or not change.")
			return false
		}
		ss.voice = raw.VoiceSettings
	}
	ss.first = true

	if raw.CloseSocket {
		// Flushed contexts finish first, unpaced.
		for _, x := range append([]*mctx(nil), ss.order...) {
			for _, msg := range x.queue {
				if ss.c.Send(msg) != nil {
					return false
				}
			}
			x.queue = nil
			if !ss.final(x) {
				return false
			}
		}
		_ = ss.c.CloseWith(1000, "")
		return false
	}
	if raw.ContextID == "" {
		return true // a keep-alive ({"text": ""}) or nothing the mock knows
	}
	x := ss.contexts[raw.ContextID]
	if x == nil {
		if raw.CloseContext {
			return true
		}
		if len(ss.contexts) >= MaxContexts {
			_ = ss.c.CloseWith(1008, "Maximum simultaneous contexts per WebSocket connection exceeded (5). Please close an existing context before opening a new one.")
			return false
		}
		x = &mctx{id: raw.ContextID, style: ss.srv.nextStyle()}
		ss.contexts[x.id] = x
		ss.order = append(ss.order, x)
	}
	if raw.Text != nil {
		x.text.WriteString(*raw.Text)
	}
	if raw.Flush {
		ss.speak(x)
	}
	if raw.CloseContext {
		x.closed = true
		if x.style.LoseEarlyClose && x.sent == 0 {
			x.queue = nil
		}
		if len(x.queue) == 0 {
			return ss.final(x)
		}
	}
	return true
}

// speak turns the context's text into its audio messages.
func (ss *sess) speak(x *mctx) {
	words := strings.Fields(x.text.String())
	x.text.Reset()
	if len(words) == 0 {
		return
	}
	if len(x.queue) == 0 {
		x.due = time.Now().Add(x.style.Latency)
	}
	st := x.style
	for i := 0; i < len(words); i += st.WordsPerChunk {
		chunk := words[i:min(i+st.WordsPerChunk, len(words))]
		var chars []string
		for _, w := range chunk {
			for _, r := range w {
				chars = append(chars, string(r))
			}
			chars = append(chars, " ")
		}
		if st.NoTrailingSpace && i+st.WordsPerChunk >= len(words) {
			chars = chars[:len(chars)-1]
		}
		lead := time.Duration(0)
		if x.samples == 0 {
			lead = st.LeadingSilence
		}
		if !st.SplitWords {
			x.queue = append(x.queue, ss.audioMessage(x, chars, lead, nil)...)
			continue
		}
		last := chunk[len(chunk)-1]
		cut := len(chars) - 1 - (len([]rune(last))+1)/2 // inside the last word
		cut = max(cut, 1)
		var first [][]byte
		var carry []byte
		if st.OddSplit {
			first, carry = ss.audioMessageOdd(x, chars[:cut], lead)
		} else {
			first = ss.audioMessage(x, chars[:cut], lead, nil)
		}
		x.queue = append(x.queue, first...)
		x.queue = append(x.queue, ss.audioMessage(x, chars[cut:], 0, carry)...)
	}
}

// audioMessage makes the message of chars (after lead of silence): the
// context's next samples, prefix bytes before them (two messages with
// SeparateAlignment).
func (ss *sess) audioMessage(x *mctx, chars []string, lead time.Duration, prefix []byte) [][]byte {
	pcm, starts, durs := ss.render(x, chars, lead)
	pcm = append(prefix, pcm...)
	return ss.encode(x, chars, starts, durs, pcm)
}

// audioMessageOdd is audioMessage without the last byte, which it returns.
func (ss *sess) audioMessageOdd(x *mctx, chars []string, lead time.Duration) ([][]byte, []byte) {
	pcm, starts, durs := ss.render(x, chars, lead)
	last := []byte{pcm[len(pcm)-1]}
	return ss.encode(x, chars, starts, durs, pcm[:len(pcm)-1]), last
}

// render makes the samples and the chunk-relative times of chars.
func (ss *sess) render(x *mctx, chars []string, lead time.Duration) ([]byte, []int, []int) {
	per := x.style.CharDuration
	starts := make([]int, len(chars))
	durs := make([]int, len(chars))
	for i := range chars {
		starts[i] = int((lead + time.Duration(i)*per) / time.Millisecond)
		durs[i] = int(per / time.Millisecond)
	}
	total := lead + time.Duration(len(chars))*per
	n := int(int64(total) * int64(ss.rate) / int64(time.Second))
	pcm := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(Sample(x.samples+i)))
	}
	x.samples += n
	return pcm, starts, durs
}

// encode makes the message of a chunk: audio and alignment in one, or
// with SeparateAlignment the alignment alone and then the audio alone.
func (ss *sess) encode(x *mctx, chars []string, starts, durs []int, pcm []byte) [][]byte {
	type align struct {
		Chars  []string `json:"chars"`
		Starts []int    `json:"charStartTimesMs"`
		Durs   []int    `json:"charDurationsMs"`
	}
	lower := make([]string, len(chars))
	for i, c := range chars {
		lower[i] = strings.ToLower(c)
	}
	audio := base64.StdEncoding.EncodeToString(pcm)
	if x.style.SeparateAlignment {
		words, _ := json.Marshal(struct {
			Normalized align  `json:"normalizedAlignment"`
			Alignment  align  `json:"alignment"`
			ContextID  string `json:"contextId"`
		}{align{lower, starts, durs}, align{chars, starts, durs}, x.id})
		sound, _ := json.Marshal(struct {
			Audio      string `json:"audio"`
			Normalized *align `json:"normalizedAlignment"`
			Alignment  *align `json:"alignment"`
			ContextID  string `json:"contextId"`
		}{Audio: audio, ContextID: x.id})
		return [][]byte{words, sound}
	}
	b, _ := json.Marshal(struct {
		Audio      string `json:"audio"`
		Normalized align  `json:"normalizedAlignment"`
		Alignment  align  `json:"alignment"`
		ContextID  string `json:"contextId"`
	}{audio, align{lower, starts, durs}, align{chars, starts, durs}, x.id})
	return [][]byte{b}
}
