package ngram

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The sentence marks: every sentence is read as <s> words </s>.
const (
	SentenceStart = "<s>"
	SentenceEnd   = "</s>"
)

// Orders a model may have.
const (
	DefaultOrder = 3
	MaxOrder     = 5
)

// Bounds of an order's absolute discount. Kneser and Ney's estimate
// n1/(n1+2*n2) is kept inside them: a tiny corpus may have no n-gram
// seen twice (the estimate would be 1, and an n-gram seen once would get
// no probability of its own) or none seen once.
const (
	minDiscount = 0.1
	maxDiscount = 0.9
)

// maxNamed bounds the words an ErrUnknownWords error lists.
const maxNamed = 20

// Config is what a model is built from.
type Config struct {
	// Sentences are the training text, one sentence each, words
	// separated by blanks, as the recognizer writes them (lower case for
	// cmudict). The sentence marks are added; a sentence may not hold
	// them.
	Sentences []string
	// Order is the longest n-gram kept: 3 (the default) is a trigram
	// model, at most MaxOrder.
	Order int
	// Dict, when set, must hold every word of the sentences.
	Dict *Dict
}

// Validate checks the config; the error wraps ErrInvalidConfig, or
// ErrUnknownWords (naming the missing words).
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Order < 1 || c.Order > MaxOrder {
		return fmt.Errorf("%w: Order %d is outside 1..%d", ErrInvalidConfig, c.Order, MaxOrder)
	}
	if len(c.Sentences) == 0 {
		return fmt.Errorf("%w: no sentences", ErrInvalidConfig)
	}
	var all []string
	for i, s := range c.Sentences {
		f := strings.Fields(s)
		if len(f) == 0 {
			return fmt.Errorf("%w: sentence %d has no words", ErrInvalidConfig, i)
		}
		for _, w := range f {
			if w == SentenceStart || w == SentenceEnd {
				return fmt.Errorf("%w: sentence %d holds the sentence mark %s", ErrInvalidConfig, i, w)
			}
		}
		all = append(all, f...)
	}
	if c.Dict != nil {
		if missing := c.Dict.Missing(all); len(missing) > 0 {
			named := strings.Join(missing[:min(len(missing), maxNamed)], ", ")
			if len(missing) > maxNamed {
				named += fmt.Sprintf(" and %d more", len(missing)-maxNamed)
			}
			return fmt.Errorf("%w: %d words: %s", ErrUnknownWords, len(missing), named)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Order == 0 {
		c.Order = DefaultOrder
	}
	return c
}

// key is an n-gram's word ids; an order's map uses its first n.
type key [MaxOrder]int32

// entry is an n-gram of the model: its log10 probability given the words
// before it and, when it is a context, its log10 backoff weight.
type entry struct {
	logp, bow float64
	hasBow    bool
}

// Model is a built n-gram model. It is read-only after New.
type Model struct {
	order    int
	vocab    []string // sorted, with the sentence marks
	ids      map[string]int32
	bos, eos int32
	grams    []map[key]*entry // by order - 1
	discount []float64        // by order - 1 (the unigrams' is unused)
}

// New builds the model of cfg.Sentences.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m := &Model{order: cfg.Order, ids: map[string]int32{}}
	sents := make([][]string, len(cfg.Sentences))
	for i, s := range cfg.Sentences {
		sents[i] = strings.Fields(s)
		for _, w := range sents[i] {
			m.ids[w] = 0
		}
	}
	m.ids[SentenceStart], m.ids[SentenceEnd] = 0, 0
	for w := range m.ids {
		m.vocab = append(m.vocab, w)
	}
	slices.Sort(m.vocab)
	for i, w := range m.vocab {
		m.ids[w] = int32(i)
	}
	m.bos, m.eos = m.ids[SentenceStart], m.ids[SentenceEnd]
	counts := m.adjustedCounts(sents)
	m.smooth(counts)
	return m, nil
}

// adjustedCounts are Kneser-Ney's counts by order: the raw count of a
// highest-order n-gram and of one that starts with <s>, and for the
// others the number of distinct words seen before them.
func (m *Model) adjustedCounts(sents [][]string) []map[key]float64 {
	raw := make([]map[key]float64, m.order)
	for n := range raw {
		raw[n] = map[key]float64{}
	}
	for _, s := range sents {
		t := make([]int32, 0, len(s)+2)
		t = append(t, m.bos)
		for _, w := range s {
			t = append(t, m.ids[w])
		}
		t = append(t, m.eos)
		for n := 1; n <= m.order; n++ {
			for i := 0; i+n <= len(t); i++ {
				var k key
				copy(k[:], t[i:i+n])
				raw[n-1][k]++
			}
		}
	}
	adj := make([]map[key]float64, m.order)
	adj[m.order-1] = raw[m.order-1]
	for n := m.order - 1; n >= 1; n-- {
		adj[n-1] = map[key]float64{}
		for k, c := range raw[n-1] {
			if k[0] == m.bos {
				adj[n-1][k] = c
			}
		}
		for k := range raw[n] { // each distinct (n+1)-gram: one word before its suffix
			var suffix key
			copy(suffix[:n], k[1:n+1])
			if suffix[0] != m.bos {
				adj[n-1][suffix]++
			}
		}
	}
	return adj
}

