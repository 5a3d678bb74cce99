package flite

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSplitWords(t *testing.T) {
	cases := []struct {
		name    string
		buf     string
		words   []string
		partial string
	}{
		{"empty", "", nil, ""},
		{"spaces", " \t\n", nil, ""},
		{"one incomplete", "Hel", nil, "Hel"},
		{"complete and incomplete", "Hello wor", []string{"Hello"}, "wor"},
		{"trailing space", "Hello world ", []string{"Hello", "world"}, ""},
		{"runs of space", "  a \n\t b  ", []string{"a", "b"}, ""},
		{"unicode space", "a\u00a0b\u2028c", []string{"a", "b"}, "c"},
		{"non-ASCII words", "café 日本 ", []string{"café", "日本"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			words, partial := splitWords(nil, tc.buf)
			if !slices.Equal(words, tc.words) || partial != tc.partial {
				t.Errorf("got %q + %q, want %q + %q", words, partial, tc.words, tc.partial)
			}
		})
	}
}

// TestSpokenForm pins what libflite is given for a word. Mutation caught:
// non-ASCII passed through as is (café, the quotes and the dash fail).
func TestSpokenForm(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"ASCII", "Hello,", "Hello,"},
		{"accent", "café", "cafe"},
		{"diaeresis", "naïve", "naive"},
		{"curly quotes", "“quoted”", `"quoted"`},
		{"apostrophe", "it’s", "it's"},
		{"em dash", "yes—no", "yes-no"},
		{"ellipsis", "so…", "so..."},
		{"ligature", "ﬁne", "fine"},
		{"CJK", "日本語", ""},
		{"emoji", "🙂", ""},
		{"control", "a\x00b\x07", "ab"},
		{"invalid UTF-8", "\xff\xfe", ""},
		{"long ASCII", strings.Repeat("x", 100), strings.Repeat("x", MaxWordRunes)},
		{"long non-ASCII", strings.Repeat("é", 100), strings.Repeat("e", MaxWordRunes)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := spokenForm(tc.in); got != tc.want {
				t.Errorf("spokenForm(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWordBoundary(t *testing.T) {
	cases := []struct {
		w    string
		want boundary
	}{
		{"word", midClause},
		{"end.", sentenceEnd},
		{"what?", sentenceEnd},
		{"wow!", sentenceEnd},
		{"done.)", sentenceEnd},
		{`said."`, sentenceEnd},
		{"so…", sentenceEnd},
		{"first,", clauseEnd},
		{"note:", clauseEnd},
		{"then;", clauseEnd},
		{"well—", clauseEnd},
		{"", midClause},
		{"3.5", midClause},
	}
	for _, tc := range cases {
		t.Run(tc.w, func(t *testing.T) {
			if got := wordBoundary(tc.w); got != tc.want {
				t.Errorf("wordBoundary(%q) = %d, want %d", tc.w, got, tc.want)
			}
		})
	}
}

// TestTakePiece pins the phrasing. Mutations caught: every complete word
// taken at once ("waits without an end" fails); the rune cap ignored ("cut
// at the cap" fails).
func TestTakePiece(t *testing.T) {
	cases := []struct {
		name    string
		pending string
		flushed bool
		max     int
		first   bool
		want    int
	}{
		{"nothing", "", false, 200, false, 0},
		{"nothing flushed", "", true, 200, false, 0},
		{"waits without an end", "and then we", false, 200, false, 0},
		{"all at flush", "and then we", true, 200, false, 3},
		{"up to a sentence end", "Yes. And then", false, 200, false, 1},
		{"up to a clause end", "Well, maybe not.", false, 200, false, 1},
		{"cut at the cap", "aaaa bbbb cccc dddd eeee", false, 12, false, 2},
		{"a long word alone", strings.Repeat("x", 40) + " y", false, 20, false, 1},
		{"cap before the end", "aaaa bbbb cccc dddd.", false, 12, false, 2},
		// The first piece: cut before a phrase opener after four words
		// or more (mutation caught: the cut made in later pieces too, or
		// before the fourth word).
		{"first: cut before or", "I can tell you the time or book a table.", true, 200, true, 6},
		{"first: cut before In, unflushed", "It's twenty five past four In", false, 200, true, 5},
		{"first: opener too early", "A table for four.", true, 200, true, 4},
		{"first: a clause end first", "Sure, at seven.", true, 200, true, 1},
		{"later: no cut", "I can tell you the time or book a table.", true, 200, false, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := takePiece(strings.Fields(tc.pending), tc.flushed, tc.max, tc.first); got != tc.want {
				t.Errorf("takePiece = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestBuildPiece pins the mapping of libflite tokens to words and the
// trimming. Mutation caught: silent words dropped instead of joined (the
// words no longer join to the text); the lead not subtracted from the
// offsets.
func TestBuildPiece(t *testing.T) {
	const rate = 1000 // one sample per millisecond
	pcm := make([]int16, 2000)
	cases := []struct {
		name   string
		words  []string
		tokens []int
		u      utterance
		want   []timedWord
		pcmLen int
	}{
		{
			name: "two words, pauses trimmed", words: []string{"Hello", "there"}, tokens: []int{0, 1},
			u:    utterance{pcm: pcm, starts: []int{200, 600}, leadEnd: 200, tailStart: 1000},
			want: []timedWord{{"Hello", 20}, {"there", 420}}, pcmLen: 1000 + 40 - 180,
		},
		{
			name: "sentence end keeps its pause", words: []string{"Done."}, tokens: []int{0},
			u:    utterance{pcm: pcm, starts: []int{200}, leadEnd: 200, tailStart: 1000},
			want: []timedWord{{"Done.", 20}}, pcmLen: 1000 + 250 - 180,
		},
		{
			name: "silent word joins the one before", words: []string{"dollars", "—", "really"}, tokens: []int{0, 1, 2},
			u:    utterance{pcm: pcm, starts: []int{100, -1, 500}, leadEnd: 100, tailStart: 900},
			want: []timedWord{{"dollars —", 20}, {"really", 420}}, pcmLen: 900 + 40 - 80,
		},
		{
			name: "silent first word joins the next", words: []string{"...", "so"}, tokens: []int{0, 1},
			u:    utterance{pcm: pcm, starts: []int{-1, 300}, leadEnd: 300, tailStart: 800},
			want: []timedWord{{"... so", 20}}, pcmLen: 800 + 40 - 280,
		},
		{
			name: "unspeakable word has no token", words: []string{"a", "日本", "b"}, tokens: []int{0, 2},
			u:    utterance{pcm: pcm, starts: []int{100, 400}, leadEnd: 100, tailStart: 700},
			want: []timedWord{{"a 日本", 20}, {"b", 320}}, pcmLen: 700 + 40 - 80,
		},
		{
			name: "same start joins", words: []string{"x", "y"}, tokens: []int{0, 1},
			u:    utterance{pcm: pcm, starts: []int{100, 100}, leadEnd: 100, tailStart: 700},
			want: []timedWord{{"x y", 20}}, pcmLen: 700 + 40 - 80,
		},
		{
			name: "no sound at all", words: []string{"..."}, tokens: []int{0},
			u: utterance{pcm: pcm, starts: []int{-1}, leadEnd: 185, tailStart: 0},
		},
		{
			name: "fewer tokens than words", words: []string{"a", "b"}, tokens: []int{0, 1},
			u:    utterance{pcm: pcm, starts: []int{100}, leadEnd: 100, tailStart: 700},
			want: []timedWord{{"a b", 20}}, pcmLen: 700 + 40 - 80,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := buildPiece(tc.words, tc.tokens, tc.u, rate)
			if !slices.Equal(p.words, tc.want) || len(p.pcm) != tc.pcmLen {
				t.Errorf("got %v with %d samples, want %v with %d", p.words, len(p.pcm), tc.want, tc.pcmLen)
			}
		})
	}
}

// FuzzSplitWords: the words and the partial are the fields of the input,
// in order, and a buffer ending in whitespace leaves no partial.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"", "Hello wor", "a  b\t", "café 日本 ", "\xff\xfe x", "a\u00a0b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, buf string) {
		words, partial := splitWords(nil, buf)
		all := words
		if partial != "" {
			all = append(all, partial)
		}
		if !slices.Equal(all, strings.Fields(buf)) {
			t.Fatalf("%q: words %q + %q, fields %q", buf, words, partial, strings.Fields(buf))
		}
		if r, _ := utf8.DecodeLastRuneInString(buf); partial != "" && unicode.IsSpace(r) {
			t.Fatalf("%q ends in whitespace, partial %q", buf, partial)
		}
	})
}

// FuzzSpokenForm: the spoken form is printable ASCII without spaces, at
// most MaxWordRunes long, and a fixed point.
func FuzzSpokenForm(f *testing.F) {
	for _, s := range []string{"Hello,", "café", "“quoted”", "日本語", "\xff", "a\x00b", strings.Repeat("é", 60), "…"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		s := spokenForm(w)
		if len(s) > MaxWordRunes {
			t.Fatalf("%q -> %q: longer than %d", w, s, MaxWordRunes)
		}
		for i := 0; i < len(s); i++ {
			if s[i] < 0x21 || s[i] > 0x7e {
				t.Fatalf("%q -> %q: byte %#x", w, s, s[i])
			}
		}
		if again := spokenForm(s); again != s {
			t.Fatalf("%q -> %q -> %q", w, s, again)
		}
	})
}

// FuzzBuildPiece feeds buildPiece arbitrary token starts and pauses, as a
// misbehaving library could: it never panics, the words of a non-empty
// piece join to the text, and their offsets rise strictly inside the
// audio.
func FuzzBuildPiece(f *testing.F) {
	f.Add("Hello there friend", []byte{10, 50, 90}, 5, 120, 200)
	f.Add(". , x", []byte{255, 255, 7}, 0, 0, 0)
	f.Add("a b", []byte{3}, 300, -5, 40)
	f.Fuzz(func(t *testing.T, text string, starts []byte, leadEnd, tailStart, n int) {
		words := strings.Fields(text)
		if len(words) == 0 || n < 0 || n > 4096 {
			return
		}
		tokens := make([]int, len(words))
		for i := range tokens {
			tokens[i] = i
		}
		u := utterance{pcm: make([]int16, n), leadEnd: leadEnd, tailStart: tailStart}
		for _, s := range starts {
			if s == 255 {
				u.starts = append(u.starts, -1)
			} else {
				u.starts = append(u.starts, int(s)*8)
			}
		}
		p := buildPiece(words, tokens, u, 8000)
		if len(p.words) == 0 {
			return
		}
		var got []string
		for i, w := range p.words {
			got = append(got, w.text)
			if w.at < 0 || w.at >= len(p.pcm) || (i > 0 && w.at <= p.words[i-1].at) {
				t.Fatalf("word %d %q at %d of %d samples (words %v)", i, w.text, w.at, len(p.pcm), p.words)
			}
		}
		if strings.Join(got, " ") != strings.Join(words, " ") {
			t.Fatalf("words %q from %q", got, words)
		}
	})
}
