package walfollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// Config wires a Follower.
type Config struct {
	// ConnString reaches the database of the configured tables as a role
	// with REPLICATION that owns them (capture.store).
	ConnString string
	// Name names the slot and the publications (Name and Name_inserts).
	Name  string
	Rules *extract.Rules
	// Core records what the follower reads: it hashes subjects, knows
	// the forgotten ones, writes the changes into the ledger and decides
	// late writes (capture.Capture). A committed row about a forgotten
	// subject is a late write, counted in Stats.LateWrites.
	Core Core
	// Ledger is where the follower marks which slots' initial reads are
	// durable (the same ledger the core writes the changes into).
	Ledger ledger.InitialReads
	Logger *slog.Logger
	// Recent, when set, is compared with every row written (Stats.Agreed,
	// Disagreed, NotSeen): a live check of the proxy's parser.
	Recent Recent
	// Followed, when set, is told which configured tables are streamed in
	// full while the slot is streamed (by this follower, or by another
	// proxy's of the same ledger), and that none is when it is not
	// (capture.Followed): the proxy makes no intent for their writes.
	Followed Followed
	// FlushInterval is how long changes wait to be committed to the
	// ledger together (default 200ms); MaxBatch commits earlier.
	FlushInterval time.Duration
	MaxBatch      int
	// RefreshInterval is how often the publications are brought in line
	// with the catalog, so that a configured table created later is
	// followed (default 10s). A refresh reads the catalog and changes the
	// publications only when they differ from it.
	RefreshInterval time.Duration
	// DecodingMemKB, when positive, is logical_decoding_work_mem for the
	// replication connection alone, in kB: how much of the transactions it
	// decodes the walsender keeps in memory before spilling them to disk.
	// 0 leaves the server's setting.
	DecodingMemKB int64
}

// Followed is the proxy's set of tables it makes no intents for
// (capture.Followed).
type Followed interface {
	Generation() uint64
	Set(gen uint64, tables []string) bool
	Suspend()
}

// Stats are counters for metrics. No personal data.
type Stats struct {
	Rows       atomic.Int64  // row changes of configured tables read from the WAL
	Recorded   atomic.Int64  // ledger changes made durable
	NoID       atomic.Int64  // rows whose id was NULL or not in the stream (not recorded)
	BadSubject atomic.Int64  // rows whose subject column the rule cannot read
	Agreed     atomic.Int64  // rows the proxy tagged with the subjects stored
	Disagreed  atomic.Int64  // rows the proxy tagged with other subjects
	NotSeen    atomic.Int64  // rows no recent intent of this proxy names (written around it)
	LateWrites atomic.Int64  // committed rows about a forgotten subject
	Flushed    atomic.Uint64 // the slot's confirmed position (LSN)
	ServerEnd  atomic.Uint64 // the server's WAL end as last reported (LSN)
	Following  atomic.Bool   // streaming now (false while waiting for the slot or the server)
	SlotBusy   atomic.Int64  // attempts that found the slot streamed by another process

	mu      sync.Mutex
	byTable map[string]TableCheck
}

// TableCheck is the live check of the proxy's parser for one table: rows
// the proxy tagged with other subjects than the server stored, and rows no
// recent intent of this proxy names (written around it).
type TableCheck struct {
	Disagreed, NotSeen int64
}

// ByTable returns the parser check's counts per configured table.
func (s *Stats) ByTable() map[string]TableCheck {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byTable)
}

// countTable adds to table's counts and returns them.
func (s *Stats) countTable(table string, add TableCheck) TableCheck {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byTable == nil {
		s.byTable = map[string]TableCheck{}
	}
	c := s.byTable[table]
	c.Disagreed += add.Disagreed
	c.NotSeen += add.NotSeen
	s.byTable[table] = c
	return c
}

// Lag is the WAL the server wrote that the follower has not yet made
// durable in the ledger, in bytes.
func (s *Stats) Lag() uint64 {
	end, flushed := s.ServerEnd.Load(), s.Flushed.Load()
	if end <= flushed {
		return 0
	}
	return end - flushed
}

// Follower follows one slot. Run it once.
type Follower struct {
	cfg   Config
	log   *slog.Logger
	noted map[string]string // how each relation was followed at the last refresh (see report)
	// adopting are the relations that joined the publications while the
	// slot existed and whose earlier rows are not yet durable in the
	// ledger (see session.adopt). Like noted, only Prepare and then Run's
	// sessions touch it.
	adopting []published
	// statusEvery is how often the server hears from the follower at
	// least (statusInterval; shorter in tests of wal_sender_timeout).
	statusEvery time.Duration
	Stats       Stats
}

