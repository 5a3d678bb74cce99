package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/cmd/internal/fleet/operatorpb"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// Fleet is a node's member of the cluster and its view of the others:
// serve's Fleet.
type Fleet struct {
	cfg  Config
	opts options
	srv  *serve.Server
	node node
	log  zerolog.Logger

	sys  *kit.System
	cl   *cluster.Cluster
	sub  *eventstream.Subscription
	op   *actor.PID
	work *work
	quit chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	state   fleetState
	members map[string]string // the other members' ids and addresses
	view    map[string]*entry // by member id
}

type fleetState uint8

const (
	made fleetState = iota
	started
	stopped
)

// entry is one other member as last heard of.
type entry struct {
	addr  string
	calls serve.NodeCalls
	at    time.Time // its answer's arrival
}

var _ serve.Fleet = (*Fleet)(nil)

// New makes srv's member of the fleet; Start joins it, then
// srv.JoinFleet(f) before srv.Serve. It does no I/O.
func New(cfg Config, srv *serve.Server, opts ...Option) (*Fleet, error) {
	if srv == nil {
		return nil, fmt.Errorf("%w: no server", ErrInvalidConfig)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	self := srv.Node().Node
	if cfg.Node == "" {
		cfg.Node = self
	}
	if cfg.Node != self {
		return nil, fmt.Errorf("%w: node %q, but the server is %q (serve.Config.Node): give both the same name", ErrInvalidConfig, cfg.Node, self)
	}
	cfg = cfg.withDefaults(o)
	if err := cfg.validate(o); err != nil {
		return nil, err
	}
	return &Fleet{
		cfg: cfg, opts: o, srv: srv, node: srv, log: cfg.Log.With().Str("node", cfg.Node).Logger(),
		work: newWork(cfg.Workers), quit: make(chan struct{}),
		members: map[string]string{}, view: map[string]*entry{},
	}, nil
}

// Start joins the cluster: the node's remote listens on Config.Addr, the
// membership provider registers it, its operator actor answers, and the
// view of the others is refreshed every Config.Refresh until Stop.
func (f *Fleet) Start() (err error) {
	f.mu.Lock()
	if f.state != made {
		f.mu.Unlock()
		return fmt.Errorf("%w: Start after Start or Stop", ErrState)
	}
	f.state = started
	f.mu.Unlock()

	provider, err := f.provider()
	if err != nil {
		return err
	}
	host, port, _ := hostPort(f.cfg.Addr)
	var ropts []remote.ConfigOption
	if f.cfg.Advertise != "" {
		ropts = append(ropts, remote.WithAdvertisedHost(f.cfg.Advertise))
	}
	// protoactor logs a failure per attempt (the automanaged provider an
	// error per seed it cannot reach, every Refresh): a burst a minute
	// of its lines reaches the log.
	f.sys = kit.NewSystem(f.log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Minute}))
	ccfg := cluster.Configure(f.cfg.Cluster, provider, disthash.New(), remote.Configure(host, port, ropts...))
	// protoactor's cluster panics where it cannot start (the remote's
	// port taken, the provider refusing): an error here.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v (is --cluster-addr %s free and the membership reachable?)", ErrStart, r, f.cfg.Addr)
		}
	}()
	f.cl = cluster.New(f.sys.ActorSystem, ccfg)
	f.sub = f.sys.EventStream.Subscribe(f.onTopology)
	f.cl.StartMember()
	f.op, err = f.sys.Root.SpawnNamed(actor.PropsFromProducer(newOperator(f.node, f.work, f.log)), operatorName)
	if err != nil {
		return fmt.Errorf("%w: the operator actor: %v", ErrStart, err)
	}
	f.log.Info().Str("cluster", f.cfg.Cluster).Str("address", f.sys.Address()).Msg("fleet: joined the cluster")
	f.wg.Go(f.refreshLoop)
	return nil
}

// Address is the HOST:PORT the other nodes reach this one at (after
// Start).
func (f *Fleet) Address() string {
	if f.sys == nil {
		return ""
	}
	return f.sys.Address()
}

// Stop leaves the cluster: the refresh ends, the operator actor stops
// and its commands in flight end (up to serve's 5 s), the membership
// deregisters the node and the remote closes. It returns when every
// goroutine the fleet started has ended. Stop before the server's Serve
// returns, or after: the commands of a stopped server answer unknown.
func (f *Fleet) Stop() {
	f.mu.Lock()
	was := f.state
	f.state = stopped
	f.mu.Unlock()
	if was != started || f.cl == nil {
		return
	}
	close(f.quit)
	f.wg.Wait()
	if f.op != nil {
		_ = f.sys.Root.StopFuture(f.op).Wait()
	}
	f.work.Wait()
	if f.sub != nil {
		f.sys.EventStream.Unsubscribe(f.sub)
	}
	f.cl.Shutdown(true)
	f.mu.Lock()
	clear(f.view)
	clear(f.members)
	f.mu.Unlock()
	f.log.Info().Msg("fleet: left the cluster")
}

