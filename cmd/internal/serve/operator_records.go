package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/messages"
)

// RecordKeeper is what the operator API's records routes need of the
// node's call records (records.Service and its Store) and of its call
// recorder (recording.Recorder). RecordParts joins the two.
type RecordKeeper interface {
	// List, Get and Audit read the store (records.Store's).
	List(ctx context.Context, q records.Query) ([]records.Summary, error)
	Get(ctx context.Context, callID string) (*records.Record, error)
	Audit(ctx context.Context) ([]records.AuditEntry, error)
	// Erase erases the records e selects, their recordings with them,
	// and audits it (records.Service's).
	Erase(ctx context.Context, e records.Erasure) (records.ErasureResult, error)
	// HashNumber is a caller number's hash as records keep it
	// (records.Service's), so a filter or an erasure by number reaches
	// the store as its hash only.
	HashNumber(n string) string
	// OpenRecording opens a recording by its Recording.Key (ErrNoRecording
	// when recordings are off; records.ErrNotFound or fs.ErrNotExist when
	// its file is gone).
	OpenRecording(key string) (io.ReadSeekCloser, error)
	// Pause and Resume pause a live call's recording (silence is
	// written) and resume it; any error means no live recording of it
	// here (recording.ErrNoCall).
	Pause(callID string) error
	Resume(callID string) error
}

// ErrNoRecording: the call has no recording (none was made, it was
// removed, or the call is not being recorded now).
var ErrNoRecording = errors.New("serve: no recording")

// numbersNotKept answers a filter or erasure by number on a node whose
// numbers policy is drop (no key to hash with, nothing to find).
const numbersNotKept = "this node keeps no numbers (its [records] numbers policy is drop): there is nothing to find by caller"

// RecordService is what RecordParts needs of records.Service.
type RecordService interface {
	Erase(ctx context.Context, e records.Erasure) (records.ErasureResult, error)
	HashNumber(n string) string
}

// Recorder is what RecordParts needs of recording.Recorder.
type Recorder interface {
	Open(key string) (io.ReadSeekCloser, error)
	Pause(callID string) error
	Resume(callID string) error
}

// RecordParts is a RecordKeeper made of the records service, its store
// and the recorder (nil when recordings are off):
// serve.RecordParts{Store: svc.Store(), Service: svc, Recorder: rec}.
type RecordParts struct {
	Store    records.Store
	Service  RecordService
	Recorder Recorder
	// Webhooks, when set, lists the webhooks' failed deliveries
	// (webhook.Sender.Failures) for GET /operator/webhooks.
	Webhooks func() any
}

// WebhookFailures is the webhooks' failed deliveries (nil: no webhooks).
func (p RecordParts) WebhookFailures() any {
	if p.Webhooks == nil {
		return nil
	}
	return p.Webhooks()
}

var _ RecordKeeper = RecordParts{}

func (p RecordParts) List(ctx context.Context, q records.Query) ([]records.Summary, error) {
	return p.Store.List(ctx, q)
}

func (p RecordParts) Get(ctx context.Context, id string) (*records.Record, error) {
	return p.Store.Get(ctx, id)
}

func (p RecordParts) Audit(ctx context.Context) ([]records.AuditEntry, error) {
	return p.Store.Audit(ctx)
}

func (p RecordParts) Erase(ctx context.Context, e records.Erasure) (records.ErasureResult, error) {
	return p.Service.Erase(ctx, e)
}

func (p RecordParts) HashNumber(n string) string { return p.Service.HashNumber(n) }

func (p RecordParts) OpenRecording(key string) (io.ReadSeekCloser, error) {
	if p.Recorder == nil {
		return nil, fmt.Errorf("%w: recordings are off on this node", ErrNoRecording)
	}
	return p.Recorder.Open(key)
}

func (p RecordParts) Pause(id string) error {
	if p.Recorder == nil {
		return fmt.Errorf("%w: recordings are off on this node", ErrNoRecording)
	}
	return p.Recorder.Pause(id)
}

func (p RecordParts) Resume(id string) error {
	if p.Recorder == nil {
		return fmt.Errorf("%w: recordings are off on this node", ErrNoRecording)
	}
	return p.Recorder.Resume(id)
}

// recordsTimeout bounds a records request's wait for the store.
const recordsTimeout = 30 * time.Second

