// Command ingest measures vector-table ingest throughput directly against
// PostgreSQL and through lethe-proxy with capture on, interleaved
// (direct, proxy, direct, proxy, ...), for three workloads:
//
//	extended  multi-row INSERT, BATCH rows per statement, extended protocol,
//	          binary parameters (text id, pgvector binary, jsonb binary)
//	simple    the same rows as inline literals, simple protocol
//	copy      COPY ... FROM STDIN WITH (FORMAT BINARY), one statement
//
// plus a bounded-memory check that streams a large binary COPY through the
// proxy (BIG_MB) and reports the proxy's peak RSS while it runs.
//
// It is normally run by bench/ingest.sh, which starts the proxy and sets:
//
//	INGEST_DIRECT_DSN  connection string of the server (sslmode=disable)
//	INGEST_PROXY_DSN   the same through lethe-proxy
//	INGEST_PROXY_PID   the proxy's pid (CPU from /proc/PID/stat, RSS from /proc/PID/status)
//	INGEST_TABLE       schema-qualified table, the one in the proxy's capture config
//
// and passes through ROWS, R, BATCH, DIM, WORKLOADS, BIG_MB, WARMUP_ROWS,
// QUIET_PCT, QUIET_MAX, CLK_TCK and OUT_DIR (see bench/ingest.sh).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/bench/internal/benchdb"
	"github.com/lethe-privacy/lethe/bench/internal/benchenv"
	"github.com/lethe-privacy/lethe/bench/internal/median"
	"github.com/lethe-privacy/lethe/bench/internal/procstat"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

type config struct {
	directDSN, proxyDSN, table string
	proxyPID                   int
	rows, rounds, batch, dim   int
	warmupRows                 int
	pairedRows                 int
	settle                     time.Duration
	workloads                  []string
	bigMB                      int
	quietPct                   float64
	quietMax                   time.Duration
	clkTck                     int64
	outDir                     string
	// vectorStorage, when set, is the embedding column's STORAGE (plain,
	// main, external, extended): how the server stores a vector too big
	// to stay inline by default, which the WAL follower's decoding pays.
	vectorStorage string
	// walSlot, when set, is the WAL follower's slot: after each run the
	// bench waits (at most catchupMax) until the slot is confirmed past
	// the run, so the follower's work for a run is counted in that run's
	// proxy CPU and does not slow the next one.
	walSlot    string
	catchupMax time.Duration
}

const prog benchenv.Prog = "ingest"

func loadConfig() config {
	c := config{
		directDSN:  os.Getenv("INGEST_DIRECT_DSN"),
		proxyDSN:   os.Getenv("INGEST_PROXY_DSN"),
		table:      os.Getenv("INGEST_TABLE"),
		proxyPID:   prog.EnvInt("INGEST_PROXY_PID", 0),
		rows:       prog.EnvInt("ROWS", 20000),
		rounds:     prog.EnvInt("R", 3),
		batch:      prog.EnvInt("BATCH", 100),
		dim:        prog.EnvInt("DIM", 1536),
		warmupRows: prog.EnvInt("WARMUP_ROWS", 1000),
		pairedRows: prog.EnvInt("PAIRED_ROWS", 60000),
		settle:     time.Duration(prog.EnvInt("SETTLE_S", 11)) * time.Second,
		bigMB:      prog.EnvInt("BIG_MB", 1024),
		quietPct:   float64(prog.EnvInt("QUIET_PCT", 20)),
		quietMax:   time.Duration(prog.EnvInt("QUIET_MAX", 60)) * time.Second,
		clkTck:     int64(prog.EnvInt("CLK_TCK", 100)),
		outDir:     os.Getenv("OUT_DIR"),
		workloads:  strings.Fields(os.Getenv("WORKLOADS")),

		vectorStorage: strings.ToLower(os.Getenv("VECTOR_STORAGE")),
		walSlot:       os.Getenv("INGEST_WAL_SLOT"),
		catchupMax:    time.Duration(prog.EnvInt("CATCHUP_MAX_S", 300)) * time.Second,
	}
	if len(c.workloads) == 0 {
		c.workloads = []string{"extended", "simple", "copy"}
	}
	for _, w := range c.workloads {
		if w != "extended" && w != "simple" && w != "copy" {
			prog.Fatalf("unknown workload %q (extended, simple, copy)", w)
		}
	}
	if c.directDSN == "" || c.proxyDSN == "" || c.table == "" || c.proxyPID == 0 {
		prog.Fatalf("INGEST_DIRECT_DSN, INGEST_PROXY_DSN, INGEST_TABLE and INGEST_PROXY_PID are required (run bench/ingest.sh)")
	}
	if !slices.Contains([]string{"", "plain", "main", "external", "extended"}, c.vectorStorage) {
		prog.Fatalf("VECTOR_STORAGE must be plain, main, external or extended (got %q)", c.vectorStorage)
	}
	if c.rows < 1 || c.rounds < 1 || c.batch < 1 || c.dim < 1 || c.dim > 16000 {
		prog.Fatalf("ROWS, R, BATCH must be >= 1 and DIM in 1..16000")
	}
	return c
}

