package validate

import (
	"fmt"

	"github.com/emiago/sipgo/sip"
)

// Defaults of Options.
const (
	// DefaultMaxBody bounds a body: 16 KiB holds any SDP offer we take.
	DefaultMaxBody = 16 << 10
	// DefaultMaxHeaders bounds the header count (sipgo counts each
	// comma-separated Via or Contact value as one header).
	DefaultMaxHeaders = 256
)

// Options says what this endpoint accepts.
type Options struct {
	// Stream is set for TCP and TLS: Content-Length is then mandatory.
	Stream bool
	// MaxBody bounds the body and the Content-Length (413 above);
	// 0 means DefaultMaxBody.
	MaxBody int
	// MaxHeaders bounds the header count (e.g. 10 000 Vias: dropped);
	// 0 means DefaultMaxHeaders.
	MaxHeaders int
	// Supported lists the option tags we support: a Require naming any
	// other is answered 420 with Unsupported. Nil supports none.
	Supported []string
	// Accept lists, per method, the body types accepted (415 with Accept
	// otherwise). A method with an empty list takes no body; a method
	// absent from the map is not judged here. Nil means the defaults:
	// INVITE, ACK, UPDATE and PRACK take application/sdp; INFO takes
	// application/dtmf-relay and application/dtmf; OPTIONS takes none.
	Accept map[sip.RequestMethod][]string
}

// Validate reports Options that Check could only misread: negative
// bounds, option tags that are not tokens, body types that are not
// type/subtype.
func (o Options) Validate() error {
	if o.MaxBody < 0 {
		return fmt.Errorf("%w: MaxBody %d is negative", ErrInvalidOptions, o.MaxBody)
	}
	if o.MaxHeaders < 0 {
		return fmt.Errorf("%w: MaxHeaders %d is negative", ErrInvalidOptions, o.MaxHeaders)
	}
	for _, tag := range o.Supported {
		if !isToken(tag) {
			return fmt.Errorf("%w: option tag %q is not a token", ErrInvalidOptions, tag)
		}
	}
	for m, types := range o.Accept {
		if !isToken(string(m)) {
			return fmt.Errorf("%w: method %q is not a token", ErrInvalidOptions, m)
		}
		for _, t := range types {
			if !isMediaType(t) {
				return fmt.Errorf("%w: body type %q of %s is not type/subtype", ErrInvalidOptions, t, m)
			}
		}
	}
	return nil
}

func (o Options) maxBody() int {
	if o.MaxBody <= 0 {
		return DefaultMaxBody
	}
	return o.MaxBody
}

func (o Options) maxHeaders() int {
	if o.MaxHeaders <= 0 {
		return DefaultMaxHeaders
	}
	return o.MaxHeaders
}

// accepted returns the body types accepted for m, and whether m's body
// is judged at all.
func (o Options) accepted(m sip.RequestMethod) ([]string, bool) {
	if o.Accept != nil {
		types, ok := o.Accept[m]
		return types, ok
	}
	return defaultAccept(m)
}

// The default body types; returned slices are never written.
var (
	acceptSDP  = []string{"application/sdp"}
	acceptDTMF = []string{"application/dtmf-relay", "application/dtmf"}
	acceptNone = []string{}
)

func defaultAccept(m sip.RequestMethod) ([]string, bool) {
	switch m {
	case sip.INVITE, sip.ACK, sip.UPDATE, sip.PRACK:
		return acceptSDP, true
	case sip.INFO:
		return acceptDTMF, true
	case sip.OPTIONS:
		return acceptNone, true
	}
	return nil, false
}