// smooth sets every n-gram's interpolated probability and every
// context's backoff weight. With interpolation the weight of backing off
// from a context h is exactly the mass the discount took from h's
// n-grams, D*N1+(h.)/a(h.), so the model written with backoff weights is
// the interpolated model.
func (m *Model) smooth(counts []map[key]float64) {
	m.grams = make([]map[key]*entry, m.order)
	m.discount = make([]float64, m.order)
	// Unigrams: the continuation counts, normalised (<s> is never
	// predicted: log10 probability -99, sphinxbase's convention).
	var total float64
	for k, c := range counts[0] {
		if k[0] != m.bos {
			total += c
		}
	}
	m.grams[0] = make(map[key]*entry, len(counts[0]))
	for k, c := range counts[0] {
		e := &entry{logp: math.Log10(c / total)}
		if k[0] == m.bos {
			e.logp = -99
		}
		m.grams[0][k] = e
	}
	for n := 2; n <= m.order; n++ {
		d := discountOf(counts[n-1])
		m.discount[n-1] = d
		type ctx struct{ total, types float64 }
		ctxs := map[key]*ctx{}
		for k, c := range counts[n-1] {
			var h key
			copy(h[:n-1], k[:n-1])
			x := ctxs[h]
			if x == nil {
				x = &ctx{}
				ctxs[h] = x
			}
			x.total += c
			x.types++
		}
		for h, x := range ctxs {
			he := m.grams[n-2][h] // every context is an (n-1)-gram of the model
			he.bow, he.hasBow = math.Log10(d*x.types/x.total), true
		}
		m.grams[n-1] = make(map[key]*entry, len(counts[n-1]))
		for k, c := range counts[n-1] {
			var h, lower key
			copy(h[:n-1], k[:n-1])
			copy(lower[:n-1], k[1:n])
			x := ctxs[h]
			gamma := d * x.types / x.total
			p := (c-d)/x.total + gamma*math.Pow(10, m.grams[n-2][lower].logp)
			m.grams[n-1][k] = &entry{logp: math.Log10(p)}
		}
	}
}

// discountOf is Kneser and Ney's absolute discount of an order's counts,
// n1/(n1+2*n2), inside minDiscount..maxDiscount.
func discountOf(counts map[key]float64) float64 {
	var n1, n2 float64
	for _, c := range counts {
		switch c {
		case 1:
			n1++
		case 2:
			n2++
		}
	}
	if n1+2*n2 == 0 {
		return maxDiscount
	}
	return min(max(n1/(n1+2*n2), minDiscount), maxDiscount)
}

// Order is the model's longest n-gram.
func (m *Model) Order() int { return m.order }

// Counts is the number of n-grams of each order (unigrams first, with
// the sentence marks).
func (m *Model) Counts() []int {
	out := make([]int, m.order)
	for i, g := range m.grams {
		out[i] = len(g)
	}
	return out
}

// Vocabulary is the model's words, sorted, without the sentence marks.
func (m *Model) Vocabulary() []string {
	out := make([]string, 0, len(m.vocab)-2)
	for _, w := range m.vocab {
		if w != SentenceStart && w != SentenceEnd {
			out = append(out, w)
		}
	}
	return out
}

// LogProb is the log10 probability of word after history (earlier words
// first; SentenceStart may begin it), read from the model as a
// recognizer reads the ARPA file: the longest n-gram that the model has,
// with the backoff weights of the contexts backed off from. False when
// word is not in the vocabulary. History words the model lacks cut the
// history there.
func (m *Model) LogProb(word string, history ...string) (float64, bool) {
	w, ok := m.ids[word]
	if !ok {
		return 0, false
	}
	h := make([]int32, 0, m.order-1)
	for _, x := range history[max(0, len(history)-(m.order-1)):] {
		id, ok := m.ids[x]
		if !ok {
			h = h[:0]
			continue
		}
		h = append(h, id)
	}
	acc := 0.0
	for {
		var k key
		copy(k[:], h)
		k[len(h)] = w
		if e, ok := m.grams[len(h)][k]; ok {
			return acc + e.logp, true
		}
		if len(h) == 0 {
			return math.Inf(-1), true // not reached: every word is a unigram
		}
		var c key
		copy(c[:], h)
		if e, ok := m.grams[len(h)-1][c]; ok && e.hasBow {
			acc += e.bow
		}
		h = h[1:]
	}
}
