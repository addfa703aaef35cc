// Command pineconeload is bench/pinecone.sh's client: upserts of 100 ×
// 1536-dimension vectors with metadata, REST and gRPC, from concurrent
// clients, against three targets started by the script (the emulator
// direct, a plain httputil.ReverseProxy, lethe-proxy), interleaved round
// by round so that machine noise falls on all three alike. It prints
// throughput, p50/p99 latency, the relays' CPU per upsert and lethe-proxy's
// resident memory, and the ratios the targets are stated in.
//
// With -duration it then keeps REST and gRPC clients upserting through
// lethe-proxy alone for that long, sampling its VmRSS, to show whether its
// memory stays flat.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/bench/internal/procstat"
)

type config struct {
	targets           []target
	protocols         []string
	rounds, clients   int
	seconds, warmup   time.Duration
	duration, rssStep time.Duration
	vectors, dim      int
	namespace, out    string
	freshIDs          bool
	proxyPID          int
}

// target is one place to send upserts; pid (0 if none) is the process
// between the clients and the emulator, whose CPU is measured.
type target struct {
	name, url string
	pid       int
}

func main() {
	cfg, err := parseFlags()
	if err == nil {
		err = run(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pineconeload:", err)
		os.Exit(1)
	}
}

func parseFlags() (*config, error) {
	var cfg config
	direct := flag.String("direct", "", "the emulator's URL (http://host:port)")
	plain := flag.String("plain", "", "the plain httputil.ReverseProxy's URL")
	proxy := flag.String("proxy", "", "lethe-proxy's Pinecone URL")
	plainPID := flag.Int("plain-pid", 0, "the plain relay's pid (for its CPU)")
	flag.IntVar(&cfg.proxyPID, "proxy-pid", 0, "lethe-proxy's pid (for its CPU and memory)")
	protocols := flag.String("protocols", "rest,grpc", "protocols to run, in order")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds; each runs every protocol against every target")
	flag.DurationVar(&cfg.seconds, "run", 8*time.Second, "length of one run (one protocol, one target)")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unrecorded run per protocol and target before round 1")
	flag.IntVar(&cfg.clients, "clients", 8, "concurrent clients")
	flag.DurationVar(&cfg.duration, "duration", 0, "after the rounds, upsert through lethe-proxy alone this long, sampling its memory")
	flag.DurationVar(&cfg.rssStep, "rss-every", 5*time.Second, "how often lethe-proxy's VmRSS is sampled")
	flag.IntVar(&cfg.vectors, "vectors", 100, "vectors per upsert")
	flag.IntVar(&cfg.dim, "dim", 1536, "dimensions per vector")
	flag.StringVar(&cfg.namespace, "namespace", "bench", "namespace of the upserts")
	flag.BoolVar(&cfg.freshIDs, "fresh-ids", false, "give every upsert ids no upsert sent before (default: every upsert sends the same 100 ids, as a re-ingest does)")
	flag.StringVar(&cfg.out, "out", "", "directory for runs.csv and summary.txt (none: stdout only)")
	flag.Parse()

	if *direct == "" || *plain == "" || *proxy == "" {
		return nil, errors.New("-direct, -plain and -proxy are all required")
	}
	cfg.targets = []target{{"direct", *direct, 0}, {"plain", *plain, *plainPID}, {"proxy", *proxy, cfg.proxyPID}}
	for _, p := range strings.Split(*protocols, ",") {
		if p != "rest" && p != "grpc" {
			return nil, fmt.Errorf("-protocols: %q is neither rest nor grpc", p)
		}
		cfg.protocols = append(cfg.protocols, p)
	}
	if cfg.rounds < 1 || cfg.clients < 1 || cfg.seconds <= 0 {
		return nil, errors.New("-rounds, -clients and -run must be positive")
	}
	return &cfg, nil
}

func run(cfg *config) error {
	batch, err := newUpsertBatch(cfg.vectors, cfg.dim, cfg.namespace, cfg.freshIDs)
	if err != nil {
		return err
	}
	logf("bodies: REST %.2f MB, gRPC %.2f MB; %d clients; %d rounds of %s per protocol and target",
		float64(len(batch.rest))/1e6, float64(len(batch.grpc))/1e6, cfg.clients, cfg.rounds, cfg.seconds)

	rss := procstat.SampleRSS(cfg.proxyPID, cfg.rssStep)
	rep := newReport(cfg, batch)
	ctx := context.Background()
	for round := 0; round <= cfg.rounds; round++ { // round 0 is the warm-up
		for _, proto := range cfg.protocols {
			for k := range cfg.targets {
				// Each round starts with the next target, so that none is
				// always the first after a switch of protocol.
				t := cfg.targets[(k+round)%len(cfg.targets)]
				d := cfg.seconds
				if round == 0 {
					d = cfg.warmup
				}
				r, err := loadRun(ctx, cfg, batch, proto, t, d)
				if err != nil {
					return err
				}
				if round == 0 {
					continue
				}
				r.round = round
				rep.add(r)
				logf("round %d %-4s %-6s %7.1f upserts/s  p50 %6.1f ms  p99 %6.1f ms%s", round, proto, t.name,
					r.upsertsPerSec(), ms(r.p50), ms(r.p99), r.errorNote())
			}
		}
	}
	rep.rss = rssSeries(rss.Stop())

	if cfg.duration > 0 {
		long, err := longRun(ctx, cfg, batch)
		if err != nil {
			return err
		}
		rep.long = long
	}
	return rep.write()
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[pineconeload %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
