package chaostest

import (
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// The bot's audio carries no epoch on the PCM websocket, so the stamp tap
// writes one into every 20 ms frame of it: the first four samples of each
// frame become a magic value, the epoch, the frame's index in its epoch
// and a check. The caller reads them back to know which answer, and which
// part of it, each frame is (stale audio, the words heard). The samples
// pass the engine unchanged: the mock TTS speaks at the call's rate (no
// resampling) and the pacer cuts frames from the epoch's start.
const (
	stampMagic = 0x2b67
	stampCheck = 0x1357
	// stampLen is how many samples a stamp takes.
	stampLen = 4
)

// putStamp writes the stamp of frame seq of epoch e at the start of pcm
// (at least stampLen samples).
func putStamp(pcm []int16, e messages.Epoch, seq int) {
	ep, sq := int16(uint64(e)&0x7fff), int16(seq&0x7fff)
	pcm[0], pcm[1], pcm[2], pcm[3] = stampMagic, ep, sq, stampMagic^ep^sq^stampCheck
}

// readStamp reads the stamp at the start of pcm; ok is false when there is
// none (a frame the tap did not stamp, or one damaged on the way).
func readStamp(pcm []int16) (e messages.Epoch, seq int, ok bool) {
	if len(pcm) < stampLen || pcm[0] != stampMagic || pcm[3] != stampMagic^pcm[1]^pcm[2]^stampCheck || pcm[1] < 0 || pcm[2] < 0 {
		return 0, 0, false
	}
	return messages.Epoch(pcm[1]), int(pcm[2]), true
}

// stamper is the pacer's tap: it stamps each TTS chunk's frames before the
// pacer cuts them, counting each epoch's samples so far (the pacer's frame
// grid starts at the epoch's first sample). It runs on the pacer's
// goroutine only, so its state needs no lock; it lives in the call's props
// and so outlasts a restart of the pacer, as the count must.
//
// It also keeps the words of every epoch with their offsets in the
// epoch's audio, as the pacer is told them: the oracle of what was heard.
type stamper struct {
	frame int // samples per 20 ms frame at the call's rate
	epoch messages.Epoch
	count int // samples of epoch seen so far

	mu    sync.Mutex
	words map[messages.Epoch][]spoken
}

// spoken is a word of an answer and where it starts in the answer's audio.
type spoken struct {
	Text   string
	Offset time.Duration
}

func (s *stamper) middleware(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		switch m := env.Message.(type) {
		case *messages.TTSAudio:
			s.stamp(m)
		case *messages.TTSWord:
			if m.Epoch >= s.epoch {
				s.mu.Lock()
				if s.words == nil {
					s.words = map[messages.Epoch][]spoken{}
				}
				s.words[m.Epoch] = append(s.words[m.Epoch], spoken{Text: m.Text, Offset: m.Offset})
				s.mu.Unlock()
			}
		}
		next(c, env)
	}
}

// spokenWords copies the words told to the pacer, by epoch.
func (s *stamper) spokenWords() map[messages.Epoch][]spoken {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[messages.Epoch][]spoken, len(s.words))
	for e, ws := range s.words {
		out[e] = slices.Clone(ws)
	}
	return out
}

// stamp stamps the frames of m that start inside it.
func (s *stamper) stamp(m *messages.TTSAudio) {
	if m.Epoch != s.epoch {
		if m.Epoch < s.epoch {
			return // stale: the pacer drops it
		}
		s.epoch, s.count = m.Epoch, 0
	}
	for j := (s.frame - s.count%s.frame) % s.frame; j+stampLen <= len(m.PCM); j += s.frame {
		putStamp(m.PCM[j:], m.Epoch, (s.count+j)/s.frame)
	}
	s.count += len(m.PCM)
}
