package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as "10s", "2m", or in whole days
// as "90d".
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if days, cut := strings.CutSuffix(n.Value, "d"); cut {
		var count uint64
		count, err = strconv.ParseUint(days, 10, 16)
		v = time.Duration(count) * 24 * time.Hour
	}
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write e.g. 10s, 2m, 1h, 90d)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// ByteSize is a size written as a number of bytes or with a unit: "64MiB",
// "512KiB", "1GiB" (also KB/MB/GB, read as powers of 1024 like PostgreSQL).
type ByteSize int64

var byteUnits = []struct {
	suffix string
	scale  int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"kB", 1 << 10}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1},
}

func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	scale := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, scale = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.scale
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > math.MaxInt64/scale {
		return fmt.Errorf("line %d: %q is not a size (write e.g. 65536, 512KiB, 64MiB)", n.Line, n.Value)
	}
	*b = ByteSize(v * scale)
	return nil
}
