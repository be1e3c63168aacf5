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

// RunOptionsTimeLimit returns the run-options word that sets flux run's
// time limit (-t, --time-limit, or a bundle such as -vt), or "" when none
// does. The time-limit setting is flux run -t too: given both, the last
// on the command line would win unseen, so the render refuses the pair.
// The words passed parseRunOptions, so each is an option or its value.
func (s *Settings) RunOptionsTimeLimit() string {
	words := s.RunOptions
	for i := 0; i < len(words); i++ {
		w := words[i]
		if long, ok := strings.CutPrefix(w, "--"); ok {
			name, _, hasValue := strings.Cut(long, "=")
			if name == "time-limit" {
				return w
			}
			if !hasValue && longTakesValue(name) {
				i++
			}
			continue
		}
		sets, valueNext := shortBundleTimeLimit(w)
		if sets {
			return w
		}
		if valueNext {
			i++
		}
	}
	return ""
}

// shortBundleTimeLimit reads one word of bundled short options: whether
// it has -t, and whether its last option takes the next word as value.
func shortBundleTimeLimit(w string) (sets, valueNext bool) {
	for i := 1; i < len(w); i++ {
		if w[i] == 't' {
			return true, false
		}
		for _, o := range runOptions {
			if o.short == w[i] && o.value {
				// The rest of the word, or the next word, is the value.
				return false, i == len(w)-1
			}
		}
	}
	return false, false
}

func longTakesValue(name string) bool {
	for _, o := range runOptions {
		if o.long == name {
			return o.value
		}
	}
	return false
}
