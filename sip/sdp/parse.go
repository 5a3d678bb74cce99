package sdp

import (
	"bytes"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	pion "github.com/pion/sdp/v3"
)

// parse reads a remote description within the config's bounds. Only the
// structure is checked here (RFC 4566 grammar, as pion/sdp reads it, and
// the bounds); what an m-line means is read when it is negotiated, so that
// a strange video stream cannot fail an audio call.
func parse(body []byte, c *Config) (*pion.SessionDescription, error) {
	if len(body) > c.MaxSize {
		return nil, fmt.Errorf("%w: %d bytes, the bound is %d", ErrTooLarge, len(body), c.MaxSize)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, fmt.Errorf("%w: empty body", ErrMalformed)
	}
	// Cheap bound before pion builds anything: every m-line starts a line.
	if m := bytes.Count(body, []byte("\nm=")); m > c.MaxMedia {
		return nil, fmt.Errorf("%w: more than %d m-lines", ErrTooLarge, c.MaxMedia)
	}
	if line, ok := badLine(body); !ok {
		return nil, fmt.Errorf("%w: line %d is not <type>=<value>", ErrMalformed, line)
	}
	text := string(body)
	// pion wants a line end after the last line; many stacks leave it out.
	if !strings.HasSuffix(text, "\n") {
		text += "\r\n"
	}
	var sd pion.SessionDescription
	if err := sd.UnmarshalString(text); err != nil {
		// pion's message quotes the input: say only that it failed.
		return nil, fmt.Errorf("%w: not an RFC 4566 session description", ErrMalformed)
	}
	if len(sd.MediaDescriptions) > c.MaxMedia {
		return nil, fmt.Errorf("%w: more than %d m-lines", ErrTooLarge, c.MaxMedia)
	}
	for i, md := range sd.MediaDescriptions {
		if len(md.MediaName.Formats) > c.MaxFormats {
			return nil, fmt.Errorf("%w: m-line %d has more than %d formats", ErrTooLarge, i, c.MaxFormats)
		}
	}
	return &sd, nil
}

// badLine checks that every non-empty line is a letter, '=' and printable
// text (RFC 4566 §5: no NUL, CR or LF inside a value); it returns the first
// bad line's number (1-based) and false.
func badLine(body []byte) (int, bool) {
	n := 0
	for len(body) > 0 {
		n++
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			continue
		}
		if len(line) < 2 || line[0] < 'a' || line[0] > 'z' || line[1] != '=' {
			return n, false
		}
		for _, b := range line[2:] {
			if b == 0 || b == '\r' {
				return n, false
			}
		}
	}
	return n, true
}

// payload is one RTP format of a remote m-line.
type payload struct {
	pt       uint8
	name     string // rtpmap encoding name, or the static one
	clock    int
	channels int // 0: not written
	fmtp     string
}

// payloads reads the RTP formats of md, in its order, with their rtpmap
// and fmtp. A static payload type without rtpmap takes its RFC 3551
// meaning; a dynamic one without rtpmap, or a format that is not a payload
// type, is skipped (it cannot be chosen).
func payloads(md *pion.MediaDescription) []payload {
	out := make([]payload, 0, len(md.MediaName.Formats))
	for _, f := range md.MediaName.Formats {
		v, err := strconv.ParseUint(f, 10, 8)
		if err != nil || v > 127 {
			continue
		}
		p := payload{pt: uint8(v)}
		if !rtpmapOf(md, &p) && !staticOf(&p) {
			continue
		}
		p.fmtp = fmtpOf(md, p.pt)
		out = append(out, p)
	}
	return out
}

// staticOf fills p from the static payload types we know (RFC 3551 §6).
func staticOf(p *payload) bool {
	switch p.pt {
	case 0:
		p.name, p.clock = "PCMU", 8000
	case 8:
		p.name, p.clock = "PCMA", 8000
	case 9:
		p.name, p.clock = "G722", 8000
	case 13:
		p.name, p.clock = comfortNoise, 8000
	default:
		return false
	}
	return true
}

