package register

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/icholy/digest"
)

// Sender sends one out-of-dialog request and returns its final response
// (signal.Server.Request implements it).
type Sender interface {
	Request(ctx context.Context, req *sip.Request) (*sip.Response, error)
}

// State is where a registration stands; also a metric label.
type State string

// The states.
const (
	StateIdle         State = "idle"         // not started
	StateRegistering  State = "registering"  // first REGISTER under way
	StateRegistered   State = "registered"   // bound until Status.Expires
	StateRetrying     State = "retrying"     // failed (5xx, timeout, refused), waiting Status.Next
	StateFailed       State = "failed"       // authentication refused, waiting Status.Next
	StateUnregistered State = "unregistered" // closed
)

// States lists every State (for metrics that show each one).
var States = [...]State{StateIdle, StateRegistering, StateRegistered, StateRetrying, StateFailed, StateUnregistered}

// Status is a registration's state for readiness and Describe.
type Status struct {
	Trunk string `json:"trunk"`
	State State  `json:"state"`
	// Code is the last final status code (0 none or no answer).
	Code int `json:"code"`
	// Expires is the granted binding time of the last 200.
	Expires time.Duration `json:"expires_ns"`
	// Next is when the next REGISTER goes (zero when none is planned).
	Next time.Time `json:"next"`
}

// Client keeps one registration.
type Client struct {
	cfg    Config
	p      parsed
	sender Sender

	callID, tag string

	rnd *mrand.Rand // jitter; only the run goroutine uses it

	mu     sync.Mutex
	status Status
	cseq   uint32
	bound  bool // a binding may be live at the registrar
	counts map[string]uint64

	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	done   chan struct{}
}

// Option changes a Client.
type Option func(*Client)

// New validates cfg; Start runs the registration.
func New(cfg Config, sender Sender, opts ...Option) (*Client, error) {
	cfg = cfg.withDefaults()
	p, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	if sender == nil {
		return nil, fmt.Errorf("%w: no sender", ErrInvalidConfig)
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	c := &Client{
		cfg: cfg, p: p, sender: sender,
		rnd:    mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		status: Status{Trunk: cfg.Trunk, State: StateIdle},
		counts: map[string]uint64{},
		done:   make(chan struct{}),
	}
	c.callID = c.token(16) + "@brisvox"
	c.tag = c.token(8)
	for _, o := range opts {
		o(c)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func (c *Client) token(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(c.rnd.Uint32())
	}
	return hex.EncodeToString(b)
}

// Start runs the registration in its goroutine until Close.
func (c *Client) Start() {
	c.once.Do(func() { go c.run() })
}

// Close unregisters (Expires: 0, bounded by UnregisterTimeout) and waits
// for the goroutine. A Client never started is just marked unregistered.
func (c *Client) Close() {
	started := true
	c.once.Do(func() { started = false })
	c.cancel()
	if started {
		<-c.done
		return
	}
	c.setState(StateUnregistered, 0, time.Time{})
}

// State is the registration's status now.
func (c *Client) State() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Stats are the counters: requests, registered, refreshes, challenges,
// auth_failed, interval_too_brief, refused, transport, unregistered.
func (c *Client) Stats() map[string]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]uint64, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

func (c *Client) count(name string) {
	c.mu.Lock()
	c.counts[name]++
	c.mu.Unlock()
}

func (c *Client) setState(s State, code int, next time.Time) {
	c.mu.Lock()
	c.status.State, c.status.Code, c.status.Next = s, code, next
	c.mu.Unlock()
}

// outcome is one registration attempt's result.
type outcome struct {
	code    int
	granted time.Duration
	err     error
}

func (c *Client) run() {
	defer close(c.done)
	log := c.cfg.Log.With().Str("trunk", c.cfg.Trunk).Logger()
	c.setState(StateRegistering, 0, time.Time{})
	ask := c.cfg.Expires
	failures := 0
	registered := false
	for {
		o := c.register(c.ctx, ask)
		if c.ctx.Err() != nil {
			break
		}
		var wait time.Duration
		switch {
		case o.err == nil:
			if registered {
				c.count("refreshes")
			}
			registered, failures = true, 0
			c.count("registered")
			wait = o.granted - min(o.granted/2, c.cfg.Margin)
			c.mu.Lock()
			c.status.Expires = o.granted
			c.mu.Unlock()
			c.setState(StateRegistered, o.code, time.Now().Add(wait))
			log.Debug().Int("code", o.code).Dur("expires", o.granted).Msg("sip: registered")
		default:
			registered = false
			failures++
			wait = c.backoff(failures)
			st := StateRetrying
			if errors.Is(o.err, ErrAuthFailed) {
				st = StateFailed
			}
			c.setState(st, o.code, time.Now().Add(wait))
			log.Warn().Err(o.err).Str("state", string(st)).Int("code", o.code).Dur("retry_in", wait).Msg("sip: registration failed")
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
		}
		if c.ctx.Err() != nil {
			break
		}
	}
	c.mu.Lock()
	bound := c.bound
	c.mu.Unlock()
	code := 0
	if bound {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.UnregisterTimeout)
		o := c.send(ctx, 0)
		cancel()
		code = o.code
		if o.err != nil {
			log.Warn().Err(o.err).Int("code", o.code).Msg("sip: unregister failed")
		} else {
			c.count("unregistered")
		}
	}
	c.setState(StateUnregistered, code, time.Time{})
}

