package ngram

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestReadDict: the dictionaries ReadDict takes and refuses.
func TestReadDict(t *testing.T) {
	tests := []struct {
		name string
		text string
		has  []string
		not  []string
		n    int
		want error
	}{
		{"words and alternates", "hello HH AH L OW\nhello(2) HH EH L OW\nworld W ER L D\n", []string{"hello", "world"}, []string{"hello(2)"}, 2, nil},
		{"apostrophes, blanks, tabs", "o'clock AH K L AA K\n\n  \nthat's\tDH AE T S\n", []string{"o'clock", "that's"}, nil, 2, nil},
		{"comments", ";; a comment\nsam S AE M\n", []string{"sam"}, []string{";;"}, 1, nil},
		{"a parenthesis that is not a variant", "(paren) P ER EH N\nx(y) EH K S\n", []string{"(paren)", "x(y)"}, nil, 2, nil},
		{"no phones", "sam S AE M\nmira\n", nil, nil, 0, ErrDict},
		{"empty", "", nil, nil, 0, ErrDict},
		{"a line too long", "sam " + strings.Repeat("AH ", maxDictLine) + "\n", nil, nil, 0, ErrDict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ReadDict(strings.NewReader(tt.text))
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadDict: %v, want %v", err, tt.want)
			}
			if err != nil {
				return
			}
			if d.Len() != tt.n {
				t.Errorf("%d words, want %d", d.Len(), tt.n)
			}
			for _, w := range tt.has {
				if !d.Has(w) {
					t.Errorf("%q missing", w)
				}
			}
			for _, w := range tt.not {
				if d.Has(w) {
					t.Errorf("%q held", w)
				}
			}
		})
	}
}

// TestReadDictLineNumber: the error gives the line that is wrong.
func TestReadDictLineNumber(t *testing.T) {
	_, err := ReadDict(strings.NewReader("a AH\nb B IY\nc\n"))
	if !errors.Is(err, ErrDict) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("ReadDict: %v, want ErrDict at line 3", err)
	}
}

// TestReadCMUDict reads the dictionary pocketsphinx uses, when installed.
func TestReadCMUDict(t *testing.T) {
	f, err := os.Open("/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict")
	if err != nil {
		t.Skipf("no cmudict (apt-get install pocketsphinx-en-us): %v", err)
	}
	defer f.Close()
	d, err := ReadDict(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() < 100000 || !d.Has("o'clock") || !d.Has("mira") || d.Has("hiya") {
		t.Errorf("%d words; o'clock %v, mira %v, hiya %v", d.Len(), d.Has("o'clock"), d.Has("mira"), d.Has("hiya"))
	}
}

// FuzzReadDict: any input either fails with ErrDict or gives words that
// hold no blank and that Missing does not report.
func FuzzReadDict(f *testing.F) {
	f.Add("hello HH AH L OW\nhello(2) HH EH L OW\n")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := ReadDict(strings.NewReader(text))
		if err != nil {
			if !errors.Is(err, ErrDict) {
				t.Fatalf("error %v does not wrap ErrDict", err)
			}
			return
		}
		if d.Len() == 0 {
			t.Fatal("a dictionary of no words")
		}
		for w := range d.words {
			if w == "" || strings.ContainsAny(w, " \t\n") {
				t.Fatalf("word %q", w)
			}
			if m := d.Missing([]string{w}); len(m) != 0 {
				t.Fatalf("Missing(%q) = %v", w, m)
			}
		}
	})
}
