package trunk

import (
	"net/netip"
	"time"
)

// Verdict is the read filter's answer for one datagram or chunk: Pass, or
// a drop and its cause. A dropped message gets no answer.
type Verdict uint8

// The verdicts.
const (
	// Pass: parse and handle the message.
	Pass Verdict = iota
	// DropNotAllowed: the source is outside the allowlist.
	DropNotAllowed
	// DropRateLimited: the source overflowed its bucket with this
	// message and is blocked from now on.
	DropRateLimited
	// DropBlocked: the source is blocked.
	DropBlocked
	// DropScanner: a User-Agent names a known scanner.
	DropScanner
	// DropOversize: the datagram is larger than Config.MaxMessageBytes.
	DropOversize

	numVerdicts
)

var verdictNames = [numVerdicts]string{"pass", "not_allowed", "rate_limited", "blocked", "scanner", "oversize"}

// String is the verdict's cause as a metric label ("pass" for Pass).
func (v Verdict) String() string {
	if v < numVerdicts {
		return verdictNames[v]
	}
	return "unknown"
}

// Drop reports whether the message must be dropped.
func (v Verdict) Drop() bool { return v != Pass }

// statKey is the verdict's counter in Stats.
func (v Verdict) statKey() string {
	if v == Pass {
		return "passed"
	}
	return "drop_" + v.String()
}

// Filter decides on one datagram from src before it is parsed (see the
// package doc for the checks and their order).
func (p *Policy) Filter(src netip.AddrPort, data []byte, now time.Time) Verdict {
	return p.count(p.filter(src, data, now, false))
}

// FilterStream decides on one chunk read from a stream connection (TCP,
// TLS) from src: like Filter, but each message starting in the chunk
// takes a token and the chunk's size is not bounded. A drop means the
// connection should be closed.
func (p *Policy) FilterStream(src netip.AddrPort, data []byte, now time.Time) Verdict {
	return p.count(p.filter(src, data, now, true))
}

func (p *Policy) count(v Verdict) Verdict {
	p.verdicts[v].Add(1)
	return v
}

func (p *Policy) filter(src netip.AddrPort, data []byte, now time.Time, stream bool) Verdict {
	a := src.Addr().Unmap().WithZone("")
	if !p.allowed(a) {
		return DropNotAllowed
	}
	msgs, scanner := 1, false
	if stream {
		msgs, scanner = p.scan.scan(data, true)
		msgs = max(msgs, 1)
	}
	// An oversize datagram is charged all the same: a flood of big
	// datagrams is a flood.
	if v := p.charge(p.key(a), msgs, now); v != Pass {
		return v
	}
	if !stream {
		if len(data) > p.cfg.MaxMessageBytes {
			return DropOversize
		}
		_, scanner = p.scan.scan(data, false)
	}
	if scanner {
		return DropScanner
	}
	return Pass
}

// charge takes n tokens from the bucket of key.
func (p *Policy) charge(key netip.Addr, n int, now time.Time) Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sources.get(key, now, float64(p.cfg.Burst))
	s.refill(now, p.cfg.Rate, float64(p.cfg.Burst))
	blocked := now.Before(s.blockedUntil)
	if s.tokens >= float64(n) {
		s.tokens -= float64(n)
		if blocked {
			return DropBlocked
		}
		return Pass
	}
	// Overflow: silenced for BlockFor from now, a block renewed while
	// the flood goes on.
	s.blockedUntil = now.Add(p.cfg.BlockFor)
	if blocked {
		return DropBlocked
	}
	p.blocks.Add(1)
	return DropRateLimited
}
