package signal

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/internal/ratelog"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// Addr is one bound listener.
type Addr struct {
	// Network is "udp", "tcp" or "tls".
	Network string
	// Addr is the bound address (the port chosen for port 0).
	Addr netip.AddrPort
}

// inviteKey names the INVITE that made a dialog, to tell a merged
// request (RFC 3261 8.2.2.2).
type inviteKey struct {
	callID, remote string
	cseq           uint32
}

// dialogKey names a dialog: Call-ID and both tags (RFC 3261 12).
type dialogKey struct {
	callID, local, remote string
}

// Server is the user agent server: listeners, the sipgo stack, and the
// table of dialogs.
type Server struct {
	cfg   Config
	app   Application
	opts  options
	log   zerolog.Logger
	stats *counters
	env   *env
	check func(req *sip.Request, stream bool) *Refusal

	ua     *sipgo.UserAgent
	srv    *sipgo.Server
	client *sipgo.Client

	ctx       context.Context // ends at Close: Invite contexts derive from it
	cancel    context.CancelFunc
	byeCtx    context.Context
	byeCancel context.CancelFunc

	mu        sync.Mutex
	dialogs   map[dialogKey]*Dialog
	invites   map[inviteKey]*Dialog
	closed    bool
	started   bool
	listeners []io.Closer
	addrs     []Addr

	// inviter sends our INVITEs (Dial); outbound are the dials in
	// flight and their answered dialogs, by Call-ID.
	inviter  inviter
	outbound map[string]*dialing
	// earlyOut are the early dialogs of the dials in flight (a 18x with
	// the callee's tag), which answer the callee's requests.
	earlyOut map[dialogKey]*earlyLeg
	dialing  sync.WaitGroup // Dial calls in flight

	handlers sync.WaitGroup // requests being handled
	tasks    sync.WaitGroup // dialog loops and their requests
	serving  sync.WaitGroup // listener read loops
}

// New builds a Server; Start (or Serve) opens its listeners.
func New(cfg Config, app Application, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if app == nil {
		return nil, fmt.Errorf("%w: no Application", ErrInvalidConfig)
	}
	s := &Server{
		cfg:     cfg.withDefaults(),
		app:     app,
		log:     cfg.Log,
		stats:   newCounters(),
		dialogs: make(map[dialogKey]*Dialog),
		invites: make(map[inviteKey]*Dialog),

		outbound: make(map[string]*dialing),
		earlyOut: make(map[dialogKey]*earlyLeg),
	}
	for _, o := range opts {
		o(&s.opts)
	}
	if !s.opts.seeded {
		var b [8]byte
		_, _ = rand.Read(b[:])
		s.opts.seed = binary.LittleEndian.Uint64(b[:])
	}
	s.check = s.validate
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.byeCtx, s.byeCancel = context.WithCancel(context.Background())

	slogger := slog.New(sipgoLogHandler(s.log, s.stats.drop))
	parser := sip.NewParser()
	parser.MaxMessageLength = s.cfg.MaxMessage
	ua, err := sipgo.NewUA(
		sipgo.WithUserAgent(s.cfg.UserAgent),
		sipgo.WithUserAgentParser(parser),
		sipgo.WithUserAgentTransportLayerOptions(
			sip.WithTransportLayerLogger(slogger),
			sip.WithTransportLayerReadFilter(s.readFilter),
		),
		sipgo.WithUserAgentTransactionLayerOptions(
			sip.WithTransactionLayerLogger(slogger),
			sip.WithTransactionLayerUnhandledResponseHandler(s.onStrayResponse),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: sipgo: %w", ErrInvalidConfig, err)
	}
	s.ua = ua
	if s.srv, err = sipgo.NewServer(ua, sipgo.WithServerLogger(slogger)); err != nil {
		return nil, fmt.Errorf("%w: sipgo: %w", ErrInvalidConfig, err)
	}
	if s.client, err = sipgo.NewClient(ua, sipgo.WithClientLogger(slogger)); err != nil {
		return nil, fmt.Errorf("%w: sipgo: %w", ErrInvalidConfig, err)
	}
	s.env = &env{
		cfg:     s.cfg,
		log:     s.log,
		stats:   s.stats,
		wire:    &sipgoWire{tp: ua.TransportLayer(), client: s.client},
		tasks:   &s.tasks,
		byeCtx:  s.byeCtx,
		forget:  s.forget,
		refused: ratelog.New(s.log, "sip: calls not answered", ratelog.DefaultEvery),
		rng:     mrand.New(mrand.NewPCG(s.opts.seed, s.opts.seed^0x9e3779b97f4a7c15)),
	}
	s.inviter = s.env.wire.(*sipgoWire)
	for _, m := range []sip.RequestMethod{sip.INVITE, sip.ACK, sip.CANCEL, sip.BYE, sip.OPTIONS,
		sip.INFO, sip.UPDATE, sip.REFER, sip.REGISTER, sip.MESSAGE, sip.SUBSCRIBE, sip.NOTIFY,
		sip.PUBLISH, sip.PRACK} {
		s.srv.OnRequest(m, s.handle)
	}
	s.srv.OnNoRoute(s.handle)
	return s, nil
}

// Start opens the listeners and serves them in the background. It
// returns once every listener is served: a Request or Dial right after it
// leaves from our listener, with no wait and no retry.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if s.started {
		return nil
	}
	s.started = true
	// sipgo puts a UDP listener into its connection pool (where our
	// requests from that port find it) in the goroutine that serves it,
	// just before its first read; until then a request from the port is
	// "not sent". Each listener's first read or accept closes its ready.
	var ready []<-chan struct{}
	defer func() {
		for _, r := range ready {
			<-r
		}
	}()
	var cert tls.Certificate
	for _, l := range s.cfg.Listen {
		network := strings.ToLower(l.Network)
		switch network {
		case "udp":
			pc, err := net.ListenPacket("udp", l.Addr)
			if err != nil {
				s.closeListenersLocked()
				return fmt.Errorf("%w: udp: %w", ErrListen, err)
			}
			s.listeners = append(s.listeners, pc)
			s.addrs = append(s.addrs, Addr{network, addrPort(pc.LocalAddr())})
			rc := &readyPacketConn{PacketConn: pc, ready: make(chan struct{})}
			ready = append(ready, rc.ready)
			s.serving.Go(func() {
				defer rc.markReady() // ServeUDP failed before reading
				_ = s.srv.ServeUDP(rc)
			})
		case "tcp", "tls":
			var ln net.Listener
			var err error
			if network == "tls" {
				if cert.Certificate == nil {
					if cert, err = tls.LoadX509KeyPair(s.cfg.CertFile, s.cfg.KeyFile); err != nil {
						s.closeListenersLocked()
						return fmt.Errorf("%w: tls certificate: %w", ErrListen, err)
					}
				}
			}
			if ln, err = net.Listen("tcp", l.Addr); err != nil {
				s.closeListenersLocked()
				return fmt.Errorf("%w: %s: %w", ErrListen, network, err)
			}
			sl := &streamListener{Listener: ln, accept: s.opts.accept, idle: s.cfg.StreamIdle,
				refused: func() { s.stats.drop("accept-refused") }, ready: make(chan struct{})}
			ready = append(ready, sl.ready)
			ln = sl
			if network == "tls" {
				ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
			}
			s.listeners = append(s.listeners, ln)
			s.addrs = append(s.addrs, Addr{network, addrPort(ln.Addr())})
			if network == "tls" {
				s.serving.Go(func() { defer sl.markReady(); _ = s.srv.ServeTLS(ln) })
			} else {
				s.serving.Go(func() { defer sl.markReady(); _ = s.srv.ServeTCP(ln) })
			}
		}
	}
	return nil
}

