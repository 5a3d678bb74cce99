package rtp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
)

// PortsConfig is the UDP port range of the media sockets.
type PortsConfig struct {
	// Addr is the local address the sockets bind (IPv4 or IPv6); it is
	// what the SDP's c= line carries unless a public address is
	// configured.
	Addr netip.Addr
	// Min and Max bound the range, both inclusive; RTP takes the even
	// ports, RTCP the odd one above. Defaults 10000 and 20000.
	Min, Max int
}

// Defaults of PortsConfig.
const (
	DefaultPortMin = 10000
	DefaultPortMax = 20000
)

func (c PortsConfig) withDefaults() PortsConfig {
	if c.Min == 0 {
		c.Min = DefaultPortMin
	}
	if c.Max == 0 {
		c.Max = DefaultPortMax
	}
	return c
}

// Validate reports a range without a port pair or an address that cannot
// be bound.
func (c PortsConfig) Validate() error {
	d := c.withDefaults()
	switch {
	case !c.Addr.IsValid():
		return fmt.Errorf("%w: no local address", ErrInvalidConfig)
	case d.Min < 1024 || d.Max > 65535 || d.Min > d.Max:
		return fmt.Errorf("%w: port range %d-%d not within 1024-65535", ErrInvalidConfig, c.Min, c.Max)
	case (d.Min+1)&^1+1 > d.Max:
		return fmt.Errorf("%w: port range %d-%d holds no even/odd pair", ErrInvalidConfig, c.Min, c.Max)
	}
	return nil
}

// Ports hands out RTP/RTCP port pairs of one range to concurrent sessions.
// A port busy outside the process is skipped; a pair is in use from Bind
// until its release, which a Session calls exactly once when it closes.
type Ports struct {
	addr  netip.Addr
	first int // the first even port
	pairs int

	mu   sync.Mutex
	used []bool // by pair index
	next int    // where the search starts: pairs are spread over the range
	held int
}

// NewPorts makes an allocator over cfg's range.
func NewPorts(cfg PortsConfig) (*Ports, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	first := (cfg.Min + 1) &^ 1
	pairs := (cfg.Max-1-first)/2 + 1
	return &Ports{addr: cfg.Addr.Unmap(), first: first, pairs: pairs, used: make([]bool, pairs)}, nil
}

// Addr is the local address the sockets bind.
func (p *Ports) Addr() netip.Addr { return p.addr }

// InUse is how many pairs are held now.
func (p *Ports) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// binding is one session's sockets and the release of their pair.
type binding struct {
	rtp, rtcp *net.UDPConn // rtcp nil with rtcp-mux
	port      int
	release   func()
}

// bind takes the next free pair, binding RTP on its even port and, unless
// mux, RTCP on the odd one. A port that fails to bind because it is busy
// is skipped; when no pair is left it fails with ErrNoPorts.
func (p *Ports) bind(mux bool) (binding, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for tries := 0; tries < p.pairs; tries++ {
		i := (p.next + tries) % p.pairs
		if p.used[i] {
			continue
		}
		port := p.first + 2*i
		rtp, err := listen(p.addr, port)
		if err != nil {
			if busy(err) {
				continue
			}
			return binding{}, fmt.Errorf("%w: port %d: %w", ErrBind, port, err)
		}
		var rtcp *net.UDPConn
		if !mux {
			if rtcp, err = listen(p.addr, port+1); err != nil {
				_ = rtp.Close()
				if busy(err) {
					continue
				}
				return binding{}, fmt.Errorf("%w: port %d: %w", ErrBind, port+1, err)
			}
		}
		p.used[i] = true
		p.held++
		p.next = (i + 1) % p.pairs
		var once sync.Once
		return binding{rtp: rtp, rtcp: rtcp, port: port, release: func() {
			once.Do(func() {
				p.mu.Lock()
				p.used[i] = false
				p.held--
				p.mu.Unlock()
			})
		}}, nil
	}
	return binding{}, fmt.Errorf("%w: %d pairs from port %d", ErrNoPorts, p.pairs, p.first)
}

func listen(addr netip.Addr, port int) (*net.UDPConn, error) {
	return net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, uint16(port))))
}

func busy(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EACCES)
}
