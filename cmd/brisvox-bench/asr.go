package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/brisvox/brisvox/providers/llm/rules"
	"github.com/brisvox/brisvox/providers/stt/pocketsphinx"
)

// asrCorpus is the corpus the command scores by default.
//
//go:embed testdata/asr/corpus.tsv
var asrCorpus []byte

// asrIssueSentence is issue 16's own example of a misheard booking: it is
// decoded in every group after the corpus and reported on its own line,
// not scored with the corpus.
var asrIssueSentence = asrUtterance{
	ID: "issue16", Kind: kindBooking,
	Slots: bookingSlots{Party: 3, At: "20:30", Name: "Mira"},
	Text:  "I want to book a table for three people at eight thirty under the name Mira",
}

// asrWarmUp is said to each group's fresh decoder before the corpus,
// and not scored: a decoder in service has heard speech before, and its
// cepstral mean has adapted to the line; a fresh one starts from the
// model's, and through 8 kHz mu-law its first utterance came out as
// "one" for every voice. It names no slot and asks for nothing.
var asrWarmUp = asrUtterance{ID: "warm-up", Kind: kindOOD, Text: "Hello, I am calling the restaurant about this evening"}

// asrOptions are the command's flags.
type asrOptions struct {
	corpus  string // "" is the embedded corpus
	voices  []string
	paths   []string
	models  []string
	weight  float64 // the domain model's DomainWeight; 0 the default
	jobs    int
	cache   string
	limit   int
	warmUp  bool // decode asrWarmUp first in each group
	json    bool
	details bool
}

// asrGroup is one model x voice x path: its transcripts in corpus order,
// the issue sentence's last.
type asrGroup struct {
	model, voice, path string
	transcripts        []string
}

// asrRow is one line of the report: a group, or all voices of a model
// and path (Voice "all").
type asrRow struct {
	Model string `json:"model"`
	Voice string `json:"voice"`
	Path  string `json:"path"`
	asrTally
	// The rates of the tally; -1 where the corpus has nothing to score.
	WordAccuracy  float64 `json:"word_accuracy"`
	PartyAccuracy float64 `json:"party_accuracy"`
	TimeAccuracy  float64 `json:"time_accuracy"`
	NameAccuracy  float64 `json:"name_accuracy"`
	SlotAccuracy  float64 `json:"slot_accuracy"`
	OODHeardShare float64 `json:"ood_heard_share"`
}

func newRow(model, voice, path string, t asrTally) asrRow {
	return asrRow{
		Model: model, Voice: voice, Path: path, asrTally: t,
		WordAccuracy: t.wordAccuracy(), PartyAccuracy: t.Party.accuracy(), TimeAccuracy: t.Time.accuracy(),
		NameAccuracy: t.Name.accuracy(), SlotAccuracy: t.slots().accuracy(), OODHeardShare: t.oodHeard(),
	}
}

// asrProbe is the issue sentence as one group heard it.
type asrProbe struct {
	Model      string       `json:"model"`
	Voice      string       `json:"voice"`
	Path       string       `json:"path"`
	Transcript string       `json:"transcript"`
	Slots      bookingSlots `json:"slots"`
	// SlotsRight is how many of the sentence's three slots were read
	// right.
	SlotsRight int `json:"slots_right"`
}

// asrHeard is one utterance as one group heard it (--details).
type asrHeard struct {
	Model      string       `json:"model"`
	Voice      string       `json:"voice"`
	Path       string       `json:"path"`
	ID         string       `json:"id"`
	Transcript string       `json:"transcript"`
	WordErrors int          `json:"word_errors"`
	Slots      bookingSlots `json:"slots"`
}

// asrReport is the command's output.
type asrReport struct {
	Corpus     string   `json:"corpus"`
	Utterances int      `json:"utterances"`
	Models     []string `json:"models"`
	Voices     []string `json:"voices"`
	Paths      []string `json:"paths"`
	// WarmUp: each group decoded a sentence before the corpus.
	WarmUp bool `json:"warm_up"`
	// DomainWeight is the domain model's weight as given (0: the
	// provider's default).
	DomainWeight float64 `json:"domain_weight"`
	// Reference is the corpus's texts scored as their own transcripts:
	// the slots the rules provider reads from what was said, the ceiling
	// of every row's slot accuracy.
	Reference asrRow     `json:"reference"`
	Rows      []asrRow   `json:"rows"`
	Issue     []asrProbe `json:"issue_sentence"`
	Heard     []asrHeard `json:"utterances_heard,omitempty"`
}

