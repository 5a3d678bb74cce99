package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"github.com/brisvox/brisvox/cmd/internal/fleet/operatorpb"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/messages"
	"google.golang.org/protobuf/proto"
)

// wire is what a message becomes on its way to another node.
func wire[T proto.Message](t *testing.T, m T) T {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(T)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonOf is the operator API's form of v.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNodeRoundTrip: a node's entry crosses the wire and is shown as its
// own node shows it, its drain and measured admission included.
// Mutation caught: a JSON name of serve's admission misspelt here (its
// field left zero).
func TestNodeRoundTrip(t *testing.T) {
	local := `{"node":"n2","self":false,"live_calls":3,"max_calls":20,"draining":true,` +
		`"drain":{"by":"operator","started":"2026-12-03T14:00:00.123456789Z","live_at_start":5},` +
		`"admission":{"baseline_cores":0.05,"per_call_cores":0.01,"measured_per_call_cores":0.012,"samples":7,` +
		`"cores":2,"ceiling":0.75,"machine_busy":0.3,"starved_samples":1,"load":0.41},"uptime_ms":123456}`
	cases := []struct{ name, json string }{
		{"admitting", `{"node":"n1","self":false,"live_calls":0,"max_calls":20,"draining":false,"uptime_ms":5}`},
		{"drained, measured", local},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n serve.NodeInfo
			if err := json.Unmarshal([]byte(tc.json), &n); err != nil {
				t.Fatal(err)
			}
			got, err := nodeOf(wire(t, nodePB(n)))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := jsonOf(t, n), jsonOf(t, got); a != b {
				t.Errorf("after the wire:\n got %s\nwant %s", b, a)
			}
			if n.Drain != nil && !reflect.DeepEqual(n.Drain, got.Drain) {
				t.Errorf("drain %+v, want %+v", got.Drain, n.Drain)
			}
		})
	}
}

// TestDetailRoundTrip: a call's summary, tree and timelines cross the
// wire whole. Mutation caught: the children of a child lost (only one
// level converted).
func TestDetailRoundTrip(t *testing.T) {
	last := 412.5
	started := time.Date(2026, 12, 3, 14, 0, 0, 123000000, time.UTC)
	cases := []struct {
		name string
		d    serve.CallDetail
	}{
		{"no turn yet", serve.CallDetail{
			Call:  serve.CallSummary{ID: "c1", Node: "n2", Transport: "sip", Agent: "demo", State: "starting", Started: started, AgeMS: 10},
			Tree:  &messages.Description{Name: "session", State: "running"},
			Turns: []serve.TurnTimeline{}, // serve's DescribeCall's: never null
		}},
		{"a tree and turns", serve.CallDetail{
			Call: serve.CallSummary{ID: "c2", Node: "n2", Transport: "webrtc", Agent: "demo", State: "speaking", Started: started, AgeMS: 12345, Turns: 3, LastTurnMS: &last, Restarts: 1},
			Tree: &messages.Description{Name: "session", State: "running", Children: []*messages.Description{
				{Name: "transport", State: "running", Mailbox: 2, Counters: map[string]uint64{"frames_in": 1234}, Info: map[string]string{"codec": "PCMU"},
					Children: []*messages.Description{{Name: "conn", State: "up", Restarts: 4}}},
				{Name: "stt", State: "unresponsive", Restarts: 1},
			}},
			Turns: []serve.TurnTimeline{{Epoch: 3, At: started.Add(5 * time.Second), MarksMS: map[string]float64{"vad_stop": 0, "stt_final": 212.3, "first_audio_out": 640.2}}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := detailOf(wire(t, detailPB(tc.d)))
			if a, b := jsonOf(t, tc.d), jsonOf(t, got); a != b {
				t.Errorf("after the wire:\n got %s\nwant %s", b, a)
			}
		})
	}
}

// TestErrorCodes: each of serve's errors a node answers is the same
// error where it is asked, its text kept; anything else is ErrRemote.
// Mutation caught: a code mapped to the wrong sentinel (unknown stage
// as unknown call).
func TestErrorCodes(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error
		text string
	}{
		{"unknown call", fmt.Errorf("%w: c9", serve.ErrUnknownCall), serve.ErrUnknownCall, "serve: unknown call: c9 (on n2)"},
		{"unknown node", fmt.Errorf("%w: \"n9\"", serve.ErrUnknownNode), serve.ErrUnknownNode, `serve: unknown node: "n9" (on n2)`},
		{"unknown stage", fmt.Errorf("%w: \"mixer\"", serve.ErrUnknownStage), serve.ErrUnknownStage, `serve: unknown stage: "mixer" (on n2)`},
		{"refused", fmt.Errorf("%w: the call is ending", serve.ErrRefused), serve.ErrRefused, "serve: refused: the call is ending (on n2)"},
		{"no recording", fmt.Errorf("%w: no live recording of c2", serve.ErrNoRecording), serve.ErrNoRecording, "serve: no recording: no live recording of c2 (on n2)"},
		{"timeout", errors.New("serve: call c1 did not answer: future: timeout"), ErrRemote, "fleet: the node could not carry out the command: n2: serve: call c1 did not answer: future: timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorOf("n2", wire(t, errorPB(tc.err)))
			if !errors.Is(got, tc.want) {
				t.Errorf("%v: not %v", got, tc.want)
			}
			if got.Error() != tc.text {
				t.Errorf("text %q, want %q", got.Error(), tc.text)
			}
		})
	}
}

