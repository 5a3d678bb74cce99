package session

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/actors/stt"
	"github.com/brisvox/brisvox/actors/tools"
	"github.com/brisvox/brisvox/actors/transport"
	"github.com/brisvox/brisvox/actors/tts"
	"github.com/brisvox/brisvox/actors/turn"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// DescribeTimeout bounds how long Describe waits for a stage (a stage in
// its restart backoff cannot answer).
const DescribeTimeout = 200 * time.Millisecond

// Timeline is one turn's marks.
type Timeline struct {
	Epoch messages.Epoch
	Marks map[messages.MarkKind]time.Time
}

// MaxTimelines bounds the timelines a session keeps: a long call keeps
// its newest turns.
const MaxTimelines = 512

// GetTimelines asks the session for its turns' timelines, oldest first;
// the answer is a []Timeline.
type GetTimelines struct{}

// GetStats asks for the session's supervision counts; the answer is a
// *Stats.
type GetStats struct{}

// Stats are the session's supervision counts.
type Stats struct {
	Restarts         map[messages.Stage]int
	Panics           map[messages.Stage]int
	OperatorRestarts int
	GaveUp           messages.Stage
}

type restartDue struct {
	child *actor.PID
	stage messages.Stage
}

type describeDue struct{ ref uint64 }

// gather collects a Describe of the call's tree.
type gather struct {
	timer   *time.Timer
	asker   *actor.PID
	ref     uint64
	tree    *messages.Description
	waiting map[messages.Stage]bool
}

type stage struct {
	name     messages.Stage
	pid      *actor.PID
	mailbox  kit.MailboxRef
	failures []time.Time
	restarts int
	panics   int
	// kinds counts the failures by kind (messages.CallEnded.Failures).
	kinds map[string]int
}

// Actor supervises one call.
type Actor struct {
	cfg     Config
	peers   kit.Peers
	backoff *kit.Backoff
	stages  map[messages.Stage]*stage
	order   []*stage

	timelines []*Timeline // the newest MaxTimelines, oldest first
	byEpoch   map[messages.Epoch]*Timeline

	gathers    map[uint64]*gather
	nextRef    uint64
	opRestarts int
	// said and saidEpoch collect the bot's words of the answer playing,
	// for Config.LogContent.
	said      []string
	saidEpoch messages.Epoch
	gaveUp    messages.Stage
	ending    bool
	// stagesLeft counts the stages told to stop (poisoned) that have not
	// terminated yet; stopping is set once the session itself stops.
	stagesLeft int
	stopping   bool
	reason     string
	// state is the call's state as last reported to OnEvent, and
	// stateEpoch the epoch it is about (older epochs' events are late).
	state      string
	stateEpoch messages.Epoch
	endErr     error
	stats      kit.Counters
	root       *actor.RootContext
	// timers are the pending restart backoffs (bounded by the restarts a
	// call may have), stopped with the call; describe deadlines live with
	// their gathers.
	timers []*time.Timer
}

var _ actor.SupervisorStrategy = (*Actor)(nil)

// Props makes the session's props after checking cfg.
func Props(cfg Config) (*actor.Props, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{
			cfg: cfg, stages: make(map[messages.Stage]*stage, len(spawnOrder)), byEpoch: map[messages.Epoch]*Timeline{}, gathers: map[uint64]*gather{},
			backoff: kit.NewBackoff(cfg.Supervision.Backoff, cfg.Supervision.MaxBackoff, cfg.Supervision.Jitter, cfg.Supervision.Seed),
			stats:   kit.Counters{},
		}
	}, actor.WithMailbox(kit.NewMailboxProducer()), onWorkers), nil
}

