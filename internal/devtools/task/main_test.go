package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestToolsModule finds tools/go.mod at the module root from any folder
// below it, and says why when there is none.
// Mutation: stopping at the first folder (no walk up) fails "from a
// subfolder"; accepting a missing tools/go.mod fails "no tools module".
func TestToolsModule(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/m\n")
	write(t, filepath.Join(root, "tools", "go.mod"), "module example.com/m/tools\n")
	mkdir(t, filepath.Join(root, "a", "b"))
	bare := t.TempDir()
	write(t, filepath.Join(bare, "go.mod"), "module example.com/bare\n")
	mkdir(t, filepath.Join(bare, "pkg"))
	// A go.mod that is a folder is no module file: the walk goes on up.
	mkdir(t, filepath.Join(root, "odd", "go.mod"))

	tests := []struct {
		name    string
		dir     string
		want    string
		wantErr error
	}{
		{name: "at the root", dir: root, want: filepath.Join(root, "tools", "go.mod")},
		{name: "from a subfolder", dir: filepath.Join(root, "a", "b"), want: filepath.Join(root, "tools", "go.mod")},
		{name: "relative dir", dir: rel(t, filepath.Join(root, "a")), want: filepath.Join(root, "tools", "go.mod")},
		{name: "no tools module", dir: filepath.Join(bare, "pkg"), wantErr: ErrNoToolsModule},
		{name: "go.mod that is a folder", dir: filepath.Join(root, "odd"), want: filepath.Join(root, "tools", "go.mod")},
	}
	if _, err := moduleRoot("/"); err != nil {
		// Only where / itself is in no module can the walk end empty.
		tests = append(tests, struct {
			name    string
			dir     string
			want    string
			wantErr error
		}{name: "outside any module", dir: "/", wantErr: ErrNoModule})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toolsModule(tc.dir)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("toolsModule(%s) = %q, %v; want %v", tc.dir, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("toolsModule(%s) = %q, %v; want %q", tc.dir, got, err, tc.want)
			}
		})
	}
}

// TestGoArgs: the task runner of the tools' module file gets the arguments
// exactly as they came, flags and "--" included.
// Mutation: dropping args[0] or adding a flag of our own fails.
func TestGoArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "none", want: []string{"go", "tool", "-modfile=/r/tools/go.mod", "task"}},
		{name: "a task", args: []string{"test"}, want: []string{"go", "tool", "-modfile=/r/tools/go.mod", "task", "test"}},
		{name: "flags and extra args", args: []string{"--list", "sim", "--", "--json", ""},
			want: []string{"go", "tool", "-modfile=/r/tools/go.mod", "task", "--list", "sim", "--", "--json", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := goArgs("/r/tools/go.mod", tc.args); !slices.Equal(got, tc.want) {
				t.Fatalf("goArgs = %q, want %q", got, tc.want)
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// rel is dir relative to the working directory.
func rel(t *testing.T, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
