package opclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The call records' errors (GET /operator/records and the routes under
// it; docs/OPERATIONS.md, "Call records").
var (
	// ErrUnknownRecord: no record of that call (404): it has not ended,
	// ended on a node whose records are elsewhere, or was erased.
	ErrUnknownRecord = errors.New("opclient: no such call record")
	// ErrNoRecording: the call has no recording to play or pause (none
	// was made, it was removed, or the call is not being recorded).
	ErrNoRecording = errors.New("opclient: no recording")
	// ErrInvalidQuery: the server refused a filter or an erasure's
	// selector (400); the error says which.
	ErrInvalidQuery = errors.New("opclient: invalid records query")
	// ErrRecordsOff: the node keeps no call records (501).
	ErrRecordsOff = errors.New("opclient: the node keeps no call records")
)

// RecordSummary is a call record as the list shows it.
type RecordSummary struct {
	CallID     string    `json:"call_id"`
	Node       string    `json:"node"`
	Transport  string    `json:"transport"`
	Direction  string    `json:"direction"`
	Agent      string    `json:"agent"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended"`
	EndReason  string    `json:"end_reason"`
	Turns      int       `json:"turns"`
	Tools      int       `json:"tools"`
	CallerHash string    `json:"caller_hash,omitempty"`
	Recording  bool      `json:"recording,omitempty"`
}

// RecordList answers Records: one page, newest first; Next, when set,
// is the Before of the page after it.
type RecordList struct {
	Node    string          `json:"node"`
	Records []RecordSummary `json:"records"`
	Next    string          `json:"next,omitempty"`
	raw     json.RawMessage
}

// JSON is the server's answer as it came.
func (l *RecordList) JSON() json.RawMessage { return l.raw }

// RecordFilter selects records; zero fields select everything.
type RecordFilter struct {
	// From and To bound the call's start: From <= started < To.
	From, To  time.Time
	Agent     string
	EndReason string
	// Caller is a number the server hashes with the deployment's key;
	// CallerHash the hash a record shows. At most one.
	Caller, CallerHash string
	Node, Transport    string
	// Limit is the page's size (the server's default 100, at most
	// 10 000); Before a RecordList's Next.
	Limit  int
	Before string
}

func (f RecordFilter) values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.From.IsZero() {
		q.Set("from", f.From.UTC().Format(time.RFC3339Nano))
	}
	if !f.To.IsZero() {
		q.Set("to", f.To.UTC().Format(time.RFC3339Nano))
	}
	set("agent", f.Agent)
	set("end_reason", f.EndReason)
	set("caller", f.Caller)
	set("caller_hash", f.CallerHash)
	set("node", f.Node)
	set("transport", f.Transport)
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	set("before", f.Before)
	return q
}

// Record is a call's record (records.Record's JSON).
type Record struct {
	Version           int            `json:"version"`
	CallID            string         `json:"call_id"`
	Node              string         `json:"node"`
	Transport         string         `json:"transport"`
	Direction         string         `json:"direction"`
	Trunk             string         `json:"trunk,omitempty"`
	Agent             string         `json:"agent"`
	AgentDigest       string         `json:"agent_digest,omitempty"`
	Caller            Party          `json:"caller,omitzero"`
	Callee            Party          `json:"callee,omitzero"`
	Started           time.Time      `json:"started"`
	Answered          time.Time      `json:"answered,omitzero"`
	Ended             time.Time      `json:"ended"`
	EndReason         string         `json:"end_reason"`
	GaveUp            string         `json:"gave_up,omitempty"`
	Turns             []Turn         `json:"turns"`
	BargeIns          int            `json:"barge_ins"`
	Transcript        []Line         `json:"transcript"`
	TranscriptRemoved bool           `json:"transcript_removed,omitempty"`
	Tools             []ToolCall     `json:"tools"`
	ToolDataRemoved   bool           `json:"tool_data_removed,omitempty"`
	Usage             []Usage        `json:"usage"`
	Failures          []Failure      `json:"failures"`
	Restarts          map[string]int `json:"restarts,omitempty"`
	Failovers         []Failover     `json:"failovers,omitempty"`
	Recording         *Recording     `json:"recording,omitempty"`
	TraceID           string         `json:"trace_id,omitempty"`
	Redactions        map[string]int `json:"redactions,omitempty"`
}

// Party is a caller or callee as the numbers policy kept it.
type Party struct {
	Number string `json:"number,omitempty"`
	Hash   string `json:"hash,omitempty"`
}

// Turn is one turn: its marks' wall times by name (the Mark* names).
type Turn struct {
	Epoch            uint64               `json:"epoch"`
	Marks            map[string]time.Time `json:"marks"`
	RoundFirstTokens []time.Time          `json:"round_first_tokens,omitempty"`
	LatencyMS        float64              `json:"latency_ms,omitempty"`
	Stages           []Stage              `json:"stages,omitempty"`
	BargeIn          bool                 `json:"barge_in,omitempty"`
	Cut              bool                 `json:"cut,omitempty"`
}