// Receive handles the session's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.TurnMark:
		a.mark(m)
	case *messages.CallEvent:
		a.event(m)
	case *messages.EndCall:
		// The end_call tool (or an operator): hand it to the turn actor.
		if a.reason == "" {
			a.reason = "ended by the agent"
		}
		ctx.Send(a.peers.Turn, m)
	case *actor.Started:
		a.start(ctx)
	case *restartDue:
		if !a.ending {
			ctx.(actor.Supervisor).RestartChildren(m.child)
		}
	case *messages.Restart:
		ctx.Respond(&messages.RestartResult{Stage: m.Stage, Err: a.operatorRestart(ctx, m.Stage)})
	case *messages.Describe:
		a.describe(ctx, m)
	case *messages.Description:
		a.described(ctx, m)
	case *describeDue:
		if g, ok := a.gathers[m.ref]; ok {
			for s := range g.waiting {
				g.tree.Children = append(g.tree.Children, &messages.Description{Name: string(s), State: "unresponsive"})
			}
			a.finishGather(ctx, g)
		}
	case *GetTimelines:
		out := make([]Timeline, len(a.timelines))
		for i, t := range a.timelines {
			marks := make(map[messages.MarkKind]time.Time, len(t.Marks))
			for k, v := range t.Marks {
				marks[k] = v
			}
			out[i] = Timeline{Epoch: t.Epoch, Marks: marks}
		}
		ctx.Respond(out)
	case *GetStats:
		ctx.Respond(a.statsSnapshot())
	case *transport.Closed:
		// "hangup", or why the transport ended the call (vanished,
		// stopped reading, no input, protocol error).
		a.end(ctx, conn.ReasonOf(m.Err), nil)
	case *messages.Hangup:
		a.end(ctx, "hangup: "+m.Reason, nil)
	case *messages.CallDrained:
		a.end(ctx, a.reason, a.endErr)
	case *actor.Stopped:
		a.setState(messages.StateEnded, 0)
		// OnEnd before Close: the server hangs the connection up first,
		// saying how (a drain's "going away"), then Close finds it hung
		// up.
		if a.cfg.OnEnd != nil {
			reason := a.reason
			if reason == "" {
				reason = "stopped"
			}
			st := a.statsSnapshot()
			a.cfg.OnEnd(messages.CallEnded{Call: a.cfg.Call, Reason: reason, Err: a.endErr, GaveUp: st.GaveUp, Restarts: st.Restarts, Failures: a.failureKinds()})
		}
		_ = a.cfg.Conn.Close()
	case *actor.Stopping:
		for _, t := range a.timers {
			t.Stop()
		}
		a.timers = nil
		for _, g := range a.gathers {
			g.timer.Stop()
		}
	case *actor.Terminated:
		a.stageStopped(ctx, m.Who)
	case *stagesStopped, *stopDue:
		if a.ending {
			if _, due := m.(*stopDue); due && !a.stopping {
				a.stats.Inc("stop_timeouts")
			}
			a.stopSelf(ctx)
		}
	case *actor.Restarting:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) start(ctx actor.Context) {
	a.peers = kit.NewPeers(a.cfg.Call, ctx.Self())
	a.peers.Events = a.cfg.OnEvent != nil || a.cfg.LogContent
	a.root = ctx.ActorSystem().Root
	cfg, p := &a.cfg, a.peers
	newDet := cfg.NewDetector
	if newDet == nil {
		vc := cfg.VAD
		newDet = func() vad.Detector {
			d, _ := media.NewEnergyVAD(vc) // validated in Validate
			return d
		}
	}
	a.order = make([]*stage, 0, len(spawnOrder))
	// Downstream first, so every message finds its receiver. The stages
	// run on the system's workers when it has them (kit.SystemWorkers).
	// Each stage's Props hands its options to PropsFromProducer, which
	// applies them at once, so one buffer serves every stage.
	var optBuf [3]actor.PropsOption
	for _, name := range spawnOrder {
		st := &stage{name: name}
		opts := append(optBuf[:0], actor.WithMailbox(st.mailbox.Producer()), onWorkers)
		if tap := cfg.Taps[name]; tap != nil {
			opts = append(opts, actor.WithReceiverMiddleware(tap))
		}
		pid, err := ctx.SpawnNamed(stageProps(name, cfg, p, newDet, opts), string(name))
		if err != nil {
			a.end(ctx, "spawn failed", fmt.Errorf("spawn %s: %w", name, err))
			return
		}
		st.pid = pid
		a.stages[name] = st
		a.order = append(a.order, st)
	}
	a.setState(messages.StateListening, 0)
	if cfg.Greeting != "" {
		ctx.Send(p.Turn, &messages.Greet{Line: cfg.Greeting, After: cfg.GreetAfter})
	}
}