// TestConfigValidate: a bad config says what is wrong. Mutation caught:
// seeds not required by automanaged.
func TestConfigValidate(t *testing.T) {
	ok := Config{Node: "n1", Addr: "127.0.0.1:0", Seeds: []string{"10.0.0.1:6330"}}
	cases := []struct {
		name string
		edit func(*Config)
		opts options
		bad  bool
	}{
		{"automanaged with seeds", func(*Config) {}, options{}, false},
		{"kubernetes", func(c *Config) { c.Provider, c.Seeds = ProviderKubernetes, nil }, options{}, false},
		{"no node", func(c *Config) { c.Node = "" }, options{}, true},
		{"no address", func(c *Config) { c.Addr = "" }, options{}, true},
		{"a port out of range", func(c *Config) { c.Addr = "127.0.0.1:70000" }, options{}, true},
		{"automanaged without seeds", func(c *Config) { c.Seeds = nil }, options{}, true},
		{"a seed without a port", func(c *Config) { c.Seeds = []string{"10.0.0.1"} }, options{}, true},
		{"kubernetes with seeds", func(c *Config) { c.Provider = ProviderKubernetes }, options{}, true},
		{"an unknown provider", func(c *Config) { c.Provider = "consul" }, options{}, true},
		{"advertised on all interfaces", func(c *Config) { c.Advertise = "0.0.0.0:7070" }, options{}, true},
		{"advertised without a port", func(c *Config) { c.Advertise = "10.0.0.2:0" }, options{}, true},
		{"advertised", func(c *Config) { c.Advertise = "10.0.0.2:7070" }, options{}, false},
		{"drop before a refresh", func(c *Config) { c.Refresh, c.DropAfter = time.Second, time.Millisecond*500 }, options{}, true},
		{"a refresh too fast", func(c *Config) { c.Refresh = time.Millisecond }, options{}, true},
		{"a provider given and seeds", func(c *Config) {}, options{provider: &nopProvider{}}, true},
		{"a provider given", func(c *Config) { c.Seeds = nil }, options{provider: &nopProvider{}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.withDefaults(tc.opts).validate(tc.opts)
			if tc.bad != (err != nil) {
				t.Fatalf("validate: %v, want bad %v", err, tc.bad)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%v is not ErrInvalidConfig", err)
			}
		})
	}
}

