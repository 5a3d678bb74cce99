package agentfile

import (
	"os"
	"testing"
)

// BenchmarkParse reads and checks the local example: the cost of
// `brisvox check` and of `serve` reading its agent, once per start.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"local.toml", "local.yaml"} {
		data, err := os.ReadFile(examplePath(name))
		if err != nil {
			b.Fatal(err)
		}
		format, _ := FormatOf(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, ds := Parse(name, data, format, Options{KnownTools: catalogue}); len(ds) > 0 {
					b.Fatal(ds)
				}
			}
		})
	}
}
