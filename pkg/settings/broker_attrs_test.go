package settings

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// Issue 19, class 7: every broker attribute that bootstrap, rank
// assignment, security or the instance's paths depend on is refused, with
// its reason in the error; one test per row of RefusedBrokerAttributes.
func TestRefusedBrokerAttributes(t *testing.T) {
	for _, pattern := range slices.Sorted(maps.Keys(RefusedBrokerAttributes)) {
		why := RefusedBrokerAttributes[pattern]
		name := strings.Replace(pattern, "*", "x", 1)
		t.Run(pattern, func(t *testing.T) {
			for _, raw := range []string{name + "=1", "broker.quorum=1 " + name + "=pod-0"} {
				_, err := parseBrokerAttributes(raw)
				if err == nil {
					t.Fatalf("broker-attributes %q is accepted", raw)
				}
				if !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), name) {
					t.Errorf("broker-attributes %q: %q does not name %s and say %q", raw, err, name, why)
				}
			}
			// Through the setting, as a JobSet annotation would give it.
			if err := Check("broker-attributes", name+"=1"); err == nil || !strings.Contains(err.Error(), why) {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// The two examples, by name: a hostname or a boot method on every
// pod makes them all claim one rank, or boot alone.
func TestBootstrapAttributesNamed(t *testing.T) {
	for raw, phrase := range map[string]string{
		"hostname=node-0":           "same rank",
		"broker.boot-method=single": "instance of its own",
		"broker.boot-method=simple": "PMI server",
	} {
		if _, err := parseBrokerAttributes(raw); err == nil || !strings.Contains(err.Error(), phrase) {
			t.Errorf("%s: %v, want an error saying %q", raw, err, phrase)
		}
	}
}

// Every refused row is an attribute the broker knows (the table is not
// guarding against names that would fail anyway), none is also one the
// entrypoint sets, and every reason says why.
func TestRefusedBrokerAttributesTable(t *testing.T) {
	for pattern, why := range RefusedBrokerAttributes {
		if !slices.Contains(knownBrokerAttributes, pattern) {
			t.Errorf("%s is refused but is not in flux-core's attribute table", pattern)
		}
		if _, computed := ComputedBrokerAttributes[pattern]; computed {
			t.Errorf("%s is both refused and computed", pattern)
		}
		if len(why) < 40 {
			t.Errorf("%s: the reason %q says too little", pattern, why)
		}
	}
	for name := range ComputedBrokerAttributes {
		if !slices.Contains(knownBrokerAttributes, name) {
			t.Errorf("computed attribute %s is not in flux-core's attribute table", name)
		}
	}
}

// Attributes that tune a working instance stay allowed; a name flux start
// does not know is refused (it would stop every broker), with a
// suggestion when it is a near miss.
func TestBrokerAttributeNames(t *testing.T) {
	for _, raw := range []string{
		"broker.quorum=2", "broker.critical-ranks=0", "broker.quorum-warn=120s", "broker.shutdown-timeout=30s",
		"broker.rc2_pgrp=1", "broker.module-nopanic=1", "log-stderr-mode=local", "log-filename=/tmp/broker.log",
		"log-level=6", "log-forward-level=5", "tbon.torpid_max=1m", "tbon.tcp_user_timeout=2m", "tbon.zmqdebug=1",
		"tbon.child_rcvhwm=1000", "content.backing-module=content-sqlite", "content.dump=auto", "cron.directory=/etc/cron",
		"rundir-cleanup=1", "statedir-cleanup=0", "vendor.pmix=1", "test.x=1",
	} {
		if _, err := parseBrokerAttributes(raw); err != nil {
			t.Errorf("%s is refused: %v", raw, err)
		}
	}
	for raw, phrase := range map[string]string{
		"broker.qorum=2":   "did you mean broker.quorum?",
		"log-file=/tmp/x":  "unknown attribute",
		"x.y=1":            "not one the Flux broker knows",
		"tbon.torpid=1s":   "unknown attribute",
		"hostnames=node-0": "did you mean hostname?",
	} {
		if _, err := parseBrokerAttributes(raw); err == nil || !strings.Contains(err.Error(), phrase) {
			t.Errorf("%s: %v, want an error saying %q", raw, err, phrase)
		}
	}
}
