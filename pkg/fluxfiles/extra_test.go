package fluxfiles

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/pelletier/go-toml/v2"
)

// TestBrokerExtra: the user's TOML lands in the tables the function
// writes and in tables of its own, with the user's values, the file
// parses, and what the settings would never let through (a top-level key,
// a key the function writes) is an error, not a broken file.
func TestBrokerExtra(t *testing.T) {
	extra := map[string]any{
		"resource":               map[string]any{"exclude": "1", "rediscover": true},
		"access":                 map[string]any{"allow-guest-user": true},
		"sched-fluxion-qmanager": map[string]any{"queue-params": map[string]any{"queue-depth": int64(16)}},
		"job-manager":            map[string]any{"plugins": []any{map[string]any{"load": "x.so"}}},
		"odd name":               map[string]any{"k": "v"},
	}
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.BrokerConfig = extra })
	f, err := Generate(p)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var doc map[string]any
	if err := toml.Unmarshal([]byte(f.Broker), &doc); err != nil {
		t.Fatalf("broker.toml does not parse: %v\n%s", err, f.Broker)
	}
	if doc["resource"].(map[string]any)["noverify"] != true || doc["access"].(map[string]any)["allow-root-owner"] != true {
		t.Errorf("the merge lost the function's own keys:\n%s", f.Broker)
	}
	for table, sub := range extra {
		got, _ := doc[table].(map[string]any)
		for key, want := range sub.(map[string]any) {
			if !reflect.DeepEqual(got[key], want) {
				t.Errorf("%s.%s = %#v, want broker-config's %#v", table, key, got[key], want)
			}
		}
	}
	if !strings.Contains(f.Broker, "[\"odd name\"]") && !strings.Contains(f.Broker, "['odd name']") {
		t.Errorf("a table name that is no bare key is not quoted:\n%s", f.Broker)
	}

	p.Settings.BrokerConfig = map[string]any{"top": 1}
	if _, err := Generate(p); err == nil || !strings.Contains(err.Error(), "not a table") {
		t.Errorf("a top-level key: %v, want an error", err)
	}
	// The settings refuse keys the function writes; a plan made otherwise
	// cannot replace one either.
	for _, owned := range []map[string]any{
		{"resource": map[string]any{"noverify": false}},
		{"sched-fluxion-qmanager": map[string]any{"queue-policy": "easy"}},
		{"access": map[string]any{"allow-root-owner": false}},
		{"bootstrap": map[string]any{"default_port": int64(1)}},
	} {
		p.Settings.BrokerConfig = owned
		if _, err := Generate(p); err == nil || !strings.Contains(err.Error(), "which jobset-flux writes") {
			t.Errorf("broker-config %v: %v, want an error", owned, err)
		}
	}
}