// spawnOrder is the order the session spawns its stages in: downstream
// first.
var spawnOrder = [...]messages.Stage{
	messages.StagePacer, messages.StageTTS, messages.StageTools, messages.StageLLM,
	messages.StageTurn, messages.StageSTT, messages.StageVAD, messages.StageTransport,
}

// onWorkers puts an actor's mailbox on the system's workers.
var onWorkers = actor.WithDispatcher(kit.SystemWorkers)

// stageProps makes the props of one stage of the call.
func stageProps(name messages.Stage, cfg *Config, p kit.Peers, newDet func() vad.Detector, o []actor.PropsOption) *actor.Props {
	switch name {
	case messages.StagePacer:
		return pacer.Props(cfg.Pacer, p, o...)
	case messages.StageTTS:
		return tts.Props(cfg.TTS, p, cfg.FillerClips, o...)
	case messages.StageTools:
		return tools.PropsWith(cfg.Tools, p, cfg.Log, tools.Options{LogArguments: cfg.LogContent}, o...)
	case messages.StageLLM:
		return llm.Props(cfg.LLMConfig, cfg.LLM, p, cfg.Log, o...)
	case messages.StageTurn:
		return turn.Props(cfg.Turn, p, o...)
	case messages.StageSTT:
		return stt.Props(cfg.STT, p, o...)
	case messages.StageVAD:
		return vad.Props(vad.Config{NewDetector: newDet, Model: cfg.VADModel, TurnModel: cfg.TurnModel}, p, cfg.Log, o...)
	case messages.StageTransport:
		return transport.Props(cfg.Conn, cfg.Tap, p, cfg.Log, o...)
	}
	panic("session: no stage " + string(name))
}

// stageOf maps a child's PID to its stage.
func (a *Actor) stageOf(pid *actor.PID) *stage {
	i := strings.LastIndexByte(pid.Id, '/')
	return a.stages[messages.Stage(pid.Id[i+1:])]
}

// HandleFailure is the session's supervision strategy for its stages.
func (a *Actor) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	st := a.stageOf(child)
	if st == nil || a.ending {
		sup.StopChildren(child)
		return
	}
	now := time.Now()
	st.panics++
	kept := st.failures[:0]
	for _, t := range st.failures {
		if now.Sub(t) < a.cfg.Supervision.Window {
			kept = append(kept, t)
		}
	}
	st.failures = append(kept, now)
	err, _ := reason.(error)
	kind := "panic"
	if err == nil {
		err = fmt.Errorf("panic: %v", reason)
	} else {
		kind = providers.KindOf(err)
	}
	if st.kinds == nil {
		st.kinds = map[string]int{}
	}
	st.kinds[kind]++
	log := a.cfg.Log.Warn().Err(err).Str("call_id", string(a.cfg.Call)).Str("stage", string(st.name))
	if len(st.failures) > a.cfg.Supervision.MaxRestarts {
		log.Msg("stage keeps failing; ending the call")
		a.giveUp(sup, st, err)
		return
	}
	st.restarts++
	a.restarted(st.name)
	delay := time.Duration(0)
	if st.name == messages.StageSTT || st.name == messages.StageTTS {
		delay = a.backoff.Delay(len(st.failures))
	}
	log.Dur("backoff", delay).Msg("restarting stage")
	if delay == 0 {
		sup.RestartChildren(child)
		return
	}
	self, root, msg := a.peers.Session, a.sessionRoot(), &restartDue{child: child, stage: st.name}
	a.timers = append(a.timers, time.AfterFunc(delay, func() { root.Send(self, msg) }))
}

func (a *Actor) giveUp(sup actor.Supervisor, st *stage, err error) {
	a.gaveUp = st.name
	a.reason, a.endErr = "stage "+string(st.name)+" failed", err
	if errors.Is(err, ErrRestartLimit) {
		a.reason = "stage " + string(st.name) + " restarted too often"
	}
	switch st.name {
	case messages.StageTTS, messages.StagePacer, messages.StageTransport, messages.StageTurn, messages.StageLLM:
		// The line cannot be spoken without these: end at once.
		sup.StopChildren(child(st))
		a.sessionRoot().Send(a.peers.Session, &messages.CallDrained{})
	default:
		sup.StopChildren(child(st))
		a.sessionRoot().Send(a.peers.Turn, &messages.EndCall{Line: a.cfg.EndLine})
	}
}