// backoff is the wait after the n-th failure in a row.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.BackoffMin
	for i := 1; i < n && d < c.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.cfg.BackoffMax)
	return d - time.Duration(c.cfg.Jitter*c.rnd.Float64()*float64(d))
}

// register asks for a binding of ask, answering a 423 with its
// Min-Expires (once in a row).
func (c *Client) register(ctx context.Context, ask time.Duration) outcome {
	o := c.send(ctx, ask)
	if o.code == 423 && o.granted > ask {
		c.count("interval_too_brief")
		o = c.send(ctx, o.granted)
	}
	if o.code == 423 {
		o.err = fmt.Errorf("%w: interval too brief", ErrRefused)
	}
	return o
}

// send sends one REGISTER asking for expires (0: unregister) and answers
// challenges up to MaxAuthAttempts.
func (c *Client) send(ctx context.Context, expires time.Duration) outcome {
	var auth sip.Header
	for attempt := 0; ; attempt++ {
		req := c.newRequest(expires, auth)
		rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		c.count("requests")
		res, err := c.sender.Request(rctx, req)
		cancel()
		if err != nil {
			c.count("transport")
			return outcome{err: fmt.Errorf("%w: %w", ErrTransport, err)} // the Sender's errors are fixed words
		}
		code := res.StatusCode
		switch {
		case code >= 200 && code < 300:
			if expires == 0 {
				c.mu.Lock()
				c.bound = false
				c.mu.Unlock()
				return outcome{code: code}
			}
			granted, ok := c.granted(res, expires)
			if !ok || granted <= 0 {
				c.count("bad_response")
				return outcome{code: code, err: fmt.Errorf("%w: no binding granted", ErrBadResponse)}
			}
			c.mu.Lock()
			c.bound = true
			c.mu.Unlock()
			return outcome{code: code, granted: granted}
		case code == 401 || code == 407:
			c.count("challenges")
			if c.cfg.Auth == nil || attempt >= c.cfg.MaxAuthAttempts {
				c.count("auth_failed")
				return outcome{code: code, err: fmt.Errorf("%w: status %d", ErrAuthFailed, code)}
			}
			h, err := c.answer(res, code, req)
			if err != nil {
				c.count("auth_failed")
				return outcome{code: code, err: err}
			}
			auth = h
		case code == 423:
			v, ok := headerValue(res, "Min-Expires")
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if !ok || err != nil || n == 0 {
				c.count("bad_response")
				return outcome{code: code, err: fmt.Errorf("%w: 423 without Min-Expires", ErrBadResponse)}
			}
			return outcome{code: code, granted: time.Duration(n) * time.Second}
		default:
			c.count("refused")
			return outcome{code: code, err: fmt.Errorf("%w: status %d", ErrRefused, code)}
		}
	}
}

