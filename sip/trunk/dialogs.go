package trunk

import (
	"fmt"
	"net/netip"
	"sync/atomic"
)

// Acquire takes one of src's dialog slots for a new dialog. release gives
// it back; only its first call counts, so a dialog's teardown paths may
// each call it. The error wraps ErrNotAllowed (a source outside the
// allowlist) or ErrTooManyDialogs.
func (p *Policy) Acquire(src netip.AddrPort) (release func(), err error) {
	a := src.Addr().Unmap().WithZone("")
	if !p.allowed(a) {
		p.dialogsRefused.Add(1)
		return nil, fmt.Errorf("%w: dialog refused", ErrNotAllowed)
	}
	key := p.key(a)
	p.mu.Lock()
	n := p.dialogs[key]
	if n >= p.cfg.MaxDialogsPerSource {
		p.mu.Unlock()
		p.dialogsRefused.Add(1)
		return nil, fmt.Errorf("%w: %d open", ErrTooManyDialogs, n)
	}
	p.dialogs[key] = n + 1
	p.mu.Unlock()
	var done atomic.Bool
	return func() {
		if !done.CompareAndSwap(false, true) {
			return
		}
		p.mu.Lock()
		if n := p.dialogs[key] - 1; n > 0 {
			p.dialogs[key] = n
		} else {
			delete(p.dialogs, key)
		}
		p.mu.Unlock()
	}, nil
}
