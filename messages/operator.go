package messages

// Describe asks an actor for a snapshot of itself. It is sent with Request
// so the answer goes to the sender; the answer is a *Description.
type Describe struct {
	// Ref is echoed in the Description so a parent can match answers.
	Ref uint64
}

// Description is an actor's answer to Describe. Children holds the
// descriptions of its children when the actor assembles a tree (session).
//
// Its JSON (the operator API's tree) names fields in lower case and
// leaves out Ref and what is empty.
type Description struct {
	Ref      uint64            `json:"-"`
	Name     string            `json:"name"`
	State    string            `json:"state"`
	Counters map[string]uint64 `json:"counters,omitempty"`
	// Info holds facts that are not counts (a SIP call's dialog state,
	// codec, latched media source, RTCP loss and jitter). Never a phone
	// number, a header or anything said.
	Info     map[string]string `json:"info,omitempty"`
	Mailbox  int               `json:"mailbox"`
	Restarts int               `json:"restarts"`
	Children []*Description    `json:"children,omitempty"`
}

// Restart asks a session to restart one stage of its call while the call
// goes on. The answer is a *RestartResult.
type Restart struct {
	Stage Stage
}

// RestartResult answers Restart. Err is nil on success.
type RestartResult struct {
	Stage Stage
	Err   error
}

// ListCalls asks the switchboard for its live calls; the answer is *CallList.
type ListCalls struct{}

// CallList answers ListCalls, sorted by call id.
type CallList struct {
	Calls []CallID
}

// Hangup ends a call: the session stops its tree and the switchboard
// forgets the call.
type Hangup struct {
	Reason string
}

// CallEnded is published by a session when its call is over.
type CallEnded struct {
	Call   CallID
	Reason string
	Err    error
	// GaveUp names the stage whose failures ended the call, if any.
	GaveUp Stage
	// Restarts counts the restarts of each stage during the call.
	Restarts map[Stage]int
	// Failures counts each stage's failures by kind: a provider error's
	// kind (providers.KindOf: rejected, timeout, disconnected, protocol,
	// closed, other), or "panic" for a panic that was not an error.
	Failures map[Stage]map[string]int
}