// onTopology keeps the other members from the cluster's member list
// (its ClusterTopology events, published under the list's lock: only
// copied here). A member that left leaves the view at once.
func (f *Fleet) onTopology(evt any) {
	t, ok := evt.(*cluster.ClusterTopology)
	if !ok {
		return
	}
	self := f.sys.ID
	members := make(map[string]string, len(t.Members))
	for _, m := range t.Members {
		if m.Id != self {
			members[m.Id] = m.Address()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members = members
	for id := range f.view {
		if _, ok := members[id]; !ok {
			delete(f.view, id)
		}
	}
}

func (f *Fleet) refreshLoop() {
	tick := time.NewTicker(f.cfg.Refresh)
	defer tick.Stop()
	for {
		f.refresh()
		select {
		case <-f.quit:
			return
		case <-tick.C:
		}
	}
}

// refresh asks every other member for its calls at once and waits up to
// a Refresh for the answers; a member that has not answered for
// DropAfter leaves the view.
func (f *Fleet) refresh() {
	f.mu.Lock()
	members := maps.Clone(f.members)
	f.mu.Unlock()
	type ask struct {
		id, addr string
		fut      *actor.Future
	}
	asks := make([]ask, 0, len(members))
	for id, addr := range members {
		asks = append(asks, ask{id, addr, f.sys.Root.RequestFuture(actor.NewPID(addr, operatorName), &operatorpb.ListCalls{}, f.cfg.Refresh)})
	}
	fresh := make(map[string]*entry, len(asks))
	for _, a := range asks {
		res, err := a.fut.Result()
		if err != nil {
			continue
		}
		list, ok := res.(*operatorpb.CallList)
		if !ok {
			continue
		}
		n, err := nodeOf(list.GetNode())
		if err != nil {
			f.log.Warn().Err(err).Str("member", a.addr).Msg("fleet: a member's entry does not decode")
			continue
		}
		calls := make([]serve.CallSummary, len(list.GetCalls()))
		for i, c := range list.GetCalls() {
			calls[i] = summaryOf(c)
		}
		fresh[a.id] = &entry{addr: a.addr, calls: serve.NodeCalls{Node: n, Calls: calls}, at: time.Now()}
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, e := range fresh {
		if _, still := f.members[id]; still {
			f.view[id] = e
		}
	}
	for id, e := range f.view {
		if now.Sub(e.at) > f.cfg.DropAfter {
			f.log.Warn().Str("member", e.addr).Str("peer", e.calls.Node.Node).Dur("silent", now.Sub(e.at)).Msg("fleet: a member stopped answering; its calls leave the view")
			delete(f.view, id)
		}
	}
}

// Others implements serve.Fleet: the other members as last heard of,
// sorted by node, their calls' ages and uptimes moved on to now. A member
// whose name is this node's is left out (a misconfigured fleet: two
// nodes of one name).
func (f *Fleet) Others() []serve.NodeCalls {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]serve.NodeCalls, 0, len(f.view))
	for _, e := range f.view {
		if e.calls.Node.Node == f.cfg.Node {
			continue
		}
		since := now.Sub(e.at).Milliseconds()
		n := e.calls.Node
		n.Self = false
		n.UptimeMS += since
		calls := make([]serve.CallSummary, len(e.calls.Calls))
		for i, c := range e.calls.Calls {
			c.AgeMS += since
			calls[i] = c
		}
		out = append(out, serve.NodeCalls{Node: n, Calls: calls})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node.Node < out[j].Node.Node })
	return out
}

// addrOf is the address of the member named node.
func (f *Fleet) addrOf(node string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.view {
		if e.calls.Node.Node == node {
			return e.addr, true
		}
	}
	return "", false
}

// requestTimeout bounds a command when its context has no deadline:
// serve's own wait for a call (5 s) and the way there and back.
const requestTimeout = 6 * time.Second