// Stage is a stage's share of a turn's latency.
type Stage struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

// The speakers of a Line.
const (
	SpeakerCaller = "caller"
	SpeakerBot    = "bot"
)

// Line is a line of the transcript: the caller's turn, or the bot's
// words as heard (Cut: cut off there).
type Line struct {
	Epoch   uint64    `json:"epoch"`
	Speaker string    `json:"speaker"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
	Cut     bool      `json:"cut,omitempty"`
	Keys    int       `json:"keys,omitempty"`
}

// ToolCall is a tool call as the tool contract settled it.
type ToolCall struct {
	Epoch      uint64          `json:"epoch"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Outcome    string          `json:"outcome"`
	Started    time.Time       `json:"started"`
	Settled    time.Time       `json:"settled,omitzero"`
	DurationMS float64         `json:"duration_ms"`
	KeyDigest  string          `json:"key_digest,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Result     string          `json:"result,omitempty"`
}

// Usage is one provider's use in the call.
type Usage struct {
	Kind         string  `json:"kind"`
	Vendor       string  `json:"vendor"`
	Model        string  `json:"model,omitempty"`
	Requests     int     `json:"requests"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	CachedTokens int     `json:"cached_tokens,omitempty"`
	AudioSeconds float64 `json:"audio_seconds,omitempty"`
	Characters   int     `json:"characters,omitempty"`
}

