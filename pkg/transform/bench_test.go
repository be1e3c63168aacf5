package transform_test

// In-process benchmarks of the transform alone: parsing the ResourceList
// happens outside the timer, so these measure what Process adds on top of
// the SDK. The end-to-end comparison with the SDK's floor is `make bench`
// (test/bench); see docs/contributing/performance.md.
//
//	go test -run '^$' -bench . -benchmem ./pkg/transform
//	go test -run '^$' -bench Process/1000 -cpuprofile cpu.out ./pkg/transform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// benchSeed is public: it only makes the benchmark's keys reproducible.
var benchSeed = []byte("jobset-flux-bench-seed-0123456789abcdef")

func benchProcessor(b *testing.B) *transform.Processor {
	b.Helper()
	p, err := transform.New(transform.Options{Seed: benchSeed})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchJobSet writes one annotated JobSet as a ResourceList item: groups
// replicatedJobs of replicas x completions pods each.
func benchJobSet(w *strings.Builder, name string, groups, replicas, completions, gpus int) {
	fmt.Fprintf(w, `- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: %s
    namespace: hpc
    annotations:
      flux-framework.org/enabled: "true"
  spec:
    replicatedJobs:
`, name)
	for g := range groups {
		fmt.Fprintf(w, `    - name: rj%d
      replicas: %d
      template:
        spec:
          completions: %d
          template:
            spec:
              containers:
              - name: main
                image: ghcr.io/example/solver:v1
                command: [mpirun, -n, "8", ./solver]
`, g, replicas, completions)
		if gpus > 0 {
			fmt.Fprintf(w, "                resources:\n                  limits:\n                    nvidia.com/gpu: %d\n", gpus)
		}
	}
}

func resourceList(items string) []byte {
	return []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items)
}

// processList times Process on fresh copies of in (parsing is untimed)
// and checks that every JobSet was rendered.
func processList(b *testing.B, in []byte, jobsets int) *fn.ResourceList {
	b.Helper()
	p := benchProcessor(b)
	var rl *fn.ResourceList
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		b.StopTimer()
		var err error
		if rl, err = fn.ParseResourceList(in); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if ok, err := p.Process(rl); !ok || err != nil {
			b.Fatalf("Process = %v, %v; results: %v", ok, err, rl.Results)
		}
	}
	b.StopTimer()
	// Each JobSet gets a ConfigMap and a Secret: a no-op cannot pass.
	if want := jobsets * 3; len(rl.Items) != want {
		b.Fatalf("output holds %d items, want %d", len(rl.Items), want)
	}
	return rl
}

// BenchmarkProcess renders a ResourceList of N annotated JobSets of 2 to
// 64 pods over 1 to 3 replicatedJobs, some with GPUs. The per-JobSet cost
// should not grow with N.
func BenchmarkProcess(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		var items strings.Builder
		for i := range n {
			groups := 1 + i%3
			replicas, completions := 1+i%4, 1+(i/4)%8 // 1..4 x 1..8 pods per group
			gpus := 0
			if i%4 == 0 {
				gpus = 1 << (i / 4 % 4)
			}
			benchJobSet(&items, fmt.Sprintf("js-%05d", i), groups, replicas, completions, gpus)
		}
		in := resourceList(items.String())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			processList(b, in, n)
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/jobset")
		})
	}
}

// BenchmarkRenderOneJobSet10000Pods renders one JobSet of 10,000 pods laid
// out three ways; the generated broker.toml's size is reported, since it
// is the one output that could grow with the number of pods.
func BenchmarkRenderOneJobSet10000Pods(b *testing.B) {
	for _, shape := range []struct{ replicas, completions int }{{1, 10000}, {10000, 1}, {100, 100}} {
		var items strings.Builder
		benchJobSet(&items, "big", 1, shape.replicas, shape.completions, 0)
		in := resourceList(items.String())
		b.Run(fmt.Sprintf("%dx%d", shape.replicas, shape.completions), func(b *testing.B) {
			rl := processList(b, in, 1)
			for _, it := range rl.Items {
				if it.GetKind() != "ConfigMap" {
					continue
				}
				broker, ok, err := it.NestedString("data", "broker.toml")
				if err != nil || !ok {
					b.Fatalf("no broker.toml in the generated ConfigMap: %v", err)
				}
				b.ReportMetric(float64(len(broker)), "broker.toml-bytes")
			}
		})
	}
}

// BenchmarkNew is the per-process set-up every run of the function pays
// (checking the options; the config schema is not read at run time).
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchProcessor(b)
	}
}
