package fleet

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster/clusterproviders/test"
	"github.com/brisvox/brisvox/messages"
	"go.uber.org/goleak"
)

// benchCalls is the goal: 1 000 live calls across 3 nodes.
const benchCalls = 1000

// BenchmarkOperatorFleet measures, with 1 000 live calls across three
// nodes (idle callers: the sessions' actors and no audio), what an
// operator waits for on node 1's operator API over loopback HTTP:
//
//   - list: GET /operator/calls, every node's calls (the goal: at most
//     100 ms), the body read whole;
//   - describe_remote: GET /operator/calls/{id} of a call on node 2 (the
//     goal: at most 20 ms), through the fleet to n2's operator actor and
//     the call's session and back.
//
// go test -run '^$' -bench BenchmarkOperatorFleet -benchmem ./cmd/internal/fleet
func BenchmarkOperatorFleet(b *testing.B) {
	skipUnderRace(b)
	// The runner's goroutines (the main one waits in run1 for the
	// sub-benchmarks) were there before.
	defer goleak.VerifyNone(b, append(leakOptions, goleak.IgnoreCurrent())...)
	agent := test.NewInMemAgent()
	nodes := []*testNode{
		startNode(b, "n1", agent, benchCalls),
		startNode(b, "n2", agent, benchCalls),
		startNode(b, "n3", agent, benchCalls),
	}
	defer func() {
		for _, n := range nodes {
			n.stop(b)
		}
	}()
	var remote messages.CallID
	for i := range benchCalls {
		n := nodes[i%len(nodes)]
		c := newIdleConn(fmt.Sprintf("b%04d-%s", i, n.name))
		if n.name == "n2" && remote == "" {
			remote = messages.CallID(c.id)
		}
		n.srv.Start(c)
		defer c.Close()
	}
	took := eventually(b, 60*time.Second, "1 000 calls listed on n1", func() (bool, string) {
		got := len(nodes[0].listed(b))
		return got == benchCalls, fmt.Sprintf("%d listed", got)
	})
	b.Logf("1 000 calls listed on n1 %v after the last started", took)
	get := func(b *testing.B, path string) {
		req, err := http.NewRequest("GET", nodes[0].url+path, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		b.SetBytes(n)
	}
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			get(b, "/operator/calls")
		}
	})
	b.Run("describe_remote", func(b *testing.B) {
		for b.Loop() {
			get(b, "/operator/calls/"+string(remote))
		}
	})
}
