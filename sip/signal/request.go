package signal

import (
	"context"
	"fmt"
	"strings"

	"github.com/emiago/sipgo/sip"
)

// Request sends an out-of-dialog request (REGISTER) from our listener of
// its transport and returns the final response. The request is sent as
// built (Via, From, To, Call-ID, CSeq are the caller's); over UDP it
// leaves from our listener's socket, so the answer comes back through
// the same NAT binding (Start returns only once sipgo can send from it,
// so no wait is needed after Start). Errors wrap ErrRequest, in fixed
// words.
func (s *Server) Request(ctx context.Context, req *sip.Request) (*sip.Response, error) {
	if req == nil || req.IsInvite() || req.IsAck() || req.IsCancel() {
		return nil, fmt.Errorf("%w: not an out-of-dialog request Request sends", ErrRequest)
	}
	s.mu.Lock()
	ready := s.started && !s.closed && s.env != nil
	s.mu.Unlock()
	if !ready {
		return nil, fmt.Errorf("%w: the server is not serving", ErrRequest)
	}
	transport := req.Transport()
	if transport == "" {
		transport = "UDP"
		req.SetTransport(transport)
	}
	if strings.EqualFold(transport, "UDP") {
		if a := s.boundFor("udp"); a.IsValid() {
			req.Laddr = sip.Addr{IP: a.Addr().AsSlice(), Port: int(a.Port())}
		}
	}
	res, err := s.env.wire.request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRequest, err)
	}
	return res, nil
}

// ListenContact is the host and port of our first listener of transport
// ("udp", "tcp", "tls"), PublicHost applied: what a REGISTER's Contact
// names.
func (s *Server) ListenContact(transport string) (host string, port int) {
	return s.listenerFor(transport)
}
