// Command pinecone-emulator serves the test emulator of a Pinecone index's
// data plane (REST and gRPC on one port) for demos and manual testing.
//
//	pinecone-emulator -listen 127.0.0.1:5081 [-tls-cert c.pem -tls-key k.pem]
//	                  [-api-key KEY] [-metric cosine] [-dimension 0] [-delete-delay 2s]
//	                  [-index-name emulated] [-host URL] [-max-request-bytes N]
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5081", "address to serve REST and gRPC on")
	certFile := flag.String("tls-cert", "", "PEM certificate: serve TLS (h2 and http/1.1 through ALPN) instead of cleartext")
	keyFile := flag.String("tls-key", "", "PEM private key for -tls-cert")
	apiKey := flag.String("api-key", "", "require this Api-Key on every request (empty: accept any)")
	metric := flag.String("metric", emulator.MetricCosine, "query metric: cosine, dotproduct or euclidean")
	dimension := flag.Int("dimension", 0, "vector dimension (0: taken from the first upsert)")
	deleteDelay := flag.Duration("delete-delay", 0, "how long deleted records stay visible (eventual consistency)")
	indexName := flag.String("index-name", "emulated", "the index's name, as DescribeIndex (GET /indexes/{name}) reports it")
	host := flag.String("host", "", "data-plane URL DescribeIndex reports (default: the address the request came to)")
	maxBytes := flag.Int64("max-request-bytes", emulator.DefaultMaxRequestBytes, "largest request body or gRPC message accepted")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, *listen, *certFile, *keyFile, emulator.Config{
		IndexName: *indexName, Host: *host,
		APIKey: *apiKey, Metric: *metric, Dimension: *dimension,
		DeleteDelay: *deleteDelay, MaxRequestBytes: *maxBytes, Logger: log,
	}); err != nil {
		fmt.Fprintln(os.Stderr, "pinecone-emulator:", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, listen, certFile, keyFile string, cfg emulator.Config) error {
	switch cfg.Metric {
	case emulator.MetricCosine, emulator.MetricDotProduct, emulator.MetricEuclidean:
	default:
		return fmt.Errorf("-metric %q is not one of cosine, dotproduct, euclidean", cfg.Metric)
	}
	if (certFile == "") != (keyFile == "") {
		return fmt.Errorf("-tls-cert and -tls-key go together: give both or neither")
	}
	var tlsConf *tls.Config
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("loading -tls-cert/-tls-key: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listening on -listen %s: %w", listen, err)
	}
	srv := emulator.New(cfg)
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		_ = srv.Close()
	}()
	log.Info("pinecone emulator serving", "addr", l.Addr().String(), "tls", tlsConf != nil, "metric", cfg.Metric)
	return srv.Serve(l, tlsConf)
}
