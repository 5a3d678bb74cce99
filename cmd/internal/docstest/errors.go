package docstest

import "errors"

// Sentinel errors of the package; they are wrapped with detail.
var (
	// ErrRead marks a doc or Go file that cannot be read or parsed.
	ErrRead = errors.New("docstest: cannot read")
	// ErrNoModule marks a directory that is not inside the module.
	ErrNoModule = errors.New("docstest: no module root")
	// ErrProbe marks an agent-file probe whose answer is not the
	// "known: ..." hint the schema gives for an unknown key.
	ErrProbe = errors.New("docstest: agent-file probe")
)
