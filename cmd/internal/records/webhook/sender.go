package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/journal"
)

// kindDelivery is the journal kind of a queued delivery.
const kindDelivery byte = 1

// maxFailures is how many failures Failures keeps (the newest).
const maxFailures = 100

// entry is a queued delivery as the journal keeps it: one per record and
// URL.
type entry struct {
	// URL is the URL's index when the record was queued (the
	// idempotency key's); URLSum tells it again if the list changed
	// across a restart (a digest, so the journal holds no URL's token).
	URL    int             `json:"url"`
	URLSum string          `json:"url_sum"`
	CallID string          `json:"call_id"`
	Body   json.RawMessage `json:"body"`
}

// item is a pending delivery in memory.
type item struct {
	seq      uint64
	key      string // Idempotency-Key
	callID   string
	body     []byte
	attempts int
	due      time.Time
}

// target is one URL with its queue and its sender goroutine.
type target struct {
	url   string
	host  string
	wake  chan struct{} // one slot: something was queued
	items []*item       // under Sender.mu
	rng   *rand.Rand    // the goroutine's own
}

// Failure is a delivery given up (after MaxAttempts) or refused (a 4xx
// other than 408 and 429, or a 3xx). It names the URL by host only and
// never holds the answer's body.
type Failure struct {
	CallID   string `json:"call_id"`
	Host     string `json:"host"`
	Attempts int    `json:"attempts"`
	// Status is the last answer's HTTP status; 0: no answer (Error says
	// why: timeout or connection).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Reason: gave_up or rejected.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Sender queues records durably and POSTs them to every URL.
type Sender struct {
	cfg     Config
	opt     options
	j       *journal.Journal
	client  *http.Client
	own     bool // client is ours: close its idle connections at Close
	log     zerolog.Logger
	targets []*target

	ctx    context.Context // cancelled by Close: stops the goroutines and their POSTs
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	started  bool
	closed   bool
	failures []Failure

	st struct {
		queued, delivered, attempts, retries, gaveUp, rejected,
		replayed, droppedUnknownURL, ackFailures atomic.Uint64
	}
}

var _ records.Sink = (*Sender)(nil)

// New opens the queue in cfg.Dir and loads what it holds (deliveries
// queued before a restart and not yet answered are sent again once Start
// runs). Deliveries for a URL no longer configured are dropped, counted.
func New(cfg Config, opts ...Option) (*Sender, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := options{backoffMin: BackoffMin, backoffMax: BackoffMax}
	for _, f := range opts {
		f(&o)
	}
	if !o.seeded {
		o.seed = uint64(time.Now().UnixNano())
	}
	s := &Sender{cfg: cfg, opt: o, client: cfg.Client, log: cfg.Log}
	if s.client == nil {
		s.client = &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport:     http.DefaultTransport.(*http.Transport).Clone(),
		}
		s.own = true
	}
	sums := map[string]int{}
	for i, raw := range cfg.URLs {
		u, _ := url.Parse(raw) // Validate parsed it
		s.targets = append(s.targets, &target{
			url:  raw,
			host: u.Host,
			wake: make(chan struct{}, 1),
			rng:  rand.New(rand.NewPCG(o.seed, uint64(i))),
		})
		sums[urlSum(raw)] = i
	}
	j, err := journal.Open(journal.Config{Dir: cfg.Dir, Log: cfg.Log})
	if err != nil {
		return nil, fmt.Errorf("webhook: open the queue: %w", err)
	}
	s.j = j
	now := time.Now()
	err = j.Replay(func(seq uint64, kind byte, payload []byte) error {
		var e entry
		if kind != kindDelivery || json.Unmarshal(payload, &e) != nil {
			s.st.droppedUnknownURL.Add(1)
			s.log.Error().Uint64("seq", seq).Msg("webhook: a queued delivery does not read back; dropped")
			return s.ackLogged(seq, "")
		}
		i, ok := sums[e.URLSum]
		if !ok {
			s.st.droppedUnknownURL.Add(1)
			s.log.Warn().Str("call_id", e.CallID).Msg("webhook: a queued delivery's URL is no longer configured; dropped")
			return s.ackLogged(seq, e.CallID)
		}
		t := s.targets[i]
		t.items = append(t.items, &item{seq: seq, key: idempotencyKey(e.CallID, e.URL), callID: e.CallID, body: e.Body, due: now})
		s.st.replayed.Add(1)
		return nil
	})
	if err != nil {
		j.Close()
		return nil, fmt.Errorf("webhook: read the queue: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

func urlSum(u string) string {
	h := sha256.Sum256([]byte(u))
	return hex.EncodeToString(h[:8])
}

func idempotencyKey(callID string, url int) string { return callID + "/" + strconv.Itoa(url) }

// ackLogged acks seq; a failure is logged and counted, not returned (the
// entry comes back at the next start: at least once).
func (s *Sender) ackLogged(seq uint64, callID string) error {
	if err := s.j.Ack(seq); err != nil {
		s.st.ackFailures.Add(1)
		s.log.Error().Err(err).Str("call_id", callID).Msg("webhook: could not mark a delivery done; it may be sent again after a restart")
	}
	return nil
}

// Deliver queues r for every URL, durably (the journal's fsync), and
// returns; the sender goroutines POST it.
func (s *Sender) Deliver(r *records.Record) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("webhook: encode the record of call %s: %w", r.CallID, err)
	}
	for i, t := range s.targets {
		payload, err := json.Marshal(entry{URL: i, URLSum: urlSum(t.url), CallID: r.CallID, Body: body})
		if err != nil {
			return fmt.Errorf("webhook: encode the record of call %s: %w", r.CallID, err)
		}
		seq, err := s.j.Append(kindDelivery, payload)
		if errors.Is(err, journal.ErrClosed) {
			return ErrClosed
		}
		if err != nil {
			return fmt.Errorf("webhook: queue the record of call %s for %s: %w", r.CallID, t.host, err)
		}
		s.mu.Lock()
		t.items = append(t.items, &item{seq: seq, key: idempotencyKey(r.CallID, i), callID: r.CallID, body: body, due: time.Now()})
		s.mu.Unlock()
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	s.st.queued.Add(1)
	return nil
}

// Start starts one sender goroutine per URL (a slow or dead receiver
// holds up only its own deliveries). Close stops and waits for them.
func (s *Sender) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return
	}
	s.started = true
	for _, t := range s.targets {
		s.wg.Add(1)
		go s.run(t)
	}
}

