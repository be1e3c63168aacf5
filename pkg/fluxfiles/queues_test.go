package fluxfiles

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// checkQueues checks the queues setting's tables: a queue per group, of
// its name, requiring the property of its name, and the default queue.
func checkQueues(t *testing.T, p *plan.Plan, doc map[string]any) {
	t.Helper()
	queues := table(t, doc, "queues")
	var names []string
	for _, g := range p.Groups {
		names = append(names, g.Name)
		if got, want := queues[g.Name], map[string]any{"requires": []any{g.Name}}; !reflect.DeepEqual(got, want) {
			t.Errorf("[queues.%s] = %v, want %v", g.Name, got, want)
		}
	}
	slices.Sort(names)
	if got := sortedKeys(queues); !slices.Equal(got, names) {
		t.Errorf("queues %v, want one per group %v", got, names)
	}
	want := map[string]any{"jobspec": map[string]any{"defaults": map[string]any{"system": map[string]any{"queue": p.DefaultQueue}}}}
	if got := table(t, doc, "policy"); !reflect.DeepEqual(got, want) {
		t.Errorf("[policy] = %v, want %v", got, want)
	}
}

// queuedPlan is a CPU launcher and GPU workers with queues, in launcher
// mode, and the user's TOML.
func queuedPlan(extra map[string]any) *plan.Plan {
	return newPlan([]group{{"cpu", 1, 1, "js-cpu-0-0"}, {"gpu", 2, 1, "js-gpu-[0-1]-0"}}, func(p *plan.Plan) {
		p.Settings.Launcher, p.Settings.Queues, p.DefaultQueue = true, true, "cpu"
		p.Settings.BrokerConfig = extra
	})
}

// The user's policy merges with the queues setting's at any depth, the
// file parses as Flux reads it, and a key the setting writes is an error
// here too, should a plan bring one past the settings.
func TestBrokerQueuesMerge(t *testing.T) {
	extra := map[string]any{
		"policy": map[string]any{
			"limits":  map[string]any{"duration": "2h"},
			"jobspec": map[string]any{"defaults": map[string]any{"system": map[string]any{"duration": "1h"}}},
		},
	}
	f, err := Generate(queuedPlan(extra))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var doc map[string]any
	if err := toml.Unmarshal([]byte(f.Broker), &doc); err != nil {
		t.Fatalf("broker.toml does not parse: %v\n%s", err, f.Broker)
	}
	want := map[string]any{
		"limits":  map[string]any{"duration": "2h"},
		"jobspec": map[string]any{"defaults": map[string]any{"system": map[string]any{"duration": "1h", "queue": "cpu"}}},
	}
	if got := doc["policy"]; !reflect.DeepEqual(got, want) {
		t.Errorf("[policy] = %v, want %v", got, want)
	}
	if strings.Contains(f.Broker, "From broker-config") {
		t.Errorf("the user's policy was written as a table of its own, not merged:\n%s", f.Broker)
	}

	for key, owned := range map[string]map[string]any{
		"[queues]":                             {"queues": map[string]any{"x": map[string]any{}}},
		"policy.jobspec.defaults.system.queue": {"policy": map[string]any{"jobspec": map[string]any{"defaults": map[string]any{"system": map[string]any{"queue": "gpu"}}}}},
		"policy.jobspec":                       {"policy": map[string]any{"jobspec": "x"}},
	} {
		if _, err := Generate(queuedPlan(owned)); err == nil || !strings.Contains(err.Error(), "broker-config sets "+key+", which jobset-flux writes") {
			t.Errorf("broker-config %v: %v, want an error naming %s", owned, err, key)
		}
	}
}

// Without queues, the user's [queues] and policy are theirs, after the
// function's tables as before the setting, and nothing of the setting's
// is written.
func TestBrokerWithoutQueues(t *testing.T) {
	extra := map[string]any{
		"queues": map[string]any{"debug": map[string]any{"requires": []any{"debug"}}},
		"policy": map[string]any{"jobspec": map[string]any{"defaults": map[string]any{"system": map[string]any{"queue": "debug"}}}},
	}
	p := queuedPlan(extra)
	p.Settings.Queues, p.DefaultQueue = false, ""
	f, err := Generate(p)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	mine, theirs, ok := strings.Cut(f.Broker, extraHeader)
	if !ok || !strings.Contains(theirs, "[queues.debug]") || !strings.Contains(theirs, "[policy.jobspec.defaults.system]") {
		t.Fatalf("the user's tables are not after %q:\n%s", extraHeader, f.Broker)
	}
	for _, absent := range []string{"properties", "[queues", "[policy", "queue start", "queue_start"} {
		if strings.Contains(mine, absent) || strings.Contains(f.Entrypoint, absent) {
			t.Errorf("without queues, the function wrote %q", absent)
		}
	}
}