func (s *Server) closeListenersLocked() {
	for _, l := range s.listeners {
		_ = l.Close()
	}
	s.listeners = nil
}

// Serve starts the server and serves until ctx ends, then closes it.
func (s *Server) Serve(ctx context.Context) error {
	if err := s.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-s.ctx.Done():
	}
	s.Close()
	return nil
}

// Addrs are the bound listeners, in the order of Config.Listen (empty
// before Start).
func (s *Server) Addrs() []Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Addr(nil), s.addrs...)
}

// Stats is a snapshot of the counters.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
	s.mu.Lock()
	ds := make([]*Dialog, 0, len(s.dialogs))
	for _, d := range s.dialogs {
		ds = append(ds, d)
	}
	s.mu.Unlock()
	for _, d := range ds {
		st.Dialogs[d.State()]++
	}
	return st
}

// Dialogs are the live dialogs.
func (s *Server) Dialogs() []*Dialog {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Dialog, 0, len(s.dialogs))
	for _, d := range s.dialogs {
		out = append(out, d)
	}
	return out
}

// Close stops taking calls, ends every dialog with a BYE (waiting up to
// CloseGrace for their responses), closes the listeners and waits for
// every goroutine it started. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.handlers.Wait()
		s.tasks.Wait()
		s.serving.Wait()
		return
	}
	s.closed = true
	s.mu.Unlock()

	// Invites being decided end (their handlers answer 503); once no
	// handler runs, no dialog can start any more.
	s.cancel()
	s.handlers.Wait()
	// Dials in flight end (CANCEL) and return.
	s.dialing.Wait()
	for _, d := range s.Dialogs() {
		d.post(func() { d.end(ErrServerClosed, true) })
	}
	grace := time.AfterFunc(s.cfg.CloseGrace, s.byeCancel)
	s.tasks.Wait()
	grace.Stop()
	s.byeCancel()

	s.mu.Lock()
	s.closeListenersLocked()
	s.mu.Unlock()
	_ = s.ua.Close()
	s.serving.Wait()
	s.env.refused.Close()
}

// forget removes an ended dialog.
func (s *Server) forget(d *Dialog) {
	s.mu.Lock()
	if s.dialogs[d.key()] == d {
		delete(s.dialogs, d.key())
	}
	if s.invites[d.inviteKey] == d {
		delete(s.invites, d.inviteKey)
	}
	if rec := s.outbound[d.callID]; d.uac && rec != nil && rec.d == d {
		delete(s.outbound, d.callID)
	}
	s.mu.Unlock()
}

