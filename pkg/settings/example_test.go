package settings_test

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Every JobSet's settings are resolved once, layer over layer: the
// defaults, the function config, the wrapped container's environment, the
// JobSet's annotations. The higher layer wins, and Origin says where the
// value in force was read.
func ExampleResolve() {
	config, found := settings.Config(settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{
		"queue-policy": {Value: "easy", Path: "data.queue-policy"},
		"port":         {Value: "9000", Path: "data.port"},
	}})
	fmt.Println("config:", found)

	js := jobsettest.New("sim").
		Annotation("flux-framework.org/port", "9100").
		Jobs(jobsettest.Job("workers").ContainerField("env", []any{
			map[string]any{"name": "FLUX_QUEUE_POLICY", "value": "conservative"},
		}))
	rn, err := yaml.Parse(js.YAML())
	if err != nil {
		panic(err)
	}
	read, _ := jobset.Read(rn)
	s, found := settings.Resolve(config, read)
	fmt.Println("jobset:", found)
	fmt.Println("port", s.Port, "from", s.Origin("port"))
	fmt.Println("queue-policy", s.QueuePolicy, "from", s.Origin("queue-policy"))
	fmt.Println("network-device", s.NetworkDevice, "(default)", s.Origin("network-device") == "")
	// Output:
	// config: []
	// jobset: []
	// port 9100 from metadata.annotations[flux-framework.org/port]
	// queue-policy conservative from spec.replicatedJobs[0].template.spec.template.spec.containers[0].env[0].value
	// network-device eth0 (default) true
}

// A bad value is an error at the field it was read from; the setting
// keeps the value of the layer below.
func ExampleSettings_Apply() {
	s := settings.Defaults()
	found := s.Apply(settings.Layer{Kind: settings.FromAnnotation, Values: map[string]settings.Raw{
		"topology": {Value: "kary:0", Path: "metadata.annotations[flux-framework.org/topology]"},
	}})
	for _, f := range found {
		fmt.Println(f.Path+":", f.Message)
	}
	fmt.Println("topology", s.Topology)
	// Output:
	// metadata.annotations[flux-framework.org/topology]: invalid topology from the annotation: must be kary:K (K from 1 to 65536, the fan-out of the tree) or binomial, got "kary:0"
	// topology kary:256
}
