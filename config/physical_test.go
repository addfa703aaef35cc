package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse_TablePhysical(t *testing.T) {
	base := "postgres: {upstream: 'db:5432'}\ncapture:\n  store: host=db\n  tables: [{table: public.docs, id: id, subjects: [user_id]"
	for name, tc := range map[string]struct {
		src      string
		physical Physical
		reports  bool
		rewrite  int64
		err      string
	}{
		"default off":            {src: base + "}]\n", rewrite: DefaultScrubRewriteMaxPages},
		"off":                    {src: base + ", physical: off}]\n", physical: PhysicalOff, rewrite: DefaultScrubRewriteMaxPages},
		"report":                 {src: base + ", physical: report}]\n", physical: PhysicalReport, reports: true, rewrite: DefaultScrubRewriteMaxPages},
		"vacuum":                 {src: base + ", physical: vacuum}]\n", physical: PhysicalVacuum, reports: true, rewrite: DefaultScrubRewriteMaxPages},
		"scrub":                  {src: base + ", physical: scrub}]\n", physical: PhysicalScrub, reports: true, rewrite: DefaultScrubRewriteMaxPages},
		"scrub with a limit":     {src: base + ", physical: scrub, scrub_rewrite_max_pages: 50000}]\n", physical: PhysicalScrub, reports: true, rewrite: 50000},
		"scrub never rewriting":  {src: base + ", physical: scrub, scrub_rewrite_max_pages: 0}]\n", physical: PhysicalScrub, reports: true, rewrite: 0},
		"unknown":                {src: base + ", physical: shred}]\n", err: `physical "shred" is not one of off, report, vacuum, scrub`},
		"negative limit":         {src: base + ", physical: scrub, scrub_rewrite_max_pages: -1}]\n", err: "scrub_rewrite_max_pages -1 is negative: write 0 to never rewrite"},
		"limit without scrub":    {src: base + ", physical: vacuum, scrub_rewrite_max_pages: 10}]\n", err: `scrub_rewrite_max_pages is set but physical is "vacuum"`},
		"limit with no physical": {src: base + ", scrub_rewrite_max_pages: 10}]\n", err: `physical is "off": it bounds only physical: scrub`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(tc.src))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			rule := cfg.Capture.Tables[0]
			require.Equal(t, tc.physical, rule.Physical)
			require.Equal(t, tc.reports, rule.Physical.Reports())
			require.Equal(t, tc.physical == PhysicalVacuum || tc.physical == PhysicalScrub, rule.Physical.Vacuums())
			require.Equal(t, tc.physical == PhysicalScrub, rule.Physical.Scrubs())
			require.Equal(t, tc.rewrite, rule.RewriteMaxPages())
		})
	}
}
