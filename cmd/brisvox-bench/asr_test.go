package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/providers/stt/pocketsphinx"
)

// TestWordErrors: the word-level Levenshtein distance.
func TestWordErrors(t *testing.T) {
	cases := []struct {
		name     string
		ref, hyp string
		want     int
	}{
		{"same", "a table for two", "a table for two", 0},
		// Mutation: a substitution costing 2 (delete+insert) gives 2.
		{"one substitution", "a table for two", "a cable for two", 1},
		{"one deletion", "a table for two", "a table two", 1},
		{"one insertion", "a table for two", "a nice table for two", 1},
		// Mutation: a free deletion (cur[0] = 0 for each reference
		// word) gives 0.
		{"empty transcript", "a table for two", "", 4},
		{"empty reference", "", "uh huh", 2},
		{"both empty", "", "", 0},
		// Comparing by position only (no alignment) would count 5.
		{"shifted by one", "book a table for two", "a table for two", 1},
		{"all different", "yes please", "no thanks", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := wordErrors(strings.Fields(c.ref), strings.Fields(c.hyp)); got != c.want {
				t.Errorf("wordErrors(%q, %q) = %d, want %d", c.ref, c.hyp, got, c.want)
			}
		})
	}
}

// TestTallyAdd: what one utterance adds to a score.
func TestTallyAdd(t *testing.T) {
	booking := asrUtterance{ID: "b", Kind: kindBooking, Slots: bookingSlots{Party: 2, At: "19:00", Name: "Nina"}, Text: "a table for two at seven under Nina"}
	ood := asrUtterance{ID: "o", Kind: kindOOD, Text: "will it rain"}
	cases := []struct {
		name       string
		u          asrUtterance
		transcript string
		got        bookingSlots
		known      bool
		want       asrTally
	}{
		{
			// Mutation: not counting NameKnown for a known name.
			name: "all right", u: booking, transcript: "a table for 2 at seven under nina", got: bookingSlots{2, "19:00", "Nina"}, known: true,
			want: asrTally{Utterances: 1, RefWords: 8, Party: slotCount{1, 1, 0}, Time: slotCount{1, 1, 0}, Name: slotCount{1, 1, 0}, NameKnown: slotCount{1, 1, 0}},
		},
		{
			// Mutation: comparing names case-sensitively fails "NINA".
			name: "name case does not matter", u: booking, transcript: "a table for two at seven under nina", got: bookingSlots{2, "19:00", "NINA"},
			want: asrTally{Utterances: 1, RefWords: 8, Party: slotCount{1, 1, 0}, Time: slotCount{1, 1, 0}, Name: slotCount{1, 1, 0}},
		},
		{
			// Mutation: counting a wrong slot as right (Right++ outside the
			// comparison) gives Right 1 for party and time.
			name: "wrong party, missing time", u: booking, transcript: "a table for ten under nina", got: bookingSlots{Party: 10, Name: "Nina"},
			want: asrTally{Utterances: 1, RefWords: 8, WordErrors: 3, Party: slotCount{1, 0, 0}, Time: slotCount{1, 0, 0}, Name: slotCount{1, 1, 0}},
		},
		{
			// Mutation: counting slots read where none was said as wanted
			// (Want++) lowers the accuracy of bookings with OOD speech.
			name: "out of domain heard, a spurious time", u: ood, transcript: "will it rain at seven", got: bookingSlots{At: "19:00"},
			want: asrTally{Utterances: 1, RefWords: 3, WordErrors: 2, Time: slotCount{0, 0, 1}, OOD: 1, OODHeard: 1},
		},
		{
			// Mutation: counting NameKnown without a name named gives it a
			// spurious count.
			name: "known, but no name named", u: ood, transcript: "will it rain under nina", got: bookingSlots{Name: "Nina"}, known: true,
			want: asrTally{Utterances: 1, RefWords: 3, WordErrors: 2, Name: slotCount{0, 0, 1}, OOD: 1, OODHeard: 1},
		},
		{
			// Mutation: counting a blank transcript as heard.
			name: "out of domain not heard", u: ood, transcript: " ",
			want: asrTally{Utterances: 1, RefWords: 3, WordErrors: 3, OOD: 1, Empty: 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got asrTally
			got.add(c.u, c.transcript, c.got, c.known)
			if got != c.want {
				t.Errorf("add = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestTallyRates: the rates the report prints.
func TestTallyRates(t *testing.T) {
	var a, b asrTally
	a = asrTally{Utterances: 2, RefWords: 10, WordErrors: 2, Party: slotCount{2, 1, 0}, Time: slotCount{1, 1, 0}, OOD: 1, OODHeard: 1}
	b = asrTally{Utterances: 1, RefWords: 10, WordErrors: 8, Name: slotCount{1, 0, 1}, OOD: 1}
	a.plus(b)
	want := asrTally{Utterances: 3, RefWords: 20, WordErrors: 10, Party: slotCount{2, 1, 0}, Time: slotCount{1, 1, 0}, Name: slotCount{1, 0, 1}, OOD: 2, OODHeard: 1}
	if a != want {
		t.Fatalf("plus = %+v, want %+v", a, want)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"word accuracy", a.wordAccuracy(), 0.5},
		// Mutation: slots() adding Party twice gives 3/5.
		{"slot accuracy", a.slots().accuracy(), 0.5},
		{"party accuracy", a.Party.accuracy(), 0.5},
		{"ood heard", a.oodHeard(), 0.5},
		{"no slot named", slotCount{}.accuracy(), -1},
		{"no ood", asrTally{}.oodHeard(), -1},
		// More errors than words: accuracy below zero, as WER above 1.
		{"more errors than words", asrTally{RefWords: 2, WordErrors: 3}.wordAccuracy(), -0.5},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestParseCorpus: the corpus format and its errors.
func TestParseCorpus(t *testing.T) {
	const head = "# comment\n" + asrHeader + "\n"
	cases := []struct {
		name, in string
		want     []asrUtterance
		err      string
	}{
		{
			name: "full and partial lines", in: head + "a1\tbooking\t4\t19:30\tSam Lee\tA table for four\n\nb2\tood\t\t\t\tIt rains\r\n",
			want: []asrUtterance{
				{ID: "a1", Kind: kindBooking, Slots: bookingSlots{4, "19:30", "Sam Lee"}, Text: "A table for four"},
				{ID: "b2", Kind: kindOOD, Text: "It rains"},
			},
		},
		{name: "no header", in: "a1\tyes\t\t\t\tYes\n", err: "header"},
		{name: "five fields", in: head + "a1\tyes\t\t\tYes\n", err: "5 fields"},
		{name: "unknown kind", in: head + "a1\tmaybe\t\t\t\tYes\n", err: "kind"},
		// Mutation: no bound on the party accepts 21, which book_table refuses.
		{name: "party over 20", in: head + "a1\tpartial\t21\t\t\tFor twenty one\n", err: "party"},
		{name: "party zero", in: head + "a1\tpartial\t0\t\t\tFor none\n", err: "party"},
		{name: "time not HH:MM", in: head + "a1\tpartial\t\t7:30\t\tAt seven thirty\n", err: "time"},
		{name: "time 24:00", in: head + "a1\tpartial\t\t24:00\t\tAt midnight\n", err: "time"},
		{name: "name of no letter", in: head + "a1\tpartial\t\t\t!!\tUnder\n", err: "name"},
		{name: "empty text", in: head + "a1\tyes\t\t\t\t \n", err: "no text"},
		{name: "text an option", in: head + "a1\tyes\t\t\t\t-v\n", err: "starts with -"},
		// Mutation: without the check a second line replaces the first's audio key.
		{name: "id twice", in: head + "a1\tyes\t\t\t\tYes\na1\tno\t\t\t\tNo\n", err: "again"},
		{name: "bad id", in: head + "a 1\tyes\t\t\t\tYes\n", err: "id"},
		{name: "no utterance", in: head, err: "no utterance"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseCorpus([]byte(c.in))
			if c.err != "" {
				if !errors.Is(err, ErrCorpus) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want ErrCorpus with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestBuiltInCorpus holds the corpus to what the issue asks of it: at
// least 60 utterances, at least 8 out of the domain, every kind present,
// and every word (names too) in the recognizer's dictionary, so a miss is
// the recognizer's and not a word it cannot know.
func TestBuiltInCorpus(t *testing.T) {
	corpus, err := parseCorpus(asrCorpus)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, u := range corpus {
		kinds[u.Kind]++
	}
	if len(corpus) < 60 || kinds[kindOOD] < 8 {
		t.Errorf("%d utterances, %d out of the domain; want at least 60 and 8", len(corpus), kinds[kindOOD])
	}
	for k := range asrKinds {
		if kinds[k] == 0 {
			t.Errorf("no utterance of kind %s", k)
		}
	}
	dict := readDictWords(t, pocketsphinx.DefaultDict)
	for _, u := range corpus {
		for _, w := range strings.Fields(strings.ToLower(strings.NewReplacer(",", " ", ".", " ", "?", " ").Replace(u.Text))) {
			if !dict[w] {
				t.Errorf("%s: %q is not in %s", u.ID, w, pocketsphinx.DefaultDict)
			}
		}
	}
}

// readDictWords reads the words of a pocketsphinx dictionary; it skips
// the test when the dictionary is missing under -short.
func readDictWords(t *testing.T, name string) map[string]bool {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		if testing.Short() {
			t.Skipf("no dictionary (skipped under -short): %v", err)
		}
		t.Fatalf("%v; run `go tool task setup`", err)
	}
	defer f.Close()
	words := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if w, _, ok := strings.Cut(sc.Text(), " "); ok {
			words[w] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return words
}

// FuzzParseCorpus: any input parses or fails with ErrCorpus, and what
// parses keeps the bounds the scorer relies on.
func FuzzParseCorpus(f *testing.F) {
	f.Add(asrCorpus)
	f.Add([]byte(asrHeader + "\na\tbooking\t2\t19:00\tNina\tA table for two\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseCorpus(data)
		if err != nil {
			if !errors.Is(err, ErrCorpus) {
				t.Fatalf("error %v does not wrap ErrCorpus", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, u := range got {
			if ids[u.ID] || u.Text == "" || u.Slots.Party < 0 || u.Slots.Party > asrMaxParty || !asrKinds[u.Kind] {
				t.Fatalf("parsed %+v", u)
			}
			ids[u.ID] = true
		}
	})
}

// TestListFlag: the subsets of voices, paths and models.
func TestListFlag(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"order kept", "espeak,slt", []string{"espeak", "slt"}, ""},
		{"spaces and empty parts", " slt, ,rms ", []string{"slt", "rms"}, ""},
		{"unknown", "slt,kal", nil, "unknown"},
		// Mutation: without it a voice is decoded and counted twice.
		{"twice", "slt,slt", nil, "twice"},
		{"empty", ",", nil, "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := listFlag("voices", c.in, asrVoices)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestToolsNeeded: the programs a choice of voices and paths runs, and
// the error that names those missing.
func TestToolsNeeded(t *testing.T) {
	cases := []struct {
		name          string
		voices, paths []string
		want          []string
	}{
		{"flite at 16 kHz", []string{"slt"}, []string{path16k}, []string{"flite"}},
		// Mutation: forgetting sox for the mu-law path lets the run fail late, in synthesis.
		{"flite over mu-law", []string{"rms"}, []string{pathMulaw}, []string{"flite", "sox"}},
		{"espeak resampled", []string{voiceEspeak}, []string{path16k}, []string{"espeak-ng", "sox"}},
		{"all", asrVoices, asrPaths, []string{"flite", "espeak-ng", "sox"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := asrTools(c.voices, c.paths); !slices.Equal(got, c.want) {
				t.Errorf("asrTools = %q, want %q", got, c.want)
			}
		})
	}
	err := checkTools([]string{"brisvox-no-such-tool"})
	if !errors.Is(err, ErrToolMissing) || !strings.Contains(err.Error(), "brisvox-no-such-tool") {
		t.Errorf("checkTools of a missing program = %v, want ErrToolMissing naming it", err)
	}
}

// TestForEach: every index runs once, at most jobs at once; the first
// error stops the rest and is returned; no goroutine is left.
func TestForEach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		var ran [50]atomic.Int32
		var running, peak atomic.Int32
		err := forEach(t.Context(), 3, len(ran), func(ctx context.Context, i int) error {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			ran[i].Add(1)
			running.Add(-1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range ran {
			if ran[i].Load() != 1 {
				t.Errorf("index %d ran %d times", i, ran[i].Load())
			}
		}
		if peak.Load() > 3 {
			t.Errorf("%d at once, want at most 3", peak.Load())
		}
		// One at a time, so what runs after the failure is not a matter
		// of scheduling. Mutation: returning nil hides the failure; not
		// cancelling on it runs the other 994.
		boom := errors.New("boom")
		var after atomic.Int32
		err = forEach(t.Context(), 1, 1000, func(ctx context.Context, i int) error {
			if i == 5 {
				return boom
			}
			if i > 5 {
				after.Add(1)
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want boom", err)
		}
		if after.Load() != 0 {
			t.Errorf("%d indexes ran after the failure", after.Load())
		}
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left", n)
		}
	})
}

// TestASREndToEnd runs the command over the corpus's first 3 utterances
// with one voice at 16 kHz and the general model, twice: the report has
// every utterance and the issue's sentence transcribed, and the second
// run (its audio from the cache) gives the same report: the measurement
// is deterministic.
func TestASREndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesises and decodes speech (skipped under -short)")
	}
	for _, tool := range asrTools([]string{"slt"}, []string{path16k}) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s missing: %v", tool, err)
		}
	}
	if _, err := pocketsphinx.New(pocketsphinx.Config{}); errNoEngine(err) {
		t.Skipf("pocketsphinx cannot run here: %v", err)
	}
	cache := t.TempDir()
	args := []string{"asr", "--voices", "slt", "--paths", path16k, "--models", modelGeneral, "--limit", "3", "--jobs", "2", "--cache", cache, "--json", "--details"}
	var outs [2]string
	for i := range outs {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr.String())
		}
		outs[i] = stdout.String()
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs differ:\n%s\n%s", outs[0], outs[1])
	}
	var rep asrReport
	if err := json.Unmarshal([]byte(outs[0]), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Utterances != 3 || len(rep.Rows) != 1 || len(rep.Issue) != 1 || len(rep.Heard) != 3 {
		t.Fatalf("report of %d utterances, %d rows, %d issue lines, %d heard; want 3, 1, 1, 3", rep.Utterances, len(rep.Rows), len(rep.Issue), len(rep.Heard))
	}
	r := rep.Rows[0]
	if r.Utterances != 3 || r.Empty != 0 || r.RefWords == 0 || r.WordAccuracy <= 0 || r.WordAccuracy > 1 {
		t.Errorf("row %+v: want 3 utterances, none empty, word accuracy in (0, 1]", r)
	}
	// Mutation: scoring the warm-up's transcript (no skip) shifts every
	// transcript by one, and the issue's line gets b03's ("a table for
	// six at six in the evening").
	if tr := rep.Issue[0].Transcript; !strings.Contains(tr, "people") || !strings.Contains(tr, "thirty") {
		t.Errorf("the issue's sentence came out %q, want its words people and thirty", tr)
	}
	for _, h := range rep.Heard {
		if h.Transcript == "" {
			t.Errorf("%s came out empty", h.ID)
		}
	}
	if rep.Reference.WordAccuracy != 1 {
		t.Errorf("the reference scored against itself: word accuracy %v, want 1", rep.Reference.WordAccuracy)
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 {
		t.Errorf("cache holds %d entries, want 5 (the warm-up, 3 utterances and the issue's sentence): %v", len(entries), fmt.Sprint(entries))
	}
	if !rep.WarmUp {
		t.Error("the report says no warm-up by default")
	}
}

// TestReadSlots: the slots of a turn by its kind, through the rules
// provider's reader.
func TestReadSlots(t *testing.T) {
	cases := []struct {
		name, kind, text string
		want             bookingSlots
	}{
		{"a full booking", kindBooking, "book a table for two at seven under nina", bookingSlots{2, "19:00", "Nina"}},
		// Mutation: reading a partial turn without the dialog's opening
		// reads none of its slots (ReadBooking wants a booking request).
		{"a partial party", kindPartial, "for six please", bookingSlots{Party: 6}},
		{"a partial time", kindPartial, "at a quarter past eight", bookingSlots{At: "20:15"}},
		{"a partial name", kindPartial, "under the name luke", bookingSlots{Name: "Luke"}},
		// The opening names no slot: a partial turn of nothing reads none.
		{"a partial of no slot", kindPartial, "uh", bookingSlots{}},
		// Mutation: giving every kind the opening reads a slot from a
		// question that asks for no booking.
		{"no booking asked", kindOOD, "will it rain at seven", bookingSlots{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := readSlots(c.kind, c.text); got != c.want {
				t.Errorf("readSlots(%s, %q) = %+v, want %+v", c.kind, c.text, got, c.want)
			}
		})
	}
}

// TestCorpusReadsAsWritten: the rules provider reads every slot the
// corpus names from the utterance's own text, so a row's slot misses are
// the recognizer's. The one exception is a way of saying a name that the
// reader does not know ("... for Leo"), kept because callers say it.
func TestCorpusReadsAsWritten(t *testing.T) {
	corpus, err := parseCorpus(asrCorpus)
	if err != nil {
		t.Fatal(err)
	}
	readerGaps := map[string]bookingSlots{"b04": {Party: 3, At: "19:30"}}
	for _, u := range corpus {
		want := u.Slots
		if gap, ok := readerGaps[u.ID]; ok {
			want = gap
		}
		if got := readSlots(u.Kind, u.Text); got != want {
			t.Errorf("%s %q reads %+v, the corpus says %+v", u.ID, u.Text, got, want)
		}
	}
}

// TestInVocabulary: a name is in the domain's vocabulary when all its
// words are.
func TestInVocabulary(t *testing.T) {
	v := vocabulary([]string{"under the name nina", "for Sam"})
	for _, c := range []struct {
		name string
		want bool
	}{
		{"Nina", true}, {"sam", true},
		// Mutation: any word known (instead of all) takes "Nina Brown".
		{"Nina Brown", false}, {"Luke", false},
		// Mutation: no length check takes the empty name as known.
		{"", false},
	} {
		if got := inVocabulary(v, c.name); got != c.want {
			t.Errorf("inVocabulary(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// errNoEngine tells a build or host where pocketsphinx cannot run.
func errNoEngine(err error) bool {
	return errors.Is(err, pocketsphinx.ErrNoCgo) || errors.Is(err, pocketsphinx.ErrInvalidConfig)
}
