// Command small measures small writes, the shape of chat memory and mem0's
// add: single-row INSERTs in autocommit, each its own transaction, from
// several clients at once, against each target in turn (directly, through
// lethe-proxy as a plain relay, through lethe-proxy with capture on, ...).
//
//	extended  INSERT … VALUES ($1,$2,$3), prepared once per connection, then
//	          one Bind/Execute/Sync per row; binary parameters (text id,
//	          pgvector binary, jsonb binary), as pgx and pgvector-go send them
//	simple    the same row as inline literals, one simple Query per row, as
//	          psycopg2 sends it
//
// It is normally run by bench/small.sh, which starts the proxies and sets:
//
//	SMALL_TARGETS        the targets' names in order, e.g. "direct relay proxy"
//	SMALL_DSN_<name>     each target's connection string (sslmode=disable)
//	SMALL_PID_<name>     the pid of its proxy process, for its CPU (none for direct)
//	SMALL_CAPTURING      the targets that capture: after each of their runs
//	                     the program waits SETTLE_S for held confirmations,
//	                     and counts their CPU in the run
//	SMALL_ADMIN_DSN      the server, for setup, TRUNCATE and row counts
//	SMALL_TABLE          schema-qualified table, the one the proxies capture
//
// and passes through R, D, WARMUP_S, SETTLE_S, CLIENTS, MODES, DIM,
// QUIET_PCT, QUIET_MAX, CLK_TCK and OUT_DIR (see bench/small.sh).
package main

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lethe-privacy/lethe/bench/internal/benchenv"
)

type target struct {
	name, dsn string
	pid       int  // 0: no process of ours (direct)
	capturing bool // settle after each run
}

type config struct {
	targets             []target
	adminDSN, table     string
	rounds              int
	dur, warmup, settle time.Duration
	clients             []int
	modes               []string
	dim                 int
	quietPct            float64
	quietMax            time.Duration
	clkTck              int64
	outDir              string
}

const prog benchenv.Prog = "small"

func loadConfig() config {
	c := config{
		adminDSN: os.Getenv("SMALL_ADMIN_DSN"),
		table:    os.Getenv("SMALL_TABLE"),
		rounds:   prog.EnvInt("R", 3),
		dur:      time.Duration(prog.EnvInt("D", 10)) * time.Second,
		warmup:   time.Duration(prog.EnvInt("WARMUP_S", 2)) * time.Second,
		settle:   time.Duration(prog.EnvInt("SETTLE_S", 11)) * time.Second,
		dim:      prog.EnvInt("DIM", 1536),
		quietPct: float64(prog.EnvInt("QUIET_PCT", 20)),
		quietMax: time.Duration(prog.EnvInt("QUIET_MAX", 60)) * time.Second,
		clkTck:   int64(prog.EnvInt("CLK_TCK", 100)),
		outDir:   os.Getenv("OUT_DIR"),
		modes:    strings.Fields(os.Getenv("MODES")),
	}
	if len(c.modes) == 0 {
		c.modes = []string{"extended", "simple"}
	}
	for _, m := range c.modes {
		if m != "extended" && m != "simple" {
			prog.Fatalf("unknown mode %q (extended, simple)", m)
		}
	}
	for _, f := range strings.Fields(os.Getenv("CLIENTS")) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			prog.Fatalf("CLIENTS must be positive integers (got %q)", f)
		}
		c.clients = append(c.clients, n)
	}
	if len(c.clients) == 0 {
		c.clients = []int{4, 8}
	}
	capturing := strings.Fields(os.Getenv("SMALL_CAPTURING"))
	for _, name := range strings.Fields(os.Getenv("SMALL_TARGETS")) {
		t := target{name: name, dsn: os.Getenv("SMALL_DSN_" + name), pid: prog.EnvInt("SMALL_PID_"+name, 0), capturing: slices.Contains(capturing, name)}
		if t.dsn == "" {
			prog.Fatalf("SMALL_DSN_%s is not set", name)
		}
		c.targets = append(c.targets, t)
	}
	if len(c.targets) == 0 || c.adminDSN == "" || c.table == "" {
		prog.Fatalf("SMALL_TARGETS, SMALL_DSN_<name>, SMALL_ADMIN_DSN and SMALL_TABLE are required (run bench/small.sh)")
	}
	if c.rounds < 1 || c.dur <= 0 || c.dim < 1 || c.dim > 16000 {
		prog.Fatalf("R and D must be >= 1 and DIM in 1..16000")
	}
	return c
}

func main() {
	cfg := loadConfig()
	ctx := context.Background()
	admin, err := pgconn.Connect(ctx, cfg.adminDSN)
	if err != nil {
		prog.Fatalf("connect to the server: %v", err)
	}
	b := newBench(cfg, admin)
	b.setup(ctx)
	prog.Logf("table %s, dim %d, %d round(s) of %s per run, clients %v, modes %v, targets %v",
		cfg.table, cfg.dim, cfg.rounds, cfg.dur, cfg.clients, cfg.modes, names(cfg.targets))

	if cfg.warmup > 0 {
		prog.Logf("warm-up: %s per mode and target (not recorded)", cfg.warmup)
		for _, m := range cfg.modes {
			for _, t := range cfg.targets {
				if r := b.runOne(ctx, 0, m, cfg.clients[0], t, cfg.warmup, false); r.err != nil {
					prog.Logf("warm-up %s %s failed: %v", m, t.name, r.err)
				}
			}
		}
	}
	var runs []run
	for round := 1; round <= cfg.rounds; round++ {
		for _, m := range cfg.modes {
			for _, n := range cfg.clients {
				// Each round starts one target later than the last, so that
				// no target always runs right after a capturing one.
				for i := range cfg.targets {
					t := cfg.targets[(i+round-1)%len(cfg.targets)]
					r := b.runOne(ctx, round, m, n, t, cfg.dur, true)
					runs = append(runs, r)
					status := "ok"
					if r.err != nil {
						status = "FAILED: " + r.err.Error()
					}
					prog.Logf("round %d %-8s c=%d %-7s %7.0f inserts/s  p50 %5.2f ms  p99 %6.2f ms  proxy %6.1f µs/insert  host busy %3.0f%% (waited %.0fs) %s",
						round, m, n, t.name, r.perSec, ms(r.p50), ms(r.p99), r.usPerInsert, r.hostBusyPct, r.waited.Seconds(), status)
				}
			}
		}
	}
	report(cfg, runs)
}

func names(ts []target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.name)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
