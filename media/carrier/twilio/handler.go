package twilio

import (
	"net/http"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
)

// counterNames are the handler's counters (Stats).
func counterNames() []string {
	return []string{
		// Requests and calls.
		"requests", "refused", "forbidden", "bad_upgrades", "upgrades", "calls",
		// How calls ended.
		"hangups", "peer_closes", "vanished", "start_timeouts", "too_many_bad", "bad_media_format", "stops",
		"silent_input", "stopped_reading", "no_pong",
		// Inbound messages.
		"connected", "bad_json", "unknown_events", "bad_payload", "oversized", "invalid_utf8", "binary_messages",
		"duplicate_starts", "before_start", "other_tracks", "mark_messages", "dtmf", "dtmf_invalid",
		"frames_in", "in_dropped", "gaps", "gap_frames", "bad_timestamps",
		// Outbound messages and marks.
		"messages_out", "write_errors", "out_full", "stale_frames", "cleared_frames", "clears", "pongs",
		"marks", "mark_echoes", "marks_cleared", "marks_unechoed", "unexpected_mark_echoes",
	}
}

// Handler serves Twilio Media Streams: an http.Handler that upgrades each
// request to a websocket and runs the stream on the request's goroutine
// until it ends.
type Handler struct {
	cfg   Config
	stats *wscall.Counters
	reg   *wscall.Registry
	sig   signatureCheck
}

var _ http.Handler = (*Handler)(nil)

// New makes a handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg.withDefaults(), stats: wscall.NewCounters(counterNames()...)}
	rc := wscall.RegistryConfig{What: "twilio stream", Admit: h.cfg.Admit, Stats: h.stats, Log: h.cfg.Logger}
	if cfg.AuthToken != "" {
		h.sig = signatureCheck{token: []byte(cfg.AuthToken), publicURL: strings.TrimSuffix(cfg.PublicURL, "/")}
		rc.Check = h.checkSignature
	}
	h.reg = wscall.NewRegistry(rc)
	return h, nil
}

// errSignature is the body of the 403 to a request not signed by Twilio.
const errSignature = "missing or invalid " + SignatureHeader + ": the request is not signed with the account's auth token"

// checkSignature refuses a request whose signature is missing or wrong,
// before admission (it takes no slot).
func (h *Handler) checkSignature(r *http.Request) *wscall.Denial {
	if h.sig.valid(r) {
		return nil
	}
	return &wscall.Denial{Status: http.StatusForbidden, Cause: "bad_signature", Message: errSignature}
}

// ServeHTTP upgrades the request and serves the stream until it ends.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.stats.Inc("requests")
	ws, adm, ok := h.reg.Accept(w, r)
	if !ok {
		return
	}
	defer h.reg.Leave()
	// A call that never started gives its slot back; once started, the
	// server frees it when the call ends.
	defer adm.Release()
	id := wscall.NewID("tw")
	core := wscall.NewCore(ws, wscall.Config{ID: id, Rate: Rate, Limits: h.cfg.Limits}, h.stats, h.cfg.Logger)
	c := &Call{core: core, h: h, adm: adm}
	h.reg.Add(core)
	defer h.reg.Remove(core)
	began := time.Now()
	end := core.Run(c.readLoop)
	h.cfg.Logger.Info().Str("call_id", id).Bool("started", c.started).
		Dur("duration", time.Since(began)).Str("reason", end.Error()).Msg("twilio stream ended")
}

// Stats copies the handler's counters (over all its calls).
func (h *Handler) Stats() map[string]uint64 { return h.stats.Snapshot() }

// Live is the number of streams being served.
func (h *Handler) Live() int { return h.reg.Live() }

// Close refuses new streams (HTTP 503, cause "draining"), hangs up the live ones
// (StatusGoingAway) and waits until every stream has ended.
func (h *Handler) Close() { h.reg.Close() }
