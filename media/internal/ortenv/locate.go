package ortenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SetupHint says how to get the native files.
const SetupHint = "run `go tool task setup` (it fetches the file into .native/ and writes .native/env)"

// Locate finds a native file (what names it in errors): the explicit
// path (field names the setting it came from), else the environment
// variable env, else rel below the module root
// (the directory holding go.mod, walking up from the working directory).
// The file must be a non-empty regular file; the error names the path,
// where it came from and SetupHint.
func Locate(explicit, field, env, rel, what string) (string, error) {
	var path, from string
	switch {
	case explicit != "":
		path, from = explicit, field
	case os.Getenv(env) != "":
		path, from = os.Getenv(env), "$"+env
	default:
		root, err := ModuleRoot()
		if err != nil {
			return "", fmt.Errorf("%s: no path configured (%s), $%s is unset and %v; %s", what, field, env, err, SetupHint)
		}
		path, from = filepath.Join(root, rel), "module root"
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s %s (from %s): %v; %s", what, path, from, err, SetupHint)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s %s (from %s) is not a regular file; %s", what, path, from, SetupHint)
	case fi.Size() == 0:
		return "", fmt.Errorf("%s %s (from %s) is empty; %s", what, path, from, SetupHint)
	}
	return path, nil
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("no working directory: %v", err)
	}
	for dir := wd; ; {
		_, err := os.Stat(filepath.Join(dir, "go.mod"))
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("looking for go.mod: %v", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
		dir = parent
	}
}
