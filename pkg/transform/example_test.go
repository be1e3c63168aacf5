package transform_test

import (
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// exampleList wraps objects, written as YAML documents, in a ResourceList.
func exampleList(objects ...string) *fn.ResourceList {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, obj := range objects {
		b.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(obj), "\n", "\n  ") + "\n")
	}
	rl, err := fn.ParseResourceList([]byte(b.String()))
	if err != nil {
		panic(err)
	}
	return rl
}

// A JobSet annotated for Flux comes out with its container wrapped by the
// Flux entrypoint, next to a generated ConfigMap (the scripts and
// broker.toml) and Secret (the CURVE certificate). A seed makes the key,
// and so the output, reproducible.
func ExampleProcessor_Process() {
	js := jobsettest.New("hello").Namespace("team").
		Jobs(jobsettest.Job("workers").Replicas(2).Completions(2))
	proc, err := transform.New(transform.Options{Seed: []byte("an example seed of 32 bytes or more, kept outside the package")})
	if err != nil {
		panic(err)
	}
	rl := exampleList(js.YAML())
	ok, err := proc.Process(rl)
	fmt.Println("ok:", ok, err)
	for _, item := range rl.Items {
		fmt.Println(item.GetKind(), item.GetName())
	}
	command, err := rl.Items[0].CopyToResourceNode().Pipe(yaml.Lookup("spec", "replicatedJobs", "[name=workers]", "template", "spec", "template", "spec", "containers", "[name=app]", "command"))
	if err != nil {
		panic(err)
	}
	fmt.Print("command:\n", command.MustString())
	for _, r := range rl.Results {
		fmt.Println(r.Severity+":", r.Message)
	}
	// Output:
	// ok: true <nil>
	// JobSet hello
	// ConfigMap hello-flux-entrypoint
	// Secret hello-flux-curve
	// command:
	// - /mnt/flux/config/entrypoint.sh
	// - run
	// info: rendered for Flux (4 brokers); set spec.network.enableDNSHostnames=true, spec.network.publishNotReadyAddresses=true; replicatedJob "workers": set completionMode=Indexed, parallelism=2, backoffLimit=0, restartPolicy=Never
}

// A JobSet Flux cannot run is left as it was, and the results say why,
// at the field to change.
func ExampleProcessor_Process_error() {
	js := jobsettest.New("broken").Namespace("team").
		Jobs(jobsettest.Job("workers").JobField("completionMode", "NonIndexed"))
	proc, err := transform.New(transform.Options{Seed: []byte("an example seed of 32 bytes or more, kept outside the package")})
	if err != nil {
		panic(err)
	}
	rl := exampleList(js.YAML())
	ok, _ := proc.Process(rl)
	fmt.Println("ok:", ok, "items:", len(rl.Items))
	for _, r := range rl.Results {
		fmt.Printf("%s: %s: %s\n", r.Severity, r.Field.Path, r.Message)
	}
	// Output:
	// ok: false items: 1
	// error: spec.replicatedJobs[0].template.spec.completionMode: must be Indexed (or unset): Flux needs each pod's stable hostname, which only Indexed Jobs have; got "NonIndexed"
}