// Failure counts a stage's failures of one kind.
type Failure struct {
	Stage string `json:"stage"`
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Failover is a stage's switch from one provider to the next.
type Failover struct {
	Stage string    `json:"stage"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	At    time.Time `json:"at"`
}

// Recording says what the call's recording holds.
type Recording struct {
	Format        string  `json:"format"`
	Key           string  `json:"key"`
	Bytes         int64   `json:"bytes"`
	DurationMS    float64 `json:"duration_ms"`
	Paused        []Span  `json:"paused,omitempty"`
	DroppedFrames int     `json:"dropped_frames,omitempty"`
	Removed       bool    `json:"removed,omitempty"`
}

// Span is a stretch of the call's time.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// RecordDetail answers Record: the record, and its JSON as it came (a
// newer server's fields kept).
type RecordDetail struct {
	Record Record          `json:"record"`
	Raw    json.RawMessage `json:"-"`
}

// Erasure answers an erasure: how many records (and recordings) went,
// and the selector.
type Erasure struct {
	Erased     int    `json:"erased"`
	Recordings int    `json:"recordings"`
	CallID     string `json:"call_id,omitempty"`
	CallerHash string `json:"caller_hash,omitempty"`
}

// AuditEntry is one erasure in the audit.
type AuditEntry struct {
	At         time.Time `json:"at"`
	By         string    `json:"by"`
	Reason     string    `json:"reason,omitempty"`
	CallID     string    `json:"call_id,omitempty"`
	CallerHash string    `json:"caller_hash,omitempty"`
	Erased     int       `json:"erased"`
}

// Records lists the records f selects, one page.
func (c *Client) Records(ctx context.Context, f RecordFilter) (*RecordList, error) {
	var out RecordList
	raw, err := c.records(ctx, http.MethodGet, []string{"records"}, f.values(), nil, "", &out, "records")
	if err != nil {
		return nil, err
	}
	out.raw = raw
	return &out, nil
}

// Record is one call's record.
func (c *Client) Record(ctx context.Context, id string) (*RecordDetail, error) {
	var top struct {
		Record json.RawMessage `json:"record"`
	}
	if _, err := c.records(ctx, http.MethodGet, []string{"records", id}, nil, nil, id, &top, "record"); err != nil {
		return nil, err
	}
	d := &RecordDetail{Raw: top.Record}
	if err := json.Unmarshal(top.Record, &d.Record); err != nil {
		return nil, fmt.Errorf("%w: GET record %s: %v", ErrProtocol, id, err)
	}
	return d, nil
}

// Recording is a call's recording as it streams: its body (the caller
// closes it), content type and length (-1 unknown). The client's timeout
// bounds the wait for the answer, not the download: ctx bounds that.
func (c *Client) Recording(ctx context.Context, id string) (body io.ReadCloser, contentType string, length int64, err error) {
	rctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(c.timeout, cancel)
	req, err := c.request(rctx, http.MethodGet, []string{"records", id, "recording"}, nil)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, "", 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		fired := !timer.Stop()
		cancel()
		if fired && ctx.Err() == nil {
			return nil, "", 0, fmt.Errorf("%w: no answer within %v", ErrUnreachable, c.timeout)
		}
		return nil, "", 0, c.transportError(ctx, "GET "+req.URL.Path, err)
	}
	if !timer.Stop() {
		resp.Body.Close()
		cancel()
		return nil, "", 0, fmt.Errorf("%w: no answer within %v", ErrUnreachable, c.timeout)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return nil, "", 0, c.recordsError(resp, b, id)
	}
	return &cancelBody{ReadCloser: resp.Body, cancel: cancel}, resp.Header.Get("Content-Type"), resp.ContentLength, nil
}

// cancelBody ends its request's context when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// PauseRecording pauses a live call's recording (silence is recorded
// until ResumeRecording): for card numbers read out.
func (c *Client) PauseRecording(ctx context.Context, id string) error {
	_, err := c.records(ctx, http.MethodPost, []string{"records", id, "recording", "pause"}, nil, nil, id, nil, "recording")
	return err
}

// ResumeRecording resumes a live call's recording.
func (c *Client) ResumeRecording(ctx context.Context, id string) error {
	_, err := c.records(ctx, http.MethodPost, []string{"records", id, "recording", "resume"}, nil, nil, id, nil, "recording")
	return err
}

// EraseRecord erases one call's record and recording (audited with
// reason).
func (c *Client) EraseRecord(ctx context.Context, id, reason string) (*Erasure, error) {
	var out Erasure
	body := map[string]string{"reason": reason}
	if _, err := c.records(ctx, http.MethodDelete, []string{"records", id}, nil, body, id, &out, "erased"); err != nil {
		return nil, err
	}
	return &out, nil
}

// EraseCaller erases every record of one caller, given by number (the
// server hashes it) or by hash, audited with reason.
func (c *Client) EraseCaller(ctx context.Context, caller, callerHash, reason string) (*Erasure, error) {
	var out Erasure
	body := map[string]string{"reason": reason}
	if caller != "" {
		body["caller"] = caller
	}
	if callerHash != "" {
		body["caller_hash"] = callerHash
	}
	if _, err := c.records(ctx, http.MethodPost, []string{"erasures"}, nil, body, "", &out, "erased"); err != nil {
		return nil, err
	}
	return &out, nil
}

// Erasures is the erasure audit, oldest first.
func (c *Client) Erasures(ctx context.Context) ([]AuditEntry, error) {
	var out struct {
		Erasures []AuditEntry `json:"erasures"`
	}
	if _, err := c.records(ctx, http.MethodGet, []string{"erasures"}, nil, nil, "", &out, "erasures"); err != nil {
		return nil, err
	}
	return out.Erasures, nil
}

// records is call for the records routes: a JSON body (when not nil) and
// their errors (recordsError).
func (c *Client) records(ctx context.Context, method string, elems []string, q url.Values, in any, id string, out any, keys ...string) (json.RawMessage, error) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.request(rctx, method, elems, q)
	if err != nil {
		return nil, err
	}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("opclient: %s %s: %w", method, req.URL.Path, err)
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		req.ContentLength = int64(len(b))
		req.Header.Set("Content-Type", "application/json")
	}
	path := req.URL.Path
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, method+" "+path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, c.transportError(ctx, method+" "+path, err)
	}
	if len(body) > maxAnswer {
		return nil, fmt.Errorf("%w: %s %s: the answer is longer than %d bytes", ErrProtocol, method, path, maxAnswer)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.recordsError(resp, body, id)
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return nil, fmt.Errorf("%w: %s %s answered %s with %s, not JSON", ErrProtocol, method, path, resp.Status, c.ctype(resp))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrProtocol, method, path, err)
	}
	for _, k := range keys {
		if _, ok := top[k]; !ok {
			return nil, fmt.Errorf("%w: %s %s: the answer has no %q", ErrProtocol, method, path, k)
		}
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, fmt.Errorf("%w: %s %s: %v", ErrProtocol, method, path, err)
		}
	}
	return json.RawMessage(body), nil
}

// recordsError maps a records route's error answer: the records' own
// errors, then the API's (answerError).
func (c *Client) recordsError(resp *http.Response, body []byte, id string) error {
	var ae struct {
		Error     *string `json:"error"`
		Recording string  `json:"recording"`
	}
	if !isJSON(resp.Header.Get("Content-Type")) || json.Unmarshal(body, &ae) != nil || ae.Error == nil {
		return c.answerError(resp, body, target{})
	}
	msg := c.redact(*ae.Error)
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound && ae.Recording != "", code == http.StatusGone:
		return fmt.Errorf("%w: %s", ErrNoRecording, msg)
	case code == http.StatusNotFound && id != "":
		return fmt.Errorf("%w: %s", ErrUnknownRecord, msg)
	case code == http.StatusBadRequest:
		return fmt.Errorf("%w: %s", ErrInvalidQuery, msg)
	case code == http.StatusNotImplemented:
		return fmt.Errorf("%w: %s", ErrRecordsOff, msg)
	}
	return c.answerError(resp, body, target{})
}
