package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/brisvox/brisvox/cmd/internal/opclient"
	"golang.org/x/text/width"
)

// columns is the terminal width every line of `brisvox calls` fits.
const columns = 100

// The renderers of `brisvox calls`: pure functions of the API's answers,
// so their output is checked against golden files. Every text that came
// from the server (ids, names, reasons) goes through clean first: a
// call id may carry whatever a caller put in a query, and must not
// reach the terminal as an escape sequence.

// clean replaces the control and non-graphic runes of s with '?'.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || (unicode.IsGraphic(r) && !unicode.IsControl(r)) {
			return r
		}
		return '?'
	}, s)
}

// runeWidth is r's width in terminal columns: 2 for East Asian wide and
// full-width runes, 1 otherwise.
func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// textWidth is s's width in terminal columns.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// truncate cuts s to at most w columns, an ellipsis marking the cut.
func truncate(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n+runeWidth(r) > w-1 {
			break
		}
		b.WriteRune(r)
		n += runeWidth(r)
	}
	b.WriteString("…")
	return b.String()
}

// pad fills s with spaces to w columns, on the left when right is set.
func pad(s string, w int, right bool) string {
	gap := strings.Repeat(" ", max(0, w-textWidth(s)))
	if right {
		return gap + s
	}
	return s + gap
}

// writeLines writes each line cut to the terminal's width.
func writeLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, strings.TrimRight(truncate(l, columns), " "))
	}
}

