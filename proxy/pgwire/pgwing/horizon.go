package pgwing

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// walFacts is what the server said, right after forget's deletes
// committed, about how long its WAL keeps them: the answers
// readWALFacts collects. A question the store role may not ask is
// left with the refusal in its Err, and the horizon it feeds is unknown.
type walFacts struct {
	ReadAt time.Time
	Role   string // current_user, for the grants a refusal asks for

	// LSN is pg_current_wal_lsn(): every delete committed before the
	// question is in WAL at or before it.
	LSN    pglogrepl.LSN
	LSNErr string

	// The last checkpoint (pg_control_checkpoint()): its redo LSN and
	// when it started.
	Redo          pglogrepl.LSN
	CheckpointAt  time.Time
	CheckpointErr string

	// Settings (bytes, durations): wal_keep_size, max_wal_size,
	// checkpoint_timeout, checkpoint_completion_target.
	WALKeepSize, MaxWALSize int64
	CheckpointTimeout       time.Duration
	CompletionTarget        float64
	SettingsErr             string

	Slots    []slotFacts // pg_replication_slots
	SlotsErr string

	Standbys    []standbyFacts // pg_stat_replication, the physical walsenders
	StandbysErr string
}

// slotFacts is one replication slot.
type slotFacts struct {
	Name, Type string
	RestartLSN pglogrepl.LSN
	Reserves   bool // restart_lsn is set: the slot holds WAL from it on
}

// standbyFacts is one standby streaming from the server.
type standbyFacts struct {
	Name      string
	ReplayLSN pglogrepl.LSN
	Visible   bool          // replay_lsn is shown to the store role
	ReplayLag time.Duration // replay_lag, when shown
	HasLag    bool
}

// walHorizons are the PostgreSQL store's horizons from facts and the
// declared retention, for deletes committed by deleted.
func walHorizons(f walFacts, kept config.CopyRetention, deleted time.Time) []connector.Horizon {
	return []connector.Horizon{
		pgWALHorizon(f),
		keptHorizon("wal_archive", kept.WALArchive, "postgres.retention.wal_archive", deleted,
			"an archived segment is kept that long after it was archived, and the segment holding the delete is archived once it is complete, so a copy can outlive this date by as long as the segment took to fill"),
		keptHorizon("backups", kept.Backups, "postgres.retention.backups", deleted,
			"the last backup that can hold the records was taken before the delete and is kept that long after it was taken"),
		replicasHorizon(f),
	}
}

// keptHorizon is the horizon of a kind of copy whose retention the
// operator declares (or not) in setting.
func keptHorizon(copy string, k config.Kept, setting string, deleted time.Time, how string) connector.Horizon {
	h := connector.Horizon{Store: ledger.StorePostgres, Copy: copy}
	switch {
	case !k.Declared:
		h.Status, h.Basis = connector.HorizonUnknown, fmt.Sprintf("not declared: set %s to how long such copies are kept, or none", setting)
	case k.None:
		h.Status, h.Until, h.Basis = connector.HorizonDated, deleted, fmt.Sprintf("declared none (%s): no such copy is kept", setting)
	default:
		h.Status, h.Until = connector.HorizonDated, deleted.Add(k.Period)
		h.Basis = fmt.Sprintf("declared retention %s (%s) after the delete: %s", k.Period, setting, how)
	}
	return h
}

