package capture

import (
	"github.com/lethe-privacy/lethe/extract"
)

// Replacing the rules at run time.
//
// The configured tables never change while the proxy runs, but what
// writes them does: functions, procedures, triggers and rules of the
// database (extract.Writers), which the proxy re-reads from the store's
// catalog. Rules are immutable, so a change is a new *extract.Rules put in
// force with SetRules; a relay's session notices it at its next request
// (Rules costs one atomic load) and recomputes what it derived from the
// old ones.

// Rules returns the rules in force.
func (c *Capture) Rules() *extract.Rules { return c.rules.Load() }

// SetRules puts r in force for every session, from its next request.
func (c *Capture) SetRules(r *extract.Rules) { c.rules.Store(r) }

// ConfiguredRules are the rules the Capture was configured with
// (Config.Rules), which rules put in force later extend.
func (c *Capture) ConfiguredRules() *extract.Rules { return c.cfg.Rules }
