package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/prometheus/client_golang/prometheus"
)

// DialOutcome is why an outbound call was not answered (or "answered"):
// the API's answer, the metric's label. The values are the SIP
// layer's typed reasons plus the engine's own (limited, refused).
type DialOutcome string

// The outcomes of POST /operator/calls, each with its HTTP status.
const (
	DialAnswered    DialOutcome = "answered"    // 201
	DialBusy        DialOutcome = "busy"        // 486, 600: 409
	DialNoAnswer    DialOutcome = "no_answer"   // 408, 480, ring timeout: 504
	DialDeclined    DialOutcome = "declined"    // 603: 409
	DialRejected    DialOutcome = "rejected"    // other 4xx: 502
	DialUnavailable DialOutcome = "unavailable" // 5xx: 502
	DialFailed      DialOutcome = "failed"      // other 6xx, the call not started: 502
	DialAuthFailed  DialOutcome = "auth_failed" // the trunk's challenge not met: 502
	DialTransport   DialOutcome = "transport"   // nothing reached the trunk: 502
	DialCancelled   DialOutcome = "cancelled"   // the request went away: 499-like, 503
	DialLimited     DialOutcome = "limited"     // the trunk's max_calls or calls_per_second: 429
	DialRefused     DialOutcome = "refused"     // the server's admission (full, draining): 503
)

// dialOutcomes are the labels of brisvox_outbound_calls_total.
var dialOutcomes = []DialOutcome{
	DialAnswered, DialBusy, DialNoAnswer, DialDeclined, DialRejected, DialUnavailable,
	DialFailed, DialAuthFailed, DialTransport, DialCancelled, DialLimited, DialRefused,
}

// status is the HTTP status of an outcome.
func (o DialOutcome) status() int {
	switch o {
	case DialAnswered:
		return http.StatusCreated
	case DialBusy, DialDeclined:
		return http.StatusConflict
	case DialNoAnswer:
		return http.StatusGatewayTimeout
	case DialLimited:
		return http.StatusTooManyRequests
	case DialRefused, DialCancelled:
		return http.StatusServiceUnavailable
	default:
		return http.StatusBadGateway
	}
}

// DialError is a dial that did not end in a started call: the outcome
// and the SIP status (0 when the end was local). Its text is fixed
// words, never a number or a URI.
type DialError struct {
	Outcome DialOutcome
	Code    int
}

func (e *DialError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("serve: the call was not answered: %s (SIP %d)", e.Outcome, e.Code)
	}
	return fmt.Sprintf("serve: the call was not answered: %s", e.Outcome)
}

// Unwrap is ErrDialFailed.
func (e *DialError) Unwrap() error { return ErrDialFailed }

// DialRequest is an operator's outbound call, checked.
type DialRequest struct {
	Trunk, To, From string
	// Variables fill the agent's {{name}} placeholders for this call.
	Variables map[string]string
	// RingTimeout is how long it may ring; 0 the transport's default.
	RingTimeout time.Duration
	// WaitForCallee: the agent waits for the callee's first words even
	// when the agent file has it speak first.
	WaitForCallee bool
}

// VariableChecker is an Agent that says which per-call variables it
// needs: a dial that lacks one is refused (400) before anything rings.
type VariableChecker interface {
	CheckVariables(vars map[string]string) error
}

// Dialer places outbound calls (the SIP mount): Dial returns the id of
// the call once it is answered and started, or an error, a *DialError
// for the typed outcomes. Trunks names the trunks it can dial.
type Dialer interface {
	Dial(ctx context.Context, req DialRequest) (messages.CallID, error)
	Trunks() []string
}

// Bounds of a dial request.
const (
	maxDialBody      = 16 << 10
	maxVariables     = 32
	maxVariableName  = 64
	maxVariableValue = 1024
	// maxDialWait bounds the request: the longest ring plus the answer.
	maxDialWait = 5*time.Minute + 30*time.Second
)

// dialBody is the JSON of POST /operator/calls.
type dialBody struct {
	Trunk         string            `json:"trunk"`
	To            string            `json:"to"`
	From          string            `json:"from"`
	Agent         string            `json:"agent"`
	Variables     map[string]string `json:"variables"`
	RingTimeout   string            `json:"ring_timeout"`
	WaitForCallee bool              `json:"wait_for_callee"`
}

