package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/bench/internal/procstat"
)

// runResult is one run: one protocol against one target for a while.
type runResult struct {
	round         int
	proto, target string
	vectors       int // per upsert
	ops, errors   int
	firstErr      error
	elapsed       time.Duration
	p50, p99      time.Duration
	cpuTicks      int64 // of the target's relay process; -1 when none
}

func (r *runResult) upsertsPerSec() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// cpuMSPerUpsert is the relay's CPU per upsert (clock ticks are 10 ms), or
// -1 for a target without a relay.
func (r *runResult) cpuMSPerUpsert() float64 {
	if r.cpuTicks < 0 || r.ops == 0 {
		return -1
	}
	return float64(r.cpuTicks) * 10 / float64(r.ops)
}

func (r *runResult) errorNote() string {
	if r.errors == 0 {
		return ""
	}
	return fmt.Sprintf("  %d ERRORS, first: %v", r.errors, r.firstErr)
}

func newUpserter(proto, url string, clients int) (upserter, error) {
	if proto == "grpc" {
		return newGRPCUpserter(url)
	}
	return newRESTUpserter(url, clients), nil
}

// loadRun keeps cfg.clients clients upserting to t over proto for d, each
// sending its next upsert when the last is answered, and returns what they
// saw. Upserts under way at d are waited for and counted.
func loadRun(ctx context.Context, cfg *config, batch *upsertBatch, proto string, t target, d time.Duration) (*runResult, error) {
	up, err := newUpserter(proto, t.url, cfg.clients)
	if err != nil {
		return nil, err
	}
	defer up.close()
	r := &runResult{proto: proto, target: t.name, vectors: batch.vectors, cpuTicks: -1}
	var cpu0 int64
	if t.pid > 0 {
		cpu0, _ = procstat.CPUTicks(t.pid)
	}
	lat := runClients(ctx, batch, []upserter{up}, cfg.clients, d, r)
	if t.pid > 0 {
		cpu1, _ := procstat.CPUTicks(t.pid)
		r.cpuTicks = cpu1 - cpu0
	}
	r.ops = len(lat)
	r.p50, r.p99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return r, nil
}

// runClients runs clients goroutines for d, client i sending through
// ups[i%len(ups)], and returns the latencies of the upserts that
// succeeded, sorted; it counts failures in r and sets r.elapsed.
func runClients(ctx context.Context, batch *upsertBatch, ups []upserter, clients int, d time.Duration, r *runResult) []time.Duration {
	start := time.Now()
	deadline := start.Add(d)
	var (
		mu  sync.Mutex
		all []time.Duration
		wg  sync.WaitGroup
	)
	for i := range clients {
		wg.Add(1)
		go func(up upserter) {
			defer wg.Done()
			bodies := batch.source(up.protocol())
			var mine []time.Duration
			var errs int
			var firstErr error
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := up.upsert(ctx, bodies.next()); err != nil {
					errs++
					if firstErr == nil {
						firstErr = err
					}
					time.Sleep(10 * time.Millisecond) // a failing target must not spin
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			defer mu.Unlock()
			all = append(all, mine...)
			r.errors += errs
			if r.firstErr == nil {
				r.firstErr = firstErr
			}
		}(ups[i%len(ups)])
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	slices.Sort(all)
	return all
}

// percentile of sorted latencies (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// longResult is the -duration run through lethe-proxy alone.
type longResult struct {
	run  runResult
	rss  rssSeries
	step time.Duration
}

// longRun upserts through lethe-proxy for cfg.duration with half the
// clients on REST and half on gRPC, sampling its VmRSS.
func longRun(ctx context.Context, cfg *config, batch *upsertBatch) (*longResult, error) {
	proxy := cfg.targets[2]
	rest, err := newUpserter("rest", proxy.url, cfg.clients)
	if err != nil {
		return nil, err
	}
	defer rest.close()
	grpc, err := newUpserter("grpc", proxy.url, cfg.clients)
	if err != nil {
		return nil, err
	}
	defer grpc.close()
	logf("long run: %s through lethe-proxy, %d clients (REST and gRPC alternately), VmRSS every %s",
		cfg.duration, cfg.clients, cfg.rssStep)
	rss := procstat.SampleRSS(cfg.proxyPID, cfg.rssStep)
	l := &longResult{run: runResult{proto: "rest+grpc", target: "proxy", vectors: batch.vectors}, step: cfg.rssStep}
	lat := runClients(ctx, batch, []upserter{rest, grpc}, cfg.clients, cfg.duration, &l.run)
	l.rss = rssSeries(rss.Stop())
	l.run.ops = len(lat)
	l.run.p50, l.run.p99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return l, nil
}
