package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// toolsModFile is the developer tools' module file, relative to the root.
const toolsModFile = "tools/go.mod"

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// run finds the tools' module file and hands over to the go command. It
// returns only when the go command could not be started or (where the
// process cannot be replaced) once it has ended, with its exit code.
func run(args []string) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 1, fmt.Errorf("%w: %v", ErrNoModule, err)
	}
	modFile, err := toolsModule(wd)
	if err != nil {
		return 1, err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return 1, fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	return execGo(goCmd, goArgs(modFile, args), os.Environ())
}

// goArgs is the go command's argument list, its own name first: the task
// runner of modFile, given args as they came.
func goArgs(modFile string, args []string) []string {
	return append([]string{"go", "tool", "-modfile=" + modFile, "task"}, args...)
}

// toolsModule is the absolute path of tools/go.mod at the module root of
// dir: the nearest directory from dir up that holds a go.mod.
func toolsModule(dir string) (string, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return "", err
	}
	modFile := filepath.Join(root, filepath.FromSlash(toolsModFile))
	if _, err := os.Stat(modFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %s", ErrNoToolsModule, root)
		}
		return "", fmt.Errorf("%w: %v", ErrNoToolsModule, err)
	}
	return modFile, nil
}

// moduleRoot is the nearest directory from dir up that holds a go.mod.
func moduleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoModule, err)
	}
	for start := dir; ; {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: %s", ErrNoModule, start)
		}
		dir = parent
	}
}