// maxErasureBody bounds an erasure request's body.
const maxErasureBody = 4 << 10

// maxFilter bounds a text filter (agent, end reason, node, transport,
// a caller number or hash).
const maxFilter = 200

// recordsAPI is the records routes over a keeper (nil: the node keeps no
// records, and each route says so).
type recordsAPI struct {
	keeper RecordKeeper
	node   string
	s      *Server
}

// mountRecords mounts the call records' routes (docs/OPERATIONS.md, "Call
// records"), each behind auth:
//
//	GET    /operator/records?from=&to=&agent=&end_reason=&caller=&caller_hash=&node=&transport=&limit=&before=
//	                                          {"node", "records": [Summary], "next"}
//	GET    /operator/records/{id}             {"record": Record}
//	GET    /operator/records/{id}/recording   the audio (Range supported)
//	POST   /operator/records/{id}/recording/pause, .../resume   a live call's
//	DELETE /operator/records/{id}             {"reason"} -> {"erased", "recordings"}
//	POST   /operator/erasures                 {"caller" | "caller_hash", "reason"}
//	GET    /operator/erasures                 {"erasures": [AuditEntry]}
//
// A bad filter is 400 saying which, an unknown record 404. A caller's
// number is hashed before it reaches the store and is never logged or
// echoed.
func (s *Server) mountRecords(auth func(http.HandlerFunc) http.HandlerFunc) {
	a := &recordsAPI{keeper: s.cfg.Records, node: s.cfg.Node, s: s}
	s.mux.HandleFunc("GET /operator/records", auth(a.on(a.list)))
	s.mux.HandleFunc("GET /operator/records/{id}", auth(a.on(a.get)))
	s.mux.HandleFunc("GET /operator/records/{id}/recording", auth(a.on(a.recording)))
	s.mux.HandleFunc("POST /operator/records/{id}/recording/pause", auth(a.on(a.pause)))
	s.mux.HandleFunc("POST /operator/records/{id}/recording/resume", auth(a.on(a.resume)))
	s.mux.HandleFunc("DELETE /operator/records/{id}", auth(a.on(a.eraseCall)))
	s.mux.HandleFunc("POST /operator/erasures", auth(a.on(a.eraseCaller)))
	s.mux.HandleFunc("GET /operator/erasures", auth(a.on(a.audit)))
	s.mux.HandleFunc("GET /operator/webhooks", auth(a.on(a.webhooks)))
}

// WebhookReporter is a RecordKeeper that also reports the end-of-call
// webhooks' deliveries given up or refused (webhook.Sender.Failures: the
// call id, the URL's host, the attempts, the last status or error class;
// never a body or a path).
type WebhookReporter interface {
	WebhookFailures() any
}

// webhooks answers GET /operator/webhooks: {"node", "failures": [...]},
// 501 when the node sends no webhooks.
func (a *recordsAPI) webhooks(w http.ResponseWriter, _ *http.Request) {
	wr, ok := a.keeper.(WebhookReporter)
	var failures any
	if ok {
		failures = wr.WebhookFailures()
	}
	if failures == nil {
		writeJSON(w, http.StatusNotImplemented, map[string]string{"error": "this node sends no end-of-call webhooks ([records] webhooks)"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"node": a.node, "failures": failures})
}

// on answers 501 for every route when the node keeps no records.
func (a *recordsAPI) on(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.keeper == nil {
			writeJSON(w, http.StatusNotImplemented, map[string]string{"error": "this node keeps no call records (brisvox serve's records settings turn them on)"})
			return
		}
		h(w, r)
	}
}

// badQuery is a 400 with what was wrong.
type badQuery struct{ msg string }

func (e badQuery) Error() string { return e.msg }