// answer computes the digest for a 401 (Authorization) or 407
// (Proxy-Authorization).
func (c *Client) answer(res *sip.Response, code int, req *sip.Request) (sip.Header, error) {
	in, out := "WWW-Authenticate", "Authorization"
	if code == 407 {
		in, out = "Proxy-Authenticate", "Proxy-Authorization"
	}
	v, ok := headerValue(res, in)
	if !ok {
		return nil, fmt.Errorf("%w: challenge without %s", ErrAuthFailed, in)
	}
	chal, err := digest.ParseChallenge(v)
	if err != nil {
		return nil, fmt.Errorf("%w: unreadable challenge", ErrAuthFailed)
	}
	chal.Algorithm = strings.ToUpper(chal.Algorithm)
	cred, err := digest.Digest(chal, digest.Options{
		Method: string(sip.REGISTER), URI: req.Recipient.String(), Count: 1,
		Username: c.cfg.Auth.User, Password: c.cfg.Auth.Password,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: unsupported challenge", ErrAuthFailed)
	}
	return sip.NewHeader(out, cred.String()), nil
}

// granted is the binding time the 200 gives our Contact: its expires
// parameter, else the Expires header, else what we asked.
func (c *Client) granted(res *sip.Response, asked time.Duration) (time.Duration, bool) {
	for _, h := range res.GetHeaders("Contact") {
		ch, ok := h.(*sip.ContactHeader)
		if !ok || !sameBinding(ch.Address, c.p.contact) {
			continue
		}
		if v, ok := ch.Params.Get("expires"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return 0, false
			}
			return time.Duration(n) * time.Second, true
		}
	}
	if v, ok := headerValue(res, "Expires"); ok {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	return asked, true
}

func sameBinding(a, b sip.Uri) bool {
	ap, bp := a.Port, b.Port
	if ap == 0 {
		ap = 5060
	}
	if bp == 0 {
		bp = 5060
	}
	return a.User == b.User && strings.EqualFold(a.Host, b.Host) && ap == bp
}

func headerValue(m *sip.Response, name string) (string, bool) {
	if h := m.GetHeader(name); h != nil {
		return h.Value(), true
	}
	return "", false
}

// newRequest builds the next REGISTER: same Call-ID and From tag, the
// next CSeq, a fresh transaction (the Sender adds the Via).
func (c *Client) newRequest(expires time.Duration, auth sip.Header) *sip.Request {
	c.mu.Lock()
	c.cseq++
	seq := c.cseq
	c.mu.Unlock()
	req := sip.NewRequest(sip.REGISTER, *c.p.registrar.Clone())
	from := &sip.FromHeader{Address: *c.p.aor.Clone(), Params: sip.NewParams()}
	from.Params.Add("tag", c.tag)
	req.AppendHeader(from)
	req.AppendHeader(&sip.ToHeader{Address: *c.p.aor.Clone(), Params: sip.NewParams()})
	callID := sip.CallIDHeader(c.callID)
	req.AppendHeader(&callID)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: seq, MethodName: sip.REGISTER})
	maxf := sip.MaxForwardsHeader(70)
	req.AppendHeader(&maxf)
	for _, r := range c.p.routes {
		req.AppendHeader(&sip.RouteHeader{Address: *r.Clone()})
	}
	req.AppendHeader(&sip.ContactHeader{Address: *c.p.contact.Clone()})
	exp := sip.ExpiresHeader(uint32(expires / time.Second))
	req.AppendHeader(&exp)
	if auth != nil {
		req.AppendHeader(auth)
	}
	if c.cfg.Transport != "" {
		req.SetTransport(c.cfg.Transport)
	}
	req.SetBody(nil)
	return req
}
