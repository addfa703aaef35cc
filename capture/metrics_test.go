package capture

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each counter is reported under its own stable name.
func TestStats_MetricsNameEachCounter(t *testing.T) {
	var s Stats
	s.Intents.Store(1)
	s.Followed.Store(2)
	s.Refused.Store(3)
	s.UntrackedWrites.Store(4)
	s.DecisionErrors.Store(5)
	s.ForgottenWrites.Store(6)
	s.RefusedUncovered.Store(7)
	m := map[string]float64{}
	s.Metrics(m)
	assert.Equal(t, map[string]float64{
		"lethe_capture_intents_total":          1,
		"lethe_capture_followed_writes_total":  2,
		"lethe_capture_refused_total":          3,
		"lethe_capture_untracked_writes_total": 4,
		"lethe_capture_decision_errors_total":  5,
		"lethe_capture_forgotten_writes_total": 6,
		"lethe_coverage_refused_writes_total":  7,
	}, m)
}