// Each mode starts the queues, which Flux creates stopped, before any
// job could need them: run and launcher in rank 0's initial program, in
// front of the command; interactive from rank 0's entrypoint once the
// instance formed. Without queues, none does.
func TestEntrypointStartsQueues(t *testing.T) {
	for _, v := range variants() {
		if !strings.HasPrefix(v.name, "queues, ") {
			continue
		}
		f, err := Generate(v.plan)
		if err != nil {
			t.Fatalf("%s: Generate: %v", v.name, err)
		}
		var want []string
		switch {
		case v.plan.Interactive:
			want = []string{`if [[ "$(attr rank)" == 0 ]]; then`, `"${flux}" queue start --all`}
		case v.plan.Settings.Launcher:
			want = []string{`queue start --all`, `start+=(-- "${queue_start[@]}" "$@")`}
		default:
			want = []string{`queue start --all`, "start+=(\n        \"${queue_start[@]}\"\n        \"${flux}\" run -N"}
		}
		for _, w := range want {
			if !strings.Contains(f.Entrypoint, w) {
				t.Errorf("%s: entrypoint lacks %q", v.name, w)
			}
		}
		if v.plan.Interactive == strings.Contains(f.Entrypoint, "queue_start") {
			t.Errorf("%s: interactive %v, but the initial program's queue_start is there %v", v.name, v.plan.Interactive, !v.plan.Interactive)
		}
	}
	for _, v := range variants() {
		if strings.HasPrefix(v.name, "queues, ") {
			continue
		}
		f, err := Generate(v.plan)
		if err != nil {
			t.Fatalf("%s: Generate: %v", v.name, err)
		}
		if strings.Contains(f.Entrypoint, "queue start") || strings.Contains(f.Entrypoint, "queue_start") {
			t.Errorf("%s: the entrypoint starts queues without the setting", v.name)
		}
	}
}

// TestSandboxQueues runs the entrypoint with the stub flux: rank 0's
// initial program starts the queues before the command runs and exits
// with the command's code; a failed start fails rank 0 without running
// the command; other ranks start nothing; an interactive instance's rank
// 0 starts them once joined.
func TestSandboxQueues(t *testing.T) {
	requireSandbox(t)
	// The command sees the queue start's record, so it ran after it.
	user := []string{"bash", "-c", `compgen -G "${STUB_LOG}/queue.*" >/dev/null && exit 5`}
	for _, mode := range []string{"launcher", "run"} {
		p := queuedPlan(nil)
		if mode == "run" {
			p = newPlan([]group{{"gpu", 1, 2, "js-gpu-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.Queues, p.DefaultQueue = true, "gpu" })
		}
		pd := newPod(t, p, 0o444, 0)
		pd.installView()
		t.Run(mode, func(t *testing.T) {
			r := pd.runAs("app", nil, rankEnv(0, 7), user...)
			if r.queue == nil || !slices.Equal(r.queue.argv, []string{"queue", "start", "--all"}) || r.queue.env["FLUX_URI"] != "local:///stub/local" {
				t.Fatalf("flux queue start: %+v, want queue start --all inside the instance\n%s", r.queue, r.stderr)
			}
			switch mode {
			case "launcher":
				if r.code != 5 {
					t.Errorf("exit %d, want the command's 5 (it saw the queues started):\n%s", r.code, r.stderr)
				}
			case "run":
				if r.code != 7 || r.run == nil || !slices.Equal(r.run.argv, expectedRun(p, user)) {
					t.Errorf("exit %d, flux run %+v; want flux run's 7 and argv %q:\n%s", r.code, r.run, expectedRun(p, user), r.stderr)
				}
			}

			r = pd.runAs("app", nil, append(rankEnv(0, 7), "STUB_QUEUE_EXIT=3"), user...)
			if r.code != 1 || r.run != nil || !strings.Contains(r.stderr, "jobset-flux: error: flux queue start --all failed") {
				t.Errorf("a failed queue start: exit %d, flux run %+v, want exit 1, no command, and the error:\n%s", r.code, r.run, r.stderr)
			}

			r = pd.runAs("app", nil, rankEnv(1, 0), user...)
			if r.code != 0 || r.queue != nil {
				t.Errorf("rank 1: exit %d, queue %+v, want 0 and no queue start", r.code, r.queue)
			}
		})
	}

	p := newPlan([]group{{"a", 1, 2, "js-a-0-[0-1]"}}, func(p *plan.Plan) { p.Interactive, p.Settings.Queues, p.DefaultQueue = true, true, "a" })
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 3 * time.Second
	for _, rank := range []int{0, 1} {
		r := pd.runAs("app", nil, []string{"STUB_HANG=1", fmt.Sprintf("STUB_RANK=%d", rank), "STUB_EXIT=0"})
		if started := r.queue != nil; started != (rank == 0) {
			t.Errorf("interactive rank %d: queue start %+v, want one on rank 0 only:\n%s", rank, r.queue, r.stderr)
		}
		if rank == 0 && (r.queue == nil || r.queue.env["FLUX_URI"] != "local:///mnt/flux/install/run/local" || !strings.Contains(r.stderr, "started the queues")) {
			t.Errorf("interactive rank 0: queue start %+v, want it through the broker's local URI, logged:\n%s", r.queue, r.stderr)
		}
	}
}