// asr is `brisvox-bench asr`: the recognizer's word and slot accuracy
// over the corpus, per model, voice and path.
func asr(args []string, stdout, stderr io.Writer) int {
	opt, err := parseASRFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "brisvox-bench asr: %v\n", err)
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := runASR(ctx, opt, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox-bench asr: %v\n", err)
		return 1
	}
	if opt.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "brisvox-bench asr: %v\n", err)
			return 1
		}
		return 0
	}
	writeASRTable(stdout, rep, opt.details)
	return 0
}

func parseASRFlags(args []string, stderr io.Writer) (asrOptions, error) {
	fs := flag.NewFlagSet("asr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	corpus := fs.String("corpus", "", "the corpus file (id, kind, party, time, name, text; tab-separated); default the one built in, cmd/brisvox-bench/testdata/asr/corpus.tsv")
	voices := fs.String("voices", strings.Join(asrVoices, ","), "the voices: flite's slt, rms, awb and espeak (espeak-ng en-us)")
	paths := fs.String("paths", strings.Join(asrPaths, ","), "the paths: 16k (as made) and mulaw8k (8 kHz G.711 mu-law and back)")
	models := fs.String("models", strings.Join(asrModels, ","), "the recognizer's models: general (Debian en-us) and domain (biased to the rules provider)")
	weight := fs.Float64("domain-weight", 0, fmt.Sprintf("the domain model's share against the general model, in (0, 1); 0: pocketsphinx's default, %v", pocketsphinx.DefaultDomainWeight))
	jobs := fs.Int("jobs", min(2, runtime.NumCPU()), "groups decoded at once (each holds a decoder, about 90 MB)")
	cache := fs.String("cache", filepath.Join(os.TempDir(), "brisvox-asr-audio"), "the directory of the synthesised audio, kept between runs")
	limit := fs.Int("limit", 0, "score only the corpus's first N utterances (0: all)")
	warmUp := fs.Bool("warm-up", true, "decode a sentence, not scored, before the corpus in each group, as a decoder in service has heard speech before; false: the first utterance meets a fresh decoder")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	details := fs.Bool("details", false, "add every utterance's transcript to the report")
	if err := fs.Parse(args); err != nil {
		return asrOptions{}, err
	}
	if fs.NArg() > 0 {
		return asrOptions{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	opt := asrOptions{corpus: *corpus, weight: *weight, jobs: *jobs, cache: *cache, limit: *limit, warmUp: *warmUp, json: *jsonOut, details: *details}
	var err error
	if opt.voices, err = listFlag("voices", *voices, asrVoices); err != nil {
		return asrOptions{}, err
	}
	if opt.paths, err = listFlag("paths", *paths, asrPaths); err != nil {
		return asrOptions{}, err
	}
	if opt.models, err = listFlag("models", *models, asrModels); err != nil {
		return asrOptions{}, err
	}
	if opt.jobs < 1 || opt.limit < 0 || opt.cache == "" || opt.weight < 0 || opt.weight >= 1 {
		return asrOptions{}, fmt.Errorf("--jobs %d, --limit %d, --cache %q, --domain-weight %v: want jobs >= 1, limit >= 0, a cache directory and a weight in [0, 1)", opt.jobs, opt.limit, opt.cache, opt.weight)
	}
	return opt, nil
}

// listFlag reads a comma-separated subset of known, in the order given,
// each once.
func listFlag(name, value string, known []string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(value, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			continue
		case !slices.Contains(known, v):
			return nil, fmt.Errorf("--%s: %q unknown (want some of %s)", name, v, strings.Join(known, ","))
		case slices.Contains(out, v):
			return nil, fmt.Errorf("--%s: %q twice", name, v)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--%s: empty", name)
	}
	return out, nil
}

// runASR synthesises, decodes and scores. Progress goes to progress.
func runASR(ctx context.Context, opt asrOptions, progress io.Writer) (*asrReport, error) {
	data, name := asrCorpus, "built in (cmd/brisvox-bench/testdata/asr/corpus.tsv)"
	if opt.corpus != "" {
		b, err := os.ReadFile(opt.corpus)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorpus, err)
		}
		data, name = b, opt.corpus
	}
	corpus, err := parseCorpus(data)
	if err != nil {
		return nil, err
	}
	if opt.limit > 0 && opt.limit < len(corpus) {
		corpus = corpus[:opt.limit]
	}
	if err := checkTools(asrTools(opt.voices, opt.paths)); err != nil {
		return nil, err
	}
	cfgs := make(map[string]pocketsphinx.Config, len(opt.models))
	for _, m := range opt.models {
		cfg, err := modelConfig(m, opt.weight)
		if err != nil {
			return nil, err
		}
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrModel, m, err)
		}
		cfgs[m] = cfg
	}
	if err := os.MkdirAll(opt.cache, 0o755); err != nil {
		return nil, fmt.Errorf("%w: cache: %v", ErrSynthesis, err)
	}
	var utts []asrUtterance
	if opt.warmUp {
		utts = append(utts, asrWarmUp)
	}
	skip := len(utts)
	utts = append(append(utts, corpus...), asrIssueSentence)

	// Synthesis: every voice x path x utterance, jobs at once.
	type audioKey struct{ voice, path string }
	audio := map[audioKey][][]int16{}
	type synthJob struct {
		key audioKey
		i   int
	}
	var jobs []synthJob
	for _, v := range opt.voices {
		for _, p := range opt.paths {
			k := audioKey{v, p}
			audio[k] = make([][]int16, len(utts))
			for i := range utts {
				jobs = append(jobs, synthJob{k, i})
			}
		}
	}
	cache := audioCache{dir: opt.cache}
	fmt.Fprintf(progress, "asr: %d utterances x %d voices x %d paths: audio in %s\n", len(utts), len(opt.voices), len(opt.paths), opt.cache)
	if err := forEach(ctx, opt.jobs, len(jobs), func(ctx context.Context, j int) error {
		job := jobs[j]
		pcm, err := cache.audio(ctx, job.key.voice, job.key.path, utts[job.i].Text)
		if err != nil {
			return fmt.Errorf("%s %s %s: %w", job.key.voice, job.key.path, utts[job.i].ID, err)
		}
		audio[job.key][job.i] = pcm // each job writes its own element
		return nil
	}); err != nil {
		return nil, err
	}

	// Decoding: one group per model x voice x path, jobs at once.
	var groups []*asrGroup
	for _, m := range opt.models {
		for _, v := range opt.voices {
			for _, p := range opt.paths {
				groups = append(groups, &asrGroup{model: m, voice: v, path: p})
			}
		}
	}
	var mu sync.Mutex
	done := 0
	if err := forEach(ctx, opt.jobs, len(groups), func(ctx context.Context, j int) error {
		g := groups[j]
		got, err := decodeGroup(ctx, cfgs[g.model], audio[audioKey{g.voice, g.path}])
		if err != nil {
			return fmt.Errorf("%s %s %s: %w", g.model, g.voice, g.path, err)
		}
		g.transcripts = got[skip:]
		mu.Lock()
		done++
		fmt.Fprintf(progress, "asr: decoded %s %s %s (%d of %d)\n", g.model, g.voice, g.path, done, len(groups))
		mu.Unlock()
		return nil
	}); err != nil {
		return nil, err
	}
	return scoreASR(name, corpus, opt, groups), nil
}