// rtpmapOf fills p from the a=rtpmap of its payload type
// ("<pt> <name>/<clock>[/<channels>]"); false when there is none, or it
// cannot be read.
func rtpmapOf(md *pion.MediaDescription, p *payload) bool {
	for _, a := range md.Attributes {
		if a.Key != "rtpmap" {
			continue
		}
		pt, rest, ok := ptPrefix(a.Value)
		if !ok || pt != p.pt {
			continue
		}
		parts := strings.Split(strings.TrimSpace(rest), "/")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
			return false
		}
		clock, err := strconv.Atoi(parts[1])
		if err != nil || clock <= 0 || clock > 1_000_000 {
			return false
		}
		ch := 0
		if len(parts) == 3 {
			if ch, err = strconv.Atoi(parts[2]); err != nil || ch <= 0 || ch > 255 {
				return false
			}
		}
		p.name, p.clock, p.channels = parts[0], clock, ch
		return true
	}
	return false
}

// fmtpOf is the parameter text of the a=fmtp of payload type pt, or "".
func fmtpOf(md *pion.MediaDescription, pt uint8) string {
	for _, a := range md.Attributes {
		if a.Key != "fmtp" {
			continue
		}
		if v, rest, ok := ptPrefix(a.Value); ok && v == pt {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// ptPrefix splits "<pt> <rest>".
func ptPrefix(s string) (uint8, string, bool) {
	head, rest, _ := strings.Cut(strings.TrimLeft(s, " "), " ")
	v, err := strconv.ParseUint(head, 10, 8)
	if err != nil || v > 127 {
		return 0, "", false
	}
	return uint8(v), rest, true
}

// opusParams reads the Opus fmtp parameters (RFC 7587 §6.1); unknown or
// unreadable ones are ignored, as the RFC asks of a receiver.
func opusParams(fmtp string) OpusParams {
	var o OpusParams
	for kv := range strings.SplitSeq(fmtp, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "useinbandfec":
			o.FEC = v == "1"
		case "usedtx":
			o.DTX = v == "1"
		case "stereo":
			o.Stereo = v == "1"
		case "sprop-stereo":
			o.SpropStereo = v == "1"
		case "maxplaybackrate":
			if n, err := strconv.Atoi(v); err == nil && n >= 8000 && n <= 48000 {
				o.MaxPlaybackRate = n
			}
		case "maxaveragebitrate":
			if n, err := strconv.Atoi(v); err == nil && n >= 6000 && n <= 510000 {
				o.MaxAverageBitrate = n
			}
		}
	}
	return o
}

// connAddr reads the address of a c= line: a unicast IP literal of its
// address type (RFC 4566 §5.7). ok false when there is no c= line.
func connAddr(ci *pion.ConnectionInformation) (addr netip.Addr, ok bool, err error) {
	if ci == nil {
		return netip.Addr{}, false, nil
	}
	if ci.Address == nil || ci.Address.Address == "" {
		return netip.Addr{}, true, fmt.Errorf("%w: c= without an address", ErrMalformed)
	}
	addr, err = parseAddr(ci.AddressType, ci.Address.Address)
	return addr, true, err
}

// parseAddr reads a unicast IP literal of the given SDP address type.
func parseAddr(addrType, s string) (netip.Addr, error) {
	if strings.Contains(s, "/") {
		return netip.Addr{}, fmt.Errorf("%w: a multicast address (TTL or count given)", ErrUnsupportedAddress)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: not an IP literal (host names are not resolved)", ErrUnsupportedAddress)
	}
	switch {
	case a.Zone() != "":
		return netip.Addr{}, fmt.Errorf("%w: a scoped address", ErrUnsupportedAddress)
	case addrType == "IP4" && !a.Is4():
		return netip.Addr{}, fmt.Errorf("%w: IP4 with an address that is not IPv4", ErrMalformed)
	case addrType == "IP6" && !a.Is6():
		return netip.Addr{}, fmt.Errorf("%w: IP6 with an address that is not IPv6", ErrMalformed)
	case a.IsMulticast():
		return netip.Addr{}, fmt.Errorf("%w: a multicast address", ErrUnsupportedAddress)
	}
	return a.Unmap(), nil
}

// sdpDirection is a direction attribute as its SDP's author means it.
type sdpDirection uint8

const (
	dirNone sdpDirection = iota
	dirSendRecv
	dirSendOnly
	dirRecvOnly
	dirInactive
)

// directionAttr is the last direction attribute of attrs, or dirNone.
func directionAttr(attrs []pion.Attribute) sdpDirection {
	d := dirNone
	for _, a := range attrs {
		switch a.Key {
		case "sendrecv":
			d = dirSendRecv
		case "sendonly":
			d = dirSendOnly
		case "recvonly":
			d = dirRecvOnly
		case "inactive":
			d = dirInactive
		}
	}
	return d
}

// authorSends and authorReceives read d from its author's side; no
// attribute means sendrecv (RFC 3264 §5.1).
func (d sdpDirection) authorSends() bool { return d == dirNone || d == dirSendRecv || d == dirSendOnly }
func (d sdpDirection) authorReceives() bool {
	return d == dirNone || d == dirSendRecv || d == dirRecvOnly
}

// msAttr reads a=ptime or a=maxptime ("20", also "20.0"), in whole
// milliseconds; 0 when absent or unreadable (a preference we can ignore).
func msAttr(md *pion.MediaDescription, sd *pion.SessionDescription, key string) time.Duration {
	v, ok := md.Attribute(key)
	if !ok {
		if v, ok = sd.Attribute(key); !ok {
			return 0
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || f < 1 || f > 10_000 {
		return 0
	}
	return time.Duration(f) * time.Millisecond
}

// rtcpAttr reads a=rtcp ("<port>" or "<port> IN IP4 <addr>", RFC 3605);
// ok false without one. A port-only a=rtcp takes the RTP address.
func rtcpAttr(md *pion.MediaDescription, rtpAddr netip.Addr) (netip.AddrPort, bool, error) {
	v, ok := md.Attribute("rtcp")
	if !ok {
		return netip.AddrPort{}, false, nil
	}
	f := strings.Fields(v)
	if len(f) != 1 && len(f) != 4 {
		return netip.AddrPort{}, true, fmt.Errorf("%w: a=rtcp is neither <port> nor <port> IN <type> <address>", ErrMalformed)
	}
	port, err := strconv.ParseUint(f[0], 10, 16)
	if err != nil || port == 0 {
		return netip.AddrPort{}, true, fmt.Errorf("%w: a=rtcp port", ErrMalformed)
	}
	addr := rtpAddr
	if len(f) == 4 {
		if f[1] != "IN" || (f[2] != "IP4" && f[2] != "IP6") {
			return netip.AddrPort{}, true, fmt.Errorf("%w: a=rtcp network or address type", ErrMalformed)
		}
		if addr, err = parseAddr(f[2], f[3]); err != nil {
			return netip.AddrPort{}, true, err
		}
	}
	return netip.AddrPortFrom(addr, uint16(port)), true, nil
}

// hasAttr tells whether md carries the property attribute key.
func hasAttr(md *pion.MediaDescription, key string) bool {
	_, ok := md.Attribute(key)
	return ok
}

// proto is md's transport protocol as written ("RTP/AVP").
func proto(md *pion.MediaDescription) string {
	return strings.Join(md.MediaName.Protos, "/")
}

// rtpProfile tells whether proto is one we accept.
func rtpProfile(p string) bool { return p == "RTP/AVP" || p == "RTP/AVPF" }