// ask sends a command to node's operator actor and waits for its answer
// until ctx's deadline: an Error answer is serve's error, no answer
// serve.ErrNodeUnreachable.
func (f *Fleet) ask(ctx context.Context, node string, msg proto.Message) (any, error) {
	addr, ok := f.addrOf(node)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a member of the fleet (any more)", serve.ErrNodeUnreachable, node)
	}
	timeout := requestTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if err := ctx.Err(); err != nil || timeout <= 0 {
		return nil, fmt.Errorf("%w: %s: no time left to ask: %v", serve.ErrNodeUnreachable, node, context.Cause(ctx))
	}
	res, err := f.sys.Root.RequestFuture(actor.NewPID(addr, operatorName), msg, timeout).Result()
	if err != nil {
		if errors.Is(err, actor.ErrTimeout) {
			err = fmt.Errorf("no answer in %v", timeout.Round(time.Millisecond))
		}
		return nil, fmt.Errorf("%w: %s at %s: %v", serve.ErrNodeUnreachable, node, addr, err)
	}
	switch r := res.(type) {
	case *operatorpb.Error:
		return nil, errorOf(node, r)
	case *actor.DeadLetterResponse:
		return nil, fmt.Errorf("%w: %s at %s has no operator actor (stopping?)", serve.ErrNodeUnreachable, node, addr)
	}
	return res, nil
}

// unexpected is an answer of the wrong kind.
func unexpected(node string, res any) error {
	return fmt.Errorf("%w: %s answered %T", ErrRemote, node, res)
}

// Describe implements serve.Fleet.
func (f *Fleet) Describe(ctx context.Context, node string, id messages.CallID) (serve.CallDetail, error) {
	res, err := f.ask(ctx, node, &operatorpb.DescribeCall{Call: string(id)})
	if err != nil {
		return serve.CallDetail{}, err
	}
	d, ok := res.(*operatorpb.CallDetail)
	if !ok {
		return serve.CallDetail{}, unexpected(node, res)
	}
	return detailOf(d), nil
}

// Restart implements serve.Fleet.
func (f *Fleet) Restart(ctx context.Context, node string, id messages.CallID, stage messages.Stage) error {
	res, err := f.ask(ctx, node, &operatorpb.RestartStage{Call: string(id), Stage: string(stage)})
	if err != nil {
		return err
	}
	if _, ok := res.(*operatorpb.Restarted); !ok {
		return unexpected(node, res)
	}
	return nil
}

// Hangup implements serve.Fleet.
func (f *Fleet) Hangup(ctx context.Context, node string, id messages.CallID) error {
	res, err := f.ask(ctx, node, &operatorpb.HangupCall{Call: string(id)})
	if err != nil {
		return err
	}
	if _, ok := res.(*operatorpb.HangupAccepted); !ok {
		return unexpected(node, res)
	}
	return nil
}

// PauseRecording implements serve.Fleet.
func (f *Fleet) PauseRecording(ctx context.Context, node string, id messages.CallID, pause bool) error {
	res, err := f.ask(ctx, node, &operatorpb.PauseRecording{Call: string(id), Pause: pause})
	if err != nil {
		return err
	}
	if p, ok := res.(*operatorpb.RecordingPaused); !ok || p.GetPaused() != pause {
		return unexpected(node, res)
	}
	return nil
}

// Drain implements serve.Fleet.
func (f *Fleet) Drain(ctx context.Context, node string) (serve.NodeInfo, error) {
	return f.nodeCommand(ctx, node, &operatorpb.DrainNode{Node: node})
}

// Undrain implements serve.Fleet.
func (f *Fleet) Undrain(ctx context.Context, node string) (serve.NodeInfo, error) {
	return f.nodeCommand(ctx, node, &operatorpb.UndrainNode{Node: node})
}

func (f *Fleet) nodeCommand(ctx context.Context, node string, msg proto.Message) (serve.NodeInfo, error) {
	res, err := f.ask(ctx, node, msg)
	if err != nil {
		return serve.NodeInfo{}, err
	}
	p, ok := res.(*operatorpb.NodeInfo)
	if !ok {
		return serve.NodeInfo{}, unexpected(node, res)
	}
	n, err := nodeOf(p)
	if err != nil {
		return serve.NodeInfo{}, err
	}
	f.updateNode(node, n)
	return n, nil
}

// updateNode puts a node's entry from a command's answer into the view
// at once, so the list shows a drain without waiting for the refresh.
func (f *Fleet) updateNode(node string, n serve.NodeInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.view {
		if e.calls.Node.Node == node {
			// The age of the entry's calls is as of e.at: the node's
			// uptime moves with it.
			n.UptimeMS -= time.Since(e.at).Milliseconds()
			e.calls.Node = n
		}
	}
}

// provider is the membership the node joins with.
func (f *Fleet) provider() (cluster.ClusterProvider, error) {
	if f.opts.provider != nil {
		return f.opts.provider, nil
	}
	switch f.cfg.Provider {
	case ProviderAutomanaged:
		return automanagedProvider(f.cfg)
	case ProviderKubernetes:
		return kubernetesProvider()
	}
	return nil, fmt.Errorf("%w: membership provider %q", ErrInvalidConfig, f.cfg.Provider)
}

// portFree says whether port can be listened on, on every interface.
func portFree(port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return ln.Close()
}
