package pinecone

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// route returns the index r is for: the only one, or the one whose name is
// r's host or the host's first label (see the package comment).
func (p *Relay) route(r *http.Request) (*Index, *Status) {
	if len(p.indexes) == 1 {
		return p.indexes[0], nil
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	first, _, _ := strings.Cut(host, ".")
	for _, ix := range p.indexes {
		if name := strings.ToLower(ix.Name); host == name || first == name {
			return ix, nil
		}
	}
	return nil, &Status{Code: CodeNotFound, Message: fmt.Sprintf(
		"lethe-proxy: no index is configured for host %q; this proxy serves %s: "+
			"point the client at a host name starting with the index name (e.g. %s.<proxy host>)",
		r.Host, strings.Join(p.names(), ", "), p.indexes[0].Name)}
}

func (p *Relay) names() []string {
	names := make([]string, len(p.indexes))
	for i, ix := range p.indexes {
		names[i] = ix.Name
	}
	return names
}