func child(st *stage) *actor.PID { return st.pid }

func (a *Actor) sessionRoot() *actor.RootContext { return a.root }

func (a *Actor) operatorRestart(ctx actor.Context, s messages.Stage) error {
	st, ok := a.stages[s]
	if !ok {
		return fmt.Errorf("%w: unknown stage %q", ErrInvalidConfig, s)
	}
	if a.ending {
		return fmt.Errorf("%w: the call is ending", ErrInvalidConfig)
	}
	// An operator's restarts count toward the stage's limit as its
	// failures do: a storm of them ends the call cleanly instead of
	// restarting the stage for ever.
	now := time.Now()
	kept := st.failures[:0]
	for _, t := range st.failures {
		if now.Sub(t) < a.cfg.Supervision.Window {
			kept = append(kept, t)
		}
	}
	st.failures = append(kept, now)
	if len(st.failures) > a.cfg.Supervision.MaxRestarts {
		err := fmt.Errorf("%w: %s restarted %d times within %s; the call ends", ErrRestartLimit, s, len(st.failures), a.cfg.Supervision.Window)
		a.cfg.Log.Warn().Err(err).Str("call_id", string(a.cfg.Call)).Str("stage", string(s)).Msg("operator restarts past the stage's limit; ending the call")
		a.giveUp(ctx.(actor.Supervisor), st, err)
		return err
	}
	a.opRestarts++
	st.restarts++
	a.restarted(st.name)
	ctx.(actor.Supervisor).RestartChildren(st.pid)
	return nil
}

func (a *Actor) end(ctx actor.Context, reason string, err error) {
	if a.reason == "" || !a.ending {
		if a.reason == "" {
			a.reason = reason
		}
		if a.endErr == nil {
			a.endErr = err
		}
	}
	if a.ending {
		return
	}
	a.ending = true
	// The stages are poisoned, not stopped with the session: a poison
	// pill waits behind what each stage has queued, and what a stage
	// sends while it stops (the audio the recognizer was sent, the
	// synthesiser's last context: the call record's usage) reaches the
	// session before the session stops. protoactor handles a child's
	// Terminated before the user messages queued ahead of it, so the
	// session stops on a message to itself sent after the last
	// Terminated (stagesStopped), which queues behind them; StopTimeout
	// bounds the wait for a stage that does not stop.
	for _, st := range a.order {
		if st.pid != nil {
			ctx.Poison(st.pid)
			a.stagesLeft++
		}
	}
	if a.stagesLeft == 0 {
		a.stopSelf(ctx)
		return
	}
	self, root := ctx.Self(), a.root
	a.timers = append(a.timers, time.AfterFunc(StopTimeout, func() { root.Send(self, &stopDue{}) }))
}

// StopTimeout bounds how long an ending call waits for its stages to
// stop before the session stops them with itself.
const StopTimeout = 2 * time.Second

// stagesStopped: every stage of an ending call terminated, and what they
// sent before has been handled. stopDue: StopTimeout passed.
type (
	stagesStopped struct{}
	stopDue       struct{}
)

// stageStopped counts a terminated stage of an ending call.
func (a *Actor) stageStopped(ctx actor.Context, who *actor.PID) {
	if !a.ending || a.stopping || a.stageOf(who) == nil {
		return
	}
	a.stagesLeft--
	if a.stagesLeft == 0 {
		ctx.Send(ctx.Self(), &stagesStopped{})
	}
}

func (a *Actor) stopSelf(ctx actor.Context) {
	if a.stopping {
		return
	}
	a.stopping = true
	ctx.Stop(ctx.Self())
}