// recordsError answers a records request that failed. The store's own
// error text is logged, not sent: it may name paths or hosts; the
// operator gets what to do.
func (a *recordsAPI) recordsError(w http.ResponseWriter, r *http.Request, id string, err error) {
	var bq badQuery
	switch {
	case errors.As(err, &bq):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": bq.msg})
	case errors.Is(err, records.ErrInvalidQuery):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
	case errors.Is(err, fs.ErrNotExist):
		writeJSON(w, http.StatusGone, map[string]string{"error": fmt.Sprintf("call %q: its recording's file is gone", id), "recording": "gone"})
	case errors.Is(err, records.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no call record %q (it never ended here, or was erased)", id)})
	case errors.Is(err, ErrNoRecording):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("call %q: %v", id, err), "recording": "none"})
	case errors.Is(err, records.ErrUnavailable), errors.Is(err, records.ErrClosed), errors.Is(err, context.DeadlineExceeded):
		a.s.log.Warn().Err(err).Str("call_id", id).Str("route", r.Pattern).Msg("operator records: the store did not answer")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the records database is unavailable now; try again (the node's log says why)"})
	default:
		a.s.log.Error().Err(err).Str("call_id", id).Str("route", r.Pattern).Msg("operator records: request failed")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "the records request failed (the node's log says why)"})
	}
}

// parseQuery reads a list's filters. A caller number is hashed here; it
// appears in no error.
func (a *recordsAPI) parseQuery(v url.Values) (records.Query, error) {
	var q records.Query
	for k := range v {
		switch k {
		case "from", "to", "agent", "end_reason", "caller", "caller_hash", "node", "transport", "limit", "before":
		default:
			return q, badQuery{fmt.Sprintf("unknown filter %q (want from, to, agent, end_reason, caller, caller_hash, node, transport, limit, before)", clip(k))}
		}
		if len(v[k]) > 1 {
			return q, badQuery{fmt.Sprintf("filter %q given %d times", k, len(v[k]))}
		}
	}
	var err error
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if s := v.Get(f.name); s != "" {
			if *f.to, err = time.Parse(time.RFC3339Nano, s); err != nil {
				return q, badQuery{fmt.Sprintf("%s=%q is not an RFC 3339 time like 2026-12-03T17:00:00Z", f.name, clip(s))}
			}
		}
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return q, badQuery{"from must be before to"}
	}
	for _, f := range []struct {
		name string
		to   *string
	}{{"agent", &q.Agent}, {"end_reason", &q.EndReason}, {"node", &q.Node}, {"transport", &q.Transport}} {
		s := v.Get(f.name)
		if err := checkText(f.name, s); err != nil {
			return q, err
		}
		*f.to = s
	}
	caller, hash := v.Get("caller"), v.Get("caller_hash")
	switch {
	case caller != "" && hash != "":
		return q, badQuery{"give caller or caller_hash, not both"}
	case caller != "":
		if err := checkNumber(caller); err != nil {
			return q, err
		}
		if q.CallerHash = a.keeper.HashNumber(caller); q.CallerHash == "" {
			// No key: the node keeps no numbers. An empty hash would
			// select every call.
			return q, badQuery{numbersNotKept}
		}
	case hash != "":
		if q.CallerHash, err = checkHash(hash); err != nil {
			return q, err
		}
	}
	q.Limit = 100
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			return q, badQuery{fmt.Sprintf("limit=%q: want a whole number from 1 to 10000", clip(s))}
		}
		q.Limit = n
	}
	if s := v.Get("before"); s != "" {
		c, err := decodeCursor(s)
		if err != nil {
			return q, badQuery{"before=: not a cursor this API gave (use the list's next)"}
		}
		q.Before = &c
	}
	return q, nil
}

// checkText refuses a filter that is too long or holds control runes.
func checkText(name, s string) error {
	if len(s) > maxFilter || strings.ContainsFunc(s, unicode.IsControl) {
		return badQuery{fmt.Sprintf("%s: want at most %d characters and no control character", name, maxFilter)}
	}
	return nil
}

// checkNumber refuses a caller number that cannot be one; the error does
// not repeat it.
func checkNumber(n string) error {
	if strings.TrimSpace(n) == "" || len(n) > 64 || strings.ContainsFunc(n, unicode.IsControl) {
		return badQuery{"caller: want a phone number or SIP user of at most 64 characters"}
	}
	return nil
}

// checkHash reads a caller's hash (hex), lower-cased.
func checkHash(h string) (string, error) {
	h = strings.ToLower(h)
	if len(h) < 16 || len(h) > 128 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", badQuery{"caller_hash: want the hex hash a record shows (caller.hash)"}
	}
	return h, nil
}

// clip bounds an echoed value and makes it printable.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// encodeCursor makes a list's next: the last summary's place, opaque.
func encodeCursor(c records.Cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (records.Cursor, error) {
	var c records.Cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, err
	}
	if c.Started.IsZero() || c.CallID == "" {
		return c, errors.New("empty cursor")
	}
	return c, nil
}

