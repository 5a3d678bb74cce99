package gate

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// fixed is a target that does not depend on the time.
func fixed(target string) func(time.Time) string {
	return func(time.Time) string { return target }
}

// param is the raw value of the parameter name in target's query.
func param(target, name string) string {
	_, q, _ := strings.Cut(target, "?")
	for kv := range strings.SplitSeq(q, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

// replaceParam replaces the raw value of name in target's query.
func replaceParam(target, name, value string) string {
	path, q, _ := strings.Cut(target, "?")
	parts := strings.Split(q, "&")
	for i, kv := range parts {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			parts[i] = k + "=" + value
		}
	}
	return path + "?" + strings.Join(parts, "&")
}

// newRecorderRequest sends GET / from remote with X-Forwarded-For xff
// (none when empty) and returns the status.
func newRecorderRequest(r *rig, remote, xff string) int {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = remote
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w.Code
}
