package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// stubTool stands in for the SIP layer's tool behind a telephony spec.
func stubTool(spec Spec) Tool {
	return NewFuncTool(spec, func(context.Context, json.RawMessage, CallInfo) (Output, error) {
		return Output{Content: `{"ok":true}`}, nil
	})
}

func TestTelephonySpecsDeclare(t *testing.T) {
	tests := []struct {
		name       string
		spec       Spec
		wantName   string
		repeatable bool
		confirm    bool
	}{
		// Catches a transfer or a hang-up made Repeatable: a second
		// identical call in the same turn would then run again.
		// Catches transfer_call losing its confirmation gate by default.
		{name: "transfer_call", spec: TransferCallSpec(), wantName: TransferCallTool, confirm: true},
		{name: "end_call", spec: EndCallSpec(), wantName: EndCallTool},
		// Catches send_dtmf losing Repeatable: pressing "1" twice in two
		// responses would be refused as already_done.
		{name: "send_dtmf", spec: SendDTMFSpec(), wantName: SendDTMFTool, repeatable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := NewRegistry(stubTool(tt.spec))
			if err != nil {
				t.Fatalf("register: %v", err)
			}
			_, got, ok := reg.Lookup(tt.wantName)
			if !ok {
				t.Fatalf("%q not registered under its name", tt.wantName)
			}
			if got.Effect != SideEffect {
				t.Errorf("Effect = %v, want %v", got.Effect, SideEffect)
			}
			if got.Repeatable != tt.repeatable {
				t.Errorf("Repeatable = %v, want %v", got.Repeatable, tt.repeatable)
			}
			if got.Confirm != tt.confirm {
				t.Errorf("Confirm = %v, want %v", got.Confirm, tt.confirm)
			}
			if got.Description == "" {
				t.Error("no description: the model would not know when to call it")
			}
			var schema struct {
				Type                 string          `json:"type"`
				AdditionalProperties *bool           `json:"additionalProperties"`
				Properties           map[string]any  `json:"properties"`
				Required             json.RawMessage `json:"required"`
			}
			if err := json.Unmarshal(got.Parameters, &schema); err != nil {
				t.Fatalf("parameters: %v", err)
			}
			if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Errorf("parameters must be an object schema with additionalProperties false: %s", got.Parameters)
			}
		})
	}
}

func TestTelephonySpecsInNameOrder(t *testing.T) {
	specs := TelephonySpecs()
	tools := make([]Tool, len(specs))
	for i, s := range specs {
		tools[i] = stubTool(s)
	}
	reg, err := NewRegistry(tools...)
	if err != nil {
		t.Fatalf("register all three: %v", err)
	}
	var names, regNames []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	for _, s := range reg.Specs() {
		regNames = append(regNames, s.Name)
	}
	want := []string{EndCallTool, SendDTMFTool, TransferCallTool}
	if !slices.Equal(names, want) || !slices.Equal(regNames, want) {
		t.Errorf("TelephonySpecs names %v, registry %v; want %v", names, regNames, want)
	}

	// Catches specs sharing one Parameters buffer: a caller editing its
	// copy would change every later spec.
	specs[0].Parameters[0] = 'X'
	if again := EndCallSpec(); again.Parameters[0] == 'X' {
		t.Error("editing a returned spec changed the next one")
	}
}

// The longest digit string send_dtmf accepts must fit its timeout at about
// 170 ms a digit, or the model hears "timeout" for a menu answer that went
// through.
func TestSendDTMFTimeoutFitsLongestDigits(t *testing.T) {
	const perDigitMillis, maxDigits = 170, 32
	if got := SendDTMFSpec().Timeout.Milliseconds(); got < perDigitMillis*maxDigits {
		t.Errorf("timeout %d ms, under %d ms for %d digits", got, perDigitMillis*maxDigits, maxDigits)
	}
}