func (a *recordsAPI) list(w http.ResponseWriter, r *http.Request) {
	q, err := a.parseQuery(r.URL.Query())
	if err != nil {
		a.recordsError(w, r, "", err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), recordsTimeout)
	defer cancel()
	sums, err := a.keeper.List(ctx, q)
	if err != nil {
		a.recordsError(w, r, "", err)
		return
	}
	if sums == nil {
		sums = []records.Summary{}
	}
	out := map[string]any{"node": a.node, "records": sums}
	if len(sums) == q.Limit {
		last := sums[len(sums)-1]
		out["next"] = encodeCursor(records.Cursor{Started: last.Started, CallID: last.CallID})
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *recordsAPI) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), recordsTimeout)
	defer cancel()
	rec, err := a.keeper.Get(ctx, id)
	if err != nil {
		a.recordsError(w, r, id, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"record": rec})
}

// recording serves a call's audio with http.ServeContent: Range and
// If-Modified-Since as for a file.
func (a *recordsAPI) recording(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithTimeout(r.Context(), recordsTimeout)
	rec, err := a.keeper.Get(ctx, id)
	cancel()
	switch {
	case err != nil:
		a.recordsError(w, r, id, err)
		return
	case rec.Recording == nil:
		a.recordsError(w, r, id, fmt.Errorf("%w: it was not recorded", ErrNoRecording))
		return
	case rec.Recording.Removed:
		writeJSON(w, http.StatusGone, map[string]string{"error": fmt.Sprintf("call %q: its recording was removed (retention or erasure)", id), "recording": "removed"})
		return
	}
	f, err := a.keeper.OpenRecording(rec.Recording.Key)
	if errors.Is(err, records.ErrNotFound) {
		// The recorder's word for a file that is not there: the record
		// exists, its audio does not.
		err = fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	if err != nil {
		a.recordsError(w, r, id, err)
		return
	}
	defer f.Close()
	ctype, ext := "audio/wav", "wav"
	if rec.Recording.Format == "ogg" {
		ctype, ext = "audio/ogg", "ogg"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", safeName(id)+"."+ext))
	a.s.count("operator_recordings_served")
	http.ServeContent(w, r, "", rec.Ended, f)
}

// safeName keeps a call id's letters, digits, '-', '_' and '.' for a
// file name.
func safeName(id string) string {
	s := strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return r
		}
		return '_'
	}, id)
	if len(s) > 80 {
		s = s[:80]
	}
	return "call-" + s
}

func (a *recordsAPI) pause(w http.ResponseWriter, r *http.Request) {
	a.pauseOrResume(w, r, true)
}

func (a *recordsAPI) resume(w http.ResponseWriter, r *http.Request) {
	a.pauseOrResume(w, r, false)
}

// pauseOrResume pauses or resumes a live call's recording where the call
// is: here, or on the fleet's node that holds it (routed like a restart).
// A call live nowhere is asked of this node's recorder, which knows none.
func (a *recordsAPI) pauseOrResume(w http.ResponseWriter, r *http.Request, pause bool) {
	id := messages.CallID(r.PathValue("id"))
	what := "resumed"
	if pause {
		what = "paused"
	}
	if !a.s.isLocal(id) {
		if f, node, ferr := a.s.remoteCall(id); ferr == nil {
			ctx, cancel := fleetContext(r.Context())
			err := f.PauseRecording(ctx, node, id, pause)
			cancel()
			switch {
			case errors.Is(err, ErrNoRecording):
				a.recordsError(w, r, string(id), err)
			case err != nil:
				operatorError(w, err)
			default:
				a.s.log.Info().Str("call_id", string(id)).Str("node", node).Str("recording", what).Msg("operator recording " + what + " on another node")
				writeJSON(w, http.StatusOK, map[string]any{"call": id, "recording": what, "node": node})
			}
			return
		}
	}
	if err := a.s.SetRecordingPaused(id, pause); err != nil {
		a.recordsError(w, r, string(id), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"call": id, "recording": what, "node": a.node})
}

