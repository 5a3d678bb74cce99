package sip

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/brisvox/brisvox/sip/register"
	sipmsg "github.com/emiago/sipgo/sip"
)

// registrations are the trunks' registrations (TrunkConfig.Register):
// their configs are checked in New, their clients made and started in
// Start (the Contact is the bound listener, known only then) and closed
// in Close before the signalling, so each unregister still has a socket
// to leave from.
type registrations struct {
	// cfgs are the trunks' registrations by trunk name, fixed in New.
	cfgs map[string]pendingRegistration

	mu      sync.Mutex
	clients map[string]*register.Client
	started bool
	closed  bool
}

// pendingRegistration is a trunk's register config but its Contact, and
// the Contact's user (the AOR's).
type pendingRegistration struct {
	cfg  register.Config
	user string
}

// newRegistrations checks every registering trunk's config: an error
// here fails New, not the first REGISTER. Errors name the trunk, never
// an address, a user or a password.
func newRegistrations(cfg Config, sender register.Sender) (*registrations, error) {
	r := &registrations{cfgs: map[string]pendingRegistration{}, clients: map[string]*register.Client{}}
	for name, t := range cfg.Trunks {
		if !t.Register {
			continue
		}
		if !hasListener(cfg, t.Transport) {
			return nil, fmt.Errorf("%w: trunk %q registers over %s and no listener has that transport", ErrInvalidConfig, name, t.Transport)
		}
		rc, user, err := registerConfig(name, t)
		if err != nil {
			return nil, err
		}
		rc.Log = cfg.Log
		// register.New is the check (it does no I/O); the Contact's
		// host and port are the listener's, filled in at Start.
		probe := rc
		probe.Contact = "sip:" + user + "@127.0.0.1:5060"
		if _, err := register.New(probe, sender); err != nil {
			return nil, fmt.Errorf("%w: trunk %q: %w", ErrInvalidConfig, name, err)
		}
		r.cfgs[name] = pendingRegistration{cfg: rc, user: user}
	}
	return r, nil
}

// registerConfig is trunk t's registration but its Contact, and the
// AOR's user: auth_user, else the user of the trunk's From.
func registerConfig(name string, t TrunkConfig) (register.Config, string, error) {
	hp, err := trunkHostPort(t.Address)
	if err != nil {
		return register.Config{}, "", err
	}
	user := t.AuthUser
	if user == "" {
		user = fromUser(t.From)
	}
	if user == "" {
		return register.Config{}, "", fmt.Errorf("%w: trunk %q registers without auth_user or from (no address of record)", ErrInvalidConfig, name)
	}
	scheme := "sip:"
	if strings.HasPrefix(strings.ToLower(t.Address), "sips:") {
		scheme = "sips:"
	}
	rc := register.Config{
		Trunk:         name,
		Registrar:     scheme + hp, // RFC 3261 10.2: the domain, no user part
		AOR:           user + "@" + hostOnly(hp),
		Transport:     t.Transport,
		OutboundProxy: t.OutboundProxy,
		Routes:        slices.Clone(t.Routes),
		Expires:       t.RegisterExpires,
	}
	if t.AuthUser != "" {
		rc.Auth = &register.Credentials{User: t.AuthUser, Password: t.AuthPassword}
	}
	return rc, user, nil
}

// fromUser is the user part of a trunk's From (a number or a sip: URI).
func fromUser(from string) string {
	if validNumber(from) {
		return from
	}
	var u sipmsg.Uri
	if !isSIPURI(from) || sipmsg.ParseUri(from, &u) != nil {
		return ""
	}
	return u.User
}

// hostOnly is the host of host[:port] ([v6] keeps its brackets).
func hostOnly(hp string) string {
	if strings.HasPrefix(hp, "[") {
		return hp[:strings.IndexByte(hp, ']')+1]
	}
	h, _, _ := strings.Cut(hp, ":")
	return h
}

// hasListener says whether the config listens on transport (UDP, TCP,
// TLS).
func hasListener(cfg Config, transport string) bool {
	for _, l := range cfg.Signal.Listen {
		if strings.EqualFold(l.Network, transport) {
			return true
		}
	}
	return false
}

// startRegistrations makes and starts one client per registering trunk,
// its Contact the first listener of the trunk's transport. Called once
// the signalling listens; a second call, or one after Close, does
// nothing.
func (s *Server) startRegistrations() error {
	r := s.regs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.closed {
		return nil
	}
	r.started = true
	for name, p := range r.cfgs {
		rc := p.cfg
		host, port := s.sig.ListenContact(strings.ToLower(rc.Transport))
		if port == 0 {
			return fmt.Errorf("%w: trunk %q: no bound listener for its Contact", ErrInvalidConfig, name)
		}
		contact := "sip:" + p.user + "@" + net.JoinHostPort(host, strconv.Itoa(port))
		if rc.Transport != "UDP" {
			contact += ";transport=" + strings.ToLower(rc.Transport)
		}
		rc.Contact = contact
		c, err := register.New(rc, s.sig)
		if err != nil {
			return fmt.Errorf("%w: trunk %q: %w", ErrInvalidConfig, name, err)
		}
		r.clients[name] = c
		c.Start()
	}
	return nil
}

// closeRegistrations unregisters every trunk at once, each bounded by
// register's UnregisterTimeout, and waits for them. Later calls do
// nothing.
func (s *Server) closeRegistrations() {
	r := s.regs
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	clients := make([]*register.Client, 0, len(r.clients))
	for _, c := range r.clients {
		clients = append(clients, c)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(c.Close)
	}
	wg.Wait()
}

// Registrations are the registering trunks' states, sorted by trunk,
// for readiness and Describe: idle before Start, unregistered after
// Close.
func (s *Server) Registrations() []register.Status {
	r := s.regs
	r.mu.Lock()
	out := make([]register.Status, 0, len(r.cfgs))
	for name := range r.cfgs {
		if c, ok := r.clients[name]; ok {
			out = append(out, c.State())
			continue
		}
		st := register.StateIdle
		if r.closed {
			st = register.StateUnregistered
		}
		out = append(out, register.Status{Trunk: name, State: st})
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b register.Status) int { return strings.Compare(a.Trunk, b.Trunk) })
	return out
}

// registrationStats adds each client's counters to out as
// register_<trunk>_<counter> (requests, registered, refreshes,
// challenges, auth_failed, interval_too_brief, refused, transport,
// bad_response, unregistered).
func (s *Server) registrationStats(out map[string]uint64) {
	r := s.regs
	r.mu.Lock()
	clients := make(map[string]*register.Client, len(r.clients))
	for name, c := range r.clients {
		clients[name] = c
	}
	r.mu.Unlock()
	for name, c := range clients {
		for k, v := range c.Stats() {
			out["register_"+name+"_"+k] = v
		}
	}
}
