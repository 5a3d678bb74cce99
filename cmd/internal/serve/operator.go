package serve

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/messages"
)

// MinOperatorToken is the shortest operator token EnableOperator takes.
const MinOperatorToken = 16

// operatorTimeout bounds an operator request's wait for the call.
const operatorTimeout = 5 * time.Second

// restartable lists the stages an operator may name in a restart.
func restartable() []messages.Stage {
	return []messages.Stage{
		messages.StageTransport, messages.StageVAD, messages.StageSTT, messages.StageTurn,
		messages.StageLLM, messages.StageTools, messages.StageTTS, messages.StagePacer,
	}
}

// EnableOperator mounts the operator API under /operator/, each request
// authorised by "Authorization: Bearer <token>" (docs/OPERATIONS.md):
//
//	GET    /operator/calls                 {"node", "calls": [CallSummary]}
//	GET    /operator/calls/{id}            {"call": CallSummary, "tree": the
//	                                       actor tree (each stage's state,
//	                                       counters, mailbox, restarts),
//	                                       "turns": [TurnTimeline]}
//	POST   /operator/calls/{id}/restart?stage=stt
//	                                       restart one stage, the call goes on
//	POST   /operator/calls/{id}/hangup     end the call (202)
//	GET    /operator/nodes                 {"nodes": [NodeInfo]}
//	POST   /operator/nodes/{node}/drain    admit no new call (202)
//	DELETE /operator/nodes/{node}/drain    admit calls again
//	GET    /operator/events                the live calls and nodes as
//	                                       server-sent events
//	GET    /operator/                      the operator console (its page
//	                                       and assets need no token; it
//	                                       asks for one)
//
// Answers are JSON; an unknown call or node is 404, an unknown stage 400,
// a restart the session refuses 409, a missing or wrong token 401. The tree
// holds names, states and counts only: no words, numbers or arguments.
func (s *Server) EnableOperator(token string) error {
	if len(token) < MinOperatorToken {
		return fmt.Errorf("%w: the operator token has %d characters, want at least %d", ErrInvalidConfig, len(token), MinOperatorToken)
	}
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.operatorAuth(token, h) }
	s.mux.HandleFunc("GET /operator/calls", auth(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"node": s.cfg.Node, "calls": s.AllCalls()})
	}))
	s.mux.HandleFunc("GET /operator/calls/{id}", auth(s.describeCall))
	s.mux.HandleFunc("POST /operator/calls/{id}/restart", auth(s.restartStage))
	s.mux.HandleFunc("POST /operator/calls/{id}/hangup", auth(s.hangupCall))
	s.mux.HandleFunc("GET /operator/nodes", auth(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"nodes": s.AllNodes()})
	}))
	s.mux.HandleFunc("POST /operator/nodes/{node}/drain", auth(s.drainNode))
	s.mux.HandleFunc("DELETE /operator/nodes/{node}/drain", auth(s.undrainNode))
	s.mux.HandleFunc("GET /operator/events", auth(s.operatorEvents))
	s.mountRecords(auth)
	// The console's page and assets hold no data: the page asks for the
	// token and reads everything through the API above.
	s.mountConsole()
	return nil
}

