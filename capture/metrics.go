package capture

// Metrics adds the counters to m under their names on the admin API's
// /metrics (Prometheus text format): the names are stable, dashboards and
// alerts read them.
func (s *Stats) Metrics(m map[string]float64) {
	m["lethe_capture_intents_total"] = float64(s.Intents.Load())
	m["lethe_capture_followed_writes_total"] = float64(s.Followed.Load())
	m["lethe_capture_refused_total"] = float64(s.Refused.Load())
	m["lethe_capture_untracked_writes_total"] = float64(s.UntrackedWrites.Load())
	m["lethe_capture_decision_errors_total"] = float64(s.DecisionErrors.Load())
	m["lethe_capture_forgotten_writes_total"] = float64(s.ForgottenWrites.Load())
	m["lethe_coverage_refused_writes_total"] = float64(s.RefusedUncovered.Load())
}
