package ttfttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// Measure makes one request and returns its time to first token.
type Measure func(ctx context.Context) (time.Duration, error)

// Adapter measures llm: the time from Stream to the first LLMText event.
// The rest of the stream is read to its end (io.EOF) and closed, untimed,
// so the connection goes back to the pool.
func Adapter(llm providers.LLM, req *providers.Request) Measure {
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		s, err := llm.Stream(ctx, req)
		if err != nil {
			return 0, err
		}
		defer s.Close()
		var first time.Duration
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return 0, err
			}
			if first == 0 && ev.Kind == providers.LLMText {
				first = time.Since(start)
			}
		}
		if first == 0 {
			return 0, fmt.Errorf("%w: the stream had no LLMText", ErrNoText)
		}
		return first, nil
	}
}

// Bare is the baseline: the same POST with a plain net/http client.
type Bare struct {
	// Client is the plain client; nil: NewClient().
	Client *http.Client
	// URL, Header and Body are the adapter's request, as sent.
	URL    string
	Header http.Header
	Body   []byte
	// TextLine is the 1-based number of the data line that carries the
	// first text (the event the adapter turns into its first LLMText).
	TextLine int
}

// NewClient is a plain client set up like the adapters' (no compression,
// a small keep-alive pool), so the difference is the adapters' own work.
func NewClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8, ForceAttemptHTTP2: true}}
}

func (b *Bare) client() *http.Client {
	if b.Client == nil {
		b.Client = NewClient()
	}
	return b.Client
}

// Warm opens the client's connection with a GET of url, read to its end.
func (b *Bare) Warm(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header = b.Header.Clone()
	resp, err := b.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// Measure posts Body and returns the time to the TextLine-th data line;
// the rest of the body is read to its end, untimed.
func (b *Bare) Measure(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(b.Body))
	if err != nil {
		return 0, err
	}
	req.Header = b.Header.Clone()
	resp, err := b.client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("%w: %d", ErrStatus, resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	var first time.Duration
	for n := 0; first == 0; {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data:")) {
			if n++; n == b.TextLine {
				first = time.Since(start)
			}
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %d data lines, want %d: %v", ErrNoText, n, b.TextLine, err)
		}
	}
	_, err = io.Copy(io.Discard, br)
	return first, err
}

// Run runs m b.N times and reports the time to first token: the mean as
// µs/first-token, the median as p50-µs/first-token.
func Run(b *testing.B, m Measure) {
	b.ReportAllocs()
	var ds []time.Duration
	for b.Loop() {
		d, err := m(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d)
	}
	report(b, "", ds)
}

// RunPaired runs the adapter and the baseline one after the other in every
// iteration, so both see the same load on the machine, and reports each and
// the added time: the mean and the median of the per-iteration differences
// (added-µs/first-token, p50-added-µs/first-token).
func RunPaired(b *testing.B, adapter, bare Measure) {
	b.ReportAllocs()
	var as, bs, diffs []time.Duration
	for b.Loop() {
		da, err := adapter(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		db, err := bare(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		as, bs, diffs = append(as, da), append(bs, db), append(diffs, da-db)
	}
	report(b, "adapter-", as)
	report(b, "bare-", bs)
	report(b, "added-", diffs)
}

// report reports the mean and the median of ds in microseconds.
func report(b *testing.B, prefix string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(sum)/float64(len(ds)), prefix+"µs/first-token")
	b.ReportMetric(us(sorted[len(sorted)/2]), "p50-"+prefix+"µs/first-token")
}

// Request is a voice turn's request for the benchmarks: a system prompt,
// a few turns, one tool.
func Request(tool providers.ToolDef) *providers.Request {
	return &providers.Request{
		Messages: []agent.Message{
			agent.System("You are a friendly receptionist on a phone line. Answer in one or two short sentences."),
			agent.User("Hi, I would like to book a table for two."),
			agent.Assistant("Sure, for which day and time?", nil),
			agent.User("Tomorrow at eight, please."),
		},
		Tools: []providers.ToolDef{tool},
	}
}

// WarmLLM is an adapter under the benchmark: it can be warmed and closed.
type WarmLLM interface {
	providers.LLM
	Close() error
}

// Prepare readies both sides of a benchmark over a mock that answers at
// once: it warms the adapter and makes one request with it (req), so the
// connection is pooled; then it sets bare up with the body the adapter
// sent (sent returns it as the mock parsed it), a fresh client, and warms
// that with a GET of warmURL and one request. Both are closed at the end
// of the benchmark.
func Prepare(b *testing.B, a WarmLLM, req *providers.Request, sent func() any, bare *Bare, warmURL string) (Measure, *Bare) {
	b.Helper()
	b.Cleanup(func() { _ = a.Close() })
	if err := a.Warm(b.Context()); err != nil {
		b.Fatal(err)
	}
	adapter := Adapter(a, req)
	if _, err := adapter(b.Context()); err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(sent())
	if err != nil {
		b.Fatal(err)
	}
	bare.Body = body
	if bare.Client == nil {
		bare.Client = NewClient()
	}
	b.Cleanup(bare.Client.CloseIdleConnections)
	if err := bare.Warm(b.Context(), warmURL); err != nil {
		b.Fatal(err)
	}
	if _, err := bare.Measure(b.Context()); err != nil {
		b.Fatal(err)
	}
	return adapter, bare
}