// EnableDial mounts POST /operator/calls behind the operator token (call
// EnableOperator first, with the same token):
//
//	{"trunk": "carrier", "to": "+15551234", "from": "+15559876",
//	 "variables": {"name": "Ada"}, "ring_timeout": "30s",
//	 "wait_for_callee": false}
//
// The answer comes when the dial has ended (synchronous): 201
// {"call": id, "outcome": "answered"} once the callee answered and the
// agent started, else the outcome's status with {"outcome", "code",
// "error"}; a bad body is 400 {"error"}. "agent" (another agent file)
// is refused (400): a call runs the serving agent.
func (s *Server) EnableDial(token string, d Dialer) error {
	if d == nil {
		return fmt.Errorf("%w: a nil Dialer", ErrInvalidConfig)
	}
	if len(token) < MinOperatorToken {
		return fmt.Errorf("%w: the operator token has %d characters, want at least %d", ErrInvalidConfig, len(token), MinOperatorToken)
	}
	trunks := d.Trunks()
	outbound := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "brisvox_outbound_calls_total",
		Help: "Outbound calls asked through the operator API, by trunk and outcome: answered, busy, no_answer, declined, rejected, unavailable, failed, auth_failed, transport, cancelled, limited, refused.",
	}, []string{"trunk", "outcome"})
	if err := s.Register(outbound); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	for _, t := range trunks {
		for _, o := range dialOutcomes {
			outbound.WithLabelValues(t, string(o))
		}
	}
	s.mux.HandleFunc("POST /operator/calls", s.operatorAuth(token, func(w http.ResponseWriter, r *http.Request) {
		req, err := parseDial(r.Body, trunks)
		if err != nil {
			s.count("dial_bad_requests")
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		if vc, ok := s.agent.(VariableChecker); ok {
			if err := vc.CheckVariables(req.Variables); err != nil {
				s.count("dial_bad_requests")
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Errorf("%w: %w", ErrBadDial, err).Error()})
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), maxDialWait)
		defer cancel()
		id, err := d.Dial(ctx, req)
		if errors.Is(err, ErrBadDial) {
			// The transport refused the request as it stands (a number
			// it cannot dial): nothing was sent.
			s.count("dial_bad_requests")
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		outcome, code := DialAnswered, 0
		if err != nil {
			var de *DialError
			if errors.As(err, &de) {
				outcome, code = de.Outcome, de.Code
			} else {
				outcome = DialFailed
			}
			if !slices.Contains(dialOutcomes, outcome) {
				outcome = DialFailed
			}
		}
		outbound.WithLabelValues(req.Trunk, string(outcome)).Inc()
		s.count("dial_" + string(outcome))
		if err != nil {
			s.log.Info().Str("trunk", req.Trunk).Str("outcome", string(outcome)).Int("code", code).Err(err).Msg("outbound call not started")
			body := map[string]any{"outcome": outcome, "error": err.Error()}
			if code != 0 {
				body["code"] = code
			}
			if outcome == DialLimited || outcome == DialRefused {
				w.Header().Set("Retry-After", "1")
			}
			writeJSON(w, outcome.status(), body)
			return
		}
		s.log.Info().Str("call_id", string(id)).Str("trunk", req.Trunk).Msg("outbound call started")
		writeJSON(w, http.StatusCreated, map[string]any{"call": id, "outcome": DialAnswered})
	}))
	return nil
}

// parseDial reads and checks a dial body. Errors name the field, never
// its value.
func parseDial(body io.Reader, trunks []string) (DialRequest, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxDialBody+1))
	if err != nil {
		return DialRequest{}, fmt.Errorf("%w: the body could not be read", ErrBadDial)
	}
	if len(data) > maxDialBody {
		return DialRequest{}, fmt.Errorf("%w: the body is over %d bytes", ErrBadDial, maxDialBody)
	}
	var b dialBody
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return DialRequest{}, fmt.Errorf("%w: the body is not the dial JSON object", ErrBadDial)
	}
	switch {
	case b.Trunk == "":
		return DialRequest{}, fmt.Errorf("%w: trunk is required", ErrBadDial)
	case !slices.Contains(trunks, b.Trunk):
		return DialRequest{}, fmt.Errorf("%w: no trunk is named %q", ErrBadDial, b.Trunk)
	case b.To == "":
		return DialRequest{}, fmt.Errorf("%w: to is required", ErrBadDial)
	case b.Agent != "":
		return DialRequest{}, fmt.Errorf("%w: agent: a call runs the serving agent (another agent file is not taken)", ErrBadDial)
	case len(b.Variables) > maxVariables:
		return DialRequest{}, fmt.Errorf("%w: %d variables, at most %d", ErrBadDial, len(b.Variables), maxVariables)
	}
	for _, f := range []struct{ name, v string }{{"to", b.To}, {"from", b.From}} {
		if len(f.v) > 256 || strings.ContainsAny(f.v, "\r\n\x00") {
			return DialRequest{}, fmt.Errorf("%w: %s is over 256 bytes or holds CR, LF or NUL", ErrBadDial, f.name)
		}
	}
	for name, v := range b.Variables {
		if !validVariableName(name) {
			return DialRequest{}, fmt.Errorf("%w: variable names are 1 to %d letters, digits and _", ErrBadDial, maxVariableName)
		}
		if len(v) > maxVariableValue || strings.ContainsAny(v, "\r\n\x00") {
			return DialRequest{}, fmt.Errorf("%w: variable %s is over %d bytes or holds CR, LF or NUL", ErrBadDial, name, maxVariableValue)
		}
	}
	var rt time.Duration
	if b.RingTimeout != "" {
		if rt, err = time.ParseDuration(b.RingTimeout); err != nil || rt < time.Second || rt > 5*time.Minute {
			return DialRequest{}, fmt.Errorf("%w: ring_timeout is a duration from 1s to 5m", ErrBadDial)
		}
	}
	return DialRequest{Trunk: b.Trunk, To: b.To, From: b.From, Variables: b.Variables, RingTimeout: rt, WaitForCallee: b.WaitForCallee}, nil
}

// validVariableName: letters, digits and _, not starting with a digit.
func validVariableName(n string) bool {
	if n == "" || len(n) > maxVariableName {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