// Close stops the sender goroutines (a POST in flight is cancelled and
// stays queued) and closes the queue: what was not answered 2xx is sent
// after the next start.
func (s *Sender) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("webhook: close: the senders did not stop in time: %w", ctx.Err())
	}
	if s.own {
		s.client.CloseIdleConnections()
	}
	if err := s.j.Close(); err != nil {
		return fmt.Errorf("webhook: close the queue: %w", err)
	}
	return nil
}

// Stats are the counters: queued (records), delivered, attempts,
// retries, gave_up, rejected, pending, replayed (found at start),
// dropped_unknown_url, ack_failures.
func (s *Sender) Stats() map[string]uint64 {
	s.mu.Lock()
	pending := 0
	for _, t := range s.targets {
		pending += len(t.items)
	}
	s.mu.Unlock()
	return map[string]uint64{
		"queued":              s.st.queued.Load(),
		"delivered":           s.st.delivered.Load(),
		"attempts":            s.st.attempts.Load(),
		"retries":             s.st.retries.Load(),
		"gave_up":             s.st.gaveUp.Load(),
		"rejected":            s.st.rejected.Load(),
		"pending":             uint64(pending),
		"replayed":            s.st.replayed.Load(),
		"dropped_unknown_url": s.st.droppedUnknownURL.Load(),
		"ack_failures":        s.st.ackFailures.Load(),
	}
}

// Failures are the newest deliveries given up or refused (at most 100),
// oldest first.
func (s *Sender) Failures() []Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Failure(nil), s.failures...)
}

// run is one URL's sender: the due delivery with the earliest time (then
// the oldest), one at a time.
func (s *Sender) run(t *target) {
	defer s.wg.Done()
	for {
		it, wait := s.next(t)
		if it == nil {
			select {
			case <-t.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-t.wake:
				timer.Stop()
			case <-s.ctx.Done():
				timer.Stop()
				return
			}
			continue
		}
		s.attempt(t, it)
		if s.ctx.Err() != nil {
			return
		}
	}
}

