package tts

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalidClip marks a clip or clip store that cannot be played.
var ErrInvalidClip = errors.New("tts: invalid filler clip")

// ClipWaitLimit bounds how long a filler clip waits for the provider to
// finish the text before it (the provider's Flushed). A provider that
// never answers would otherwise hold the answer's text behind the clip.
const ClipWaitLimit = 30 * time.Second

// ClipWord is a word of a clip and where it starts in the clip's audio.
type ClipWord struct {
	Text   string
	Offset time.Duration
}

// Clip is a pre-rendered filler phrase: PCM16 mono audio and its word
// timings. The TTS stage plays it in place of sending the phrase to the
// provider, so a filler costs no provider round trip and sounds the same
// every time. A Clip is read-only once made: every call shares it.
type Clip struct {
	text  string
	rate  int
	pcm   []int16
	words []ClipWord
	dur   time.Duration
}

// NewClip makes the clip of phrase text: pcm at rate (8-48 kHz) and the
// start of each word. Without word timings (nil) the words of text are
// spread over the audio in proportion to their length, which is what a
// cut at a barge-in needs to keep the heard prefix of the phrase. The
// words must be in order, start inside the audio, and be the words of
// text.
func NewClip(text string, rate int, pcm []int16, words []ClipWord) (*Clip, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "" || !utf8.ValidString(text):
		return nil, fmt.Errorf("%w: the phrase is empty or not UTF-8", ErrInvalidClip)
	case rate < 8000 || rate > 48000 || rate%50 != 0:
		return nil, fmt.Errorf("%w: rate %d", ErrInvalidClip, rate)
	case len(pcm) == 0:
		return nil, fmt.Errorf("%w: no audio", ErrInvalidClip)
	}
	c := &Clip{text: text, rate: rate, pcm: pcm, dur: samplesDuration(len(pcm), rate)}
	fields := strings.Fields(text)
	if words == nil {
		c.words = spreadWords(fields, c.dur)
		return c, nil
	}
	if len(words) != len(fields) {
		return nil, fmt.Errorf("%w: %d word timings for %d words", ErrInvalidClip, len(words), len(fields))
	}
	for i, w := range words {
		switch {
		case w.Text != fields[i]:
			return nil, fmt.Errorf("%w: word %d is not the phrase's", ErrInvalidClip, i)
		case w.Offset < 0 || w.Offset >= c.dur:
			return nil, fmt.Errorf("%w: word %d starts outside the audio", ErrInvalidClip, i)
		case i > 0 && w.Offset < words[i-1].Offset:
			return nil, fmt.Errorf("%w: word %d starts before the one before it", ErrInvalidClip, i)
		}
	}
	c.words = append([]ClipWord(nil), words...)
	return c, nil
}

// spreadWords places each word at the share of the audio that the text
// before it takes (spaces counted once per gap).
func spreadWords(fields []string, dur time.Duration) []ClipWord {
	total := len(fields) - 1
	for _, f := range fields {
		total += utf8.RuneCountInString(f)
	}
	out := make([]ClipWord, len(fields))
	at := 0
	for i, f := range fields {
		out[i] = ClipWord{Text: f, Offset: dur * time.Duration(at) / time.Duration(total)}
		at += utf8.RuneCountInString(f) + 1
	}
	return out
}

func samplesDuration(n, rate int) time.Duration {
	return time.Duration(n) * time.Second / time.Duration(rate)
}

// Text is the phrase the clip says.
func (c *Clip) Text() string { return c.text }

// Duration is the length of the clip's audio.
func (c *Clip) Duration() time.Duration { return c.dur }

// Rate is the sample rate of the clip's audio.
func (c *Clip) Rate() int { return c.rate }

// Words are the clip's words and their offsets (a copy).
func (c *Clip) Words() []ClipWord { return append([]ClipWord(nil), c.words...) }

// ClipOf finds the clip whose audio pcm is (the very slice, as the tts
// stage sends it): observers of the stage's output tell clips from
// provider audio by it.
func (s *ClipStore) ClipOf(pcm []int16) (*Clip, bool) {
	if s == nil || len(pcm) == 0 {
		return nil, false
	}
	for _, c := range s.byText {
		if len(c.pcm) == len(pcm) && &c.pcm[0] == &pcm[0] {
			return c, true
		}
	}
	return nil, false
}

// ClipStore maps filler phrases to their clips. It is built once, before
// calls start, and only read afterwards, so calls share it without a lock.
type ClipStore struct {
	byText map[string]*Clip
}

// NewClipStore makes a store of clips; two clips of one phrase are an
// error.
func NewClipStore(clips ...*Clip) (*ClipStore, error) {
	s := &ClipStore{byText: make(map[string]*Clip, len(clips))}
	for _, c := range clips {
		if c == nil {
			return nil, fmt.Errorf("%w: nil clip", ErrInvalidClip)
		}
		if _, dup := s.byText[c.text]; dup {
			return nil, fmt.Errorf("%w: two clips of one phrase", ErrInvalidClip)
		}
		s.byText[c.text] = c
	}
	return s, nil
}

// Lookup returns the clip of phrase text (surrounding spaces ignored).
func (s *ClipStore) Lookup(text string) (*Clip, bool) {
	if s == nil {
		return nil, false
	}
	c, ok := s.byText[strings.TrimSpace(text)]
	return c, ok
}

// Has tells whether phrase text has a clip.
func (s *ClipStore) Has(text string) bool {
	_, ok := s.Lookup(text)
	return ok
}
