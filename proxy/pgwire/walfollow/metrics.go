package walfollow

import "strings"

// Metrics adds the follower's series to m under their names on the admin
// API's /metrics (Prometheus text format), as capture.Stats.Metrics does
// for capture: the names are stable, dashboards and alerts read them.
func (s *Stats) Metrics(m map[string]float64) {
	following := 0.0
	if s.Following.Load() {
		following = 1
	}
	m["lethe_wal_following"] = following
	m["lethe_wal_rows_total"] = float64(s.Rows.Load())
	m["lethe_wal_changes_recorded_total"] = float64(s.Recorded.Load())
	m["lethe_wal_rows_without_id_total"] = float64(s.NoID.Load())
	m["lethe_wal_rows_unreadable_subject_total"] = float64(s.BadSubject.Load())
	m["lethe_wal_late_writes_total"] = float64(s.LateWrites.Load())
	m["lethe_wal_rows_agreeing_total"] = float64(s.Agreed.Load())
	m["lethe_wal_rows_disagreeing_total"] = float64(s.Disagreed.Load())
	m["lethe_wal_rows_not_seen_by_proxy_total"] = float64(s.NotSeen.Load())
	for table, c := range s.ByTable() {
		label := `{table="` + labelEscaper.Replace(table) + `"}`
		m["lethe_wal_table_rows_disagreeing_total"+label] = float64(c.Disagreed)
		m["lethe_wal_table_rows_not_seen_by_proxy_total"+label] = float64(c.NotSeen)
	}
	m["lethe_wal_lag_bytes"] = float64(s.Lag())
	m["lethe_wal_slot_busy_total"] = float64(s.SlotBusy.Load())
}

// labelEscaper escapes a label value of the Prometheus text format.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
