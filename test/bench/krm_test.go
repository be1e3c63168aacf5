// Package bench holds in-process benchmarks of the KRM path, for
// profiling: the same steps as fn/main.go's runKRM (parse, process, write)
// and as the floor, krm-identity (parse, write).
//
//	go test ./test/bench -run '^$' -bench KRM -benchtime 3x -cpuprofile cpu.out
package bench

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/jobset-flux/jobset-flux/test/bench/internal/gen"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

var benchSeed = []byte("jobset-flux-bench-seed-0123456789abcdef")

func input(b *testing.B, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Mix(&buf, n, 1); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkKRM times the KRM path in-process: "floor" is krm-identity's
// work, "fn" is jobset-flux's (transform.New included, as every process
// pays it). Set BENCH_KRM_SIZES to a size list (default 1000).
func BenchmarkKRM(b *testing.B) {
	for _, n := range benchSizes(b) {
		in := input(b, n)
		b.Run(fmt.Sprintf("floor/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				rl, err := fn.ParseResourceList(in)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rl.ToYAML(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("fn/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				proc, err := transform.New(transform.Options{Seed: benchSeed})
				if err != nil {
					b.Fatal(err)
				}
				rl, err := fn.ParseResourceList(in)
				if err != nil {
					b.Fatal(err)
				}
				if ok, err := proc.Process(rl); !ok || err != nil {
					b.Fatalf("Process: %v, %v", ok, err)
				}
				if _, err := resourcelist.Encode(rl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchSizes(b *testing.B) []int {
	s := os.Getenv("BENCH_KRM_SIZES")
	if s == "" {
		return []int{1000}
	}
	var out []int
	for _, f := range bytes.Split([]byte(s), []byte(",")) {
		var n int
		if _, err := fmt.Sscan(string(f), &n); err != nil || n < 1 {
			b.Fatalf("BENCH_KRM_SIZES: bad size %q", f)
		}
		out = append(out, n)
	}
	return out
}

// TestEncodeMatchesToYAMLOnMix: on a rendered mix (generated ConfigMaps,
// Secrets, edited JobSets and kpt annotations), the function's writer gives
// the bytes of the SDK's ToYAML, which the floor uses.
func TestEncodeMatchesToYAMLOnMix(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Mix(&buf, 400, 3); err != nil {
		t.Fatal(err)
	}
	proc, err := transform.New(transform.Options{Seed: benchSeed})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := fn.ParseResourceList(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := proc.Process(rl); !ok || err != nil {
		t.Fatalf("Process: %v, %v", ok, err)
	}
	got, err := resourcelist.Encode(rl)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode (%d bytes) differs from ToYAML (%d bytes)", len(got), len(want))
	}
	if n := bytes.Count(got, []byte("\n- apiVersion:")); n < 400 {
		t.Fatalf("the output holds %d items, want at least the 400 input resources", n)
	}
}
