package agentfile

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Setting writes key and value as a file of format f would: TOML
// `hangover = "300ms"`, YAML `hangover: 300ms`. It is how hints show a
// setting, so a YAML file is never told to write TOML. v is a string, a
// bool, an integer, a float64, a time.Duration (written as a string with
// its unit), a []string or a []int64; anything else is written as a string.
func (f Format) Setting(key string, v any) string {
	if f == YAML {
		return key + ": " + f.value(v)
	}
	return key + " = " + f.value(v)
}

// In is Setting inside table: TOML `end_of_turn_delay = "300ms" in
// [turn]`, YAML `turn: {end_of_turn_delay: 300ms}`. table is a dotted
// path ("transports.pcm").
func (f Format) In(table, key string, v any) string {
	if table == "" {
		return f.Setting(key, v)
	}
	if f == YAML {
		parts := strings.Split(table, ".")
		return strings.Join(parts, ": {") + ": {" + f.Setting(key, v) + strings.Repeat("}", len(parts))
	}
	return f.Setting(key, v) + " in [" + table + "]"
}

// Table is a table as the format opens it: TOML `[transports.webrtc]`,
// YAML `transports: {webrtc: {}}`.
func (f Format) Table(path string) string {
	if f == YAML {
		parts := strings.Split(path, ".")
		return strings.Join(parts, ": {") + ": {}" + strings.Repeat("}", len(parts)-1)
	}
	return "[" + path + "]"
}

// value writes one value in the format.
func (f Format) value(v any) string {
	switch x := v.(type) {
	case string:
		return f.str(x)
	case time.Duration:
		return f.str(durationString(x))
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return fnum(x)
	case []int64:
		items := make([]string, len(x))
		for i, n := range x {
			items[i] = strconv.FormatInt(n, 10)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case []string:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = f.str(s)
			if f == YAML && strings.ContainsAny(s, ",[]{}:#") && !strings.HasPrefix(items[i], "'") && !strings.HasPrefix(items[i], `"`) {
				// A flow list ends a plain item at these.
				items[i] = strconv.Quote(s)
			}
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return f.str("...")
}

// str writes a string: TOML always quotes it; YAML leaves it plain
// unless it would read as something else (a number, true, a comment).
func (f Format) str(s string) string {
	if f != YAML {
		return strconv.Quote(s)
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	line := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(line, "\n") || strings.HasPrefix(line, "|") || strings.HasPrefix(line, ">") {
		return strconv.Quote(s)
	}
	return line
}

// durationString writes a duration as a file would: "300ms", "1.2s",
// "2m", "1h30m" (time.Duration's String adds "0s" tails: "2m0s").
func durationString(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
