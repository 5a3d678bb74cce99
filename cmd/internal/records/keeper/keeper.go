package keeper

import (
	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/recording"
	"github.com/brisvox/brisvox/cmd/internal/records/tracing"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// Keeper is a serve.Keeper over the node's records service, recorder and
// tracer (any may be nil).
type Keeper struct {
	records  *records.Service
	recorder *recording.Recorder
	tracer   *tracing.Tracer
	log      zerolog.Logger
}

var _ serve.Keeper = (*Keeper)(nil)

// New joins the parts (any may be nil).
func New(rs *records.Service, rec *recording.Recorder, tr *tracing.Tracer, log zerolog.Logger) *Keeper {
	return &Keeper{records: rs, recorder: rec, tracer: tr, log: log}
}

// Begin follows a new call.
func (k *Keeper) Begin(c serve.CallStart) serve.Follower {
	f := &follower{}
	if k.tracer != nil {
		f.trace = k.tracer.Begin(string(c.ID), c.Transport, c.Agent, c.Started)
	}
	if k.recorder != nil {
		rc, err := k.recorder.Begin(string(c.ID), c.InputRate, c.OutputRate)
		if err != nil {
			// The call goes on without its recording; the record says
			// none was made.
			k.log.Error().Err(err).Str("call_id", string(c.ID)).Msg("recording not started")
		} else {
			f.rec = rc
		}
	}
	if k.records != nil {
		st := records.CallStart{
			CallID: string(c.ID), Transport: c.Transport, Direction: c.Direction, Trunk: c.Trunk,
			Agent: c.Agent, AgentDigest: c.AgentDigest, Caller: c.Caller, Callee: c.Callee,
			Started: c.Started, Answered: c.Answered,
		}
		if f.trace != nil {
			st.TraceID = f.trace.TraceID()
		}
		f.call = k.records.Begin(st)
		if f.rec != nil {
			rc := f.rec
			f.call.SetRecording(rc.Close)
		}
	}
	return f
}

// follower is one call's parts.
type follower struct {
	call  *records.Call
	rec   *recording.Call
	trace *tracing.Call
}

func (f *follower) Event(e *messages.CallEvent) {
	if f.trace != nil {
		f.trace.Event(e)
	}
	if f.call != nil {
		f.call.Event(e)
	}
}

func (f *follower) End(e messages.CallEnded) {
	if f.trace != nil {
		f.trace.End(e)
	}
	switch {
	case f.call != nil:
		f.call.End(e) // closes the recording through SetRecording
	case f.rec != nil:
		f.rec.Close()
	}
}

func (f *follower) Tap() conn.Tap {
	if f.rec == nil {
		return nil
	}
	return f.rec
}

func (f *follower) TraceID() string {
	if f.trace == nil {
		return ""
	}
	return f.trace.TraceID()
}
