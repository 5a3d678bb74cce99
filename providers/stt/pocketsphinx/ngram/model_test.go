package ngram

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corpus is a seeded random corpus: n sentences of 1 to 12 words drawn
// from a vocabulary of v words with a skewed (roughly Zipf) frequency,
// like the phrases of a domain.
func corpus(seed uint64, n, v int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		k := 1 + r.IntN(12)
		ws := make([]string, k)
		for j := range ws {
			x := r.Float64()
			ws[j] = "w" + strconv.Itoa(int(float64(v)*x*x*x))
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

// predicted is the words a model predicts: its vocabulary and </s>.
func predicted(m *Model) []string { return append(m.Vocabulary(), SentenceEnd) }

// contexts are every history the model has a backoff weight for, and the
// empty history.
func contexts(m *Model) [][]string {
	out := [][]string{nil}
	for n, g := range m.grams[:m.order-1] {
		for k, e := range g {
			if !e.hasBow {
				continue
			}
			h := make([]string, n+1)
			for i := range h {
				h[i] = m.vocab[k[i]]
			}
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, " "), strings.Join(b, " ")) })
	return out
}

// TestProbabilitiesSumToOne: after every context the model has (and the
// empty one), the probabilities of all the words it predicts sum to one,
// for orders 1 to 4, over a hand corpus and seeded random ones.
// Mutation caught (seen failing): the backoff weight taken as D/a(h),
// without the count of the words seen after h (2686 sums off).
func TestProbabilitiesSumToOne(t *testing.T) {
	tests := []struct {
		name  string
		sents []string
		order int
	}{
		{"hand, bigram", []string{"a b", "a c", "b c a"}, 2},
		{"hand, trigram", []string{"book a table for two", "a table for four please", "for two at seven"}, 3},
		{"one word", []string{"hello"}, 3},
		{"unigram", corpus(1, 200, 30), 1},
		{"random, trigram", corpus(2, 500, 60), 3},
		{"random, 4-gram", corpus(3, 300, 20), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(Config{Sentences: tt.sents, Order: tt.order})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range contexts(m) {
				sum := 0.0
				for _, w := range predicted(m) {
					lp, ok := m.LogProb(w, h...)
					if !ok {
						t.Fatalf("%q not in the vocabulary", w)
					}
					sum += math.Pow(10, lp)
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Errorf("after %q the probabilities sum to %.12f", h, sum)
				}
			}
		})
	}
}

// TestHandComputed: the probabilities and backoff weights of a corpus
// worked by hand. "a b", "a c" (bigrams): the continuation counts of a,
// b, c, </s> are 1, 1, 1, 2, so p(a) = 1/5, p(</s>) = 2/5; the bigram
// discount is n1/(n1+2*n2) = 4/6; after <s> (a twice): p(a|<s>) =
// (2-2/3)/2 + (1/3)(1/5) = 11/15, backoff 1/3; after a (b, c once
// each): p(b|a) = (1/3)/2 + (2/3)(1/5) = 3/10, backoff 2/3; p(c|<s>) is
// backed off: (1/3)(1/5) = 1/15.
// Mutation caught (seen failing): the unigrams given raw counts instead
// of continuation counts (p(a) = 2/6). Raw counts for the lower orders
// still sum to one, so only figures like these catch it.
func TestHandComputed(t *testing.T) {
	m, err := New(Config{Sentences: []string{"a b", "a c"}, Order: 2})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		word    string
		history []string
		want    float64
	}{
		{"a", nil, 1.0 / 5},
		{"</s>", nil, 2.0 / 5},
		{"a", []string{"<s>"}, 11.0 / 15},
		{"b", []string{"a"}, 3.0 / 10},
		{"c", []string{"<s>"}, 1.0 / 15},
		{"a", []string{"a"}, (2.0 / 3) * (1.0 / 5)},
		{"b", []string{"zzz", "a"}, 3.0 / 10}, // an unknown history word cuts the history
	}
	for _, tt := range tests {
		lp, ok := m.LogProb(tt.word, tt.history...)
		if got := math.Pow(10, lp); !ok || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("p(%s | %v) = %v (%v), want %v", tt.word, tt.history, got, ok, tt.want)
		}
	}
	bows := map[string]float64{"<s>": 1.0 / 3, "a": 2.0 / 3}
	for w, want := range bows {
		e := m.grams[0][key{m.ids[w]}]
		if got := math.Pow(10, e.bow); !e.hasBow || math.Abs(got-want) > 1e-12 {
			t.Errorf("backoff(%s) = %v (%v), want %v", w, got, e.hasBow, want)
		}
	}
	if _, ok := m.LogProb("zzz"); ok {
		t.Error("a word outside the vocabulary has a probability")
	}
	if d := m.discount[1]; math.Abs(d-2.0/3) > 1e-12 {
		t.Errorf("bigram discount %v, want 2/3", d)
	}
}

// arpa is a parsed ARPA file: each n-gram's log10 probability and
// backoff, by its words joined with a space.
type arpa struct {
	counts []int
	logp   map[string]float64
	bow    map[string]float64
}

