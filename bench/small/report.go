package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/bench/internal/median"
)

// report writes runs.csv and prints (and writes to table.txt) the medians
// over the rounds per mode, clients and target, with each target's ratio to
// direct and to the plain relay, from the medians and within each round.
func report(cfg config, runs []run) {
	out := io.Writer(os.Stdout)
	if cfg.outDir != "" {
		writeCSV(filepath.Join(cfg.outDir, "runs.csv"), runs)
		if f, err := os.Create(filepath.Join(cfg.outDir, "table.txt")); err == nil {
			defer f.Close()
			out = io.MultiWriter(os.Stdout, f)
		}
	}
	fmt.Fprintf(out, "\nSmall writes: single-row INSERT autocommit, dim %d, %s per run, median of %d round(s)\n\n", cfg.dim, cfg.dur, cfg.rounds)
	fmt.Fprintln(out, "| mode | clients | target | inserts/s (min..max) | /direct [per round] | /relay [per round] | p50 ms | p99 ms | proxy CPU µs/insert |")
	fmt.Fprintln(out, "|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range cfg.modes {
		for _, n := range cfg.clients {
			for _, t := range cfg.targets {
				rs := pick(runs, m, n, t.name)
				if len(rs) == 0 {
					continue
				}
				var rate, cpu []float64
				var p50, p99 []time.Duration
				for _, r := range rs {
					rate = append(rate, r.perSec)
					cpu = append(cpu, r.usPerInsert)
					p50, p99 = append(p50, r.p50), append(p99, r.p99)
				}
				cpuText := "–"
				if t.pid != 0 {
					cpuText = fmt.Sprintf("%.1f", median.Of(cpu))
				}
				fmt.Fprintf(out, "| %s | %d | %s | %.0f (%.0f..%.0f) | %s | %s | %.2f | %.2f | %s |\n",
					m, n, t.name, median.Of(rate), minOf(rate), maxOf(rate),
					ratio(runs, m, n, t.name, "direct"), ratio(runs, m, n, t.name, "relay"),
					ms(median.Of(p50)), ms(median.Of(p99)), cpuText)
			}
		}
	}
	for _, r := range runs {
		if r.err != nil {
			fmt.Fprintf(out, "\nFAILED run: round %d %s c=%d %s: %v\n", r.round, r.mode, r.clients, r.target, r.err)
		}
	}
}

// pick returns the successful runs of mode m, n clients, target t.
func pick(runs []run, m string, n int, t string) []run {
	var out []run
	for _, r := range runs {
		if r.mode == m && r.clients == n && r.target == t && r.err == nil {
			out = append(out, r)
		}
	}
	return out
}

// ratio is t's median rate over base's, then in brackets the median and
// range of the same ratio taken within each round; "–" when t is base or
// base did not run.
func ratio(runs []run, m string, n int, t, base string) string {
	if t == base {
		return "–"
	}
	var num, den, per []float64
	for _, r := range pick(runs, m, n, t) {
		num = append(num, r.perSec)
		for _, b := range pick(runs, m, n, base) {
			if b.round == r.round && b.perSec > 0 {
				per = append(per, r.perSec/b.perSec)
			}
		}
	}
	for _, b := range pick(runs, m, n, base) {
		den = append(den, b.perSec)
	}
	if len(num) == 0 || len(den) == 0 || median.Of(den) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f..%.3f]", median.Of(num)/median.Of(den), median.Of(per), minOf(per), maxOf(per))
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func writeCSV(path string, runs []run) {
	var sb strings.Builder
	sb.WriteString("round,mode,clients,target,inserts,secs,inserts_per_s,p50_ms,p99_ms,proxy_ticks,proxy_cpu_us_per_insert,host_busy_pct,waited_s,error\n")
	for _, r := range runs {
		errText := ""
		if r.err != nil {
			errText = strings.ReplaceAll(r.err.Error(), ",", ";")
		}
		fmt.Fprintf(&sb, "%d,%s,%d,%s,%d,%.3f,%.1f,%.3f,%.3f,%d,%.1f,%.1f,%.1f,%s\n",
			r.round, r.mode, r.clients, r.target, r.inserts, r.secs, r.perSec, ms(r.p50), ms(r.p99),
			r.ticks, r.usPerInsert, r.hostBusyPct, r.waited.Seconds(), errText)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		prog.Logf("writing %s: %v", path, err)
	}
}