var targets = []string{"direct", "proxy"}

var thresholds = map[string]float64{"extended": 0.85, "simple": 0.7, "copy": 0.9}

type run struct {
	round             int
	workload, target  string
	rows              int
	secs              float64
	err               error
	proxyTicks        int64 // proxy utime+stime during the run
	maxRSSKB, hwmKB   int64 // largest sampled VmRSS during the run; VmHWM after it
	waited            time.Duration
	caughtUp          time.Duration // from the run's end until the follower's slot was past it
	hostBusyPct       float64       // whole host's CPU use during the run (2 cores = 100 %)
	rowsPerSec, usRow float64
}

type bench struct {
	cfg       config
	admin     *pgconn.PgConn // direct: setup, TRUNCATE, checks
	walConn   *pgx.Conn      // direct, with a follower: waits for its slot
	conns     map[string]*pgconn.PgConn
	vectorOID uint32
	gen       *rowGen
	sqlBuf    []byte
}

func main() {
	cfg := loadConfig()
	ctx := context.Background()
	b := &bench{cfg: cfg, conns: map[string]*pgconn.PgConn{}}

	var err error
	if b.admin, err = pgconn.Connect(ctx, cfg.directDSN); err != nil {
		prog.Fatalf("connect direct: %v", err)
	}
	if cfg.walSlot != "" {
		if b.walConn, err = pgx.Connect(ctx, cfg.directDSN); err != nil {
			prog.Fatalf("connect direct: %v", err)
		}
	}
	b.setup(ctx)
	for _, t := range targets {
		dsn := cfg.directDSN
		if t == "proxy" {
			dsn = cfg.proxyDSN
		}
		if b.conns[t], err = pgconn.Connect(ctx, dsn); err != nil {
			prog.Fatalf("connect %s: %v", t, err)
		}
	}
	b.gen = newRowGen(cfg.dim, 1000, 64, 1)
	prog.Logf("table %s, dim %d, %d rows per run, batch %d, %d round(s), workloads %v, vector oid %d",
		cfg.table, cfg.dim, cfg.rows, cfg.batch, cfg.rounds, cfg.workloads, b.vectorOID)

	var runs []run
	if cfg.warmupRows > 0 {
		prog.Logf("warm-up: %d rows per workload and target (not recorded)", cfg.warmupRows)
		for _, w := range cfg.workloads {
			for _, t := range targets {
				r := b.runOne(ctx, 0, w, t, cfg.warmupRows, false)
				if r.err != nil {
					prog.Logf("warm-up %s %s failed: %v", w, t, r.err)
				}
			}
		}
	}
	for round := 1; round <= cfg.rounds; round++ {
		for _, w := range cfg.workloads {
			for _, t := range targets {
				r := b.runOne(ctx, round, w, t, cfg.rows, true)
				runs = append(runs, r)
				status := "ok"
				if r.err != nil {
					status = "FAILED: " + r.err.Error()
				}
				prog.Logf("round %d %-8s %-6s %8.0f rows/s  %6.2fs  proxy %6.1f µs/row  rss %s  host busy %3.0f%% (waited %.0fs, follower caught up %.1fs later) %s",
					r.round, r.workload, r.target, r.rowsPerSec, r.secs, r.usRow, mib(r.maxRSSKB), r.hostBusyPct, r.waited.Seconds(), r.caughtUp.Seconds(), status)
			}
		}
	}

	var pr *paired
	if cfg.pairedRows > 0 && slices.Contains(cfg.workloads, "extended") {
		prog.Logf("paired extended: %d rows per target, statements alternating", cfg.pairedRows)
		p := b.runPaired(ctx, cfg.pairedRows)
		pr = &p
	}
	var big *run
	if cfg.bigMB > 0 {
		big = b.bigCopy(ctx)
	}
	report(cfg, runs, big, pr)
}

