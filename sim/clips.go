package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/tts"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The played-words oracle with filler clips. A clip is audio the mock
// provider never produced, so the mock's word log alone does not say where
// the epoch's words are. A tap in front of the pacer records the audio
// chunks the tts stage sends, in order, and tells the clips apart by their
// samples (a clip's chunk is the store's own slice). The oracle then lays
// the epoch out by itself: the provider's segments (contexts e<epoch>,
// e<epoch>.1, ...) and the clips between them, each starting where the
// audio before it ends, the k-th clip right before segment k. It does not
// use the offsets the tts stage computes, which are what it checks.

// chunk is one piece of audio the tts stage sent the pacer.
type chunk struct {
	dur  time.Duration
	clip *tts.Clip // nil: provider audio of context ctx
	ctx  string
}

// clipTap records the tts stage's audio per epoch.
type clipTap struct {
	store *tts.ClipStore
	mock  *providertest.MockTTS
	mu    sync.Mutex
	byEp  map[messages.Epoch][]chunk
}

func newClipTap(store *tts.ClipStore, mock *providertest.MockTTS) *clipTap {
	return &clipTap{store: store, mock: mock, byEp: map[messages.Epoch][]chunk{}}
}

// middleware is the pacer's receiver middleware.
func (t *clipTap) middleware(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if m, ok := env.Message.(*messages.TTSAudio); ok && len(m.PCM) > 0 && m.Rate > 0 {
			ch := chunk{dur: time.Duration(len(m.PCM)) * time.Second / time.Duration(m.Rate)}
			if c, ok := t.store.ClipOf(m.PCM); ok {
				ch.clip = c
			} else {
				ch.ctx, _ = t.mock.ContextOf(m.PCM)
			}
			t.mu.Lock()
			t.byEp[m.Epoch] = append(t.byEp[m.Epoch], ch)
			t.mu.Unlock()
		}
		next(c, env)
	}
}

// words lays out the words of every epoch that played a clip; other
// epochs keep the mock's log. The error says where the stage's audio was
// out of order: provider audio of a segment other than the one between
// the clips around it (a clip that overtook the text before it, or text
// that overtook the clip).
func (t *clipTap) words(ctxWords map[string][]providertest.Word, log map[messages.Epoch][]providertest.Word) (map[messages.Epoch][]providertest.Word, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for e, chunks := range t.byEp {
		hasClip := false
		for _, c := range chunks {
			hasClip = hasClip || c.clip != nil
		}
		if !hasClip {
			continue
		}
		var out []providertest.Word
		seg, at := 0, time.Duration(0)
		segBase := time.Duration(0)
		flushSeg := func() {
			for _, w := range ctxWords[segmentID(e, seg)] {
				out = append(out, providertest.Word{Text: w.Text, Offset: segBase + w.Offset})
			}
		}
		for _, c := range chunks {
			if c.clip != nil {
				flushSeg()
				for _, w := range c.clip.Words() {
					out = append(out, providertest.Word{Text: w.Text, Offset: at + w.Offset})
				}
				at += c.dur
				seg++
				segBase = at
				continue
			}
			if want := segmentID(e, seg); c.ctx != want {
				errs = append(errs, fmt.Errorf("%w: epoch %d: audio of context %q where %q plays", ErrCheck, e, c.ctx, want))
			}
			at += c.dur
		}
		flushSeg()
		log[e] = out
	}
	return log, errors.Join(errs...)
}

func segmentID(e messages.Epoch, seg int) string {
	var b strings.Builder
	b.WriteString("e")
	b.WriteString(strconv.FormatUint(uint64(e), 10))
	if seg > 0 {
		b.WriteString(".")
		b.WriteString(strconv.Itoa(seg))
	}
	return b.String()
}
