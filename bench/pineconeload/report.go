package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/bench/internal/median"
)

// report gathers the runs and prints medians over the rounds, as Markdown
// tables that go into docs/benchmarks.md as they are.
type report struct {
	cfg   *config
	batch *upsertBatch
	runs  []*runResult
	rss   rssSeries // lethe-proxy's VmRSS over the rounds
	long  *longResult
}

func newReport(cfg *config, batch *upsertBatch) *report {
	return &report{cfg: cfg, batch: batch}
}

func (rep *report) add(r *runResult) { rep.runs = append(rep.runs, r) }

func (rep *report) write() error {
	var out strings.Builder
	rep.summary(&out)
	fmt.Print(out.String())
	if rep.cfg.out != "" {
		if err := os.WriteFile(filepath.Join(rep.cfg.out, "summary.txt"), []byte(out.String()), 0o644); err != nil {
			return err
		}
		var csv strings.Builder
		csv.WriteString("round,protocol,target,upserts,errors,seconds,upserts_per_s,vectors_per_s,p50_ms,p99_ms,relay_cpu_ms_per_upsert\n")
		for _, r := range rep.runs {
			fmt.Fprintf(&csv, "%d,%s,%s,%d,%d,%.3f,%.2f,%.0f,%.3f,%.3f,%.3f\n", r.round, r.proto, r.target, r.ops, r.errors,
				r.elapsed.Seconds(), r.upsertsPerSec(), r.upsertsPerSec()*float64(r.vectors), ms(r.p50), ms(r.p99), r.cpuMSPerUpsert())
		}
		if err := os.WriteFile(filepath.Join(rep.cfg.out, "runs.csv"), []byte(csv.String()), 0o644); err != nil {
			return err
		}
	}
	for _, r := range append(rep.runs, rep.longRun()...) {
		if r.errors > 0 {
			return errors.New("some upserts failed (see ERRORS above); the figures do not measure what they claim")
		}
	}
	return nil
}

func (rep *report) longRun() []*runResult {
	if rep.long == nil {
		return nil
	}
	return []*runResult{&rep.long.run}
}

// stats are the medians over the rounds of one protocol and target.
type stats struct {
	tps, tpsMin, tpsMax float64
	p50, p99            time.Duration
	cpu                 float64 // relay CPU ms per upsert; -1 when none
	errors              int
}

func (rep *report) stats(proto, target string) stats {
	var tps, cpu []float64
	var p50, p99 []time.Duration
	s := stats{}
	for _, r := range rep.runs {
		if r.proto != proto || r.target != target {
			continue
		}
		tps = append(tps, r.upsertsPerSec())
		cpu = append(cpu, r.cpuMSPerUpsert())
		p50, p99 = append(p50, r.p50), append(p99, r.p99)
		s.errors += r.errors
	}
	s.tps, s.tpsMin, s.tpsMax = median.Of(tps), slices.Min(tps), slices.Max(tps)
	s.p50, s.p99, s.cpu = median.Of(p50), median.Of(p99), median.Of(cpu)
	return s
}

func (rep *report) summary(w io.Writer) {
	cfg := rep.cfg
	ids := "every upsert the same ids"
	if cfg.freshIDs {
		ids = "every upsert new ids"
	}
	fmt.Fprintf(w, "\nUpserts of %d vectors × %d dimensions with metadata (REST body %.2f MB, gRPC message %.2f MB), %s, %d clients; medians of %d rounds of %s per protocol and target, targets interleaved.\n\n",
		rep.batch.vectors, cfg.dim, float64(len(rep.batch.rest))/1e6, float64(len(rep.batch.grpc))/1e6, ids, cfg.clients, cfg.rounds, cfg.seconds)
	fmt.Fprintln(w, "| protocol | target | upserts/s (min..max) | vectors/s | p50 ms | p99 ms | relay CPU ms/upsert |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, proto := range cfg.protocols {
		for _, t := range cfg.targets {
			s := rep.stats(proto, t.name)
			cpu := "–"
			if s.cpu >= 0 {
				cpu = fmt.Sprintf("%.2f", s.cpu)
			}
			errs := ""
			if s.errors > 0 {
				errs = fmt.Sprintf(" (%d ERRORS)", s.errors)
			}
			fmt.Fprintf(w, "| %s | %s | %.1f (%.1f..%.1f)%s | %.0f | %.1f | %.1f | %s |\n", proto, t.name,
				s.tps, s.tpsMin, s.tpsMax, errs, s.tps*float64(rep.batch.vectors), ms(s.p50), ms(s.p99), cpu)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratios of the medians above; in brackets, the median and range of the same ratio taken within each round (the targets of one round ran back to back).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| protocol | proxy/plain | proxy/direct | plain/direct | added p50 (proxy − plain) | added p99 (proxy − plain) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, proto := range cfg.protocols {
		d, p, x := rep.stats(proto, "direct"), rep.stats(proto, "plain"), rep.stats(proto, "proxy")
		fmt.Fprintf(w, "| %s | %.3f %s | %.3f %s | %.3f %s | %+.1f ms | %+.1f ms |\n", proto,
			x.tps/p.tps, rep.roundRatios(proto, "proxy", "plain"), x.tps/d.tps, rep.roundRatios(proto, "proxy", "direct"),
			p.tps/d.tps, rep.roundRatios(proto, "plain", "direct"), ms(x.p50-p.p50), ms(x.p99-p.p99))
	}
	fmt.Fprintf(w, "\nlethe-proxy VmRSS over the rounds (every %s): %s\n", cfg.rssStep, rep.rss)
	if l := rep.long; l != nil {
		fmt.Fprintf(w, "\nLong run through lethe-proxy alone, %s, %d clients (REST and gRPC alternately): %.1f upserts/s, p50 %.1f ms, p99 %.1f ms%s\n",
			cfg.duration, cfg.clients, l.run.upsertsPerSec(), ms(l.run.p50), ms(l.run.p99), l.run.errorNote())
		fmt.Fprintf(w, "lethe-proxy VmRSS (every %s): %s\n", l.step, l.rss)
		fmt.Fprintf(w, "VmRSS by minute (MiB):%s\n", byMinute(l.rss, l.step))
	}
}

// roundRatios is "[median, min..max]" of the throughput of target a over
// that of target b, each ratio taken within one round.
func (rep *report) roundRatios(proto, a, b string) string {
	type key struct {
		round  int
		target string
	}
	tps := map[key]float64{}
	for _, r := range rep.runs {
		if r.proto == proto {
			tps[key{r.round, r.target}] = r.upsertsPerSec()
		}
	}
	var ratios []float64
	for round := 1; round <= rep.cfg.rounds; round++ {
		if x, y := tps[key{round, a}], tps[key{round, b}]; y > 0 {
			ratios = append(ratios, x/y)
		}
	}
	if len(ratios) == 0 {
		return ""
	}
	return fmt.Sprintf("[%.3f, %.3f..%.3f]", median.Of(ratios), slices.Min(ratios), slices.Max(ratios))
}

// byMinute lists the sample at the start of each minute, and the last.
func byMinute(s rssSeries, step time.Duration) string {
	per := max(int(time.Minute/step), 1)
	var b strings.Builder
	for i := 0; i < len(s); i += per {
		fmt.Fprintf(&b, " %.1f", mib(s[i]))
	}
	if len(s) > 0 && (len(s)-1)%per != 0 {
		fmt.Fprintf(&b, " %.1f", mib(s[len(s)-1]))
	}
	return b.String()
}