// operatorAuth lets a request through to h only with the operator token.
func (s *Server) operatorAuth(token string, h http.HandlerFunc) http.HandlerFunc {
	want := []byte("Bearer " + token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			s.count("operator_unauthorized")
			w.Header().Set("WWW-Authenticate", `Bearer realm="brisvox operator"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "a valid operator token is required"})
			return
		}
		s.count("operator_requests")
		h(w, r)
	}
}

// askCall routes msg to a live call's session and waits for its answer.
func (s *Server) askCall(id messages.CallID, msg any) (any, error) {
	res, err := s.sys.Root.RequestFuture(s.board, &switchboard.ToCall{Call: id, Msg: msg}, operatorTimeout).Result()
	if err != nil {
		return nil, fmt.Errorf("serve: call %s did not answer: %w", id, err)
	}
	if st, ok := res.(*switchboard.CallStarted); ok && st.Err != nil {
		if errors.Is(st.Err, switchboard.ErrUnknownCall) {
			return nil, fmt.Errorf("%w: %s", ErrUnknownCall, id)
		}
		return nil, st.Err
	}
	return res, nil
}

// CallDetail is one live call as an operator sees it: its summary, its
// actor tree and its turns' timelines, oldest first.
type CallDetail struct {
	Call  CallSummary           `json:"call"`
	Tree  *messages.Description `json:"tree"`
	Turns []TurnTimeline        `json:"turns"`
}

// DescribeCall asks a live call's session for its tree and timelines.
func (s *Server) DescribeCall(id messages.CallID) (CallDetail, error) {
	if _, ok := s.callSummary(id); !ok {
		return CallDetail{}, fmt.Errorf("%w: %s", ErrUnknownCall, id)
	}
	res, err := s.askCall(id, &messages.Describe{})
	if err != nil {
		return CallDetail{}, err
	}
	d, ok := res.(*messages.Description)
	if !ok {
		return CallDetail{}, fmt.Errorf("serve: call %s answered %T", id, res)
	}
	res, err = s.askCall(id, &session.GetTimelines{})
	if err != nil {
		return CallDetail{}, err
	}
	ts, ok := res.([]session.Timeline)
	if !ok {
		return CallDetail{}, fmt.Errorf("serve: call %s answered %T", id, res)
	}
	// Read after the answers, so the summary is as new as the tree.
	sum, ok := s.callSummary(id)
	if !ok {
		return CallDetail{}, fmt.Errorf("%w: %s (it ended)", ErrUnknownCall, id)
	}
	return CallDetail{Call: sum, Tree: d, Turns: timelinesOf(ts)}, nil
}

// RestartStage restarts one stage of a live call while the call goes on:
// ErrUnknownStage for a stage that is not one of restartable's,
// ErrRefused when the session refuses (the call is ending, or the
// stage's restart limit is reached and the call ends).
func (s *Server) RestartStage(id messages.CallID, stage messages.Stage) error {
	if !slices.Contains(restartable(), stage) {
		return fmt.Errorf("%w: %q", ErrUnknownStage, stage)
	}
	res, err := s.askCall(id, &messages.Restart{Stage: stage})
	if err != nil {
		return err
	}
	rr, ok := res.(*messages.RestartResult)
	if !ok {
		return fmt.Errorf("serve: call %s answered %T", id, res)
	}
	if rr.Err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, rr.Err)
	}
	s.log.Info().Str("call_id", string(id)).Str("stage", string(stage)).Msg("operator restarted a stage")
	return nil
}

// HangupCall ends a live call at once, as an operator asked.
func (s *Server) HangupCall(id messages.CallID) error {
	if _, live := s.callSummary(id); !live {
		return fmt.Errorf("%w: %s", ErrUnknownCall, id)
	}
	s.sys.Root.Send(s.board, &switchboard.ToCall{Call: id, Msg: &messages.Hangup{Reason: "hung up by an operator"}})
	s.log.Info().Str("call_id", string(id)).Msg("operator hung up a call")
	return nil
}

func (s *Server) describeCall(w http.ResponseWriter, r *http.Request) {
	id := messages.CallID(r.PathValue("id"))
	var d CallDetail
	var err error
	if s.isLocal(id) {
		d, err = s.DescribeCall(id)
	} else if f, node, ferr := s.remoteCall(id); ferr != nil {
		err = ferr
	} else {
		ctx, cancel := fleetContext(r.Context())
		d, err = f.Describe(ctx, node, id)
		cancel()
	}
	if err != nil {
		operatorError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) restartStage(w http.ResponseWriter, r *http.Request) {
	id := messages.CallID(r.PathValue("id"))
	stage := messages.Stage(strings.TrimSpace(r.URL.Query().Get("stage")))
	var err error
	if s.isLocal(id) || !slices.Contains(restartable(), stage) {
		err = s.RestartStage(id, stage)
	} else if f, node, ferr := s.remoteCall(id); ferr != nil {
		err = ferr
	} else {
		ctx, cancel := fleetContext(r.Context())
		err = f.Restart(ctx, node, id, stage)
		cancel()
	}
	if err != nil {
		operatorError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"call": id, "restarted": stage})
}

func (s *Server) hangupCall(w http.ResponseWriter, r *http.Request) {
	id := messages.CallID(r.PathValue("id"))
	var err error
	if s.isLocal(id) {
		err = s.HangupCall(id)
	} else if f, node, ferr := s.remoteCall(id); ferr != nil {
		err = ferr
	} else {
		ctx, cancel := fleetContext(r.Context())
		err = f.Hangup(ctx, node, id)
		cancel()
	}
	if err != nil {
		operatorError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"call": id, "hangup": true})
}

// operatorError answers an operator request that failed.
func operatorError(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	body := map[string]any{"error": err.Error()}
	switch {
	case errors.Is(err, ErrUnknownCall), errors.Is(err, ErrUnknownNode):
		status = http.StatusNotFound
	case errors.Is(err, ErrUnknownStage):
		status = http.StatusBadRequest
		body["stages"] = restartable()
	case errors.Is(err, ErrRefused):
		status = http.StatusConflict
	}
	writeJSON(w, status, body)
}
