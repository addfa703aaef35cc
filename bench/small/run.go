package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/bench/internal/benchdb"
	"github.com/lethe-privacy/lethe/bench/internal/procstat"
	"github.com/lethe-privacy/lethe/bench/internal/vectors"
)

// subjects is how many distinct user_ids the rows name.
const subjects = 1000

type bench struct {
	cfg       config
	admin     *pgconn.PgConn
	vectorOID uint32
	vecs      *vectors.Pool
}

func newBench(cfg config, admin *pgconn.PgConn) *bench {
	return &bench{cfg: cfg, admin: admin, vecs: vectors.NewPool(cfg.dim, 64, 1)}
}

// run is one mode × clients × target for one round.
type run struct {
	round       int
	mode        string
	clients     int
	target      string
	inserts     int
	secs        float64
	err         error
	ticks       int64 // the target's proxy utime+stime over the run and its settling
	waited      time.Duration
	hostBusyPct float64 // whole host's CPU use during the run (2 cores = 100 %)
	perSec      float64
	usPerInsert float64 // proxy CPU per insert
	p50, p99    time.Duration
}

func (b *bench) setup(ctx context.Context) {
	oid, err := benchdb.CreateVectorTable(ctx, b.admin, b.cfg.table, b.cfg.dim)
	if err != nil {
		prog.Fatalf("%v", err)
	}
	b.vectorOID = oid
}

func (b *bench) exec(ctx context.Context, sql string) error {
	_, err := b.admin.Exec(ctx, sql).ReadAll()
	return err
}

// runOne truncates the table (directly: a strict proxy refuses TRUNCATE),
// connects n clients to t, waits for a quiet host, then has every client
// insert rows one by one for d, and checks the row count.
func (b *bench) runOne(ctx context.Context, round int, mode string, n int, t target, d time.Duration, quiet bool) run {
	r := run{round: round, mode: mode, clients: n, target: t.name}
	if err := b.exec(ctx, "TRUNCATE "+b.cfg.table); err != nil {
		r.err = fmt.Errorf("truncate: %v", benchdb.Describe(err))
		return r
	}
	cs := make([]*client, n)
	for i := range cs {
		var err error
		// Ids are unique across runs, so ledger tags never collide.
		if cs[i], err = b.newClient(ctx, t.dsn, mode, fmt.Sprintf("r%d-%s-%d-%s-%d-", round, mode, n, t.name, i)); err != nil {
			r.err = err
			return r
		}
		defer cs[i].conn.Close(context.Background())
	}
	if quiet {
		r.waited = procstat.WaitQuiet(b.cfg.quietPct, b.cfg.quietMax)
	}

	t0, _ := procstat.CPUTicks(t.pid)
	hb0, ht0 := procstat.HostCPU()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.err = c.insertUntil(ctx, deadline) })
	}
	wg.Wait()
	r.secs = time.Since(start).Seconds()
	hb1, ht1 := procstat.HostCPU()
	if t.capturing {
		// The proxy commits held confirmations up to ten seconds after
		// the last statement: let it, so that this work is counted in its
		// CPU and does not slow the next run.
		time.Sleep(b.cfg.settle)
	}
	t1, _ := procstat.CPUTicks(t.pid)
	if ht1 > ht0 {
		r.hostBusyPct = 100 * float64(hb1-hb0) / float64(ht1-ht0)
	}
	r.ticks = t1 - t0

	var lat []time.Duration
	for _, c := range cs {
		r.inserts += c.done
		lat = append(lat, c.latencies...)
		if c.err != nil && r.err == nil {
			r.err = c.err
		}
	}
	if r.err == nil {
		res := b.admin.ExecParams(ctx, "SELECT count(*) FROM "+b.cfg.table, nil, nil, nil, nil).Read()
		switch {
		case res.Err != nil:
			r.err = fmt.Errorf("count: %v", benchdb.Describe(res.Err))
		case string(res.Rows[0][0]) != strconv.Itoa(r.inserts):
			r.err = fmt.Errorf("table has %s rows, the clients inserted %d", res.Rows[0][0], r.inserts)
		}
	}
	if r.err == nil && r.inserts > 0 {
		r.perSec = float64(r.inserts) / r.secs
		if t.pid != 0 {
			r.usPerInsert = float64(r.ticks) / float64(b.cfg.clkTck) * 1e6 / float64(r.inserts)
		}
		slices.Sort(lat)
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// client is one connection inserting rows one by one.
type client struct {
	b         *bench
	conn      *pgconn.PgConn
	mode      string
	prefix    string
	done      int
	latencies []time.Duration
	err       error

	// extended
	vals    [][]byte
	oids    []uint32
	formats []int16
	meta    []byte
	// simple
	sql []byte
}

// stmtName is the extended mode's prepared statement.
const stmtName = "small_insert"

func (b *bench) newClient(ctx context.Context, dsn, mode, prefix string) (*client, error) {
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect: %v", benchdb.Describe(err))
	}
	c := &client{b: b, conn: conn, mode: mode, prefix: prefix, latencies: make([]time.Duration, 0, 1<<16)}
	if mode == "extended" {
		c.oids = []uint32{25, b.vectorOID, 3802} // text, vector, jsonb
		c.formats = []int16{1, 1, 1}
		sql := "INSERT INTO " + b.cfg.table + " (id, embedding, metadata) VALUES ($1, $2, $3)"
		if _, err := conn.Prepare(ctx, stmtName, sql, c.oids); err != nil {
			conn.Close(ctx)
			return nil, fmt.Errorf("prepare: %v", benchdb.Describe(err))
		}
	}
	return c, nil
}

// insertUntil inserts rows, each in its own implicit transaction, until
// deadline.
func (c *client) insertUntil(ctx context.Context, deadline time.Time) error {
	for i := 0; ; i++ {
		start := time.Now()
		if !start.Before(deadline) {
			return nil
		}
		var err error
		if c.mode == "extended" {
			err = c.insertExtended(ctx, i)
		} else {
			err = c.insertSimple(ctx, i)
		}
		if err != nil {
			return fmt.Errorf("insert %d: %v", i, benchdb.Describe(err))
		}
		c.latencies = append(c.latencies, time.Since(start))
		c.done++
	}
}

func (c *client) id(i int) string { return c.prefix + strconv.Itoa(i) }
func (c *client) metaJSON(i int) string {
	return `{"user_id": "user` + strconv.Itoa(i%subjects) + `@example.com"}`
}

func (c *client) insertExtended(ctx context.Context, i int) error {
	c.meta = append(append(c.meta[:0], 1), c.metaJSON(i)...) // jsonb binary: version 1, then the text
	c.vals = append(c.vals[:0], []byte(c.id(i)), c.b.vecs.Binary[i%len(c.b.vecs.Binary)], c.meta)
	_, err := c.conn.ExecPrepared(ctx, stmtName, c.vals, c.formats, nil).Close()
	return err
}

func (c *client) insertSimple(ctx context.Context, i int) error {
	c.sql = append(c.sql[:0], "INSERT INTO "+c.b.cfg.table+" (id, embedding, metadata) VALUES ('"...)
	c.sql = append(c.sql, c.id(i)...)
	c.sql = append(c.sql, "', '"...)
	c.sql = append(c.sql, c.b.vecs.Text[i%len(c.b.vecs.Text)]...)
	c.sql = append(c.sql, "', '"...)
	c.sql = append(c.sql, c.metaJSON(i)...)
	c.sql = append(c.sql, "')"...)
	_, err := c.conn.Exec(ctx, string(c.sql)).ReadAll()
	return err
}
