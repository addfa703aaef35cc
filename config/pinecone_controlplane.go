package config

import (
	"net"
	"net/url"
	"strings"
)

// DefaultPineconeControlPlane is Pinecone's control plane.
const DefaultPineconeControlPlane = "https://api.pinecone.io"

// PineconeControlPlane configures the control-plane listener: it relays
// to Upstream and answers describe index and list indexes with
// AdvertiseHost as the host of every configured index, so that an SDK
// given only its API key and this listener as its control plane sends its
// data-plane calls through pinecone.listen.
type PineconeControlPlane struct {
	// Listen is where SDKs reach the control plane (Node:
	// controllerHostUrl; go-pinecone: NewClientParams.Host).
	Listen string `yaml:"listen"`
	// TLS, when set, serves TLS instead of cleartext HTTP.
	TLS ServerTLS `yaml:"tls"`
	// Upstream is the control plane relayed to; default
	// DefaultPineconeControlPlane.
	Upstream string `yaml:"upstream"`
	// UpstreamCAFile verifies an https upstream; default the system roots.
	UpstreamCAFile string `yaml:"upstream_ca_file"`
	// AdvertiseHost is pinecone.listen as clients reach it: "host:port"
	// when pinecone.tls is set (the SDKs add https://), "http://host:port"
	// when it is not. With several indexes each is advertised as
	// <name>.<host>, the name the data relay routes by. Default
	// pinecone.listen with the scheme its TLS setting implies, when that
	// address is not a wildcard (0.0.0.0, ::).
	AdvertiseHost string `yaml:"advertise_host"`
}

// UpstreamURL is Upstream, or DefaultPineconeControlPlane when unset.
func (cp *PineconeControlPlane) UpstreamURL() string {
	if cp.Upstream == "" {
		return DefaultPineconeControlPlane
	}
	return cp.Upstream
}

// AdvertisedHosts maps each configured index's name to the data-plane
// address the control-plane listener gives for it (see AdvertiseHost);
// bound is the address pinecone.listen was bound at (a port 0 resolved),
// the default's address when advertise_host is unset.
func (p *Pinecone) AdvertisedHosts(bound string) map[string]string {
	base := p.advertiseBase(bound)
	out := make(map[string]string, len(p.Indexes))
	for _, ix := range p.Indexes {
		if len(p.Indexes) == 1 {
			out[ix.Name] = base
			continue
		}
		scheme, host := splitScheme(base)
		out[ix.Name] = scheme + ix.Name + "." + host
	}
	return out
}

// advertiseBase is AdvertiseHost, or the default it documents for the
// listen address ("" when it is a wildcard address).
func (p *Pinecone) advertiseBase(listen string) string {
	if p.ControlPlane != nil && p.ControlPlane.AdvertiseHost != "" {
		return p.ControlPlane.AdvertiseHost
	}
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || host == "" || ip != nil && ip.IsUnspecified() {
		return ""
	}
	if p.TLS.CertFile != "" {
		return listen
	}
	return "http://" + listen
}

// splitScheme splits "http://h:p" into "http://" and "h:p"; a bare
// "h:p" has no scheme.
func splitScheme(s string) (scheme, rest string) {
	for _, sc := range []string{"http://", "https://"} {
		if r, ok := strings.CutPrefix(s, sc); ok {
			return sc, r
		}
	}
	return "", s
}

func (c *Config) validateControlPlane() []error {
	p := c.Pinecone
	cp := p.ControlPlane
	if cp == nil {
		return nil
	}
	var errs []error
	if _, _, err := net.SplitHostPort(cp.Listen); err != nil {
		errs = append(errs, c.at("pinecone.control_plane.listen", "%q is not host:port (write e.g. 127.0.0.1:5082; SDKs are given it as their control plane)", cp.Listen))
	} else if _, port, _ := net.SplitHostPort(cp.Listen); cp.Listen == p.Listen && port != "0" {
		errs = append(errs, c.at("pinecone.control_plane.listen", "%q is pinecone.listen too; give the control plane a port of its own (e.g. 127.0.0.1:5082)", cp.Listen))
	}
	if (cp.TLS.CertFile == "") != (cp.TLS.KeyFile == "") {
		errs = append(errs, c.at("pinecone.control_plane.tls", "set both cert_file and key_file, or neither"))
	}
	if cp.TLS.CertFile != "" {
		errs = append(errs, c.readable("pinecone.control_plane.tls.cert_file", cp.TLS.CertFile))
		errs = append(errs, c.readable("pinecone.control_plane.tls.key_file", cp.TLS.KeyFile))
	}
	u, err := url.Parse(cp.UpstreamURL())
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		errs = append(errs, c.at("pinecone.control_plane.upstream", "%q is not an https:// or http:// URL (write e.g. %q)", cp.Upstream, DefaultPineconeControlPlane))
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "":
		errs = append(errs, c.at("pinecone.control_plane.upstream", "%q has a path or query; give the host alone (e.g. %q)", cp.Upstream, DefaultPineconeControlPlane))
	}
	if cp.UpstreamCAFile != "" {
		if u != nil && u.Scheme == "http" {
			errs = append(errs, c.at("pinecone.control_plane.upstream_ca_file", "is set but upstream %q is cleartext http://", cp.Upstream))
		}
		if _, err := LoadCertPool(cp.UpstreamCAFile); err != nil && !c.offline {
			errs = append(errs, c.at("pinecone.control_plane.upstream_ca_file", "%v", err))
		}
	}
	errs = append(errs, c.validateAdvertiseHost()...)
	return errs
}

func (c *Config) validateAdvertiseHost() []error {
	p := c.Pinecone
	base := p.advertiseBase(p.Listen)
	if base == "" {
		return []error{c.at("pinecone.control_plane", "advertise_host is missing and pinecone.listen %q is no address a client can reach; "+
			"write the address clients reach pinecone.listen at (e.g. advertise_host: \"http://lethe.internal:5081\", or \"lethe.internal:5081\" when pinecone.tls is set)", p.Listen)}
	}
	scheme, hostport := splitScheme(base)
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	switch {
	case host == "" || strings.ContainsAny(hostport, "/?#@ "):
		return []error{c.at("pinecone.control_plane.advertise_host", "%q is not host:port or http(s)://host:port (write e.g. \"http://lethe.internal:5081\")", base)}
	case scheme == "" && p.TLS.CertFile == "":
		return []error{c.at("pinecone.control_plane.advertise_host", "%q has no scheme, so SDKs would speak https:// to it, but pinecone.tls is not set; write \"http://%s\"", base, hostport)}
	case scheme == "http://" && p.TLS.CertFile != "":
		return []error{c.at("pinecone.control_plane.advertise_host", "%q is cleartext but pinecone.tls is set; write %q", base, hostport)}
	case len(p.Indexes) > 1 && net.ParseIP(strings.Trim(host, "[]")) != nil:
		return []error{c.at("pinecone.control_plane.advertise_host", "%q is an IP address, but with several indexes each is advertised as <index>.<advertise_host>, "+
			"the name the relay routes by; write a DNS name whose subdomains resolve to the proxy (e.g. \"http://lethe.internal:5081\")", base)}
	}
	return nil
}
