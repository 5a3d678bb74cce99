package serve

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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
// authorised by "Authorization: Bearer <token>":
//
//	GET  /operator/calls                  {"calls": ["wr-...", ...]}
//	GET  /operator/calls/{id}             the call's actor tree: each stage's
//	                                      state, counters, mailbox, restarts
//	POST /operator/calls/{id}/restart?stage=stt
//	                                      restart one stage, the call goes on
//	POST /operator/calls/{id}/hangup      end the call (202)
//
// Answers are JSON; an unknown call is 404, an unknown stage 400, a
// restart the session refuses 409, a missing or wrong token 401. The tree
// holds names, states and counts only: no words, numbers or arguments.
func (s *Server) EnableOperator(token string) error {
	if len(token) < MinOperatorToken {
		return fmt.Errorf("%w: the operator token has %d characters, want at least %d", ErrInvalidConfig, len(token), MinOperatorToken)
	}
	auth := func(h http.HandlerFunc) http.HandlerFunc { return s.operatorAuth(token, h) }
	s.mux.HandleFunc("GET /operator/calls", auth(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"calls": s.Live()})
	}))
	s.mux.HandleFunc("GET /operator/calls/{id}", auth(s.describeCall))
	s.mux.HandleFunc("POST /operator/calls/{id}/restart", auth(s.restartStage))
	s.mux.HandleFunc("POST /operator/calls/{id}/hangup", auth(s.hangupCall))
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

func (s *Server) describeCall(w http.ResponseWriter, r *http.Request) {
	id := messages.CallID(r.PathValue("id"))
	res, err := s.askCall(id, &messages.Describe{})
	if err != nil {
		operatorError(w, err)
		return
	}
	d, ok := res.(*messages.Description)
	if !ok {
		operatorError(w, fmt.Errorf("serve: call %s answered %T", id, res))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"call": id, "tree": d})
}

func (s *Server) restartStage(w http.ResponseWriter, r *http.Request) {
	id := messages.CallID(r.PathValue("id"))
	stage := messages.Stage(strings.TrimSpace(r.URL.Query().Get("stage")))
	if stages := restartable(); !slices.Contains(stages, stage) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("unknown stage %q", stage), "stages": stages})
		return
	}
	res, err := s.askCall(id, &messages.Restart{Stage: stage})
	if err != nil {
		operatorError(w, err)
		return
	}
	rr, ok := res.(*messages.RestartResult)
	if !ok {
		operatorError(w, fmt.Errorf("serve: call %s answered %T", id, res))
		return
	}
	if rr.Err != nil {
		writeJSON(w, http.StatusConflict, map[string]string{"error": rr.Err.Error()})
		return
	}
	s.log.Info().Str("call_id", string(id)).Str("stage", string(stage)).Msg("operator restarted a stage")
	writeJSON(w, http.StatusOK, map[string]any{"call": id, "restarted": stage})
}

func (s *Server) hangupCall(w http.ResponseWriter, r *http.Request) {
	id := messages.CallID(r.PathValue("id"))
	s.mu.Lock()
	_, live := s.live[id]
	s.mu.Unlock()
	if !live {
		operatorError(w, fmt.Errorf("%w: %s", ErrUnknownCall, id))
		return
	}
	s.sys.Root.Send(s.board, &switchboard.ToCall{Call: id, Msg: &messages.Hangup{Reason: "hung up by an operator"}})
	s.log.Info().Str("call_id", string(id)).Msg("operator hung up a call")
	writeJSON(w, http.StatusAccepted, map[string]any{"call": id, "hangup": true})
}

// operatorError answers an operator request that failed.
func operatorError(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	if errors.Is(err, ErrUnknownCall) {
		status = http.StatusNotFound
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
