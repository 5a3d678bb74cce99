package agentfile

import (
	"errors"
	"strings"

	"github.com/brisvox/brisvox/agent/stock"
)

// TransferTool is [tools.transfer_call]: where the model may transfer a
// caller, and its gate.
type TransferTool struct {
	// Allow are the allowlist's entries (stock.Allowlist's grammar); an
	// agent that enables transfer_call must list at least one.
	Allow []Value[string]
	// Confirm holds the model's transfer until the caller agreed (the
	// confirmation gate). Default true; only confirm = false turns it
	// off.
	Confirm Value[bool]
	// DescribeTargets puts the entries in the tool's description to the
	// model. Default false: the prompt says where to transfer, and the
	// model could read an internal list out to a caller.
	DescribeTargets Value[bool]
	Pos             Pos
}

// transferCall reads [tools.transfer_call]; enabled tells whether
// tools.enabled lists the tool, confirmed whether tools.confirm does.
func (w *walker) transferCall(t *tbl, enabled bool, enabledPos Pos, confirmed bool) TransferTool {
	tt := TransferTool{Pos: t.pos}
	tt.Allow = t.list("allow", func(s string) (string, string) {
		if err := stock.CheckAllowPattern(s); err != nil {
			msg := strings.TrimPrefix(err.Error(), stock.ErrAllowPattern.Error()+": ")
			if !errors.Is(err, stock.ErrAllowPattern) {
				msg = err.Error()
			}
			return showValue(s) + ": " + msg, `a number "+33123456789", a prefix "+4420*" (4 digits or more), or a URI "sip:desk@pbx.example" or "sip:*@support.example"`
		}
		return "", ""
	})
	tt.Confirm = t.boolean("confirm", true)
	tt.DescribeTargets = t.boolean("describe_targets", false)
	t.done("key", "", nil)
	switch {
	case enabled && len(tt.Allow) == 0 && !w.hasAllowItems(t):
		w.at(enabledPos, "tools.transfer_call.allow", "transfer_call is enabled with no allowlist: the model could not transfer anywhere, or anywhere at all",
			"list where it may transfer: "+w.format.Table("tools.transfer_call")+" with "+w.format.Setting("allow", []string{"+33123456789"}))
	case !enabled && t.present():
		w.at(t.pos, "tools.transfer_call", "transfer_call is configured but not enabled", "add it to tools.enabled, or remove the table")
	}
	if confirmed && tt.Confirm.Set && !tt.Confirm.V {
		w.at(tt.Confirm.Pos, "tools.transfer_call.confirm", "confirm = false, yet tools.confirm lists transfer_call", "keep one of them")
	}
	return tt
}

// hasAllowItems: allow was written with items (each bad one already
// reported), so the missing list is not reported again.
func (w *walker) hasAllowItems(t *tbl) bool {
	if t.n == nil {
		return false
	}
	e := t.n.get("allow")
	return e != nil && e.val.kind == kArray && len(e.val.items) > 0
}
