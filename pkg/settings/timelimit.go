package settings

import (
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// checkTimeLimit accepts a Flux Standard Duration longer than zero: what
// flux run -t reads. Flux also reads "0" and "inf" as no limit; here no
// limit is the setting left unset (or cleared with ""), so that a value
// always bounds the job.
func checkTimeLimit(raw string) error {
	if !durationPattern().MatchString(raw) || checkDuration(raw) != nil {
		return fmt.Errorf("must be a Flux duration longer than zero like 30m, 2h or 1.5d (s, m, h or d; seconds without a unit), got %s; leave it unset for no limit", finding.Quote(raw))
	}
	return nil
}

// WithUnit returns a Flux duration with its unit written out: a bare
// number gets "s", the unit a Flux Standard Duration implies.
func WithUnit(d string) string {
	if d != "" && !strings.ContainsAny(d[len(d)-1:], "smhd") {
		return d + "s"
	}
	return d
}
