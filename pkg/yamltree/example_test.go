package yamltree_test

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reading and editing a map in place: a null field reads as unset, a new
// key goes before a named one, and the user's comment stays.
func Example() {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("spec:\n  parallelism: null\n  template: {} # pods\n"), &doc); err != nil {
		panic(err)
	}
	spec := yamltree.Get(doc.Content[0], "spec")
	fmt.Println(yamltree.Get(spec, "parallelism") == nil)
	yamltree.Set(spec, "completionMode", yamltree.String("Indexed"), "template")
	yamltree.Set(spec, "parallelism", yamltree.Int(2), "")
	out, err := yaml.Marshal(&doc)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// true
	// spec:
	//   parallelism: 2
	//   completionMode: Indexed
	//   template: {} # pods
}

// Duplicates reports, with its path, every key written twice in one map:
// readers disagree on which one counts.
func ExampleDuplicates() {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("spec:\n  replicatedJobs:\n  - {name: a, replicas: 1, replicas: 2}\n"), &doc); err != nil {
		panic(err)
	}
	yamltree.Duplicates(&doc, "", func(path string) { fmt.Println(path, yamltree.DuplicateMessage) })
	// Output:
	// spec.replicatedJobs[0].replicas appears twice in the same map; keep one (tools disagree on which one counts, and the API server refuses the object)
}
