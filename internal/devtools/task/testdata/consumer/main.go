// Command consumer uses the engine as a library: the conversation's
// messages and the agent's context rules.
package main

import (
	"fmt"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

func main() {
	call := messages.CallID("call-1")
	m := agent.User("what time is it?")
	fmt.Println(call, agent.EstimateMessageTokens(m))
}