// pgWALHorizon is when pg_wal stops keeping the segment of the delete:
// after a checkpoint whose redo point is past it, once wal_keep_size more
// WAL follows it and no replication slot's restart_lsn is at or before
// it. Only the checkpoint has a date; the others wait for WAL volume or a
// slot and are stated as conditions.
func pgWALHorizon(f walFacts) connector.Horizon {
	h := connector.Horizon{Store: ledger.StorePostgres, Copy: "pg_wal"}
	for _, refused := range []struct{ err, what, grant string }{
		{f.LSNErr, "pg_current_wal_lsn()", "GRANT EXECUTE ON FUNCTION pg_current_wal_lsn() TO " + f.Role},
		{f.CheckpointErr, "pg_control_checkpoint()", "GRANT EXECUTE ON FUNCTION pg_control_checkpoint() TO " + f.Role},
		{f.SettingsErr, "the WAL settings", "check that the store role can read pg_settings"},
		{f.SlotsErr, "pg_replication_slots", "GRANT SELECT ON pg_replication_slots TO " + f.Role},
	} {
		if refused.err != "" {
			h.Status = connector.HorizonUnknown
			h.Basis = fmt.Sprintf("the store role could not read %s (%s): %s", refused.what, refused.err, refused.grant)
			return h
		}
	}
	d := f.LSN
	var (
		conditions []string
		until      time.Time
	)
	if f.Redo > d {
		until = f.ReadAt
		conditions = append(conditions, fmt.Sprintf("the last checkpoint's redo point %s is already past it", f.Redo))
	} else {
		start := f.CheckpointAt.Add(f.CheckpointTimeout)
		if start.Before(f.ReadAt) {
			// An idle server skips timed checkpoints without recording
			// them: the next one starts within checkpoint_timeout of now.
			start = f.ReadAt.Add(f.CheckpointTimeout)
		}
		spread := time.Duration(float64(f.CheckpointTimeout) * f.CompletionTarget)
		until = start.Add(spread).UTC().Truncate(time.Second).Add(time.Second)
		conditions = append(conditions, fmt.Sprintf("a checkpoint after it completes, by %s at the latest (the last one began %s; checkpoint_timeout %s, checkpoint_completion_target %g; a checkpoint slowed by I/O can finish later)",
			until.Format(time.RFC3339), f.CheckpointAt.UTC().Format(time.RFC3339), f.CheckpointTimeout, f.CompletionTarget))
	}
	var waits []string
	if f.WALKeepSize > 0 {
		waits = append(waits, fmt.Sprintf("%s more WAL is written after it (wal_keep_size)", mib(f.WALKeepSize)))
	}
	for _, s := range f.Slots {
		if s.Reserves && s.RestartLSN <= d {
			waits = append(waits, fmt.Sprintf("replication slot %s (%s, restart_lsn %s) advances past %s", s.Name, s.Type, s.RestartLSN, d))
		}
	}
	conditions = append(conditions, waits...)
	basis := fmt.Sprintf("the deletes are in WAL at or before LSN %s (pg_current_wal_lsn() at %s); its segment leaves pg_wal once %s; "+
		"a removed segment is gone, a recycled one keeps its bytes until the server writes it again, within max_wal_size (%s) of further WAL",
		d, f.ReadAt.UTC().Format(time.RFC3339), strings.Join(conditions, ", and "), mib(f.MaxWALSize))
	h.Basis = basis
	if len(waits) > 0 {
		h.Status = connector.HorizonConditional
		return h
	}
	h.Status, h.Until = connector.HorizonDated, until
	return h
}

// replicasHorizon is when the standbys streaming from the server have
// replayed the deletes: done when every one is past the delete's LSN, a
// condition while one is not, unknown when none is visible.
func replicasHorizon(f walFacts) connector.Horizon {
	h := connector.Horizon{Store: ledger.StorePostgres, Copy: "replicas"}
	switch {
	case f.LSNErr != "":
		h.Status, h.Basis = connector.HorizonUnknown, "the WAL position of the deletes could not be read ("+f.LSNErr+")"
		return h
	case f.StandbysErr != "":
		h.Status, h.Basis = connector.HorizonUnknown, fmt.Sprintf("the store role could not read pg_stat_replication (%s): GRANT pg_monitor TO %s", f.StandbysErr, f.Role)
		return h
	case len(f.Standbys) == 0:
		h.Status, h.Basis = connector.HorizonUnknown, "no standby streams from this server (pg_stat_replication lists none); "+
			"a standby restoring from the WAL archive or cascading from another standby is not visible here"
		return h
	}
	var behind []string
	for _, s := range f.Standbys {
		if !s.Visible {
			h.Status, h.Basis = connector.HorizonUnknown, fmt.Sprintf("pg_stat_replication hides standby %s's replay position from the store role: GRANT pg_read_all_stats (or pg_monitor) TO %s", s.Name, f.Role)
			return h
		}
		if s.ReplayLSN < f.LSN {
			lag := "replay_lag not reported"
			if s.HasLag {
				lag = "replay_lag " + s.ReplayLag.String()
			}
			behind = append(behind, fmt.Sprintf("standby %s replays past LSN %s (replay_lsn %s, %s when read)", s.Name, f.LSN, s.ReplayLSN, lag))
		}
	}
	if len(behind) > 0 {
		h.Status, h.Basis = connector.HorizonConditional, "until "+strings.Join(behind, ", and ")+
			"; a standby keeps its own WAL, archives and backups, which this does not cover"
		return h
	}
	h.Status, h.Until = connector.HorizonDated, f.ReadAt
	h.Basis = fmt.Sprintf("every standby in pg_stat_replication (%d) had replayed past LSN %s when read; a standby keeps its own WAL, archives and backups, which this does not cover", len(f.Standbys), f.LSN)
	return h
}

// mib spells a size in bytes as PostgreSQL's settings do, in MB.
func mib(b int64) string { return fmt.Sprintf("%d MB", b>>20) }