// New returns a Follower; Run starts it.
func New(cfg Config) (*Follower, error) {
	if err := config.ValidSlotName(cfg.Name); err != nil {
		return nil, err
	}
	if cfg.Core == nil {
		return nil, errors.New("walfollow: no capture core to record through (Config.Core)")
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 5000
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Follower{cfg: cfg, log: log.With("component", "wal"), noted: map[string]string{}, statusEvery: statusInterval}, nil
}

// Prepare checks the server and makes the publications and the slot, so
// that a proxy that cannot follow says why before it serves anyone. A slot
// it creates starts with the rows the tables hold (createSlot), and is
// dropped again when that fails: call it last in a start, once everything
// that can fail has been checked.
func (f *Follower) Prepare(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, f.cfg.ConnString)
	if err != nil {
		return fmt.Errorf("walfollow: connecting with capture.store: %w", err)
	}
	defer conn.Close(context.Background())
	_, err = f.prepare(ctx, conn)
	if errors.Is(err, errSlotBusy) {
		// Not for the operator to fix: Run waits for the slot.
		f.log.Info("wal: waiting for the replication slot", "slot", f.cfg.Name, "reason", err.Error())
		err = nil
	}
	if err != nil {
		return err
	}
	f.noteLegacySlot(ctx, conn)
	return nil
}

