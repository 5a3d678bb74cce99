package webrtc

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// corsMaxAge is how long a browser may cache a preflight answer (seconds).
const corsMaxAge = "600"

// normalOrigin is an allowed origin as a browser serializes it: scheme and
// host in lower case, the scheme's default port left out, nothing else.
func normalOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return "", errors.New("not a url")
	case u.Scheme != "https" && u.Scheme != "http":
		return "", errors.New("want https://host[:port]")
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return "", errors.New("want scheme://host[:port] and nothing more")
	case strings.ContainsAny(u.Hostname(), "*?[]"):
		return "", errors.New("patterns are not accepted: list each origin")
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return u.Scheme + "://" + host, nil
}

// normalOrigins normalizes AllowedOrigins (Validate checked them).
func normalOrigins(list []string) []string {
	out := make([]string, 0, len(list))
	for _, o := range list {
		if n, err := normalOrigin(o); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// checkOrigin says whether r may call: no Origin (not a browser), the
// server's own host, or a listed origin. cross is the listed origin to
// echo in Access-Control-Allow-Origin ("" for the first two).
func (s *Server) checkOrigin(r *http.Request) (cross string, err error) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "", nil
	}
	if u, perr := url.Parse(origin); perr == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return "", nil
	}
	if n, nerr := normalOrigin(origin); nerr == nil && slices.Contains(s.origins, n) {
		return n, nil
	}
	return "", fmt.Errorf("%w: a page from another origin may call only when the webrtc transport's AllowedOrigins lists it", ErrOrigin)
}

// allowCORS adds the headers of a cross-origin answer for origin: the
// page may read it, Retry-After of a refusal included (not a header a
// browser shows a script unless told).
func allowCORS(w http.ResponseWriter, origin string) {
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", "Retry-After")
	}
}

// servePreflight answers a CORS preflight of POST /offer: 204 for a listed
// origin (or the server's own), 403 otherwise.
func (s *Server) servePreflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Origin")
	cross, err := s.checkOrigin(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	allowCORS(w, cross)
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
}
