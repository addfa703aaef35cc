package admin

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// requestsMetric counts API requests by route pattern and status code.
const requestsMetric = "lethe_admin_requests_total"

// requestCounter is the API's own counter. Its labels are bounded: route
// patterns (or "unmatched") and status codes, never URLs.
type requestCounter struct {
	mu sync.Mutex
	n  map[requestKey]uint64
}

type requestKey struct {
	route string
	code  int
}

func (c *requestCounter) inc(route string, code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[requestKey]uint64{}
	}
	c.n[requestKey{route, code}]++
}

// write writes the counter in the Prometheus text exposition format
// (https://prometheus.io/docs/instrumenting/exposition_formats/), sorted
// so that scrapes are comparable.
func (c *requestCounter) write(w io.Writer) {
	c.mu.Lock()
	keys := make([]requestKey, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	counts := make(map[requestKey]uint64, len(c.n))
	for k, v := range c.n {
		counts[k] = v
	}
	c.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].route != keys[j].route {
			return keys[i].route < keys[j].route
		}
		return keys[i].code < keys[j].code
	})
	fmt.Fprintf(w, "# HELP %s Admin API requests by route pattern and status code.\n# TYPE %s counter\n", requestsMetric, requestsMetric)
	for _, k := range keys {
		fmt.Fprintf(w, "%s{route=\"%s\",code=\"%d\"} %d\n", requestsMetric, escapeLabel(k.route), k.code, counts[k])
	}
}

// escapeLabel escapes a label value as the text format requires.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	s.requests.write(&b)
	if s.extra != nil {
		s.writeExtra(&b, s.extra())
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

// writeExtra writes the proxy's series, grouped by metric name with one
// TYPE line each. A series whose name is not a valid metric name is
// skipped and logged: it is a bug in the caller, and one bad series must
// not break the scrape.
func (s *server) writeExtra(w io.Writer, series map[string]float64) {
	byName := map[string][]string{}
	for key := range series {
		name, ok := seriesName(key)
		if !ok || name == requestsMetric {
			s.log.Warn("admin: metrics hook returned an invalid series name; skipped", "series", key)
			continue
		}
		byName[name] = append(byName[name], key)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		kind := "gauge"
		if strings.HasSuffix(name, "_total") {
			kind = "counter"
		}
		fmt.Fprintf(w, "# TYPE %s %s\n", name, kind)
		keys := byName[name]
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s %s\n", k, strconv.FormatFloat(series[k], 'g', -1, 64))
		}
	}
}

// seriesName returns the metric name of a series key, name or
// name{labels}, if the name is valid ([a-zA-Z_:][a-zA-Z0-9_:]*) and the
// labels are braced with no line break.
func seriesName(key string) (string, bool) {
	name, labels, hasLabels := strings.Cut(key, "{")
	if name == "" || strings.ContainsAny(key, "\n\r") {
		return "", false
	}
	if hasLabels && !strings.HasSuffix(labels, "}") {
		return "", false
	}
	for i, c := range name {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return "", false
		}
	}
	return name, true
}
