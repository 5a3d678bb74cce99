package serve

import (
	"context"
	"fmt"

	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// The serve side of the telephony tools: the Server finds a live call's
// Conn and uses its call-control faces. A transport without one (the
// websocket, WebRTC) answers conn.ErrNotSupported, which the tool hands
// to the model.
var (
	_ stock.Ender      = (*Server)(nil)
	_ stock.Transferer = (*Server)(nil)
	_ stock.KeyPresser = (*Server)(nil)
)

// liveConn is the Conn of a live call.
func (s *Server) liveConn(call string) (Conn, error) {
	s.mu.Lock()
	info, ok := s.live[messages.CallID(call)]
	s.mu.Unlock()
	if !ok || info == nil || info.conn == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownCall, call)
	}
	return info.conn, nil
}

// TransferCall hands the call's caller to target through its Conn's
// conn.Transferrer (the transfer_call tool), blocking until it succeeded
// or failed. On success the caller is elsewhere: the call's session ends
// at once (nothing more is heard; the transport has hung its leg up, and
// the session's end hangs up what is left). A failure leaves the call as
// it was. target was allowed and normalised by the tool; it is never
// logged nor put in an error.
func (s *Server) TransferCall(ctx context.Context, call, target string) error {
	c, err := s.liveConn(call)
	if err != nil {
		return err
	}
	tr, ok := c.(conn.Transferrer)
	if !ok {
		return fmt.Errorf("%w: this call cannot be transferred (not a phone call)", conn.ErrNotSupported)
	}
	if err := tr.Transfer(ctx, target); err != nil {
		s.count("transfers_failed")
		return err
	}
	s.count("transfers")
	s.sys.Root.Send(s.board, &switchboard.ToCall{Call: messages.CallID(call), Msg: &messages.EndCall{}})
	return nil
}

// SendDTMF presses digits on the call through its Conn's conn.DTMFSender
// (the send_dtmf tool). The digits are never logged.
func (s *Server) SendDTMF(ctx context.Context, call, digits string) error {
	c, err := s.liveConn(call)
	if err != nil {
		return err
	}
	ds, ok := c.(conn.DTMFSender)
	if !ok {
		return fmt.Errorf("%w: this call cannot press keys (not a phone call)", conn.ErrNotSupported)
	}
	if err := ds.SendDTMF(ctx, digits); err != nil {
		s.count("dtmf_sends_failed")
		return err
	}
	s.count("dtmf_sends")
	return nil
}
