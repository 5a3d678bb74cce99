package deepgrammock

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/internal/wsmock"
)

// Path is the endpoint's path.
const Path = "/v1/listen"

// Utterance is one scripted transcript.
type Utterance struct {
	// Text is sent as interims, one more word per audio frame, then as
	// the final.
	Text string
	// Endpointed sends the final (speech_final, not from_finalize) right
	// after the last interim, as the service's endpointing does, instead
	// of waiting for Finalize.
	Endpointed bool
}

// Cadence is how much audio the mock takes without sending a result
// before it sends an empty interim, as the service does about every
// second of audio (silence included). Those messages make no event and
// are not counted by the faults (wsmock.Conn.SendRaw).
const Cadence = time.Second

// Server is the mock. Its methods are safe for concurrent use.
type Server struct {
	*wsmock.Server

	mu       sync.Mutex
	script   []Utterance
	audio    []byte
	frames   int
	controls []string
	latency  time.Duration
}

// New starts a server; opts are wsmock's (WithListener).
func New(opts ...wsmock.Option) *Server {
	s := &Server{}
	s.Server = wsmock.New(s.session, opts...)
	return s
}

// URL is the endpoint, ws://host/v1/listen, for Config.URL.
func (s *Server) URL() string { return s.Server.URL(Path) }

// Script queues utterances; sessions take them in order, one after the
// final of the one before.
func (s *Server) Script(us ...Utterance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, us...)
}

// ScriptText queues one utterance per text, finalized by Finalize.
func (s *Server) ScriptText(texts ...string) {
	for _, t := range texts {
		s.Script(Utterance{Text: t})
	}
}

// SetLatency makes the sessions that connect after it send each message
// (results, the cadence's empty interims, the Metadata that answers
// CloseStream) d after the client message that caused it, as the service's
// recognition latency: pipelined, so a stream of audio frames is answered
// at the pace it came in, in order. The faults act when a message falls
// due; a stalled message holds the ones after it. 0, the default, answers
// at once.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = max(d, 0)
}

// Reset drops the script and the faults not yet used.
func (s *Server) Reset() {
	s.mu.Lock()
	s.script = nil
	s.mu.Unlock()
	s.ClearFaults()
}

// Audio returns the audio bytes received so far, over all sessions.
func (s *Server) Audio() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.audio...)
}

// AudioFrames counts the binary frames received.
func (s *Server) AudioFrames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
}

// Controls returns the types of the text messages received, in order
// (KeepAlive, Finalize, CloseStream; "?" for one that is not JSON).
func (s *Server) Controls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.controls...)
}

// next takes the next scripted utterance.
func (s *Server) next() (Utterance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return Utterance{}, false
	}
	u := s.script[0]
	s.script = s.script[1:]
	return u, true
}

// sess is the state of one session.
type sess struct {
	c     *wsmock.Conn
	out   *pacer // nil: messages go out at once
	rate  float64
	bytes int     // audio received
	told  int     // audio received when the last result was sent
	start float64 // start of the unfinalized segment, seconds
	cur   Utterance
	have  bool
	words []string
	shown int // words sent as interims
}

func (s *Server) session(c *wsmock.Conn) {
	rate, _ := strconv.Atoi(c.Request().Query.Get("sample_rate"))
	if rate <= 0 {
		rate = 16000
	}
	ss := &sess{c: c, rate: float64(rate)}
	s.mu.Lock()
	latency := s.latency
	s.mu.Unlock()
	if latency > 0 {
		ss.out = startPacer(c, latency)
		defer ss.out.stop()
	}
	for {
		m, err := c.Next()
		if err != nil {
			return
		}
		if m.Binary {
			s.mu.Lock()
			s.audio = append(s.audio, m.Data...)
			s.frames++
			s.mu.Unlock()
			ss.bytes += len(m.Data)
			if !s.onAudio(ss) {
				return
			}
			if float64(ss.bytes-ss.told)/2/ss.rate >= Cadence.Seconds() {
				ss.told = ss.bytes
				if ss.send(true, ss.result("", false, false, false)) != nil {
					return
				}
			}
			continue
		}
		var ctl struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Data, &ctl) != nil {
			ctl.Type = "?"
		}
		s.mu.Lock()
		s.controls = append(s.controls, ctl.Type)
		s.mu.Unlock()
		switch ctl.Type {
		case "Finalize":
			if ss.final(true) != nil {
				return
			}
		case "CloseStream":
			_ = ss.send(true, []byte(`{"type":"Metadata","request_id":"mock","duration":`+seconds(ss.now())+`,"channels":1}`))
			if ss.out != nil {
				ss.out.stop()
			}
			_ = c.CloseWith(1000, "")
			return
		}
	}
}

// onAudio sends the next interim of the current utterance, or its
// endpointed final; false when the connection is gone.
func (s *Server) onAudio(ss *sess) bool {
	if !ss.have {
		u, ok := s.next()
		if !ok {
			return true
		}
		ss.cur, ss.have, ss.words, ss.shown = u, true, strings.Fields(u.Text), 0
	}
	if ss.shown < len(ss.words) {
		ss.shown++
		ss.told = ss.bytes
		return ss.send(false, ss.result(strings.Join(ss.words[:ss.shown], " "), false, false, false)) == nil
	}
	if ss.cur.Endpointed {
		return ss.final(false) == nil
	}
	return true
}

// final sends the final of the current utterance (empty when none) and
// moves on.
func (ss *sess) final(fromFinalize bool) error {
	text := ""
	if ss.have {
		text = ss.cur.Text
	}
	ss.have, ss.words, ss.shown = false, nil, 0
	ss.told = ss.bytes
	err := ss.send(false, ss.result(text, true, true, fromFinalize))
	ss.start = ss.now()
	return err
}

// send sends one message: counted (Conn.Send, where the faults act) or
// raw; through the pacer when the session has one, and then the error of
// a failed send ends the session through Conn.Next instead.
func (ss *sess) send(raw bool, msg []byte) error {
	if ss.out != nil {
		ss.out.push(raw, msg)
		return nil
	}
	if raw {
		return ss.c.SendRaw(false, msg)
	}
	return ss.c.Send(msg)
}

// now is the end of the audio received, in seconds.
func (ss *sess) now() float64 { return float64(ss.bytes/2) / ss.rate }

// result is a Results message in the service's shape.
func (ss *sess) result(text string, final, speechFinal, fromFinalize bool) []byte {
	type alt struct {
		Transcript string  `json:"transcript"`
		Confidence float64 `json:"confidence"`
		Words      []any   `json:"words"`
	}
	msg := struct {
		Type         string  `json:"type"`
		ChannelIndex []int   `json:"channel_index"`
		Duration     float64 `json:"duration"`
		Start        float64 `json:"start"`
		IsFinal      bool    `json:"is_final"`
		SpeechFinal  bool    `json:"speech_final"`
		FromFinalize bool    `json:"from_finalize"`
		Channel      struct {
			Alternatives []alt `json:"alternatives"`
		} `json:"channel"`
		Metadata struct {
			RequestID string `json:"request_id"`
		} `json:"metadata"`
	}{Type: "Results", ChannelIndex: []int{0, 1}, Start: ss.start, Duration: ss.now() - ss.start,
		IsFinal: final, SpeechFinal: speechFinal, FromFinalize: fromFinalize}
	msg.Channel.Alternatives = []alt{{Transcript: text, Confidence: 0.9, Words: []any{}}}
	msg.Metadata.RequestID = "mock"
	b, _ := json.Marshal(msg)
	return b
}

func seconds(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
