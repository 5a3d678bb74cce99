package signal

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/emiago/sipgo/sip"
)

// refresher is who refreshes the session (RFC 4028): the caller (uac) or
// us (uas).
type refresher string

const (
	refresherNone refresher = ""
	refresherUAC  refresher = "uac"
	refresherUAS  refresher = "uas"
)

// maxDelta bounds a delta-seconds value we take (RFC 4028 allows 2^32-1;
// more than a day is treated as a day).
const maxDelta = 86400

// parseSessionExpires parses a Session-Expires value: delta-seconds, then
// parameters of which refresher=uac|uas is read and others ignored.
func parseSessionExpires(v string) (secs uint32, r refresher, err error) {
	delta, params, _ := strings.Cut(v, ";")
	secs, err = parseDelta(delta)
	if err != nil {
		return 0, refresherNone, err
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, val, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "refresher") {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(val)) {
		case "uac":
			r = refresherUAC
		case "uas":
			r = refresherUAS
		default:
			return 0, refresherNone, fmt.Errorf("%w: refresher", ErrBadHeader)
		}
	}
	return secs, r, nil
}

// parseDelta parses delta-seconds (digits around optional white space).
func parseDelta(v string) (uint32, error) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 10 {
		return 0, fmt.Errorf("%w: delta-seconds", ErrBadHeader)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, fmt.Errorf("%w: delta-seconds", ErrBadHeader)
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%w: delta-seconds", ErrBadHeader)
	}
	return uint32(min(n, maxDelta)), nil
}

// parseMinSE parses a Min-SE value: delta-seconds and ignored parameters.
func parseMinSE(v string) (uint32, error) {
	delta, _, _ := strings.Cut(v, ";")
	return parseDelta(delta)
}

// header returns the first value of a header by its name or compact form.
func header(m sip.Message, name, compact string) (string, bool) {
	if hs := m.GetHeaders(name); len(hs) > 0 {
		return hs[0].Value(), true
	}
	if compact != "" {
		if hs := m.GetHeaders(compact); len(hs) > 0 {
			return hs[0].Value(), true
		}
	}
	return "", false
}

// hasToken says whether a comma-separated header (Supported, Allow,
// Require), in any of its occurrences, holds tok (case-insensitive).
func hasToken(m sip.Message, name, compact, tok string) bool {
	for _, n := range []string{name, compact} {
		if n == "" {
			continue
		}
		for _, h := range m.GetHeaders(n) {
			for t := range strings.SplitSeq(h.Value(), ",") {
				if strings.EqualFold(strings.TrimSpace(t), tok) {
					return true
				}
			}
		}
	}
	return false
}
