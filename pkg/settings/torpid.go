package settings

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// Flux's compiled-in tbon.torpid_min and tbon.torpid_max, in seconds.
const (
	fluxTorpidMin = 5
	fluxTorpidMax = 30
)

// torpidValue is one of the two torpid settings as the broker will see
// it: seconds, and where it came from for the error.
type torpidValue struct {
	seconds float64
	text    string
	from    string
}

// checkTorpid refuses tbon.torpid_min and tbon.torpid_max that the
// overlay module rejects when it loads, so the broker would never start
// and the pods would fail at once: a value that is not a duration, a
// torpid_min of zero, or a torpid_max (other than 0, which turns the
// check off) no longer than torpid_min. Each may come from broker-config
// ([tbon]) or broker-attributes (-S words), and the attribute wins, as in
// the broker.
func checkTorpid(s *Settings) finding.List {
	var found finding.List
	minimum := torpidValue{seconds: fluxTorpidMin, text: fmt.Sprintf("%ds", fluxTorpidMin), from: flux}
	maximum := torpidValue{seconds: fluxTorpidMax, text: fmt.Sprintf("%ds", fluxTorpidMax), from: flux}
	for _, v := range []struct {
		key string
		to  *torpidValue
	}{{"torpid_min", &minimum}, {"torpid_max", &maximum}} {
		if tbon, ok := s.BrokerConfig["tbon"].(map[string]any); ok {
			if raw, set := tbon[v.key]; set {
				text, isString := raw.(string)
				seconds, ok := fsdSeconds(text)
				if !isString || !ok {
					found.Errorf(s.Origin("broker-config"), "broker-config tbon.%s = %s is not a Flux duration string, so the broker would not start: write it like %s = \"30s\"", v.key, tomlText(raw), v.key)
					continue
				}
				*v.to = torpidValue{seconds, text, "broker-config"}
			}
		}
		for _, word := range s.BrokerAttributes {
			text, set := strings.CutPrefix(word, "tbon."+v.key+"=")
			if !set {
				continue
			}
			seconds, ok := fsdSeconds(text)
			if !ok {
				found.Errorf(s.Origin("broker-attributes"), "broker-attributes word %s is not a Flux duration, so the broker would not start: write it like tbon.%s=30s", finding.Quote(word), v.key)
				continue
			}
			*v.to = torpidValue{seconds, text, "broker-attributes"}
		}
	}
	if found.HasErrors() {
		return found
	}
	switch {
	case minimum.seconds == 0:
		found.Errorf(s.Origin(setting(minimum.from)), "tbon.torpid_min is 0 (%s); Flux refuses it and the broker would not start: give a duration longer than zero", minimum.from)
	case maximum.seconds != 0 && maximum.seconds <= minimum.seconds:
		at := maximum.from
		if at == flux {
			at = minimum.from
		}
		found.Errorf(s.Origin(setting(at)), "tbon.torpid_max %s (%s) is not longer than tbon.torpid_min %s (%s); Flux refuses it and the broker would not start: make torpid_max longer, or 0 to turn the torpid check off", maximum.text, maximum.from, minimum.text, minimum.from)
	}
	return found
}

// flux is where a torpid value comes from when the user sets none.
const flux = "Flux's default"

// setting names the setting a torpid value came from, for its origin.
func setting(from string) string {
	if from == "broker-attributes" {
		return from
	}
	return "broker-config"
}

// fsdSeconds is DurationSeconds with Flux's inf and infinity, which
// the torpid settings accept.
func fsdSeconds(text string) (float64, bool) {
	if text == "inf" || text == "infinity" {
		return math.Inf(1), true
	}
	return DurationSeconds(text)
}

// tomlText shows a decoded TOML value as the user wrote it, near enough.
func tomlText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}