// SetRecordingPaused pauses (or, pause false, resumes) the recording of a
// live call on this node for an operator: silence is written on both
// channels until it is resumed. ErrNoRecording when this node records no
// such call (or keeps no records). The fleet's operator actor calls it
// for the other nodes; the recording tools use PauseRecording.
func (s *Server) SetRecordingPaused(id messages.CallID, pause bool) error {
	if err := s.setRecording(id, pause); err != nil {
		return err
	}
	what := "resumed"
	if pause {
		what = "paused"
	}
	s.log.Info().Str("call_id", string(id)).Str("recording", what).Msg("operator recording " + what)
	return nil
}

// erasureBody is an erasure request's body.
type erasureBody struct {
	Caller     string `json:"caller"`
	CallerHash string `json:"caller_hash"`
	Reason     string `json:"reason"`
}

// readErasure reads an erasure's JSON body (empty: no reason).
func readErasure(r *http.Request) (erasureBody, error) {
	var b erasureBody
	data, err := io.ReadAll(io.LimitReader(r.Body, maxErasureBody+1))
	if err != nil {
		return b, badQuery{"the request's body could not be read"}
	}
	if len(data) > maxErasureBody {
		return b, badQuery{fmt.Sprintf("the body is longer than %d bytes", maxErasureBody)}
	}
	if strings.TrimSpace(string(data)) == "" {
		return b, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, badQuery{`the body is not {"caller" or "caller_hash", "reason"} JSON`}
	}
	if len(b.Reason) > 1000 {
		return b, badQuery{"reason: want at most 1000 characters"}
	}
	return b, nil
}

// eraseCall erases one call's record (and recording), audited.
func (a *recordsAPI) eraseCall(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b, err := readErasure(r)
	if err == nil && (b.Caller != "" || b.CallerHash != "") {
		err = badQuery{"DELETE /operator/records/{id} erases that call: to erase a caller's calls, POST /operator/erasures"}
	}
	if err != nil {
		a.recordsError(w, r, id, err)
		return
	}
	a.erase(w, r, records.Erasure{CallID: id, Reason: b.Reason}, id)
}

// eraseCaller erases every call of one caller, by number (hashed here)
// or hash, audited.
func (a *recordsAPI) eraseCaller(w http.ResponseWriter, r *http.Request) {
	b, err := readErasure(r)
	if err != nil {
		a.recordsError(w, r, "", err)
		return
	}
	e := records.Erasure{Reason: b.Reason}
	switch {
	case b.Caller != "" && b.CallerHash != "":
		err = badQuery{"give caller or caller_hash, not both"}
	case b.Caller != "":
		if err = checkNumber(b.Caller); err == nil {
			if e.CallerHash = a.keeper.HashNumber(b.Caller); e.CallerHash == "" {
				err = badQuery{numbersNotKept}
			}
		}
	case b.CallerHash != "":
		e.CallerHash, err = checkHash(b.CallerHash)
	default:
		err = badQuery{`an erasure needs "caller" (a number) or "caller_hash"; to erase one call, DELETE /operator/records/{id}`}
	}
	if err != nil {
		a.recordsError(w, r, "", err)
		return
	}
	a.erase(w, r, e, "")
}

func (a *recordsAPI) erase(w http.ResponseWriter, r *http.Request, e records.Erasure, id string) {
	e.By, e.At = "operator", time.Now().UTC()
	ctx, cancel := context.WithTimeout(r.Context(), recordsTimeout)
	defer cancel()
	res, err := a.keeper.Erase(ctx, e)
	if err != nil {
		a.recordsError(w, r, id, err)
		return
	}
	if e.CallID != "" && res.Erased == 0 {
		a.recordsError(w, r, id, records.ErrNotFound)
		return
	}
	a.s.count("operator_erasures")
	// The selector (a call id or a caller's hash) and the count; never a
	// number or the reason's words.
	a.s.log.Info().Str("call_id", e.CallID).Str("caller_hash", e.CallerHash).Int("erased", res.Erased).Msg("operator erased call records")
	out := map[string]any{"erased": res.Erased, "recordings": len(res.Recordings)}
	if e.CallID != "" {
		out["call_id"] = e.CallID
	} else {
		out["caller_hash"] = e.CallerHash
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *recordsAPI) audit(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), recordsTimeout)
	defer cancel()
	es, err := a.keeper.Audit(ctx)
	if err != nil {
		a.recordsError(w, r, "", err)
		return
	}
	if es == nil {
		es = []records.AuditEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"erasures": es})
}
