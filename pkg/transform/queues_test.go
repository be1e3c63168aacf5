package transform_test

// The queues setting end to end: a JobSet in, its ConfigMap's broker.toml
// and entrypoint out, or the JobSet refused with the reason.

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/pelletier/go-toml/v2"
)

// qJobSet is JobSet js of a CPU launcher and two GPU workers with the
// given annotations.
func qJobSet(annotations map[string]string, workers string) map[string]any {
	cpu := jobsettest.Job("cpu").ContainerField("resources", map[string]any{"limits": map[string]any{"cpu": "2"}})
	gpu := jobsettest.Job(workers).Replicas(2).
		ContainerField("command", nil).
		ContainerField("resources", map[string]any{"limits": map[string]any{"cpu": "8", "nvidia.com/gpu": 2}})
	js := jobsettest.New("js").Jobs(cpu, gpu).Annotation("flux-framework.org/enabled", "true")
	for k, v := range annotations {
		js.Annotation(k, v)
	}
	return js.Obj()
}

// qBroker renders in and returns its broker.toml, parsed, and its entrypoint.
func qBroker(t *testing.T, in []byte) (map[string]any, string) {
	t.Helper()
	rl, ok, _ := hRun(t, hProcessor(t), in)
	if !ok {
		t.Fatalf("refused: %s", hDump(rl))
	}
	cm := hFind(rl, "ConfigMap", "js-flux-entrypoint")
	if cm == nil {
		t.Fatalf("no ConfigMap: %s", hDump(rl))
	}
	data, _, _ := cm.NestedStringMap("data")
	var doc map[string]any
	if err := toml.Unmarshal([]byte(data["broker.toml"]), &doc); err != nil {
		t.Fatalf("broker.toml does not parse: %v\n%s", err, data["broker.toml"])
	}
	return doc, data["entrypoint.sh"]
}

// A launcher JobSet with queues: each replicatedJob a queue requiring the
// property its pods have, rank 0's the default, and rank 0's program
// starting the queues; set in the function config, the same.
func TestQueuesRender(t *testing.T) {
	on := map[string]string{"flux-framework.org/queues": "true", "flux-framework.org/launcher": "true"}
	config := map[string]any{"apiVersion": "fn.flux-framework.org/v1alpha1", "kind": "JobSetFlux", "metadata": map[string]any{"name": "f"},
		"spec": map[string]any{"queues": true}}
	for name, in := range map[string][]byte{
		"annotation":      hList(t, nil, qJobSet(on, "gpu")),
		"function config": hList(t, config, qJobSet(map[string]string{"flux-framework.org/launcher": "true"}, "gpu")),
	} {
		doc, entrypoint := qBroker(t, in)
		configs := doc["resource"].(map[string]any)["config"].([]any)
		for i, want := range []string{"cpu", "gpu"} {
			if got := configs[i].(map[string]any)["properties"]; !reflect.DeepEqual(got, []any{want}) {
				t.Errorf("%s: resource.config[%d].properties = %v, want [%s]", name, i, got, want)
			}
		}
		wantQueues := map[string]any{"cpu": map[string]any{"requires": []any{"cpu"}}, "gpu": map[string]any{"requires": []any{"gpu"}}}
		if !reflect.DeepEqual(doc["queues"], wantQueues) {
			t.Errorf("%s: [queues] = %v, want %v", name, doc["queues"], wantQueues)
		}
		wantPolicy := map[string]any{"jobspec": map[string]any{"defaults": map[string]any{"system": map[string]any{"queue": "cpu"}}}}
		if !reflect.DeepEqual(doc["policy"], wantPolicy) {
			t.Errorf("%s: [policy] = %v, want %v", name, doc["policy"], wantPolicy)
		}
		if doc["sched-fluxion-qmanager"].(map[string]any)["queue-policy"] != "fcfs" {
			t.Errorf("%s: queue-policy lost: %v", name, doc["sched-fluxion-qmanager"])
		}
		if !strings.Contains(entrypoint, `start+=(-- "${queue_start[@]}" "$@")`) {
			t.Errorf("%s: the launcher's program does not start the queues first", name)
		}
	}

	// Off: neither table, no properties, no queue start.
	doc, entrypoint := qBroker(t, hList(t, nil, qJobSet(map[string]string{"flux-framework.org/launcher": "true"}, "gpu")))
	if doc["queues"] != nil || doc["policy"] != nil || strings.Contains(entrypoint, "queue_start") {
		t.Errorf("without queues: [queues] %v, [policy] %v", doc["queues"], doc["policy"])
	}
	if _, has := doc["resource"].(map[string]any)["config"].([]any)[0].(map[string]any)["properties"]; has {
		t.Errorf("without queues: resource.config has properties")
	}
}

// Every refusal of the setting, through the whole function: the JobSet is
// left as it was, with an error at the field that says why.
func TestQueuesRefused(t *testing.T) {
	for name, c := range map[string]struct {
		in         map[string]any
		path, want string
	}{
		"run mode over two groups": {
			qJobSet(map[string]string{"flux-framework.org/queues": "true", "flux-framework.org/gpus-per-node": "0"}, "gpu"),
			"metadata.annotations[flux-framework.org/queues]", `JobSet "js"'s command is one flux run over the pods of replicatedJobs "cpu", "gpu"`,
		},
		"a replicatedJob named like a pod": {
			qJobSet(map[string]string{"flux-framework.org/queues": "true", "flux-framework.org/launcher": "true"}, "js-cpu-0-0"),
			"spec.replicatedJobs[1].name", `replicatedJob "js-cpu-0-0" is also the hostname of one of JobSet "js"'s pods`,
		},
		"broker-config [queues]": {
			qJobSet(map[string]string{"flux-framework.org/queues": "true", "flux-framework.org/launcher": "true", "flux-framework.org/broker-config": "[queues.gpu]\nrequires = [\"gpu\"]"}, "gpu"),
			"metadata.annotations[flux-framework.org/broker-config]", "broker-config sets queues, which jobset-flux writes when queues is \"true\"",
		},
		"broker-config default queue": {
			qJobSet(map[string]string{"flux-framework.org/queues": "true", "flux-framework.org/launcher": "true", "flux-framework.org/broker-config": "[policy.jobspec.defaults.system]\nqueue = \"gpu\""}, "gpu"),
			"metadata.annotations[flux-framework.org/broker-config]", "broker-config sets policy.jobspec.defaults.system.queue, which jobset-flux writes",
		},
		"not a flag": {
			qJobSet(map[string]string{"flux-framework.org/queues": "yes"}, "gpu"),
			"metadata.annotations[flux-framework.org/queues]", `invalid queues from the annotation: must be "true" or "false", got "yes"`,
		},
	} {
		rl, ok, _ := hRun(t, hProcessor(t), hList(t, nil, c.in))
		errs := hErrors(rl)
		if ok || len(errs) != 1 || errs[0].Field == nil || errs[0].Field.Path != c.path || !strings.Contains(errs[0].Message, c.want) {
			t.Errorf("%s: want one error at %s saying %q, got %s", name, c.path, c.want, hDump(rl))
			continue
		}
		if hFind(rl, "ConfigMap", "js-flux-entrypoint") != nil {
			t.Errorf("%s: a refused JobSet got a ConfigMap", name)
		}
	}
}
