package transform_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/internal/cputime"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pelletier/go-toml/v2"
)

// A megabyte in a value is refused quickly, and neither the results nor
// the command's stderr line repeat it.
func TestMegabyteValues(t *testing.T) {
	p := hProcessor(t)
	long := strings.Repeat("9", 1<<20)
	// Every setting's validator gets a megabyte in pkg/settings; here a
	// few go the whole way, from each kind of validator.
	for i, name := range []string{"view-image", "port", "run-options", "shm-size", "connect-timeout"} {
		in := hList(t, nil, hJobSet{ann: map[string]string{settings.AnnotationPrefix + name: long}}.object())
		start := cputime.Now()
		var rl *fn.ResourceList
		var ok bool
		if i == 0 {
			rl, ok, _ = hRun(t, p, in) // once through the whole KRM path
		} else {
			var err error
			if rl, err = fn.ParseResourceList(in); err != nil {
				t.Fatal(err)
			}
			if ok, err = p.Process(rl); err != nil {
				t.Fatal(err)
			}
		}
		if ok {
			t.Errorf("%s: a 1 MB value was accepted", name)
		}
		for _, r := range rl.Results {
			if len(r.Message) > 2048 {
				t.Errorf("%s: a %d-byte message", name, len(r.Message))
			}
		}
		if d := cputime.Since(start); d > 10*time.Second {
			t.Errorf("%s: a 1 MB value took %v", name, d)
		}
	}
}

// hBroker renders a JobSet of replicas x completions pods and returns the
// time Process took (best of runs) and the generated ConfigMap's files.
func hBroker(t *testing.T, replicas, completions, runs int) (time.Duration, map[string]string) {
	t.Helper()
	p := hProcessor(t)
	in := hList(t, nil, hJobSet{name: "big", rjName: "w", replicas: replicas, completions: completions}.object())
	best := time.Duration(1<<63 - 1)
	var data map[string]string
	for range runs {
		rl, err := fn.ParseResourceList(in)
		if err != nil {
			t.Fatal(err)
		}
		start := cputime.Now()
		ok, err := p.Process(rl)
		d := cputime.Since(start)
		if err != nil || !ok {
			t.Fatalf("%dx%d refused: %v %s", replicas, completions, err, hDump(rl))
		}
		best = min(best, d)
		cm := hFind(rl, "ConfigMap", "big"+plan.ConfigMapSuffix)
		data, _, _ = cm.NestedStringMap("data")
	}
	return best, data
}

// A million pods renders in time and space linear in the number of
// replicated Jobs (never of pods), with a compact hostlist.
func TestMillionPods(t *testing.T) {
	const runs = 5
	base, _ := hBroker(t, 1, 1000, runs)
	for _, c := range []struct {
		replicas, completions int
		hosts                 string
		maxTOML               int
	}{
		{1, 1_000_000, "big-w-0-[0-999999]", 4096},
		{1_000_000, 1, "big-w-[0-999999]-0", 4096},
		{1000, 1000, "big-w-0-[0-999],big-w-1-[0-999],", 64 << 10},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.replicas, c.completions), func(t *testing.T) {
			d, files := hBroker(t, c.replicas, c.completions, runs)
			broker := files[plan.BrokerConfig]
			t.Logf("%d x %d pods: broker.toml %d bytes, entrypoint.sh %d bytes, Process %v (1k pods: %v)", c.replicas, c.completions, len(broker), len(files[plan.EntrypointScript]), d, base)
			if len(broker) > c.maxTOML {
				t.Errorf("broker.toml is %d bytes, want at most %d", len(broker), c.maxTOML)
			}
			var doc struct {
				Bootstrap struct{ Hosts []struct{ Host string } }
			}
			if err := toml.Unmarshal([]byte(broker), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Bootstrap.Hosts) != 1 || !strings.HasPrefix(doc.Bootstrap.Hosts[0].Host, c.hosts) {
				t.Errorf("hosts = %.80v, want it to start with %s", doc.Bootstrap.Hosts, c.hosts)
			}
			if !strings.Contains(files[plan.EntrypointScript], fmt.Sprintf(`"${flux}" run -N %d `, c.replicas*c.completions)) {
				t.Errorf("the entrypoint does not run on %d nodes", c.replicas*c.completions)
			}
			// Generous against a loaded machine, and still far from what a
			// per-pod loop (1000x) would take.
			if d > 10*base+20*time.Millisecond {
				t.Errorf("1M pods took %v, more than 10x the %v of 1k pods", d, base)
			}
		})
	}
	t.Run("over the limit", func(t *testing.T) {
		p := hProcessor(t)
		for _, rc := range [][2]int{{1001, 1000}, {1, 1_000_001}, {2147483647, 2147483647}} {
			start := cputime.Now()
			rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{replicas: rc[0], completions: rc[1]}.object()))
			if ok || !strings.Contains(hDump(rl), "split it into several JobSets") {
				t.Errorf("%dx%d: %v\n%s", rc[0], rc[1], ok, hDump(rl))
			}
			if d := cputime.Since(start); d > 5*time.Second {
				t.Errorf("%dx%d: refusing took %v", rc[0], rc[1], d)
			}
		}
	})
}
