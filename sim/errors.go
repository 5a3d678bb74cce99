package sim

import "errors"

// ErrInvalidScenario: a scenario was built with a step that cannot be
// played (too short, negative) or has no steps. It is the simulator's one
// sentinel, wrapped with detail as fmt.Errorf("%w: ..."); provider
// failures that a real service would cause are the typed errors of package
// providers instead (injected as a providertest.Fault), so the code under
// test sees what production sees.
var ErrInvalidScenario = errors.New("sim: invalid scenario")