func TestTelephonyArguments(t *testing.T) {
	reg, err := NewRegistry(stubTool(TransferCallSpec()), stubTool(EndCallSpec()), stubTool(SendDTMFSpec()))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		tool     string
		args     string
		wantPath string // "" when the arguments are valid
	}{
		{name: "transfer to an E.164 number", tool: TransferCallTool, args: `{"destination":"+33123456789"}`},
		{name: "transfer with a reason", tool: TransferCallTool, args: `{"destination":"+14155550100","reason":"billing question"}`},
		{name: "transfer to a SIP URI", tool: TransferCallTool, args: `{"destination":"sip:desk@pbx.example.com"}`},
		{name: "transfer to a SIPS URI with port", tool: TransferCallTool, args: `{"destination":"sips:200@10.0.0.5:5061"}`},
		{name: "transfer to a SIP host", tool: TransferCallTool, args: `{"destination":"sip:voicemail.example.com"}`},
		{name: "transfer without destination", tool: TransferCallTool, args: `{"reason":"x"}`, wantPath: RootPath},
		{name: "transfer to a national number", tool: TransferCallTool, args: `{"destination":"0123456789"}`, wantPath: "/destination"},
		{name: "transfer to a number with spaces", tool: TransferCallTool, args: `{"destination":"+33 1 23 45 67 89"}`, wantPath: "/destination"},
		{name: "transfer to +0", tool: TransferCallTool, args: `{"destination":"+0123456"}`, wantPath: "/destination"},
		{name: "transfer to 16 digits", tool: TransferCallTool, args: `{"destination":"+1234567890123456"}`, wantPath: "/destination"},
		{name: "transfer to a tel URI", tool: TransferCallTool, args: `{"destination":"tel:+33123456789"}`, wantPath: "/destination"},
		{name: "transfer to an empty SIP URI", tool: TransferCallTool, args: `{"destination":"sip:"}`, wantPath: "/destination"},
		{name: "transfer to a SIP URI with no user", tool: TransferCallTool, args: `{"destination":"sip:@pbx.example.com"}`, wantPath: "/destination"},
		// Catches an unanchored pattern: the number is inside, not the whole.
		{name: "transfer to text around a number", tool: TransferCallTool, args: `{"destination":"call +33123456789 now"}`, wantPath: "/destination"},
		{name: "transfer destination a number", tool: TransferCallTool, args: `{"destination":33123456789}`, wantPath: "/destination"},
		{name: "transfer with an unknown argument", tool: TransferCallTool, args: `{"destination":"+33123456789","priority":1}`, wantPath: RootPath},
		{name: "transfer reason too long", tool: TransferCallTool, args: `{"destination":"+33123456789","reason":"` + strings.Repeat("x", 201) + `"}`, wantPath: "/reason"},

		{name: "end with no arguments", tool: EndCallTool, args: ``},
		{name: "end with an empty object", tool: EndCallTool, args: `{}`},
		{name: "end with a reason", tool: EndCallTool, args: `{"reason":"caller said goodbye"}`},
		{name: "end with an unknown argument", tool: EndCallTool, args: `{"now":true}`, wantPath: RootPath},
		{name: "end reason not a string", tool: EndCallTool, args: `{"reason":1}`, wantPath: "/reason"},

		{name: "one digit", tool: SendDTMFTool, args: `{"digits":"1"}`},
		{name: "every key", tool: SendDTMFTool, args: `{"digits":"0123456789*#ABCD"}`},
		{name: "32 digits", tool: SendDTMFTool, args: `{"digits":"` + strings.Repeat("9", 32) + `"}`},
		{name: "no digits", tool: SendDTMFTool, args: `{}`, wantPath: RootPath},
		{name: "empty digits", tool: SendDTMFTool, args: `{"digits":""}`, wantPath: "/digits"},
		{name: "33 digits", tool: SendDTMFTool, args: `{"digits":"` + strings.Repeat("9", 33) + `"}`, wantPath: "/digits"},
		{name: "lowercase letter", tool: SendDTMFTool, args: `{"digits":"a"}`, wantPath: "/digits"},
		{name: "letter past D", tool: SendDTMFTool, args: `{"digits":"E"}`, wantPath: "/digits"},
		{name: "space between digits", tool: SendDTMFTool, args: `{"digits":"1 2"}`, wantPath: "/digits"},
		{name: "digits a number", tool: SendDTMFTool, args: `{"digits":1}`, wantPath: "/digits"},
		{name: "digits with an unknown argument", tool: SendDTMFTool, args: `{"digits":"1","duration_ms":500}`, wantPath: RootPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := reg.ValidateArguments(tt.tool, json.RawMessage(tt.args))
			if tt.wantPath == "" {
				if err != nil {
					t.Fatalf("valid arguments refused: %v", err)
				}
				return
			}
			var aerr *ArgumentError
			if !errors.As(err, &aerr) || aerr.Kind != KindInvalidArguments {
				t.Fatalf("want an invalid_arguments ArgumentError, got %v", err)
			}
			if len(aerr.Issues) == 0 || aerr.Issues[0].Path != tt.wantPath {
				t.Errorf("issues %+v, want the first at %s", aerr.Issues, tt.wantPath)
			}
		})
	}
}
