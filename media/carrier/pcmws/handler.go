package pcmws

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
)

// counterNames are the handler's counters (Stats).
func counterNames() []string {
	return []string{
		// Requests and calls.
		"requests", "refused", "forbidden", "bad_rates", "bad_upgrades", "upgrades", "calls",
		// How calls ended.
		"hangups", "client_hangups", "peer_closes", "vanished", "too_many_bad",
		"silent_input", "stopped_reading", "no_pong",
		// Inbound messages.
		"bad_json", "unknown_controls", "odd_length", "oversized", "invalid_utf8", "mark_messages",
		"frames_in", "in_dropped", "gap_frames",
		// Outbound messages and marks.
		"messages_out", "write_errors", "out_full", "stale_frames", "cleared_frames", "clears", "events_out",
		"pongs", "error_replies", "errors_unsent",
		"marks", "mark_echoes", "marks_cleared", "marks_unechoed", "unexpected_mark_echoes",
		// Unused by this protocol, registered so the core's counts show.
		"start_timeouts",
	}
}

// Handler serves PCM websocket calls: an http.Handler that upgrades each
// request to a websocket and runs the call on the request's goroutine
// until it ends.
type Handler struct {
	cfg     Config
	stats   *wscall.Counters
	reg     *wscall.Registry
	origins []string // AllowedOrigins, canonical
}

var _ http.Handler = (*Handler)(nil)

// New makes a handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg.withDefaults(), stats: wscall.NewCounters(counterNames()...)}
	var patterns []string
	for _, o := range cfg.AllowedOrigins {
		canon, _ := parseOrigin(o) // Validate checked it
		h.origins = append(h.origins, canon)
		patterns = append(patterns, escapePattern(canon))
	}
	h.reg = wscall.NewRegistry(wscall.RegistryConfig{
		What: "pcm websocket", Admit: h.cfg.Admit, Check: h.checkOrigin, OriginPatterns: patterns,
		Stats: h.stats, Log: h.cfg.Logger,
	})
	return h, nil
}

// errOrigin is the body of the 403 to a page of another origin.
const errOrigin = "this page's origin may not open pcm calls: the server's pcm AllowedOrigins setting lists the origins that may"

// checkOrigin refuses a browser's request from a page of an origin that
// is neither the server's own nor listed in AllowedOrigins (scheme,
// host and port must match). The websocket accept checks it again with
// the same origins as its patterns; this check comes first so that the
// 403 names the setting, and before admission, so it takes no slot.
func (h *Handler) checkOrigin(r *http.Request) *wscall.Denial {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil // not a browser
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" {
		if strings.EqualFold(u.Host, r.Host) {
			return nil // the server's own page, as the accept's own rule
		}
		if slices.Contains(h.origins, strings.ToLower(u.Scheme+"://"+u.Host)) {
			return nil
		}
	}
	return &wscall.Denial{Status: http.StatusForbidden, Cause: "origin", Message: errOrigin}
}

// escapePattern quotes the pattern characters of path.Match (an IPv6
// host has brackets), so that an origin matches only itself.
func escapePattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ServeHTTP checks the rate, upgrades the request and serves the call
// until it ends.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.stats.Inc("requests")
	query := r.URL.Query()
	rate, err := parseRate(query.Get("rate"))
	if err != nil {
		h.stats.Inc("bad_rates")
		http.Error(w, "rate must be 8000, 16000, 24000 or 48000", http.StatusBadRequest)
		return
	}
	ws, adm, ok := h.reg.Accept(w, r)
	if !ok {
		return
	}
	defer h.reg.Leave()
	// A call that never started gives its slot back; once started, the
	// server frees it when the call ends.
	defer adm.Release()
	id := wscall.NewID("pw")
	core := wscall.NewCore(ws, wscall.Config{ID: id, Rate: rate, Limits: h.cfg.Limits}, h.stats, h.cfg.Logger)
	c := &Call{core: core, h: h, rate: rate, query: query, adm: adm}
	h.reg.Add(core)
	defer h.reg.Remove(core)
	began := time.Now()
	end := core.Run(c.readLoop)
	h.cfg.Logger.Info().Str("call_id", id).Dur("duration", time.Since(began)).
		Str("reason", end.Error()).Msg("pcm websocket call ended")
}

// Stats copies the handler's counters (over all its calls).
func (h *Handler) Stats() map[string]uint64 { return h.stats.Snapshot() }

// Live is the number of calls being served.
func (h *Handler) Live() int { return h.reg.Live() }

// Close refuses new calls (HTTP 503, cause "draining"), hangs up the
// live ones (StatusGoingAway) and waits until every call has ended.
func (h *Handler) Close() { h.reg.Close() }
