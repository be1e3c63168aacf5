package settings

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// MaxDeadline is the longest deadline, in seconds (a year): a bound on
// the whole instance longer than that bounds nothing a user would wait for.
const MaxDeadline = 366 * 24 * 3600

// deadlineRule reads the deadline: a Flux duration longer than zero, as
// time-limit takes, stored as whole seconds rounded up, since a Job's
// activeDeadlineSeconds counts in whole seconds.
func deadlineRule(field func(*Settings) *int) rule { return secondsRule(field, parseDeadline) }

func parseDeadline(raw string) (int, error) {
	seconds, ok := DurationSeconds(raw)
	if !ok || seconds <= 0 {
		return 0, fmt.Errorf("must be a duration longer than zero like 30m, 2h or 1.5d (s, m, h or d; seconds without a unit), got %s; leave it unset for none", finding.Quote(raw))
	}
	if seconds > MaxDeadline {
		return 0, fmt.Errorf("must be at most a year (%ds), got %s", MaxDeadline, finding.Quote(raw))
	}
	return int(math.Ceil(seconds)), nil
}

// DurationSeconds is a Flux Standard Duration in seconds; false when raw
// is not one.
func DurationSeconds(raw string) (float64, bool) {
	if !durationPattern().MatchString(raw) {
		return 0, false
	}
	unit := 1.0
	digits := raw
	for _, u := range []struct {
		suffix  string
		seconds float64
	}{{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}} {
		if strings.HasSuffix(raw, u.suffix) {
			unit, digits = u.seconds, strings.TrimSuffix(raw, u.suffix)
			break
		}
	}
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil {
		return 0, false
	}
	return v * unit, true
}
