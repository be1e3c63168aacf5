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

// timeLimitValue is the time-limit setting. A number without a unit
// means seconds, as README says and as a Flux Standard Duration reads it,
// but flux run -t reads a bare number as minutes (flux-core's
// cli/base.py multiplies it by 60): the value is stored with its unit
// written out, so that "600" reaches flux run as -t 600s, not as ten
// hours.
func timeLimitValue() value {
	v := text(func(s *Settings) *string { return &s.TimeLimit }, checkTimeLimit)
	parse := v.parse
	v.parse = func(s *Settings, raw string) error {
		if err := parse(s, raw); err != nil {
			return err
		}
		s.TimeLimit = WithUnit(raw)
		return nil
	}
	return v
}

// WithUnit returns a Flux duration with its unit written out: a bare
// number gets "s", the unit a Flux Standard Duration implies.
func WithUnit(d string) string {
	if d != "" && !strings.ContainsAny(d[len(d)-1:], "smhd") {
		return d + "s"
	}
	return d
}

// durationWord returns the run-options word that sets the job's duration,
// or "" when none does. flux run sets it from -t/--time-limit (a bundle
// such as -vt too) and from any job attribute whose key is, or holds,
// attributes.system.duration: -S/--setattr duration=..., system.duration,
// .system.duration or attributes.system.duration, in every spelling of
// the option (-Skey=v, -S key=v, -S=key=v, --setattr=key=v, --setattr
// key=v, a bundle ending in S), and a key above it (system, attributes)
// whose value replaces the whole table. The words passed
// checkRunOptionSyntax, so each is an option or its value.
func durationWord(words []string) string {
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if long, ok := strings.CutPrefix(w, "--"); ok {
			name, value, hasValue := strings.Cut(long, "=")
			if !hasValue {
				value = next
			}
			if name == "time-limit" || name == "setattr" && setsDuration(value) {
				return w
			}
			if !hasValue && longTakesValue(name) {
				i++
			}
			continue
		}
		sets, valueNext := shortBundleDuration(w, next)
		if sets {
			return w
		}
		if valueNext {
			i++
		}
	}
	return ""
}

// shortBundleDuration reads one word of bundled short options: whether
// it sets the duration (-t, or -S with a duration key), and whether its
// last option takes the next word as value.
func shortBundleDuration(w, next string) (sets, valueNext bool) {
	for i := 1; i < len(w); i++ {
		if w[i] == 't' {
			return true, false
		}
		for _, o := range runOptions {
			if o.short != w[i] || !o.value {
				continue
			}
			// The rest of the word, or the next word, is the value.
			value := strings.TrimPrefix(w[i+1:], "=")
			valueNext = i == len(w)-1
			if valueNext {
				value = next
			}
			return o.short == 'S' && setsDuration(value), valueNext
		}
	}
	return false, false
}

// durationKey is the jobspec key of a job's time limit.
const durationKey = "attributes.system.duration"

// setsDuration reports whether a --setattr KEY[=VALUE] sets the job's
// duration: its key, completed as flux-core's Jobspec.apply_options does
// (a leading "." stands for attributes., a key outside attributes.,
// user. and system. is under system.), is the duration's or a table
// above it (attributes.system, which the value would replace whole).
func setsDuration(keyval string) bool {
	key, _, _ := strings.Cut(keyval, "=")
	key = strings.TrimPrefix(key, "^")
	switch {
	case strings.HasPrefix(key, "."):
		key = "attributes" + key
	case strings.HasPrefix(key, "attributes."):
	case strings.HasPrefix(key, "user."), strings.HasPrefix(key, "system."):
		key = "attributes." + key
	default:
		key = "attributes.system." + key
	}
	return key == durationKey || strings.HasPrefix(durationKey, key+".")
}

func longTakesValue(name string) bool {
	for _, o := range runOptions {
		if o.long == name {
			return o.value
		}
	}
	return false
}
