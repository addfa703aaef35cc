package controlplane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// answerKind says which control-plane answer a request gets back.
type answerKind int

const (
	passThrough   answerKind = iota // streamed untouched
	listIndexes                     // GET /indexes: {"indexes": [IndexModel…]}
	describeIndex                   // GET /indexes/{name}: IndexModel
)

// classify returns how the answer to r is treated: list and describe
// answers that may name a configured index are rewritten, the rest pass.
// The escaped path is split by hand, as the data relay does, so that an
// escaped "/" inside a name never makes two segments.
func (p *Relay) classify(r *http.Request) answerKind {
	if r.Method != http.MethodGet {
		return passThrough
	}
	segments := strings.Split(strings.TrimSuffix(r.URL.EscapedPath(), "/"), "/")
	switch {
	case len(segments) == 2 && segments[1] == "indexes":
		return listIndexes
	case len(segments) == 3 && segments[1] == "indexes":
		name, err := url.PathUnescape(segments[2])
		if _, configured := p.hosts[name]; err == nil && configured {
			return describeIndex
		}
	}
	return passThrough
}

// rewriteList replaces the hosts of the configured indexes in a list
// indexes answer; it reports how many it replaced.
func (p *Relay) rewriteList(body []byte) ([]byte, int, error) {
	var list map[string]json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, 0, fmt.Errorf("list indexes answer is not a JSON object: %w", err)
	}
	raw, ok := list["indexes"]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return body, 0, nil // no index in the project
	}
	var indexes []json.RawMessage
	if err := json.Unmarshal(raw, &indexes); err != nil {
		return nil, 0, fmt.Errorf("list indexes answer's \"indexes\" is not an array: %w", err)
	}
	replaced := 0
	for i, model := range indexes {
		out, did, err := p.rewriteModel(model)
		if err != nil {
			return nil, 0, fmt.Errorf("list indexes answer's indexes[%d]: %w", i, err)
		}
		if did {
			indexes[i], replaced = out, replaced+1
		}
	}
	if replaced == 0 {
		return body, 0, nil
	}
	var err error
	if list["indexes"], err = json.Marshal(indexes); err != nil {
		return nil, 0, err
	}
	out, err := json.Marshal(list)
	return out, replaced, err
}

// rewriteDescribe replaces the host of a describe index answer when it
// names a configured index.
func (p *Relay) rewriteDescribe(body []byte) ([]byte, int, error) {
	out, did, err := p.rewriteModel(body)
	if err != nil {
		return nil, 0, fmt.Errorf("describe index answer: %w", err)
	}
	if !did {
		return body, 0, nil
	}
	return out, 1, nil
}

// rewriteModel replaces "host" and a present "private_host" of one
// IndexModel whose "name" is configured; other members keep their bytes
// (the object's member order becomes sorted).
func (p *Relay) rewriteModel(model json.RawMessage) (json.RawMessage, bool, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(model, &members); err != nil {
		return nil, false, fmt.Errorf("index is not a JSON object: %w", err)
	}
	var name string
	if raw, ok := members["name"]; !ok || json.Unmarshal(raw, &name) != nil {
		return nil, false, fmt.Errorf("index has no string \"name\"")
	}
	advertised, configured := p.hosts[name]
	if !configured {
		return model, false, nil
	}
	host, _ := json.Marshal(advertised)
	p.noteUpstreamHost(name, members["host"])
	members["host"] = host
	if raw, ok := members["private_host"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		members["private_host"] = host
	}
	out, err := json.Marshal(members)
	return out, err == nil, err
}

// noteUpstreamHost warns when the control plane names another host for a
// configured index than the one the data relay forwards to: the SDK's
// calls then reach the index the configuration names, not the one the
// control plane knows by that name.
func (p *Relay) noteUpstreamHost(name string, raw json.RawMessage) {
	want, known := p.upstreamHosts[name]
	var got string
	if !known || json.Unmarshal(raw, &got) != nil {
		return
	}
	got = strings.TrimPrefix(strings.TrimPrefix(got, "https://"), "http://")
	if !strings.EqualFold(strings.TrimSuffix(got, "/"), want) {
		p.log.Warn("the control plane names another host for a configured index than pinecone.indexes[].host; SDKs are sent to the proxy, which relays to the configured host: correct the configured host if it is stale",
			"index", name, "control_plane_host", got, "configured_host", want)
	}
}
