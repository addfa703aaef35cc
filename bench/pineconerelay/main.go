// Command pineconerelay is bench/pinecone.sh's baseline: the least a
// Pinecone relay must do, a plain httputil.ReverseProxy to one index host.
// Like proxy/pinecone it serves HTTP/1.1 and cleartext HTTP/2 (h2c) on one
// port and sends REST upstream over HTTP/1.1 and gRPC over h2c; it reads
// nothing and keeps nothing.
//
//	pineconerelay -listen 127.0.0.1:5082 -upstream http://127.0.0.1:5081
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5082", "address to serve on")
	upstream := flag.String("upstream", "", "the index host, http://host:port")
	flag.Parse()
	if err := run(*listen, *upstream); err != nil {
		fmt.Fprintln(os.Stderr, "pineconerelay:", err)
		os.Exit(1)
	}
}

func run(listen, upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("-upstream %q: give the index host as http://host:port", upstream)
	}
	var h1, h2c, serve http.Protocols
	h1.SetHTTP1(true)
	h2c.SetUnencryptedHTTP2(true)
	serve.SetHTTP1(true)
	serve.SetUnencryptedHTTP2(true)
	rest := &http.Transport{Protocols: &h1, MaxIdleConnsPerHost: 64}
	grpc := &http.Transport{Protocols: &h2c}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
				return grpc.RoundTrip(r)
			}
			return rest.RoundTrip(r)
		}),
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("-listen %s: %w", listen, err)
	}
	srv := &http.Server{Handler: proxy, Protocols: &serve, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		_ = srv.Close()
	}()
	if err := srv.Serve(l); err != http.ErrServerClosed {
		return err
	}
	return nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
