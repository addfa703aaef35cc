package datamap

import (
	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
)

// policies are the settings that decide what happens to people's data in
// every table and namespace, each with what it means, in a fixed order.
func policies(cfg *config.Config) []Policy {
	cp, f := cfg.Capture, cfg.Forget
	return []Policy{
		{Key: "capture.mode", Name: "Writes that cannot be attributed", Setting: string(cp.Mode), Meaning: meaningOf(cp.Mode, map[capture.Mode]string{
			capture.Strict: "refused (SQLSTATE LT001): a write to a table or namespace below whose records cannot be tied to a person " +
				"(INSERT … SELECT, MERGE, a bulk import, an update by filter) does not happen",
			capture.Permissive: "forwarded, and recorded in the ledger as an unattributed write of the table or namespace",
		})},
		{Key: "capture.fail_open", Name: "Ledger unavailable", Setting: onOff(cp.FailOpen), Meaning: map[bool]string{
			false: "writes to the tables and namespaces below are refused (SQLSTATE LT002), so nothing is stored that the ledger did not record",
			true:  "writes are forwarded without being recorded, and logged loudly",
		}[cp.FailOpen]},
		walPolicy(cfg),
		forgetPolicy(cfg),
		{Key: "forget.forgotten", Name: "New writes about a forgotten person", Setting: string(f.Forgotten), Meaning: meaningOf(f.Forgotten, map[config.ForgottenWrites]string{
			config.ForgottenRefuse: "refused (SQLSTATE LT003, or Pinecone's error shape) for as long as the person stays forgotten",
			config.ForgottenFlag:   "forwarded, logged and counted",
		})},
		lateWritesPolicy(cfg),
		{Key: "coverage.mode", Name: "Tables and namespaces without a rule", Setting: string(cfg.Coverage.Mode), Meaning: meaningOf(cfg.Coverage.Mode, map[config.CoverageMode]string{
			config.CoverageReport: "lethe-proxy check fails, and the proxy logs them, when a table with a vector column or a column named like " +
				"a person, or a namespace of a configured index, has no rule and no ignore",
			config.CoverageEnforce: "as report, and writes to them are refused until they have a rule or an ignore",
		})},
	}
}

func walPolicy(cfg *config.Config) Policy {
	p := Policy{Key: "capture.wal", Name: "WAL follower", Setting: onOff(cfg.Capture.Follows())}
	switch {
	case len(cfg.Capture.Tables) == 0:
		p.Meaning = "not used: no PostgreSQL table has a rule"
	case cfg.Capture.Follows():
		p.Meaning = "every committed row of the tables below is recorded from the server's write-ahead log, however it was " +
			"written (around the proxy, by triggers, by another service)"
	default:
		p.Meaning = "only writes through the proxy are recorded; rows written straight to the server are not in the ledger, " +
			"though forget still finds them by their subject"
	}
	return p
}

func forgetPolicy(cfg *config.Config) Policy {
	p := Policy{Key: "forget.signing_key", Name: "Erasure requests", Setting: "off",
		Meaning: "forget.signing_key is not set, so no erasure request can run: writes are recorded in the ledger and nothing is deleted"}
	if cfg.Forget.SigningKey != "" {
		p.Setting = "on"
		p.Meaning = "run through the admin API with a preview and a confirmation; each is due within " +
			duration(cfg.Forget.Deadline.D()) + " of receipt (forget.deadline) and ends with a signed certificate in the transparency log"
	}
	return p
}

// meaningOf picks the meaning of a setting config.Load accepted.
func meaningOf[S ~string](setting S, meanings map[S]string) string { return meanings[setting] }

func lateWritesPolicy(cfg *config.Config) Policy {
	p := Policy{Key: "forget.late_writes", Name: "Rows about a forgotten person committed later", Setting: string(cfg.Forget.LateWrites)}
	switch cfg.Forget.LateWrites {
	case config.LateWritesDelete:
		p.Meaning = "deleted and verified, and logged as a forget.late_write event of the request"
	case config.LateWritesFlag:
		p.Meaning = "logged and counted, not deleted"
	}
	if !cfg.Capture.Follows() {
		p.Meaning += " (only once the WAL follower, which sees them, is on)"
	}
	return p
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
