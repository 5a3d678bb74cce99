package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLibraryUsersInheritNoTools builds a consumer module (testdata/consumer:
// it requires the engine, replaced by this checkout, and imports messages
// and agent) and lists its module graph with the engine's go.sum as its own
// (so every module is checked against the sums the engine committed; the
// go command fetches through GOPROXY only go.mod files a fresh module cache
// lacks: building the engine does not fetch all of its graph's). Every
// module in it must be the engine's own: one whose
// packages the engine, its tests or its dependencies' tests import, or one
// that the go.mod of such a module requires (golang.org/x/text's go.mod
// brings golang.org/x/tools, say). Neither the task runner's module nor
// staticcheck's may be in it.
// Mutation: putting the tool directives back in go.mod (the go.mod before
// issue 15: tool lines and their ~150 indirect requires) fails, with go-task,
// staticcheck and the cloud SDKs in the consumer's graph.
func TestLibraryUsersInheritNoTools(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the engine's imports and a consumer's module graph (a few seconds)")
	}
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "main.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "consumer", name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), string(data))
	}
	// The consumer's sums are the engine's: its graph is a part of the
	// engine's, so no sum is looked up.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), string(sums))
	env := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
	goIn(t, dir, env, "mod", "edit", "-replace=github.com/brisvox/brisvox="+root)
	goIn(t, dir, env, "build", "-o", os.DevNull, ".")

	graph := strings.Fields(goIn(t, dir, env, "list", "-m", "-f", "{{.Path}}", "all"))
	if !slices.Contains(graph, "github.com/brisvox/brisvox") {
		t.Fatalf("the consumer's graph %q lacks the engine", graph)
	}
	// The consumer's graph is pruned (a dependency's dependencies' own
	// requirements are left out); the engine's own graph holds them (a
	// module the engine's dependencies require on another platform only:
	// modernc.org/libc's github.com/ncruces/go-strftime).
	own := engineModules(t, root, goIn(t, dir, env, "mod", "graph")+"\n"+goIn(t, root, nil, "mod", "graph"))
	tools := toolModules(t, root)
	var foreign, ofTools []string
	for _, m := range graph {
		if m == "example.com/consumer" || own[m] {
			continue
		}
		foreign = append(foreign, m)
		if tools[m] {
			ofTools = append(ofTools, m)
		}
	}
	if len(ofTools) > 0 {
		t.Errorf("the developer tools' modules are in a library user's graph: %s", strings.Join(ofTools, " "))
	}
	if len(foreign) > 0 {
		t.Errorf("%d of the consumer's %d modules are not the engine's: %s", len(foreign), len(graph), strings.Join(foreign, " "))
	}
	if !t.Failed() {
		t.Logf("consumer graph: %d modules, all the engine's", len(graph))
	}
}

// engineModules is the set of modules the engine needs: those whose packages
// it, its tests or its dependencies' tests import, and, by the requirement
// graphs of the consumer and of the engine (`go mod graph`), every module
// their go.mod files require. The engine's own go.mod is not followed: what it requires is
// what is in question.
func engineModules(t *testing.T, root, modGraph string) map[string]bool {
	t.Helper()
	deps := strings.Fields(goIn(t, root, nil, "list", "-e", "-deps", "-f",
		`{{if and .Module (ne .Module.Path "github.com/brisvox/brisvox")}}{{.ImportPath}}{{end}}`, "./..."))
	list := append([]string{"list", "-e", "-deps", "-test", "-f", "{{with .Module}}{{.Path}}{{end}}", "./..."}, deps...)
	own := map[string]bool{}
	var todo []string
	for _, m := range strings.Fields(goIn(t, root, nil, list...)) {
		if !own[m] {
			own[m] = true
			todo = append(todo, m)
		}
	}
	requires := map[string][]string{}
	for line := range strings.Lines(modGraph) {
		from, to, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		from, _, _ = strings.Cut(from, "@")
		to, _, _ = strings.Cut(to, "@")
		requires[from] = append(requires[from], to)
	}
	for len(todo) > 0 {
		m := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if m == "github.com/brisvox/brisvox" {
			continue
		}
		for _, r := range requires[m] {
			if !own[r] {
				own[r] = true
				todo = append(todo, r)
			}
		}
	}
	return own
}

// toolModules is the set of the modules of the tools tools/go.mod declares.
func toolModules(t *testing.T, root string) map[string]bool {
	t.Helper()
	toolsMod := filepath.Join(root, filepath.FromSlash(toolsModFile))
	var file struct{ Tool []struct{ Path string } }
	if err := json.Unmarshal([]byte(goIn(t, root, nil, "mod", "edit", "-json", toolsMod)), &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Tool) == 0 {
		t.Fatalf("%s declares no tool", toolsMod)
	}
	args := []string{"list", "-modfile=" + toolsMod, "-f", "{{.Module.Path}}"}
	for _, tool := range file.Tool {
		args = append(args, tool.Path)
	}
	mods := map[string]bool{}
	for _, m := range strings.Fields(goIn(t, root, nil, args...)) {
		mods[m] = true
	}
	return mods
}

// goIn runs the go command in dir with env added and returns its output.
func goIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return stdout.String()
}

// TestTaskRunsFromTheCheckout runs `go tool task --list` in this checkout,
// from the root and from a package folder: the engine's tool directive, this
// command and tools/go.mod with its go.sum together start the task runner.
// Mutation: a tools/go.sum missing go-task's sums, or a go.mod without the
// tool directive, fails.
func TestTaskRunsFromTheCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the task runner when the build cache lacks it")
	}
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
	}{
		{name: "root", dir: root},
		{name: "package folder", dir: filepath.Join(root, "messages")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := goIn(t, tc.dir, []string{"GOFLAGS=-mod=readonly", "GOPROXY=off"}, "tool", "task", "--list")
			for _, task := range []string{"* setup:", "* test:", "* run:", "* lint:"} {
				if !strings.Contains(out, task) {
					t.Errorf("go tool task --list lacks %q:\n%s", task, out)
				}
			}
		})
	}
}