func (b *bench) setup(ctx context.Context) {
	oid, err := benchdb.CreateVectorTable(ctx, b.admin, b.cfg.table, b.cfg.dim)
	if err != nil {
		prog.Fatalf("%v", err)
	}
	b.vectorOID = oid
	if b.cfg.vectorStorage != "" {
		alter := fmt.Sprintf("ALTER TABLE %s ALTER COLUMN embedding SET STORAGE %s", b.cfg.table, b.cfg.vectorStorage)
		if _, err := b.admin.Exec(ctx, alter).ReadAll(); err != nil {
			prog.Fatalf("%s: %s", alter, benchdb.Describe(err))
		}
	}
	if b.cfg.walSlot != "" {
		// The table was created again after the proxy started: the first
		// run starts once the follower streams it (its refresh, every 10 s).
		b.awaitPublished(ctx)
	}
}

// awaitPublished waits until the follower's publication holds the table.
func (b *bench) awaitPublished(ctx context.Context) {
	start := time.Now()
	args := [][]byte{[]byte(b.cfg.walSlot), []byte(b.cfg.table)}
	for {
		res := b.admin.ExecParams(ctx, `SELECT count(*) FROM pg_publication_tables WHERE pubname = $1 AND schemaname || '.' || tablename = $2`,
			args, nil, nil, nil).Read()
		if res.Err != nil {
			prog.Fatalf("reading publication %s: %s", b.cfg.walSlot, benchdb.Describe(res.Err))
		}
		if string(res.Rows[0][0]) != "0" {
			return
		}
		if time.Since(start) > time.Minute {
			prog.Fatalf("the follower has not published %s after a minute", b.cfg.table)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *bench) truncate(ctx context.Context) error {
	_, err := b.admin.Exec(ctx, "TRUNCATE "+b.cfg.table).ReadAll()
	return err
}

// awaitSlot waits until the WAL follower's slot is confirmed past every
// row written so far (walfollow.AwaitCommitted), at most catchupMax, and
// returns how long that took.
func (b *bench) awaitSlot(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	wait, cancel := context.WithTimeout(ctx, b.cfg.catchupMax)
	defer cancel()
	if err := walfollow.AwaitCommitted(wait, b.walConn, b.cfg.walSlot, nil); err != nil { // the proxy read the slot before it served
		return time.Since(start), fmt.Errorf("%w (CATCHUP_MAX_S=%.0f)", err, b.cfg.catchupMax.Seconds())
	}
	return time.Since(start), nil
}

func (b *bench) count(ctx context.Context) (int, error) {
	res := b.admin.ExecParams(ctx, "SELECT count(*) FROM "+b.cfg.table, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return 0, res.Err
	}
	return strconv.Atoi(string(res.Rows[0][0]))
}

// runOne truncates the table (directly), waits for a quiet host, then loads
// n rows through target with workload w and checks the row count.
func (b *bench) runOne(ctx context.Context, round int, w, t string, n int, quiet bool) run {
	r := run{round: round, workload: w, target: t, rows: n}
	if err := b.truncate(ctx); err != nil {
		r.err = fmt.Errorf("truncate: %v", benchdb.Describe(err))
		return r
	}
	if quiet {
		r.waited = procstat.WaitQuiet(b.cfg.quietPct, b.cfg.quietMax)
	}
	// Ids are unique across runs, so ledger tags never collide.
	b.gen.prefix = fmt.Sprintf("r%d-%s-%s-", round, w, t)
	conn := b.conns[t]
	pid := b.cfg.proxyPID

	t0, _ := procstat.CPUTicks(pid)
	hb0, ht0 := procstat.HostCPU()
	s := procstat.SampleRSS(pid, 100*time.Millisecond)
	start := time.Now()
	switch w {
	case "extended":
		r.err = b.loadExtended(ctx, conn, n)
	case "simple":
		r.err = b.loadSimple(ctx, conn, n)
	case "copy":
		r.err = b.loadCopy(ctx, conn, n)
	}
	r.secs = time.Since(start).Seconds()
	hb1, ht1 := procstat.HostCPU()
	if b.cfg.walSlot != "" && r.err == nil {
		r.caughtUp, r.err = b.awaitSlot(ctx)
	}
	if t == "proxy" || b.cfg.walSlot != "" {
		// The proxy commits its held confirmations up to ten seconds
		// after the last statement, and its SQLite ledger writes the
		// follower's changes into its index up to ten seconds after they
		// were appended: let it, so that this work is counted in this
		// run's CPU and does not slow the next run.
		time.Sleep(b.cfg.settle)
	}
	r.maxRSSKB = maxOf(s.Stop())
	t1, _ := procstat.CPUTicks(pid)
	if ht1 > ht0 {
		r.hostBusyPct = 100 * float64(hb1-hb0) / float64(ht1-ht0)
	}
	_, r.hwmKB, _ = procstat.MemKB(pid)
	r.proxyTicks = t1 - t0
	if r.err == nil {
		if got, err := b.count(ctx); err != nil {
			r.err = fmt.Errorf("count: %v", benchdb.Describe(err))
		} else if got != n {
			r.err = fmt.Errorf("table has %d rows, expected %d", got, n)
		}
	}
	if r.err == nil {
		r.rowsPerSec = float64(n) / r.secs
		r.usRow = float64(r.proxyTicks) / float64(b.cfg.clkTck) * 1e6 / float64(n)
	}
	return r
}

func (b *bench) loadExtended(ctx context.Context, conn *pgconn.PgConn, n int) error {
	ins := b.newExtendedInserter()
	for from := 0; from < n; from += b.cfg.batch {
		if err := ins.exec(ctx, conn, from, min(b.cfg.batch, n-from)); err != nil {
			return err
		}
	}
	return nil
}

// extendedInserter sends the extended workload's multi-row INSERTs,
// reusing its buffers from one statement to the next.
type extendedInserter struct {
	b       *bench
	sqlFull string
	vals    [][]byte
	oids    []uint32
	formats []int16
	metaBuf []byte
}

func (b *bench) newExtendedInserter() *extendedInserter {
	ins := &extendedInserter{
		b:       b,
		sqlFull: insertSQL(b.cfg.table, b.cfg.batch),
		vals:    make([][]byte, 0, 3*b.cfg.batch),
		metaBuf: make([]byte, 0, 64*b.cfg.batch),
	}
	for r := 0; r < b.cfg.batch; r++ {
		ins.oids = append(ins.oids, 25, b.vectorOID, 3802) // text, vector, jsonb
		ins.formats = append(ins.formats, 1, 1, 1)
	}
	return ins
}

// exec inserts rows from..from+k-1 in one statement.
func (ins *extendedInserter) exec(ctx context.Context, conn *pgconn.PgConn, from, k int) error {
	g := ins.b.gen
	sql := ins.sqlFull
	if k != ins.b.cfg.batch {
		sql = insertSQL(ins.b.cfg.table, k)
	}
	ins.vals, ins.metaBuf = ins.vals[:0], ins.metaBuf[:0]
	for i := from; i < from+k; i++ {
		m0 := len(ins.metaBuf)
		ins.metaBuf = append(ins.metaBuf, 1) // jsonb binary format version
		ins.metaBuf = append(ins.metaBuf, g.meta(i)...)
		ins.vals = append(ins.vals, []byte(g.id(i)), g.vecBin(i), ins.metaBuf[m0:len(ins.metaBuf):len(ins.metaBuf)])
	}
	res := conn.ExecParams(ctx, sql, ins.vals, ins.oids[:3*k], ins.formats[:3*k], nil).Read()
	if res.Err != nil {
		return fmt.Errorf("INSERT rows %d..%d: %v", from, from+k-1, benchdb.Describe(res.Err))
	}
	return nil
}

func (b *bench) loadSimple(ctx context.Context, conn *pgconn.PgConn, n int) error {
	for from := 0; from < n; from += b.cfg.batch {
		k := min(b.cfg.batch, n-from)
		b.sqlBuf = b.gen.literalSQL(b.sqlBuf[:0], b.cfg.table, from, k)
		if _, err := conn.Exec(ctx, string(b.sqlBuf)).ReadAll(); err != nil {
			return fmt.Errorf("INSERT rows %d..%d: %v", from, from+k-1, benchdb.Describe(err))
		}
	}
	return nil
}

func (b *bench) loadCopy(ctx context.Context, conn *pgconn.PgConn, n int) error {
	cr := newCopyReader(b.gen, n)
	tag, err := conn.CopyFrom(ctx, cr, "COPY "+b.cfg.table+" (id, embedding, metadata) FROM STDIN WITH (FORMAT BINARY)")
	if err != nil {
		return fmt.Errorf("COPY: %v", benchdb.Describe(err))
	}
	if tag.RowsAffected() != int64(n) {
		return fmt.Errorf("COPY: %d rows, expected %d", tag.RowsAffected(), n)
	}
	return nil
}

// bigCopy streams BIG_MB MiB of binary COPY through the proxy, generating
// rows on the fly, and samples the proxy's VmRSS every 100 ms.
func (b *bench) bigCopy(ctx context.Context) *run {
	rowBytes := b.gen.copyRowBytes()
	n := int(int64(b.cfg.bigMB) << 20 / int64(rowBytes))
	r := &run{workload: "bigcopy", target: "proxy", rows: n}
	if err := b.truncate(ctx); err != nil {
		r.err = fmt.Errorf("truncate: %v", benchdb.Describe(err))
		return r
	}
	r.waited = procstat.WaitQuiet(b.cfg.quietPct, b.cfg.quietMax)
	_, hwmBefore, _ := procstat.MemKB(b.cfg.proxyPID)
	prog.Logf("bounded-memory check: %d MiB binary COPY (%d rows × ~%d B) through the proxy; VmHWM before: %s",
		b.cfg.bigMB, n, rowBytes, mib(hwmBefore))
	b.gen.prefix = "big-"
	pid := b.cfg.proxyPID
	t0, _ := procstat.CPUTicks(pid)
	s := procstat.SampleRSS(pid, 100*time.Millisecond)
	start := time.Now()
	cr := newCopyReader(b.gen, n)
	tag, err := b.conns["proxy"].CopyFrom(ctx, cr, "COPY "+b.cfg.table+" (id, embedding, metadata) FROM STDIN WITH (FORMAT BINARY)")
	r.secs = time.Since(start).Seconds()
	r.maxRSSKB = maxOf(s.Stop())
	t1, _ := procstat.CPUTicks(pid)
	_, r.hwmKB, _ = procstat.MemKB(pid)
	r.proxyTicks = t1 - t0
	switch {
	case err != nil:
		r.err = fmt.Errorf("COPY: %v", benchdb.Describe(err))
	case tag.RowsAffected() != int64(n):
		r.err = fmt.Errorf("COPY: %d rows, expected %d", tag.RowsAffected(), n)
	default:
		r.rowsPerSec = float64(n) / r.secs
		r.usRow = float64(r.proxyTicks) / float64(b.cfg.clkTck) * 1e6 / float64(n)
	}
	prog.Logf("bounded-memory check: %d bytes streamed in %.1fs (%.0f MB/s), proxy VmRSS max %s, VmHWM after %s",
		cr.bytes, r.secs, float64(cr.bytes)/r.secs/1e6, mib(r.maxRSSKB), mib(r.hwmKB))
	if err := b.truncate(ctx); err != nil {
		prog.Logf("truncate after big copy: %v", benchdb.Describe(err))
	}
	return r
}

func mib(kb int64) string {
	if kb <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}

func report(cfg config, runs []run, big *run, pr *paired) {
	var out io.Writer = os.Stdout
	var files []io.Writer
	if cfg.outDir != "" {
		if f, err := os.Create(filepath.Join(cfg.outDir, "runs.csv")); err == nil {
			fmt.Fprintln(f, "round,workload,target,rows,secs,rows_per_s,proxy_cpu_ticks,proxy_cpu_us_per_row,proxy_max_rss_kb,proxy_hwm_kb,host_busy_pct,waited_s,caught_up_s,error")
			all := runs
			if big != nil {
				all = append(slices.Clone(runs), *big)
			}
			for _, r := range all {
				e := ""
				if r.err != nil {
					e = strings.ReplaceAll(r.err.Error(), ",", ";")
				}
				fmt.Fprintf(f, "%d,%s,%s,%d,%.3f,%.1f,%d,%.2f,%d,%d,%.1f,%.0f,%.2f,%s\n", r.round, r.workload, r.target, r.rows, r.secs,
					r.rowsPerSec, r.proxyTicks, r.usRow, r.maxRSSKB, r.hwmKB, r.hostBusyPct, r.waited.Seconds(), r.caughtUp.Seconds(), e)
			}
			f.Close()
		}
		if f, err := os.Create(filepath.Join(cfg.outDir, "table.txt")); err == nil {
			defer f.Close()
			files = append(files, f)
		}
	}
	out = io.MultiWriter(append(files, out)...)

	fmt.Fprintln(out)
	fmt.Fprintf(out, "%d rows per run, %d-dim vectors, batch %d, %d round(s), medians over rounds\n", cfg.rows, cfg.dim, cfg.batch, cfg.rounds)
	fmt.Fprintf(out, "%-9s %12s %12s %7s %7s %13s %15s\n", "workload", "direct r/s", "proxy r/s", "ratio", "target", "proxy µs/row", "proxy peak RSS")
	for _, w := range cfg.workloads {
		var d, p, us []float64
		var rss int64
		fails := 0
		for _, r := range runs {
			if r.workload != w {
				continue
			}
			if r.err != nil {
				fails++
				continue
			}
			if r.target == "direct" {
				d = append(d, r.rowsPerSec)
			} else {
				p = append(p, r.rowsPerSec)
				us = append(us, r.usRow)
				rss = max(rss, r.maxRSSKB)
			}
		}
		md, mp := median.Of(d), median.Of(p)
		ratio, verdict := "-", ""
		if md > 0 && mp > 0 {
			ratio = fmt.Sprintf("%.3f", mp/md)
			if mp/md >= thresholds[w] {
				verdict = " met"
			} else {
				verdict = " MISSED"
			}
		}
		fmt.Fprintf(out, "%-9s %12.0f %12.0f %7s %7s %13.1f %15s%s", w, md, mp, ratio,
			fmt.Sprintf("≥%.2f", thresholds[w]), median.Of(us), mib(rss), verdict)
		if fails > 0 {
			fmt.Fprintf(out, "  (%d failed run(s))", fails)
		}
		fmt.Fprintln(out)
	}
	if pr != nil {
		pr.report(out, thresholds["extended"])
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "per run (rows/s, in round order; host busy % during the run in brackets):")
	for _, w := range cfg.workloads {
		for _, t := range targets {
			var xs []string
			for _, r := range runs {
				if r.workload == w && r.target == t {
					if r.err != nil {
						xs = append(xs, "FAIL")
					} else {
						xs = append(xs, fmt.Sprintf("%.0f [%.0f%%]", r.rowsPerSec, r.hostBusyPct))
					}
				}
			}
			fmt.Fprintf(out, "  %-9s %-6s %s\n", w, t, strings.Join(xs, " "))
		}
	}
	if len(runs) > 0 {
		fmt.Fprintf(out, "proxy VmHWM after the runs: %s (monotone over the process's life)\n", mib(runs[len(runs)-1].hwmKB))
	}
	for _, r := range runs {
		if r.err != nil {
			fmt.Fprintf(out, "FAILED round %d %s %s: %v\n", r.round, r.workload, r.target, r.err)
		}
	}
	if big != nil {
		fmt.Fprintln(out)
		if big.err != nil {
			fmt.Fprintf(out, "bounded-memory check FAILED: %v\n", big.err)
		} else {
			fmt.Fprintf(out, "bounded-memory check: %d MiB binary COPY, %d rows through the proxy in %.1fs (%.0f rows/s, %.1f proxy µs/row); proxy VmRSS max %s (sampled every 100 ms), VmHWM after %s\n",
				cfg.bigMB, big.rows, big.secs, big.rowsPerSec, big.usRow, mib(big.maxRSSKB), mib(big.hwmKB))
		}
	}
}

// maxOf is the largest of v, 0 when v is empty.
func maxOf(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}