// noteLegacySlot warns when this database has a slot of the name every
// proxy used by default before DefaultName, and the follower uses
// another: that slot keeps the server's WAL while nothing follows it. The
// follower never takes it over by itself: it cannot tell whether the slot
// is its ledger's or another's, and a slot two ledgers share splits the
// stream between them.
func (f *Follower) noteLegacySlot(ctx context.Context, conn *pgx.Conn) {
	if f.cfg.Name == config.LegacySlotName {
		return
	}
	var here bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots
		WHERE slot_name = $1 AND plugin = 'pgoutput' AND database = current_database())`, config.LegacySlotName).Scan(&here)
	if err != nil || !here {
		return
	}
	f.log.Warn("wal: this database has a replication slot named "+config.LegacySlotName+" (the default name of earlier versions), and this proxy follows another; "+
		"that slot keeps the server's WAL while nothing follows it. If it is this ledger's, set capture.wal_slot: "+config.LegacySlotName+" to keep following it; "+
		"otherwise drop it once no proxy uses it: lethe-proxy wal drop --config FILE --slot "+config.LegacySlotName+" (docs/wal.md)",
		"slot", f.cfg.Name, "legacy_slot", config.LegacySlotName)
}

// prepare checks the server, refreshes the publications and makes the
// slot, with the rows the tables hold (createSlot), unless it exists and
// the ledger holds its initial read (makeSlot); it returns the configured
// tables published in full. Relations that joined the publications while
// the slot existed are to be adopted.
func (f *Follower) prepare(ctx context.Context, conn *pgx.Conn) (full []string, err error) {
	if err := CheckServer(ctx, conn); err != nil {
		return nil, err
	}
	ps, full, joined, err := f.refresh(ctx, conn)
	if err != nil {
		return nil, err
	}
	key, err := slotKey(ctx, conn, f.cfg.Name)
	if err != nil {
		return nil, err
	}
	exists, err := slotExists(ctx, conn, f.cfg.Name)
	if err != nil {
		return nil, err
	}
	done := false
	if exists {
		if done, err = f.cfg.Ledger.InitialReadDone(ctx, key); err != nil {
			return nil, fmt.Errorf("walfollow: reading whether the ledger holds the initial read of slot %s: %w", f.cfg.Name, err)
		}
	}
	if !done {
		made, err := f.makeSlot(ctx, conn, key, ps)
		if err != nil {
			return nil, err
		}
		if made {
			return full, nil
		}
	}
	f.toAdopt(joined)
	return full, nil
}

// refresh brings the publications in line with the catalog and returns
// the relations published, the configured tables published in full, and
// the relations it added.
func (f *Follower) refresh(ctx context.Context, conn *pgx.Conn) (ps []published, full []string, joined []published, err error) {
	states := map[string]string{}
	ps, full, err = plan(ctx, conn, f.cfg.Rules, func(table, what string) { states[table] = what })
	if err != nil {
		return nil, nil, nil, err
	}
	f.report(states)
	joined, err = syncPublications(ctx, conn, f.cfg.Name, ps)
	return ps, full, joined, err
}

// report logs what changed in how each relation is followed since the
// last refresh: states holds "missing" (a configured table not created
// yet), "inserts" (no replica identity) or "" (followed in full) for
// every relation the plan met.
func (f *Follower) report(states map[string]string) {
	for table, what := range states {
		if last, ok := f.noted[table]; ok && last == what || !ok && what == "" {
			continue
		}
		switch what {
		case "missing":
			f.log.Info("wal: a configured table does not exist yet; it is followed once it does", "table", table)
		case "inserts":
			f.log.Warn("wal: a configured table has no replica identity (no primary key): its updates and deletes are not followed; add a primary key or set REPLICA IDENTITY",
				"table", table)
		default:
			f.log.Info("wal: a configured table is followed in full", "table", table)
		}
	}
	f.noted = states
}

// Run follows until ctx ends, reconnecting after failures (a slot
// another proxy holds, a server restart) with backoff. Changes read but
// not yet durable when ctx ends are read again at the next start.
func (f *Follower) Run(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		started := time.Now()
		err := f.follow(ctx)
		f.Stats.Following.Store(false)
		if f.cfg.Followed != nil && !slotInUse(err) {
			f.cfg.Followed.Suspend()
		}
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		switch {
		case slotInUse(err):
			f.Stats.SlotBusy.Add(1)
			f.log.Info("wal: the slot is in use by another process (another proxy of this ledger follows); waiting", "slot", f.cfg.Name)
		case errors.Is(err, errSlotBusy):
			f.Stats.SlotBusy.Add(1)
			f.log.Info("wal: waiting for the replication slot", "slot", f.cfg.Name, "reason", err.Error())
		default:
			f.log.Error("wal: following stopped; retrying", "err", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// generation is read before a refresh of the publications and given to
// announce after it (Followed.Set).
func (f *Follower) generation() uint64 {
	if f.cfg.Followed == nil {
		return 0
	}
	return f.cfg.Followed.Generation()
}

// announce tells Config.Followed the tables streamed in full, once the
// slot streams and every later change to them is in it.
func (f *Follower) announce(gen uint64, full []string) {
	if f.cfg.Followed != nil {
		f.cfg.Followed.Set(gen, full)
	}
}

// slotInUse reports the server's refusal to stream a slot another
// connection streams (SQLSTATE 55006, object in use).
func slotInUse(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55006"
}

// follow runs one replication session.
func (f *Follower) follow(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, f.cfg.ConnString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	gen := f.generation()
	full, err := f.prepare(ctx, conn)
	if err != nil {
		return err
	}
	cfg, err := f.replicationConfig()
	if err != nil {
		return err
	}
	if f.cfg.DecodingMemKB > 0 {
		cfg.RuntimeParams["logical_decoding_work_mem"] = strconv.FormatInt(f.cfg.DecodingMemKB, 10) + "kB"
	}
	repl, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer repl.Close(context.Background())
	pubs := f.cfg.Name + "," + insertsOnly(f.cfg.Name)
	err = pglogrepl.StartReplication(ctx, repl, f.cfg.Name, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + strings.ReplaceAll(pubs, "'", "''") + "'"},
	})
	if slotInUse(err) {
		// Another proxy of the ledger streams the slot: the tables are
		// followed all the same.
		f.announce(gen, full)
	}
	if err != nil {
		return err
	}
	f.Stats.Following.Store(true)
	f.announce(gen, full)
	s := &session{f: f, conn: conn, repl: repl, rec: recorder{maxBatch: f.cfg.MaxBatch}, dec: newDecoder(f.cfg.Rules, f.cfg.Core, resolver(ctx, conn, f.cfg.Rules), &f.Stats)}
	s.dec.recent, s.dec.log = f.cfg.Recent, f.log
	return s.run(ctx)
}

// lateWrites hands late writes to the core (Core.LateWrite), which logs
// them and deletes them or not. On an error the session ends, and the
// rows are read and handed over again.
func (f *Follower) lateWrites(ctx context.Context, late []lateWrite) error {
	for _, w := range late {
		if err := f.cfg.Core.LateWrite(ctx, ledger.StorePostgres, w.table, w.subject); err != nil {
			return fmt.Errorf("walfollow: deleting a late write in %s: %w", w.table, err)
		}
	}
	return nil
}
