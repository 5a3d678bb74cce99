package serve

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// Fleet is the rest of the deployment as the operator API reaches it
// (cmd/internal/fleet, on protoactor-go's cluster). Without one, the node
// is alone. The calls and their audio stay on their node: the fleet
// carries the operator's questions and commands, never media.
//
// Others answers from the fleet's own view of the other members,
// refreshed in the background, without a round trip: the event stream
// reads it every flush. The commands go to the named node and wait for
// its answer up to ctx; they return serve's errors (ErrUnknownCall,
// ErrUnknownNode, ErrUnknownStage, ErrRefused) as the node answered
// them, or ErrNodeUnreachable.
type Fleet interface {
	// Others are the other live members with their calls, sorted by node.
	Others() []NodeCalls
	Describe(ctx context.Context, node string, id messages.CallID) (CallDetail, error)
	Restart(ctx context.Context, node string, id messages.CallID, stage messages.Stage) error
	Hangup(ctx context.Context, node string, id messages.CallID) error
	// PauseRecording pauses (or, pause false, resumes) the recording of
	// a live call on node.
	PauseRecording(ctx context.Context, node string, id messages.CallID, pause bool) error
	Drain(ctx context.Context, node string) (NodeInfo, error)
	Undrain(ctx context.Context, node string) (NodeInfo, error)
}

// NodeCalls is a node and its live calls.
type NodeCalls struct {
	Node  NodeInfo
	Calls []CallSummary
}

// fleetTimeout bounds a command routed to another node.
const fleetTimeout = 5 * time.Second

// JoinFleet makes the operator API of this node list and command the
// calls of every node of f. Call it before Serve.
func (s *Server) JoinFleet(f Fleet) {
	s.mu.Lock()
	s.fleet = f
	s.mu.Unlock()
}

func (s *Server) fleetOf() Fleet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fleet
}

// AllCalls is every node's live calls, this node's first read, sorted by
// node then id.
func (s *Server) AllCalls() []CallSummary {
	out := s.Calls()
	if f := s.fleetOf(); f != nil {
		for _, n := range f.Others() {
			out = append(out, n.Calls...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// AllNodes is this node and the others the fleet knows, sorted by name.
func (s *Server) AllNodes() []NodeInfo {
	out := []NodeInfo{s.Node()}
	if f := s.fleetOf(); f != nil {
		for _, n := range f.Others() {
			n.Node.Self = false
			out = append(out, n.Node)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// ownerOf names the other node that holds call id, "" when none does.
func (s *Server) ownerOf(f Fleet, id messages.CallID) string {
	for _, n := range f.Others() {
		for _, c := range n.Calls {
			if c.ID == id {
				return n.Node.Node
			}
		}
	}
	return ""
}

// remoteCall finds the node of a call this node does not hold: its name
// and the fleet, or ErrUnknownCall.
func (s *Server) remoteCall(id messages.CallID) (Fleet, string, error) {
	if f := s.fleetOf(); f != nil {
		if node := s.ownerOf(f, id); node != "" {
			return f, node, nil
		}
	}
	return nil, "", fmt.Errorf("%w: %s", ErrUnknownCall, id)
}

// isLocal says whether this node holds call id.
func (s *Server) isLocal(id messages.CallID) bool {
	_, ok := s.callSummary(id)
	return ok
}

// nodeTarget is the fleet that reaches node, nil for this node itself;
// any other name must be a member the fleet knows (ErrUnknownNode).
func (s *Server) nodeTarget(node string) (Fleet, error) {
	if node == s.cfg.Node {
		return nil, nil
	}
	if f := s.fleetOf(); f != nil {
		for _, n := range f.Others() {
			if n.Node.Node == node {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownNode, node)
}

func fleetContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, fleetTimeout)
}
