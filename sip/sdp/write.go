package sdp

import (
	"net/netip"
	"strconv"
	"time"
)

// ourFormat is one payload format of an m-line of ours.
type ourFormat struct {
	pt       uint8
	name     string
	clock    int
	channels int    // 0: not written
	fmtp     string // "": no a=fmtp
}

// ourMedia is one m-line of ours. A rejected one (port 0) writes only its
// m= line, with the offer's media, protocol and formats (RFC 3264 §6).
type ourMedia struct {
	media     string
	port      int
	proto     string
	rejected  []string // the formats of a rejected m-line
	formats   []ourFormat
	ptime     time.Duration
	rtcpMux   bool
	rtcpPort  int // 0: no a=rtcp (RTCP on port+1, or muxed)
	direction Direction
}

// appendSessionBody writes everything of our description after o=: s=,
// c=, t= and the media. Its bytes decide whether our SDP changed (RFC 3264
// §8: the version moves only then).
func appendSessionBody(b []byte, name string, addr netip.Addr, media []ourMedia) []byte {
	b = append(b, "s="...)
	b = append(b, name...)
	b = append(b, "\r\nc=IN "...)
	b = appendAddr(b, addr)
	b = append(b, "\r\nt=0 0\r\n"...)
	for i := range media {
		b = appendMedia(b, &media[i])
	}
	return b
}

// appendHead writes v= and o=.
func appendHead(b []byte, id, version uint64, addr netip.Addr) []byte {
	b = append(b, "v=0\r\no=- "...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, version, 10)
	b = append(b, " IN "...)
	b = appendAddr(b, addr)
	return append(b, "\r\n"...)
}

// appendAddr writes "<addrtype> <address>".
func appendAddr(b []byte, a netip.Addr) []byte {
	if a.Is4() {
		b = append(b, "IP4 "...)
	} else {
		b = append(b, "IP6 "...)
	}
	return a.AppendTo(b)
}

func appendMedia(b []byte, m *ourMedia) []byte {
	b = append(b, "m="...)
	b = append(b, m.media...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(m.port), 10)
	b = append(b, ' ')
	b = append(b, m.proto...)
	if m.port == 0 {
		for _, f := range m.rejected {
			b = append(b, ' ')
			b = append(b, f...)
		}
		return append(b, "\r\n"...)
	}
	for _, f := range m.formats {
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(f.pt), 10)
	}
	b = append(b, "\r\n"...)
	for _, f := range m.formats {
		b = append(b, "a=rtpmap:"...)
		b = strconv.AppendUint(b, uint64(f.pt), 10)
		b = append(b, ' ')
		b = append(b, f.name...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(f.clock), 10)
		if f.channels > 0 {
			b = append(b, '/')
			b = strconv.AppendInt(b, int64(f.channels), 10)
		}
		b = append(b, "\r\n"...)
		if f.fmtp != "" {
			b = append(b, "a=fmtp:"...)
			b = strconv.AppendUint(b, uint64(f.pt), 10)
			b = append(b, ' ')
			b = append(b, f.fmtp...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "a=ptime:"...)
	b = strconv.AppendInt(b, m.ptime.Milliseconds(), 10)
	b = append(b, "\r\na=maxptime:"...)
	b = strconv.AppendInt(b, MaxPtime.Milliseconds(), 10)
	b = append(b, "\r\n"...)
	if m.rtcpPort != 0 {
		b = append(b, "a=rtcp:"...)
		b = strconv.AppendInt(b, int64(m.rtcpPort), 10)
		b = append(b, "\r\n"...)
	}
	if m.rtcpMux {
		b = append(b, "a=rtcp-mux\r\n"...)
	}
	b = append(b, "a="...)
	b = append(b, m.direction.String()...)
	return append(b, "\r\n"...)
}