// TestWorkIsBounded: the operator actor's work group runs at most its
// cap at once and refuses the next at once. Mutation caught: a full
// group that blocks (the actor's Receive would wait).
func TestWorkIsBounded(t *testing.T) {
	w := newWork(2)
	release := make(chan struct{})
	for range 2 {
		if !w.Go(func() { <-release }) {
			t.Fatal("refused under its cap")
		}
	}
	third := make(chan bool, 1)
	go func() { third <- w.Go(func() {}) }()
	select {
	case ran := <-third:
		if ran {
			t.Error("a third ran beside two at a cap of 2")
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("Go waited for a slot with the group full: the actor's Receive would block")
	}
	close(release)
	w.Wait()
	if !w.Go(func() {}) {
		t.Error("refused once the others ended")
	}
	w.Wait()
}

// TestOperatorAnswers: the node actor's answers to each command, on a
// fake node: the drain of another node's name is refused as unknown, a
// node's error codes reach the asker. Mutation caught: DrainNode
// carried out whatever node it names.
func TestOperatorAnswers(t *testing.T) {
	n := &fakeNode{name: "n2"}
	o := &operator{node: n}
	cases := []struct {
		name string
		msg  proto.Message
		want string // the answer's type, or its error code
	}{
		{"drain of this node", &operatorpb.DrainNode{Node: "n2"}, "*operatorpb.NodeInfo"},
		{"drain of another name", &operatorpb.DrainNode{Node: "n3"}, "CODE_UNKNOWN_NODE"},
		{"undrain while shutting down", &operatorpb.UndrainNode{Node: "n2"}, "CODE_REFUSED"},
		{"restart an unknown call", &operatorpb.RestartStage{Call: "x", Stage: "stt"}, "CODE_UNKNOWN_CALL"},
		{"hang up", &operatorpb.HangupCall{Call: "c1"}, "*operatorpb.HangupAccepted"},
		{"describe", &operatorpb.DescribeCall{Call: "c1"}, "*operatorpb.CallDetail"},
		{"pause a recording", &operatorpb.PauseRecording{Call: "c1", Pause: true}, "*operatorpb.RecordingPaused"},
		{"pause a call not recorded", &operatorpb.PauseRecording{Call: "c2", Pause: true}, "CODE_NO_RECORDING"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := o.answer(tc.msg)
			got := fmt.Sprintf("%T", r)
			if e, ok := r.(*operatorpb.Error); ok {
				got = e.GetCode().String()
			}
			if got != tc.want {
				t.Errorf("answer %s, want %s", got, tc.want)
			}
		})
	}
	if n.drains != 1 {
		t.Errorf("%d drains, want 1 (of this node's name only)", n.drains)
	}
}

// nopProvider is a membership that is never started.
type nopProvider struct{}

func (*nopProvider) StartMember(*cluster.Cluster) error { return nil }
func (*nopProvider) StartClient(*cluster.Cluster) error { return nil }
func (*nopProvider) Shutdown(bool) error                { return nil }

// fakeNode is a node whose undrain is refused (it shuts down) and which
// knows call c1 only.
type fakeNode struct {
	name   string
	drains int
}

func (f *fakeNode) Calls() []serve.CallSummary { return nil }
func (f *fakeNode) Node() serve.NodeInfo       { return serve.NodeInfo{Node: f.name} }
func (f *fakeNode) DescribeCall(id messages.CallID) (serve.CallDetail, error) {
	if id != "c1" {
		return serve.CallDetail{}, fmt.Errorf("%w: %s", serve.ErrUnknownCall, id)
	}
	return serve.CallDetail{Call: serve.CallSummary{ID: id}}, nil
}
func (f *fakeNode) RestartStage(id messages.CallID, _ messages.Stage) error {
	if id != "c1" {
		return fmt.Errorf("%w: %s", serve.ErrUnknownCall, id)
	}
	return nil
}
func (f *fakeNode) HangupCall(id messages.CallID) error {
	if id != "c1" {
		return fmt.Errorf("%w: %s", serve.ErrUnknownCall, id)
	}
	return nil
}
func (f *fakeNode) SetRecordingPaused(id messages.CallID, _ bool) error {
	if id != "c1" {
		return fmt.Errorf("%w: no live recording of %s", serve.ErrNoRecording, id)
	}
	return nil
}
func (f *fakeNode) Drain() serve.NodeInfo { f.drains++; return f.Node() }
func (f *fakeNode) Undrain() (serve.NodeInfo, error) {
	return f.Node(), fmt.Errorf("%w: the node is shutting down", serve.ErrRefused)
}
