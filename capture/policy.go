package capture

import "github.com/lethe-privacy/lethe/ledger"

// Write policy: the one place capture decides whether a write is
// forwarded, and how it is recorded. An adapter decodes its protocol's
// messages and tracks its transactions; when a write raises a question of
// policy it asks here and translates the answer (a *Refusal, or nil:
// forward) into its wire's error, never reading the mode, the fail-open
// setting or the tombstones itself.
//
//	question                                   Strict          Permissive
//	rows not attributable (Unattributable)     refuse LT001    forward, unattributed
//	request unreadable as a whole (Unreadable) refuse (relay)  forward, unattributed
//	read differently from the store            refuse LT001    refuse LT001  (RefuseUnattributed)
//	table no rule covers, coverage enforce     refuse LT005    refuse LT005  (RefuseUncovered)
//	a relay's own limit or form (Refuse)       refuse (relay)  refuse (relay)
//	about a forgotten subject (Prepare)        refuse LT003, or forward and count (FlagForgotten)
//	ledger cannot take the intent (Durable)    refuse LT002, or forward untracked (FailOpen)
//
// Every refusal made here is counted in Stats (Refused, or
// RefusedUncovered for coverage).

// Unattributable decides a write whose rows cannot be attributed to
// subjects (a statement capture cannot parse, a write whose subjects are
// computed, parameters or COPY data it cannot read, a Pinecone write
// without its subject fields). In Strict mode it is refused with
// CodeUnattributed, counted in Stats.Refused, and logged as
// "unattributable write: " + logReason; in Permissive mode it returns nil:
// the adapter forwards the write and records it as unattributed where it
// has tags for it. The relay words message and hint for its protocol;
// logReason says why without quoting the request.
func (c *Capture) Unattributable(message, hint, logReason string) *Refusal {
	if c.cfg.Mode != Strict {
		return nil
	}
	return c.RefuseUnattributed(message, hint, logReason)
}

// RefuseUnattributed refuses, in every mode, a write whose rows cannot be
// attributed because the store may read it differently from the proxy
// (the proxy's tags would be of another write), and counts it in
// Stats.Refused. It is logged as "unattributable write: " + logReason;
// Unattributable is the question for writes Permissive mode forwards.
func (c *Capture) RefuseUnattributed(message, hint, logReason string) *Refusal {
	c.Stats.Refused.Add(1)
	return &Refusal{Code: CodeUnattributed, Message: message, Hint: hint, LogReason: "unattributable write: " + logReason}
}

// Unreadable decides a request the adapter cannot read at all (a path or
// API version it does not know): in Strict mode r, the relay's own
// refusal, counted in Stats.Refused; in Permissive mode nil, and the
// adapter forwards it and records an unattributed write for reconcile.
func (c *Capture) Unreadable(r Refusal) *Refusal {
	if c.cfg.Mode != Strict {
		return nil
	}
	return c.Refuse(r)
}

// Refuse is a relay's own refusal, in every mode (a request in a form it
// does not read, a limit it keeps): it counts r in Stats.Refused and
// returns it.
func (c *Capture) Refuse(r Refusal) *Refusal {
	c.Stats.Refused.Add(1)
	return &r
}

// RefuseUncovered refuses a write to table, which no capture rule or
// coverage ignore covers (coverage.mode: enforce), whatever Mode says, and
// counts it in Stats.RefusedUncovered. reason says why in words that name
// tables only (extract's Reason of a KindUncovered Analysis).
func (c *Capture) RefuseUncovered(table, reason string) *Refusal {
	c.Stats.RefusedUncovered.Add(1)
	return &Refusal{
		Code:    CodeUncovered,
		Message: "lethe: write to " + table + " refused: " + reason + " (coverage.mode: enforce)",
		Hint: "add a capture.tables rule for " + table + " (table, id, subjects) or a coverage.ignore with a reason " +
			"(table: " + table + ", reason: why no person's data is there), then restart the proxy; lethe-proxy check prints the YAML",
		LogReason: "write to an uncovered table: " + reason,
	}
}

// ledgerDown decides a write whose intent the ledger could not take (err):
// refused with CodeLedgerDown (capture fails closed), or, with FailOpen,
// forwarded untracked (nil), logged loudly and counted in
// Stats.UntrackedWrites.
func (c *Capture) ledgerDown(table string, err error) *Refusal {
	if c.cfg.FailOpen {
		c.Stats.UntrackedWrites.Add(1)
		c.log.Error("LEDGER DOWN: forwarding a write WITHOUT its tag (fail_open is set); run reconcile when the ledger is back",
			"table", table, "err", err)
		return nil
	}
	c.Stats.Refused.Add(1)
	c.log.Warn("ledger unavailable: write refused", "table", table, "err", err)
	return &Refusal{
		Code:      CodeLedgerDown,
		Message:   "lethe: the write was not forwarded because its tag could not be recorded (the ledger is unavailable)",
		Hint:      "retry when the ledger is back; nothing of this statement was written",
		LogReason: "ledger unavailable",
	}
}

// checkForgotten refuses (or flags) a write about a forgotten subject.
func (c *Capture) checkForgotten(entries []ledger.Entry, table string) *Refusal {
	ts := c.cfg.Tombstones
	if ts == nil || ts.Len() == 0 {
		return nil
	}
	for _, e := range entries {
		if e.Unattributed || !ts.Has(e.Subject) {
			continue
		}
		c.Stats.ForgottenWrites.Add(1)
		if c.cfg.FlagForgotten {
			c.log.Warn("write about a forgotten subject forwarded (forgotten: flag)", "table", table, "subject_hmac", e.Subject.String())
			return nil
		}
		c.Stats.Refused.Add(1)
		c.log.Warn("write about a forgotten subject refused", "table", table, "subject_hmac", e.Subject.String())
		return &Refusal{
			Code:      CodeForgotten,
			Message:   "lethe: the write was not forwarded because it is about a data subject who was forgotten (erasure request)",
			Hint:      "an operator can lift the subject's tombstone if the person is back (lethe-proxy forget lift)",
			LogReason: "write about a forgotten subject",
		}
	}
	return nil
}

// Forgotten reports whether subject was forgotten (Config.Tombstones; nil
// holds none). Prepare asks it of every write a relay forwards, and the
// WAL follower of every committed row, for which a yes makes the row a
// late write.
func (c *Capture) Forgotten(subject ledger.SubjectHash) bool {
	ts := c.cfg.Tombstones
	return ts != nil && ts.Has(subject)
}
