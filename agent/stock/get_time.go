package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	// The zone database in the binary: time.LoadLocation then works on a
	// machine without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/brisvox/brisvox/agent"
)

// GetTimeTool is the name the model calls get_time by.
const GetTimeTool = "get_time"

// ErrUnknownTimezone: get_time was asked for a zone the zone database does
// not know. The error's text tells the model what to do instead.
var ErrUnknownTimezone = errors.New("unknown timezone")

// Clock tells the time. The tools read time only through it, so a test
// fixes it and an answer can be checked exactly.
type Clock interface {
	Now() time.Time
}

// ClockFunc adapts a function to a Clock: ClockFunc(time.Now) in
// production.
type ClockFunc func() time.Time

var _ Clock = ClockFunc(nil)

// Now implements Clock.
func (f ClockFunc) Now() time.Time { return f() }

const getTimeParameters = `{"type":"object","properties":{"timezone":{"type":"string","minLength":1,"maxLength":64,` +
	`"description":"The IANA time zone name, like Europe/Paris or America/New_York."}},` +
	`"required":["timezone"],"additionalProperties":false}`

// GetTime returns the get_time tool: get_time(timezone) answers
// {"time": now in that zone, RFC 3339}, now read from clock. It is
// ReadOnly. A zone the database does not know is an error wrapping
// ErrUnknownTimezone, whose text tells the model to ask the caller for
// their city or to use an IANA name.
func GetTime(clock Clock) agent.Tool {
	spec := agent.NewSpec(GetTimeTool,
		"Tells the current date and time in a time zone. Use it when the caller asks what time or day it is somewhere.",
		agent.ReadOnly)
	spec.Parameters = json.RawMessage(getTimeParameters)
	return &getTime{spec: spec, clock: clock}
}

type getTime struct {
	spec  agent.Spec
	clock Clock
}

var _ agent.Tool = (*getTime)(nil)

func (t *getTime) Spec() agent.Spec { return t.spec }

func (t *getTime) Call(_ context.Context, args json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
	var a struct {
		Timezone string `json:"timezone"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return agent.Output{}, fmt.Errorf("the arguments are not {\"timezone\": string}: %v", err)
	}
	loc, err := loadZone(a.Timezone)
	if err != nil {
		return agent.Output{}, fmt.Errorf("%w %q: ask the caller for their city or use an IANA name like Europe/Paris", ErrUnknownTimezone, a.Timezone)
	}
	now := t.clock.Now().In(loc)
	out, err := json.Marshal(struct {
		Time string `json:"time"`
	}{now.Format(time.RFC3339)})
	if err != nil {
		return agent.Output{}, err
	}
	return agent.Output{Content: string(out), Summary: now.Format("15:04") + " in " + loc.String()}, nil
}

// loadZone is time.LoadLocation without its two names that are not the
// caller's zone: "" (UTC) and "Local" (the server's zone).
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, ErrUnknownTimezone
	}
	return time.LoadLocation(name)
}
