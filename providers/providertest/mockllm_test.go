package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// llmGot is what one Recv returned and when.
type llmGot struct {
	at  time.Duration
	ev  providers.LLMEvent
	err error
}

// drain calls Recv until it fails and returns everything, the final error
// included.
func drain(t0 time.Time, st providers.LLMStream) []llmGot {
	var out []llmGot
	for {
		ev, err := st.Recv()
		out = append(out, llmGot{at: time.Since(t0), ev: ev, err: err})
		if err != nil {
			return out
		}
	}
}

func TestTextDeltas(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Hello there.", []string{"Hello ", "there."}},
		{"", nil},
		{"one", []string{"one"}},
		{"  lead and trail  ", []string{"  lead ", "and ", "trail  "}},
		{"a\n\nb\tc", []string{"a\n\n", "b\t", "c"}},
		{"naïve café", []string{"naïve ", "café"}},
	}
	for _, tc := range tests {
		got := textDeltas(tc.text)
		if !slices.Equal(got, tc.want) {
			t.Errorf("textDeltas(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if strings.Join(got, "") != tc.text {
			t.Errorf("textDeltas(%q) joined = %q", tc.text, strings.Join(got, ""))
		}
	}
}

func TestMockLLMStream(t *testing.T) {
	tests := []struct {
		name string
		cfg  LLMConfig
		resp Response
		want []llmGot
	}{
		{
			name: "text word by word on the timetable",
			resp: Response{Text: "Hello there. How are you?"},
			want: []llmGot{
				{at: 300 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "Hello "}},
				{at: 330 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "there. "}},
				{at: 360 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "How "}},
				{at: 390 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "are "}},
				{at: 420 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "you?"}},
				{at: 450 * ms, ev: providers.LLMEvent{Kind: providers.LLMDone}},
				{at: 450 * ms, err: io.EOF},
			},
		},
		{
			name: "tool calls after the text, arguments in two fragments",
			cfg:  LLMConfig{FirstToken: 100 * ms, TokenInterval: 10 * ms},
			resp: Response{Text: "One moment.", Calls: []ScriptedCall{
				{ID: "c1", Name: "lookup", Args: `{"city":"Paris"}`},
				{ID: "c2", Name: "now", Args: `{}`},
			}},
			want: []llmGot{
				{at: 100 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "One "}},
				{at: 110 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "moment."}},
				{at: 120 * ms, ev: providers.LLMEvent{Kind: providers.LLMToolCall, Index: 0, ID: "c1", Name: "lookup", Args: `{"city":`}},
				{at: 130 * ms, ev: providers.LLMEvent{Kind: providers.LLMToolCall, Index: 0, Args: `"Paris"}`}},
				{at: 140 * ms, ev: providers.LLMEvent{Kind: providers.LLMToolCall, Index: 1, ID: "c2", Name: "now", Args: `{`}},
				{at: 150 * ms, ev: providers.LLMEvent{Kind: providers.LLMToolCall, Index: 1, Args: `}`}},
				{at: 160 * ms, ev: providers.LLMEvent{Kind: providers.LLMDone}},
				{at: 160 * ms, err: io.EOF},
			},
		},
		{
			name: "per-response first token and connect latency",
			cfg:  LLMConfig{ConnectLatency: 50 * ms},
			resp: Response{Text: "ok", FirstToken: 700 * ms},
			want: []llmGot{
				{at: 750 * ms, ev: providers.LLMEvent{Kind: providers.LLMText, Text: "ok"}},
				{at: 780 * ms, ev: providers.LLMEvent{Kind: providers.LLMDone}},
				{at: 780 * ms, err: io.EOF},
			},
		},
		{
			name: "scripted error at the first event",
			resp: Response{Text: "never", Err: &providers.Rejected{Status: 500}},
			want: []llmGot{{at: 300 * ms, err: providers.ErrRejected}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockLLM(tc.cfg, tc.resp)
				t0 := time.Now()
				st, err := m.Stream(context.Background(), &providers.Request{})
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				checkLLM(t, drain(t0, st), tc.want)
				// A failed or finished stream keeps failing the same way.
				if _, err := st.Recv(); !errors.Is(err, tc.want[len(tc.want)-1].err) {
					t.Errorf("Recv after the end = %v", err)
				}
			})
		})
	}
}

