package sim

import (
	"os"
	"testing"
	"testing/synctest"
)

func TestDebugTwice(t *testing.T) {
	name := os.Getenv("SIM_DEBUG")
	if name == "" {
		t.Skip()
	}
	for _, c := range Scenarios() {
		if c.Name != name {
			continue
		}
		synctest.Test(t, func(t *testing.T) {
			for i := 0; i < 2; i++ {
				r, err := c.Build().Run()
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile("/tmp/run"+string(rune('0'+i))+".txt", []byte(r.FingerprintText()), 0o644)
			}
		})
	}
}