// fmtAge is a duration in milliseconds as 4s, 3m12s or 1h02m.
func fmtAge(ms int64) string {
	s := max(ms, 0) / 1000
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

// fmtMS is a latency: 413ms, 12.3s; "-" for none.
func fmtMS(ms *float64) string {
	switch {
	case ms == nil:
		return "-"
	case *ms < 10000:
		return fmt.Sprintf("%.0fms", *ms)
	default:
		return fmt.Sprintf("%.1fs", *ms/1000)
	}
}

// column is a table's column: its header, whether it is right-aligned,
// and how far it may shrink (0: never) when the table is too wide.
type column struct {
	head   string
	right  bool
	shrink int
}

// table lays rows out under cols in at most columns columns: each column
// as wide as its widest cell, the shrinkable ones cut (widest first,
// down to their floor) when the table would be wider.
func table(cols []column, rows [][]string) []string {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = textWidth(c.head)
		for _, r := range rows {
			widths[i] = max(widths[i], textWidth(r[i]))
		}
	}
	total := func() int {
		n := 2 * (len(cols) - 1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	for total() > columns {
		best := -1
		for i, c := range cols {
			if c.shrink > 0 && widths[i] > c.shrink && (best < 0 || widths[i] > widths[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		widths[best]--
	}
	line := func(cells []string) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = pad(truncate(cells[i], widths[i]), widths[i], c.right)
		}
		return strings.Join(parts, "  ")
	}
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.head
	}
	out := []string{line(heads)}
	for _, r := range rows {
		out = append(out, line(r))
	}
	return out
}

// listColumns are the columns of `brisvox calls list`.
var listColumns = []column{
	{head: "ID", shrink: 12}, {head: "NODE", shrink: 6}, {head: "TRANSPORT", shrink: 7}, {head: "AGENT", shrink: 8},
	{head: "STATE", shrink: 8}, {head: "AGE", right: true}, {head: "TURNS", right: true},
	{head: "LAST", right: true}, {head: "RESTARTS", right: true},
}

// renderList is the table of live calls, in the order given.
func renderList(w io.Writer, calls []opclient.CallSummary) {
	if len(calls) == 0 {
		writeLines(w, []string{"no live calls"})
		return
	}
	rows := make([][]string, 0, len(calls))
	for _, c := range calls {
		rows = append(rows, []string{
			clean(c.ID), clean(c.Node), clean(c.Transport), clean(c.Agent), clean(c.State),
			fmtAge(c.AgeMS), strconv.Itoa(c.Turns), fmtMS(c.LastTurnMS), strconv.Itoa(c.Restarts),
		})
	}
	writeLines(w, table(listColumns, rows))
}

// nodeState is a node's admission state as the nodes table says it.
func nodeState(n opclient.NodeInfo) string {
	switch {
	case !n.Draining:
		return "admitting"
	case n.Drain != nil && n.Drain.By == "shutdown":
		return "shutting down"
	case n.Drain != nil && n.Drain.By != "":
		return "draining (" + clean(n.Drain.By) + ")"
	default:
		return "draining"
	}
}

// renderNodes is the table of nodes; with more than one, the line after
// names the node that answered.
func renderNodes(w io.Writer, nodes []opclient.NodeInfo) {
	cols := []column{
		{head: "NODE", shrink: 12}, {head: "LIVE", right: true}, {head: "MAX", right: true},
		{head: "STATE"}, {head: "LOAD", right: true}, {head: "UPTIME", right: true},
	}
	rows := make([][]string, 0, len(nodes))
	self := ""
	for _, n := range nodes {
		load := "-"
		if a := n.Admission; a != nil {
			load = fmt.Sprintf("%.0f%%", 100*a.Load)
			if a.Ceiling > 0 {
				load += fmt.Sprintf("/%.0f%%", 100*a.Ceiling)
			}
		}
		if n.Self {
			self = clean(n.Node)
		}
		rows = append(rows, []string{clean(n.Node), strconv.Itoa(n.LiveCalls), strconv.Itoa(n.MaxCalls), nodeState(n), load, fmtAge(n.UptimeMS)})
	}
	lines := table(cols, rows)
	if len(nodes) > 1 && self != "" {
		lines = append(lines, "answered by "+self)
	}
	writeLines(w, lines)
}

// plural is n and the noun, the noun with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// summaryLines is one call on one line, or two when one is too narrow:
// who it is, then how it goes.
func summaryLines(c opclient.CallSummary) []string {
	who := fmt.Sprintf("call %s on %s (%s, agent %s)", truncate(clean(c.ID), 40), truncate(clean(c.Node), 20),
		truncate(clean(c.Transport), 10), truncate(clean(c.Agent), 20))
	how := fmt.Sprintf("%s, age %s, %s", clean(c.State), fmtAge(c.AgeMS), plural(c.Turns, "turn"))
	if c.LastTurnMS != nil {
		how += ", last " + fmtMS(c.LastTurnMS)
	}
	how += ", " + plural(c.Restarts, "restart")
	if one := who + ": " + how; textWidth(one) <= columns {
		return []string{one}
	}
	return []string{who, "  " + how}
}

// renderShow is one call: its summary, its actor tree, its turns.
func renderShow(w io.Writer, d *opclient.CallDetail) {
	lines := append(summaryLines(d.Call), "")
	lines = append(lines, treeLines(d.Tree)...)
	lines = append(lines, "")
	lines = append(lines, waterfall(d.Turns)...)
	writeLines(w, lines)
}

// treeRow is one line of the tree before it is laid out.
type treeRow struct {
	label    string // the connectors and the name
	node     *opclient.Description
	items    []string // the node's counters and facts, k=v
	itemLead string   // the connectors before them
}

// treeLines draws the actor tree with ├─ └─ connectors: each actor's
// state, mailbox depth and restarts in columns, its counters and facts
// (k=v, sorted) below it, wrapped to the terminal's width.
func treeLines(root *opclient.Description) []string {
	if root == nil {
		return []string{"actor tree: none"}
	}
	var rows []treeRow
	var walk func(d *opclient.Description, lead, cont string)
	walk = func(d *opclient.Description, lead, cont string) {
		itemLead := cont + "    "
		if len(d.Children) > 0 {
			itemLead = cont + "│   "
		}
		rows = append(rows, treeRow{label: lead + clean(d.Name), node: d, items: treeItems(d), itemLead: itemLead})
		for i, ch := range d.Children {
			if ch == nil {
				continue
			}
			if i == len(d.Children)-1 {
				walk(ch, cont+"└─ ", cont+"   ")
			} else {
				walk(ch, cont+"├─ ", cont+"│  ")
			}
		}
	}
	walk(root, "", "")
	labelW, stateW := len("ACTOR"), len("STATE")
	for _, r := range rows {
		labelW = max(labelW, textWidth(r.label))
		stateW = max(stateW, textWidth(clean(r.node.State)))
	}
	labelW, stateW = min(labelW, 48), min(stateW, 14)
	row := func(label, state, mailbox, restarts string) string {
		return pad(truncate(label, labelW), labelW, false) + "  " + pad(truncate(state, stateW), stateW, false) + "  " +
			pad(mailbox, 7, true) + "  " + pad(restarts, 8, true)
	}
	out := []string{row("ACTOR", "STATE", "MAILBOX", "RESTARTS")}
	for _, r := range rows {
		out = append(out, row(r.label, clean(r.node.State), strconv.Itoa(r.node.Mailbox), strconv.Itoa(r.node.Restarts)))
		out = append(out, wrapItems(r.itemLead, r.items)...)
	}
	return out
}

// treeItems are an actor's counters then its facts, each sorted by name.
func treeItems(d *opclient.Description) []string {
	var items []string
	for _, k := range slices.Sorted(maps.Keys(d.Counters)) {
		items = append(items, clean(k)+"="+strconv.FormatUint(d.Counters[k], 10))
	}
	for _, k := range slices.Sorted(maps.Keys(d.Info)) {
		items = append(items, clean(k)+"="+clean(d.Info[k]))
	}
	return items
}

// wrapItems lays items out after lead, two spaces apart, in lines of at
// most columns columns; an item too wide for a line alone is cut.
func wrapItems(lead string, items []string) []string {
	room := max(columns-textWidth(lead), 16)
	var out []string
	line := ""
	for _, it := range items {
		it = truncate(it, room)
		switch {
		case line == "":
			line = it
		case textWidth(line)+2+textWidth(it) <= room:
			line += "  " + it
		default:
			out = append(out, lead+line)
			line = it
		}
	}
	if line != "" {
		out = append(out, lead+line)
	}
	return out
}

// The waterfall's marks, in drawing order (a later one wins a shared
// column), with their letters.
var waterfallMarks = []struct {
	name   string
	letter rune
}{
	{opclient.MarkVADStop, 'V'}, {opclient.MarkSTTFinal, 'S'}, {opclient.MarkTurnEnd, 'T'},
	{opclient.MarkLLMFirstToken, 'L'}, {opclient.MarkTTSFirstAudio, 'A'}, {opclient.MarkFirstAudioOut, 'O'},
}

// The waterfall's bounds: the bar's columns, the turns shown (the last).
const (
	barWidth   = 60
	turnsShown = 20
)

// waterfall draws the turns' timelines, one row a turn: its marks as
// letters on a bar scaled to the widest turn shown, from its vad_stop;
// and its first audio out, the turn's latency, at the end.
func waterfall(turns []opclient.TurnTimeline) []string {
	if len(turns) == 0 {
		return []string{"turns: none yet"}
	}
	title := "turns: ms from the end of the caller's speech (vad_stop)"
	if len(turns) > turnsShown {
		title += fmt.Sprintf(", the last %d of %d", turnsShown, len(turns))
		turns = turns[len(turns)-turnsShown:]
	}
	lo, hi := 0.0, 0.0
	for _, t := range turns {
		for _, v := range t.MarksMS {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	col := func(v float64) int {
		return int(math.Round((v - lo) / (hi - lo) * float64(barWidth-1)))
	}
	axisL, axisR := fmt.Sprintf("%.0f", lo), fmt.Sprintf("%.0f ms", hi)
	axis := axisL + strings.Repeat(" ", max(1, barWidth-len(axisL)-len(axisR))) + axisR
	out := []string{title, fmt.Sprintf("%5s  %-8s  %s  %6s", "TURN", "AT (UTC)", axis, "OUT")}
	for _, t := range turns {
		bar := []rune(strings.Repeat(" ", barWidth))
		first, last := barWidth, -1
		for _, v := range t.MarksMS {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			first, last = min(first, col(v)), max(last, col(v))
		}
		for i := first; i <= last; i++ {
			bar[i] = '·'
		}
		for _, m := range waterfallMarks {
			if v, ok := t.MarksMS[m.name]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				bar[col(v)] = m.letter
			}
		}
		var outMS *float64
		if v, ok := t.MarksMS[opclient.MarkFirstAudioOut]; ok {
			outMS = &v
		}
		out = append(out, fmt.Sprintf("%5d  %-8s  %s  %6s", t.Epoch, t.At.UTC().Format("15:04:05"), string(bar), fmtMS(outMS)))
	}
	legend := make([]string, len(waterfallMarks))
	for i, m := range waterfallMarks {
		legend[i] = string(m.letter) + " " + m.name
	}
	return append(out, strings.Join(legend, "  "))
}