func checkLLM(t *testing.T, got, want []llmGot) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d results %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.at != w.at || !reflect.DeepEqual(g.ev, w.ev) || !errors.Is(g.err, w.err) || (g.err == nil) != (w.err == nil) {
			t.Errorf("result %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestMockLLMFaults(t *testing.T) {
	text := func(at time.Duration, s string) llmGot {
		return llmGot{at: at, ev: providers.LLMEvent{Kind: providers.LLMText, Text: s}}
	}
	done := func(at time.Duration) llmGot { return llmGot{at: at, ev: providers.LLMEvent{Kind: providers.LLMDone}} }
	resp := Response{Text: "a b c d e"} // events due at 300, 330, 360, 390, 420, Done 450
	tests := []struct {
		name  string
		fault Fault
		want  []llmGot
	}{
		{
			name:  "disconnect before event 2",
			fault: Fault{Kind: FaultDisconnect, BeforeEvent: 2},
			want:  []llmGot{text(300*ms, "a "), text(330*ms, "b "), {at: 360 * ms, err: providers.ErrDisconnected}},
		},
		{
			name:  "protocol before event 0",
			fault: Fault{Kind: FaultProtocol},
			want:  []llmGot{{at: 300 * ms, err: providers.ErrProtocol}},
		},
		{
			name:  "delay shifts exactly",
			fault: Fault{Kind: FaultDelay, BeforeEvent: 1, Duration: 100 * ms},
			want: []llmGot{text(300*ms, "a "), text(430*ms, "b "), text(460*ms, "c "), text(490*ms, "d "),
				text(520*ms, "e"), done(550 * ms), {at: 550 * ms, err: io.EOF}},
		},
		{
			name:  "stall with a duration resumes with what fell due",
			fault: Fault{Kind: FaultStall, BeforeEvent: 1, Duration: 100 * ms},
			want: []llmGot{text(300*ms, "a "), text(430*ms, "b "), text(430*ms, "c "), text(430*ms, "d "),
				text(430*ms, "e"), done(450 * ms), {at: 450 * ms, err: io.EOF}},
		},
		{
			name:  "stall forever ends with the context",
			fault: Fault{Kind: FaultStall, BeforeEvent: 1},
			want:  []llmGot{text(300*ms, "a "), {at: 5 * time.Second, err: context.DeadlineExceeded}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockLLM(LLMConfig{}, resp)
				m.Inject(tc.fault)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				t0 := time.Now()
				st, err := m.Stream(ctx, &providers.Request{})
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				checkLLM(t, drain(t0, st), tc.want)
			})
		})
	}
}

func TestMockLLMStreamFaults(t *testing.T) {
	tests := []struct {
		name     string
		fault    Fault
		timeout  time.Duration
		wantTook time.Duration
		wantErr  error
		status   int
	}{
		{name: "reject with the status", fault: Fault{Kind: FaultReject, Status: 401}, wantErr: providers.ErrRejected, status: 401},
		{name: "connect stall delays Stream", fault: Fault{Kind: FaultConnectStall, Duration: 2 * time.Second}, wantTook: 2 * time.Second},
		{name: "connect stall forever ends with the context", fault: Fault{Kind: FaultConnectStall},
			timeout: time.Second, wantTook: time.Second, wantErr: context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockLLM(LLMConfig{}, Response{Text: "kept"})
				m.Inject(tc.fault)
				ctx := context.Background()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				t0 := time.Now()
				st, err := m.Stream(ctx, &providers.Request{})
				if took := time.Since(t0); took != tc.wantTook {
					t.Errorf("Stream took %v, want %v", took, tc.wantTook)
				}
				if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
					t.Fatalf("Stream error %v, want %v", err, tc.wantErr)
				}
				var rej *providers.Rejected
				if tc.status != 0 && (!errors.As(err, &rej) || rej.Status != tc.status) {
					t.Errorf("Stream error %v, want Rejected{%d}", err, tc.status)
				}
				if st == nil {
					// Mutation: consuming the response on a failed Stream
					// leaves the retry with an exhausted script.
					st, err = m.Stream(context.Background(), &providers.Request{})
					if err != nil {
						t.Fatalf("retry: %v", err)
					}
				}
				ev, err := st.Recv()
				if err != nil || ev.Text != "kept" {
					t.Errorf("Recv = %+v, %v, want the scripted text", ev, err)
				}
				st.Close()
			})
		})
	}
}

func TestMockLLMScriptExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockLLM(LLMConfig{})
		if _, err := m.Stream(context.Background(), &providers.Request{}); !errors.Is(err, ErrScriptExhausted) {
			t.Fatalf("Stream on an empty script = %v", err)
		}
		m.Push(Response{Text: "one"}, Response{Text: "two"})
		for _, want := range []string{"one", "two"} {
			st, err := m.Stream(context.Background(), &providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			got := drain(time.Now(), st)
			if got[0].ev.Text != want {
				t.Errorf("first event %+v, want %q", got[0], want)
			}
			st.Close()
		}
		if m.Connects() != 3 {
			t.Errorf("Connects() = %d, want 3", m.Connects())
		}
		// Each stream sent its text and Done.
		if m.EventsSent() != 4 {
			t.Errorf("EventsSent() = %d, want 4", m.EventsSent())
		}
	})
}

func TestMockLLMCloseAndCancelUnblockRecv(t *testing.T) {
	tests := []struct {
		name    string
		end     func(st providers.LLMStream, cancel context.CancelFunc)
		wantErr error
	}{
		{name: "close", end: func(st providers.LLMStream, _ context.CancelFunc) { st.Close() }, wantErr: providers.ErrClosed},
		{name: "cancel", end: func(_ providers.LLMStream, cancel context.CancelFunc) { cancel() }, wantErr: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := NewMockLLM(LLMConfig{}, Response{Text: "late"})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				st, err := m.Stream(ctx, &providers.Request{})
				if err != nil {
					t.Fatal(err)
				}
				time.AfterFunc(100*ms, func() { tc.end(st, cancel) })
				t0 := time.Now()
				_, err = st.Recv()
				if !errors.Is(err, tc.wantErr) || time.Since(t0) != 100*ms {
					t.Fatalf("Recv = %v after %v, want %v after 100ms", err, time.Since(t0), tc.wantErr)
				}
				if _, err := st.Recv(); !errors.Is(err, tc.wantErr) {
					t.Fatalf("second Recv = %v", err)
				}
				st.Close()
			})
		})
	}
}

func TestMockLLMRequestsAreDeepCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockLLM(LLMConfig{}, Response{Text: "ok"})
		req := &providers.Request{
			Messages: []agent.Message{
				agent.System("be brief"),
				{Role: agent.RoleAssistant, ProviderData: []byte("sig"),
					ToolCalls: []messages.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}},
			},
			Tools: []providers.ToolDef{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}},
		}
		st, err := m.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		// Mutation: a shallow copy of the messages sees these writes.
		req.Messages[0].Text = "changed"
		req.Messages[1].ProviderData[0] = 'X'
		req.Messages[1].ToolCalls[0].Arguments[2] = 'X'
		req.Tools[0].Parameters[2] = 'X'

		check := func(r providers.Request) {
			t.Helper()
			if r.Messages[0].Text != "be brief" || string(r.Messages[1].ProviderData) != "sig" ||
				string(r.Messages[1].ToolCalls[0].Arguments) != `{"a":1}` ||
				string(r.Tools[0].Parameters) != `{"type":"object"}` {
				t.Fatalf("recorded request changed: %+v", r)
			}
		}
		got := m.Requests()
		if len(got) != 1 {
			t.Fatalf("Requests() has %d requests", len(got))
		}
		check(got[0])
		got[0].Messages[1].ProviderData[0] = 'Y'
		got[0].Tools[0].Parameters[0] = 'Y'
		check(m.Requests()[0])
	})
}

// TestMockLLMUnrecorded: an Unrecorded mock answers as usual and keeps no
// request. (Mutation caught: the request copied despite the flag.)
func TestMockLLMUnrecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMockLLM(LLMConfig{Unrecorded: true}, Response{Text: "ok"})
		st, err := m.Stream(context.Background(), &providers.Request{Messages: []agent.Message{agent.System("be brief")}})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ev, err := st.Recv()
		if err != nil || ev.Text != "ok" {
			t.Fatalf("Recv = %+v, %v; want the scripted text", ev, err)
		}
		if n := len(m.Requests()); n != 0 {
			t.Fatalf("Requests() has %d requests, want none", n)
		}
	})
}
