package verify_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/jobset-flux/jobset-flux/test/bench/internal/gen"
	"github.com/jobset-flux/jobset-flux/test/bench/internal/verify"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// krm runs the KRM path in-process: the function's when proc is not nil,
// the floor's (parse and write back) otherwise.
func krm(t *testing.T, in []byte, proc *transform.Processor) *verify.Output {
	t.Helper()
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		t.Fatal(err)
	}
	if proc != nil {
		if ok, err := proc.Process(rl); !ok || err != nil {
			t.Fatalf("Process = %v, %v: %v", ok, err, rl.Results)
		}
		for _, r := range rl.Results {
			if r.Severity != fn.Info {
				t.Errorf("unexpected %s on the generated input: %s", r.Severity, r.Message)
			}
		}
	}
	out, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	got, err := verify.Read(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCounts checks that the generated inputs render without warnings and
// that the counts the runner relies on tell the function from the floor.
func TestCounts(t *testing.T) {
	proc, err := transform.New(transform.Options{Seed: []byte("jobset-flux-bench-seed-0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m, err := gen.Mix(&buf, 300, 7)
	if err != nil {
		t.Fatal(err)
	}
	if m.FluxJobSets == 0 || m.FluxGroups <= m.FluxJobSets || m.GPUJobSets == 0 || m.PlainJobSets == 0 {
		t.Fatalf("the mix lacks variety: %+v", m)
	}
	if err := verify.Check(krm(t, buf.Bytes(), proc).Counts, m.Want()); err != nil {
		t.Errorf("function: %v", err)
	}
	if err := verify.Check(krm(t, buf.Bytes(), nil).Counts, m.Floor()); err != nil {
		t.Errorf("floor: %v", err)
	}
	if m.Want() == m.Floor() {
		t.Error("the function's and the floor's outputs would count the same: a no-op could pass")
	}
}

// TestBroker checks that the broker.toml read back is the one rendered.
func TestBroker(t *testing.T) {
	proc, err := transform.New(transform.Options{Seed: []byte("jobset-flux-bench-seed-0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m, err := gen.OneJobSet(&buf, gen.Shape{Replicas: 100, Completions: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := krm(t, buf.Bytes(), proc)
	if err := verify.Check(got.Counts, m.Want()); err != nil {
		t.Fatal(err)
	}
	rl, err := fn.ParseResourceList(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proc.Process(rl); err != nil {
		t.Fatal(err)
	}
	for _, it := range rl.Items {
		if it.GetKind() == "ConfigMap" {
			want, _, _ := it.NestedString("data", "broker.toml")
			if got.Broker != want {
				t.Errorf("broker.toml read back differs from the rendered one:\n got %q\nwant %q", got.Broker, want)
			}
			if !strings.Contains(want, "big-100-100-node-99-[0-99]") {
				t.Errorf("broker.toml does not list the last Job's hosts:\n%s", want)
			}
		}
	}
}