// readARPA parses text written by WriteARPA, checking its structure:
// the \data\ counts match the sections, every line has the order's words.
func readARPA(t *testing.T, text []byte) arpa {
	t.Helper()
	a := arpa{logp: map[string]float64{}, bow: map[string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(text))
	order, seen, ended := 0, 0, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || line == `\data\`:
		case strings.HasPrefix(line, "ngram "):
			_, c, _ := strings.Cut(line, "=")
			n, err := strconv.Atoi(c)
			if err != nil {
				t.Fatalf("bad count line %q", line)
			}
			a.counts = append(a.counts, n)
		case strings.HasSuffix(line, "-grams:"):
			if order > 0 && seen != a.counts[order-1] {
				t.Fatalf("%d %d-grams, the header says %d", seen, order, a.counts[order-1])
			}
			order++
			seen = 0
			if line != fmt.Sprintf(`\%d-grams:`, order) {
				t.Fatalf("section %q, want order %d", line, order)
			}
		case line == `\end\`:
			ended = true
		default:
			f := strings.Split(line, "\t")
			if len(f) < 2 || len(f) > 3 || len(strings.Fields(f[1])) != order {
				t.Fatalf("bad %d-gram line %q", order, line)
			}
			p, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				t.Fatal(err)
			}
			a.logp[f[1]] = p
			if len(f) == 3 {
				b, err := strconv.ParseFloat(f[2], 64)
				if err != nil {
					t.Fatal(err)
				}
				a.bow[f[1]] = b
			}
			seen++
		}
	}
	if !ended || order != len(a.counts) || seen != a.counts[order-1] {
		t.Fatalf("truncated ARPA: ended %v, %d sections for %d counts", ended, order, len(a.counts))
	}
	return a
}

// prob reads p(w | h) from the parsed file by backoff.
func (a arpa) prob(w string, h []string) float64 {
	acc := 0.0
	for {
		g := strings.Join(append(append([]string{}, h...), w), " ")
		if p, ok := a.logp[g]; ok {
			return acc + p
		}
		acc += a.bow[strings.Join(h, " ")]
		h = h[1:]
	}
}

// TestARPAReadsBack: the ARPA text holds every n-gram once with its
// probability and backoff, and read back by backoff gives the model's
// probabilities within the printed precision; the sums stay one.
func TestARPAReadsBack(t *testing.T) {
	m, err := New(Config{Sentences: corpus(4, 400, 50)})
	if err != nil {
		t.Fatal(err)
	}
	a := readARPA(t, m.ARPA())
	if got, want := fmt.Sprint(a.counts), fmt.Sprint(m.Counts()); got != want {
		t.Fatalf("counts %s, want %s", got, want)
	}
	if a.logp["<s>"] != -99 {
		t.Errorf("<s> has log10 probability %v, want -99", a.logp["<s>"])
	}
	for _, h := range contexts(m)[:200] {
		sum := 0.0
		for _, w := range predicted(m) {
			want, _ := m.LogProb(w, h...)
			got := a.prob(w, h)
			if math.Abs(got-want) > 1e-5 {
				t.Fatalf("p(%s | %v): file %v, model %v", w, h, got, want)
			}
			sum += math.Pow(10, got)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Errorf("after %v the file's probabilities sum to %v", h, sum)
		}
	}
}

// TestValidate: the configs New refuses, and why.
func TestValidate(t *testing.T) {
	dict, err := ReadDict(strings.NewReader("a AH\nb B IY\nc S IY\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want error
		says string
	}{
		{"ok", Config{Sentences: []string{"a b"}, Dict: dict}, nil, ""},
		{"no sentences", Config{}, ErrInvalidConfig, "no sentences"},
		{"empty sentence", Config{Sentences: []string{"a", "  "}}, ErrInvalidConfig, "sentence 1"},
		{"order too high", Config{Sentences: []string{"a"}, Order: 6}, ErrInvalidConfig, "Order 6"},
		{"negative order", Config{Sentences: []string{"a"}, Order: -1}, ErrInvalidConfig, "Order -1"},
		{"a sentence mark", Config{Sentences: []string{"<s> a"}}, ErrInvalidConfig, "<s>"},
		{"unknown words named", Config{Sentences: []string{"a zed b", "yod zed"}, Dict: dict}, ErrUnknownWords, "2 words: yod, zed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if !errors.Is(err, tt.want) || (err != nil && !strings.Contains(err.Error(), tt.says)) {
				t.Fatalf("New: %v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
}

// TestUnknownWordsBounded: a long list of missing words names the first
// twenty and counts the rest.
func TestUnknownWordsBounded(t *testing.T) {
	dict, _ := ReadDict(strings.NewReader("a AH\n"))
	_, err := New(Config{Sentences: corpus(5, 100, 100), Dict: dict})
	if !errors.Is(err, ErrUnknownWords) || !strings.Contains(err.Error(), "more") || strings.Count(err.Error(), ",") != maxNamed-1 {
		t.Fatalf("New: %v", err)
	}
}

// BenchmarkNew builds a trigram model of about the rules provider's
// size (3000 sentences, 250 words) and writes its ARPA text.
func BenchmarkNew(b *testing.B) {
	sents := corpus(6, 3000, 250)
	b.ReportAllocs()
	for b.Loop() {
		m, err := New(Config{Sentences: sents})
		if err != nil {
			b.Fatal(err)
		}
		_ = m.ARPA()
	}
}