func (s *Sender) next(t *target) (*item, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *item
	for _, it := range t.items {
		if best == nil || it.due.Before(best.due) {
			best = it
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, time.Until(best.due)
}

// answer is what one attempt came to.
type answer struct {
	status     int
	class      string // no answer: timeout or connection
	retryAfter time.Duration
}

func (s *Sender) attempt(t *target, it *item) {
	it.attempts++
	a := s.post(t, it)
	if s.ctx.Err() != nil {
		it.attempts-- // cut short by Close: not the receiver's failure
		return
	}
	s.st.attempts.Add(1)
	switch {
	case a.status >= 200 && a.status < 300:
		s.st.delivered.Add(1)
		s.finish(t, it, "", a)
	case a.status != 0 && !retryable(a.status):
		s.st.rejected.Add(1)
		s.finish(t, it, "rejected", a)
	case it.attempts >= s.cfg.MaxAttempts:
		s.st.gaveUp.Add(1)
		s.finish(t, it, "gave_up", a)
	default:
		d := max(s.backoff(t, it.attempts), min(a.retryAfter, s.opt.backoffMax))
		s.st.retries.Add(1)
		s.mu.Lock()
		it.due = time.Now().Add(d)
		s.mu.Unlock()
		s.log.Debug().Str("call_id", it.callID).Str("host", t.host).Int("attempt", it.attempts).
			Int("status", a.status).Str("error", a.class).Dur("retry_in", d).Msg("webhook: delivery not taken; retrying")
	}
}

func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// backoff is the wait after the nth failed attempt.
func (s *Sender) backoff(t *target, n int) time.Duration {
	d := s.opt.backoffMin
	for k := 1; k < n && d < s.opt.backoffMax; k++ {
		d *= 2
	}
	d = min(d, s.opt.backoffMax)
	half := d / 2
	return half + time.Duration(t.rng.Int64N(int64(d-half)+1))
}

// finish takes it off the queue (acked) and, for a failure, keeps it in
// Failures and logs it.
func (s *Sender) finish(t *target, it *item, reason string, a answer) {
	s.ackLogged(it.seq, it.callID)
	s.mu.Lock()
	for k, x := range t.items {
		if x == it {
			t.items = append(t.items[:k], t.items[k+1:]...)
			break
		}
	}
	if reason != "" {
		if len(s.failures) == maxFailures {
			s.failures = append(s.failures[:0], s.failures[1:]...)
		}
		s.failures = append(s.failures, Failure{
			CallID: it.callID, Host: t.host, Attempts: it.attempts,
			Status: a.status, Error: a.class, Reason: reason, At: time.Now(),
		})
	}
	s.mu.Unlock()
	if reason != "" {
		s.log.Warn().Str("call_id", it.callID).Str("host", t.host).Int("attempts", it.attempts).
			Int("status", a.status).Str("error", a.class).Str("reason", reason).
			Msg("webhook: delivery failed for good; see the webhook failures")
	}
}

// post sends one attempt. It never returns the client's error text (it
// holds the whole URL, which may carry a token): only its class.
func (s *Sender) post(t *target, it *item) answer {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(it.body))
	if err != nil {
		return answer{class: "request"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "brisvox-webhook/1")
	req.Header.Set(SignatureHeader, Sign(s.cfg.Secret, it.body, time.Now()))
	req.Header.Set(IdempotencyHeader, it.key)
	req.Header.Set(AttemptHeader, strconv.Itoa(it.attempts))
	resp, err := s.client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return answer{class: "timeout"}
		}
		return answer{class: "connection"}
	}
	// Read a little of the body so the connection can be reused; what it
	// says is never kept.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	a := answer{status: resp.StatusCode}
	if v := resp.Header.Get("Retry-After"); v != "" {
		if sec, err := strconv.Atoi(v); err == nil && sec > 0 {
			a.retryAfter = time.Duration(sec) * time.Second
		}
	}
	return a
}