func (d *Dialog) key() dialogKey {
	return dialogKey{callID: d.callID, local: d.localTag, remote: d.remoteTag}
}

// onStrayResponse takes a response no client transaction matched: a
// retransmitted 2xx to one of our re-INVITEs or to the INVITE of a Dial
// gets its ACK again, a fork's 2xx to a Dial its ACK and a BYE, others
// are counted and dropped.
func (s *Server) onStrayResponse(res *sip.Response) {
	cseq, from, to, callID := res.CSeq(), res.From(), res.To(), res.CallID()
	if res.StatusCode < 200 || res.StatusCode > 299 || cseq == nil || cseq.MethodName != sip.INVITE ||
		from == nil || to == nil || callID == nil {
		s.stats.drop("stray-response")
		return
	}
	local, _ := from.Params.Get("tag")
	remote, _ := to.Params.Get("tag")
	s.mu.Lock()
	d := s.dialogs[dialogKey{callID: callID.Value(), local: local, remote: remote}]
	s.mu.Unlock()
	if d == nil && s.onForked2xx(res) {
		return
	}
	if d == nil || !d.isStarted() || !d.post(func() { d.onRetransmitted2xx(res) }) {
		s.stats.drop("stray-response")
	}
}

// readFilter runs before sipgo parses a read: size bound and the
// integrator's filter. On UDP it never returns an error: that would stop
// the UDP read loop for good; a drop is empty data. On a stream a drop is
// an error, which closes that connection.
func (s *Server) readFilter(info sip.TransportReadProps, data []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.stats.panicked()
			s.stats.drop("filter-panic")
			s.log.Error().Err(ErrPanic).Msg("read filter panicked")
			out, err = nil, nil
		}
	}()
	if strings.EqualFold(info.Transport, "udp") && len(data) > s.cfg.MaxUDPMessage {
		s.stats.drop("udp-oversize")
		return nil, nil
	}
	stream := !strings.EqualFold(info.Transport, "udp")
	if s.opts.filter != nil && !s.opts.filter(addrPort(info.RemoteAddr), stream, data) {
		s.stats.drop("filter")
		if stream {
			// sipgo ends this connection's read loop (and only it) on
			// an error: the rest of a dropped stream cannot be framed.
			return nil, errStreamDropped
		}
		return nil, nil
	}
	return data, nil
}

// addrPort is a net.Addr as netip.AddrPort (zero when it is none).
func addrPort(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.AddrPort()
	case *net.TCPAddr:
		return a.AddrPort()
	case nil:
		return netip.AddrPort{}
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// newID is our call id: "sip-" and 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sip-" + hex.EncodeToString(b[:])
}

// listenerFor is the bound address of the first listener of a transport.
func (s *Server) listenerFor(transport string) (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.addrs {
		if strings.EqualFold(a.Network, transport) {
			host := a.Addr.Addr().String()
			if s.cfg.PublicHost != "" {
				host = s.cfg.PublicHost
			}
			return host, int(a.Addr.Port())
		}
	}
	for _, l := range s.cfg.Listen {
		if strings.EqualFold(l.Network, transport) {
			host, port := hostPort(l.Addr)
			if s.cfg.PublicHost != "" {
				host = s.cfg.PublicHost
			}
			return host, port
		}
	}
	return s.cfg.PublicHost, 0
}

// boundFor is the bound address of the first listener of a transport:
// our UDP requests leave from it (a new socket would not pass the
// peer's NAT or allowlist).
func (s *Server) boundFor(transport string) netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.addrs {
		if strings.EqualFold(a.Network, transport) {
			return a.Addr
		}
	}
	return netip.AddrPort{}
}

// sipgoWire is the wire over sipgo's transport and transaction layers.
type sipgoWire struct {
	tp     *sip.TransportLayer
	client *sipgo.Client
}

var _ wire = (*sipgoWire)(nil)

func (w *sipgoWire) resend(res *sip.Response) error { return w.tp.WriteMsg(res) }

func (w *sipgoWire) ack(req *sip.Request) error { return w.client.WriteRequest(req) }

// request's errors say what failed in fixed words: sipgo's own texts can
// quote addresses and URIs, which must not reach a log.
func (w *sipgoWire) request(ctx context.Context, req *sip.Request) (*sip.Response, error) {
	tx, err := w.client.TransactionRequest(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%w: not sent", ErrTransport)
	}
	defer tx.Terminate()
	for {
		select {
		case res := <-tx.Responses():
			if res.StatusCode >= 200 {
				return res, nil
			}
		case <-tx.Done():
			if errors.Is(tx.Err(), sip.ErrTransactionTimeout) {
				return nil, fmt.Errorf("%w: no response", ErrTransport)
			}
			return nil, fmt.Errorf("%w: transaction failed", ErrTransport)
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrTransport, ctx.Err())
		}
	}
}