func (a *Actor) mark(m *messages.TurnMark) {
	t, ok := a.byEpoch[m.Epoch]
	if !ok {
		if len(a.timelines) == MaxTimelines {
			delete(a.byEpoch, a.timelines[0].Epoch)
			a.timelines[0] = nil
			a.timelines = a.timelines[1:]
		}
		t = &Timeline{Epoch: m.Epoch, Marks: map[messages.MarkKind]time.Time{}}
		a.byEpoch[m.Epoch] = t
		a.timelines = append(a.timelines, t)
	}
	if _, seen := t.Marks[m.Kind]; !seen {
		t.Marks[m.Kind] = m.At
		if m.Kind == messages.MarkFirstAudioOut {
			a.logTurn(*t)
		}
		a.markEvent(t, m)
	}
}

// logTurn writes one debug event per answered turn: its timeline in
// milliseconds from the end of the caller's speech. No transcript, no
// answer text.
func (a *Actor) logTurn(t Timeline) {
	end, ok := t.Marks[messages.MarkVADStop]
	if !ok {
		return // not a user turn (a closing line)
	}
	ev := a.cfg.Log.Debug().Str("call_id", string(a.cfg.Call)).Uint64("epoch", uint64(t.Epoch))
	for k := messages.MarkSTTFinal; k <= messages.MarkFirstAudioOut; k++ {
		if at, ok := t.Marks[k]; ok {
			ev = ev.Int64(k.String()+"_ms", at.Sub(end).Milliseconds())
		}
	}
	ev.Msg("turn")
}

func (a *Actor) describe(ctx actor.Context, m *messages.Describe) {
	a.nextRef++
	g := &gather{
		asker: ctx.Sender(), ref: m.Ref, waiting: map[messages.Stage]bool{},
		tree: &messages.Description{Ref: m.Ref, Name: "session " + string(a.cfg.Call), State: "live", Counters: a.stats.Snapshot()},
	}
	if a.ending {
		g.tree.State = "ending"
	}
	a.gathers[a.nextRef] = g
	for _, st := range a.order {
		g.waiting[st.name] = true
		ctx.Request(st.pid, &messages.Describe{Ref: a.nextRef})
	}
	self, root, ref := ctx.Self(), ctx.ActorSystem().Root, a.nextRef
	g.timer = time.AfterFunc(DescribeTimeout, func() { root.Send(self, &describeDue{ref: ref}) })
}

func (a *Actor) described(ctx actor.Context, d *messages.Description) {
	g, ok := a.gathers[d.Ref]
	if !ok {
		return
	}
	s := messages.Stage(d.Name)
	if st, ok := a.stages[s]; ok {
		d.Mailbox = st.mailbox.Depth()
		d.Restarts = st.restarts
		if d.Counters == nil {
			d.Counters = map[string]uint64{}
		}
		d.Counters["mailbox_dropped"] = st.mailbox.Dropped()
	}
	d.Ref = g.ref
	g.tree.Children = append(g.tree.Children, d)
	delete(g.waiting, s)
	if len(g.waiting) == 0 {
		a.finishGather(ctx, g)
	}
}

func (a *Actor) finishGather(ctx actor.Context, g *gather) {
	g.timer.Stop()
	for k, v := range a.gathers {
		if v == g {
			delete(a.gathers, k)
		}
	}
	// Children in data-path order, whatever order they answered in.
	rank := map[string]int{}
	for i, s := range messages.Stages() {
		rank[string(s)] = i
	}
	ch := g.tree.Children
	for i := 1; i < len(ch); i++ {
		for j := i; j > 0 && rank[ch[j].Name] < rank[ch[j-1].Name]; j-- {
			ch[j], ch[j-1] = ch[j-1], ch[j]
		}
	}
	if g.asker != nil {
		ctx.Send(g.asker, g.tree)
	}
}

// failureKinds copies the stages' failure counts by kind (stages with
// none are left out).
func (a *Actor) failureKinds() map[messages.Stage]map[string]int {
	out := map[messages.Stage]map[string]int{}
	for _, st := range a.order {
		if len(st.kinds) > 0 {
			out[st.name] = maps.Clone(st.kinds)
		}
	}
	return out
}

func (a *Actor) statsSnapshot() *Stats {
	s := &Stats{Restarts: map[messages.Stage]int{}, Panics: map[messages.Stage]int{}, OperatorRestarts: a.opRestarts, GaveUp: a.gaveUp}
	for _, st := range a.order {
		s.Restarts[st.name] = st.restarts
		s.Panics[st.name] = st.panics
	}
	return s
}