// scoreASR makes the report of decoded groups (each with the corpus's
// transcripts and then the issue sentence's).
func scoreASR(name string, corpus []asrUtterance, opt asrOptions, groups []*asrGroup) *asrReport {
	rep := &asrReport{Corpus: name, Utterances: len(corpus), Models: opt.models, Voices: opt.voices, Paths: opt.paths, WarmUp: opt.warmUp, DomainWeight: opt.weight}
	vocab := vocabulary(rules.Phrases())
	known := make([]bool, len(corpus))
	var ref asrTally
	for i, u := range corpus {
		known[i] = inVocabulary(vocab, u.Slots.Name)
		ref.add(u, u.Text, readSlots(u.Kind, u.Text), known[i])
	}
	rep.Reference = newRow("reference text", "-", "-", ref)
	all := map[[2]string]*asrTally{}
	for _, g := range groups {
		var t asrTally
		for i, u := range corpus {
			got := readSlots(u.Kind, g.transcripts[i])
			t.add(u, g.transcripts[i], got, known[i])
			if opt.details {
				rep.Heard = append(rep.Heard, asrHeard{
					Model: g.model, Voice: g.voice, Path: g.path, ID: u.ID, Transcript: g.transcripts[i],
					WordErrors: wordErrors(rules.Words(u.Text), rules.Words(g.transcripts[i])), Slots: got,
				})
			}
		}
		rep.Rows = append(rep.Rows, newRow(g.model, g.voice, g.path, t))
		k := [2]string{g.model, g.path}
		if all[k] == nil {
			all[k] = &asrTally{}
		}
		all[k].plus(t)
		said := g.transcripts[len(corpus)]
		got := readSlots(asrIssueSentence.Kind, said)
		right := 0
		want := asrIssueSentence.Slots
		if got.Party == want.Party {
			right++
		}
		if got.At == want.At {
			right++
		}
		if strings.EqualFold(got.Name, want.Name) {
			right++
		}
		rep.Issue = append(rep.Issue, asrProbe{Model: g.model, Voice: g.voice, Path: g.path, Transcript: said, Slots: got, SlotsRight: right})
	}
	if len(opt.voices) > 1 {
		for _, m := range opt.models {
			for _, p := range opt.paths {
				rep.Rows = append(rep.Rows, newRow(m, "all", p, *all[[2]string{m, p}]))
			}
		}
	}
	return rep
}

// asrDialogOpening opens the booking dialog a partial turn answers.
const asrDialogOpening = "book a table"

// readSlots is the booking the rules provider reads from an utterance of
// kind (rules.ReadBooking). ReadBooking reads a first turn with no dialog
// before it, and a turn that asks for no booking reads as none; a partial
// turn ("for six please", "under the name Luke") is an answer in an open
// booking dialog, so it is read after the dialog's opening request, which
// names no slot: every slot read is the transcript's. (The dialog's bare
// answers, "six" to "how many people?", need the question asked; the
// corpus has none.)
func readSlots(kind, transcript string) bookingSlots {
	if kind == kindPartial {
		transcript = asrDialogOpening + " " + transcript
	}
	party, at, name := rules.ReadBooking(transcript)
	return bookingSlots{Party: party, At: at, Name: name}
}

// forEach runs f(0..n-1), at most jobs at once, and returns the first
// error; after one it starts no more and cancels the ctx of those
// running.
func forEach(ctx context.Context, jobs, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(jobs, n) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue // the feeder may still hand one over
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel(err) })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}

// writeASRTable prints the report as tables.
func writeASRTable(w io.Writer, rep *asrReport, details bool) {
	weight := "default"
	if rep.DomainWeight > 0 {
		weight = fmt.Sprint(rep.DomainWeight)
	}
	fmt.Fprintf(w, "corpus: %s, %d utterances; domain weight %s; warm-up %v\n\n", rep.Corpus, rep.Utterances, weight, rep.WarmUp)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tvoice\tpath\twords\tparty\ttime\tname\t(known)\tslots\tspurious\tood heard\tempty\t")
	for _, r := range append([]asrRow{rep.Reference}, rep.Rows...) {
		s := r.slots()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t\n", r.Model, r.Voice, r.Path,
			pct(r.WordAccuracy), ratio(r.Party), ratio(r.Time), ratio(r.Name), ratio(r.NameKnown), ratio(s), s.Spurious,
			fmt.Sprintf("%d/%d", r.OODHeard, r.OOD), r.Empty)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nwords: 1 - WER; party, time, name, slots: read right of those the corpus names (rules' reader); (known): names in the domain's vocabulary; spurious: slots read where none was said\n")
	fmt.Fprintf(w, "\nissue 16's sentence: %q (party %d, %s, %s)\n", asrIssueSentence.Text, asrIssueSentence.Slots.Party, asrIssueSentence.Slots.At, asrIssueSentence.Slots.Name)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range rep.Issue {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/3\t%q\t\n", p.Model, p.Voice, p.Path, p.SlotsRight, p.Transcript)
	}
	tw.Flush()
	if details {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, h := range rep.Heard {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%q\t\n", h.Model, h.Voice, h.Path, h.ID, h.WordErrors, h.Transcript)
		}
		tw.Flush()
	}
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func ratio(c slotCount) string {
	if c.Want == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d %.0f%%", c.Right, c.Want, 100*c.accuracy())
}
