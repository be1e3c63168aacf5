package transform_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// elasticJobSet is a JobSet of a one-pod launcher group "head" and a
// worker group "w" of two pods, with extra annotations, extra lines of
// w's Job template (indented for it, before its spec) and w's Job spec.
func elasticJobSet(annotations, wTemplate, wSpec string) string {
	return hRLHead + hJobSetItem("js", annotations, `    replicatedJobs:
    - name: head
      template:
        spec:
          template:
            spec:
              containers: [{name: app, image: app, command: [bash, run.sh]}]
    - name: w
      template:
`+wTemplate+`        spec:
          completions: 2
          parallelism: 2
`+wSpec+`          template:
            spec:
              containers: [{name: app, image: app}]
`)
}

const elasticLauncher = `, flux-framework.org/launcher: "true"`

// sizeAnnotations returns each replicatedJob's Job-template annotations
// that hold its sizes, "" where it has none.
func sizeAnnotations(t *testing.T, rl *fn.ResourceList) []string {
	t.Helper()
	js := hFind(rl, "JobSet", "js")
	rjs, _, err := js.NestedSlice("spec", "replicatedJobs")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rj := range rjs {
		lo, _, _ := rj.NestedString("template", "metadata", "annotations", "jobset-flux.flux-framework.org/min-size")
		hi, _, _ := rj.NestedString("template", "metadata", "annotations", "jobset-flux.flux-framework.org/max-size")
		v := ""
		if lo != "" || hi != "" {
			v = lo + "-" + hi
		}
		out = append(out, v)
	}
	return out
}

// generatedFile returns a file of the JobSet's generated ConfigMap.
func generatedFile(t *testing.T, rl *fn.ResourceList, key string) string {
	t.Helper()
	cm := hFind(rl, "ConfigMap", "js-flux-entrypoint")
	if cm == nil {
		t.Fatalf("no ConfigMap: %s", hDump(rl))
	}
	v, _, _ := cm.NestedString("data", key)
	return v
}

// TestElasticSizesShapeTheInstance: max-size writes the group's ranks and
// resources at its largest size, min-size (else the size as rendered)
// makes the quorum, the Job template carries both for the cluster's
// admission policy, and nothing else of the JobSet changes. A render of
// the render is the same; with the settings gone it is a fresh render of
// the JobSet as written, the user's own template metadata kept.
func TestElasticSizesShapeTheInstance(t *testing.T) {
	for _, c := range []struct {
		name, annotations, wTemplate string
		hosts, quorum                string
		sizes                        []string
	}{
		{"max only", elasticLauncher + `, flux-framework.org/max-size: w=4`, "", "js-w-0-[0-3]", "-Sbroker.quorum=3", []string{"", "2-4"}},
		{"min and max", elasticLauncher + `, flux-framework.org/min-size: w=1, flux-framework.org/max-size: w=6`, "", "js-w-0-[0-5]", "-Sbroker.quorum=2", []string{"", "1-6"}},
		{"min only", elasticLauncher + `, flux-framework.org/min-size: "w=1"`, "", "js-w-0-[0-1]", "-Sbroker.quorum=2", []string{"", "1-2"}},
		{"interactive", `, flux-framework.org/interactive: "true", flux-framework.org/max-size: "w=3,head=1"`, "", "js-w-0-[0-2]", "-Sbroker.quorum=3", []string{"1-1", "2-3"}},
		{"the user's template metadata", elasticLauncher + `, flux-framework.org/max-size: w=4`, "        metadata:\n          labels: {team: a}\n          annotations: {note: kept}\n", "js-w-0-[0-3]", "-Sbroker.quorum=3", []string{"", "2-4"}},
		{"the user's empty metadata", elasticLauncher + `, flux-framework.org/max-size: w=4`, "        metadata: {}\n", "js-w-0-[0-3]", "-Sbroker.quorum=3", []string{"", "2-4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := elasticJobSet(c.annotations, c.wTemplate, "")
			rl, ok, out, err := hKRM(t, hProcessor(t), []byte(in))
			if err != nil || !ok {
				t.Fatalf("refused (%v): %s", err, hDump(rl))
			}
			broker := generatedFile(t, rl, "broker.toml")
			if !strings.Contains(broker, "{host = '"+c.hosts+"'}") || !strings.Contains(broker, "hosts = '"+c.hosts+"'") {
				t.Errorf("broker.toml does not list %s as hosts and resources:\n%s", c.hosts, broker)
			}
			entrypoint := generatedFile(t, rl, "entrypoint.sh")
			if got := strings.Count(entrypoint, "-Sbroker.quorum="); got != 1 || !strings.Contains(entrypoint, "'"+c.quorum+"'") {
				t.Errorf("entrypoint has %d quorums, want one %s", got, c.quorum)
			}
			if got := sizeAnnotations(t, rl); strings.Join(got, " ") != strings.Join(c.sizes, " ") {
				t.Errorf("size annotations %q, want %q", got, c.sizes)
			}
			rl2, ok, again, err := hKRM(t, hProcessor(t), out)
			if err != nil || !ok {
				t.Fatalf("second render refused (%v): %s", err, hDump(rl2))
			}
			if string(hItemsOnly(again)) != string(hItemsOnly(out)) {
				t.Errorf("second render differs:\n%s\n---\n%s", hItemsOnly(out), hItemsOnly(again))
			}
			// The settings' annotations, not the sizes written on the
			// templates (jobset-flux.flux-framework.org/...).
			settingsAnnotation := regexp.MustCompile(`([^.])flux-framework\.org/(min|max)-size:`)
			plain := func(s string) string { return settingsAnnotation.ReplaceAllString(s, "${1}x-$2-size:") }
			_, ok, rerendered, err := hKRM(t, hProcessor(t), []byte(plain(string(out))))
			_, ok2, fresh, err2 := hKRM(t, hProcessor(t), []byte(plain(in)))
			if err != nil || err2 != nil || !ok || !ok2 {
				t.Fatalf("render without the settings refused: %v %v", err, err2)
			}
			if strings.Contains(string(fresh), "quorum") || strings.Contains(string(fresh), "jobset-flux.flux-framework.org/m") {
				t.Errorf("a render without the settings has a quorum or sizes")
			}
			if got, want := hMeaning(t, rerendered)["JobSet/js"], hMeaning(t, fresh)["JobSet/js"]; !reflect.DeepEqual(got, want) {
				t.Errorf("settings removed: the JobSet renders as\n%s\nbut a fresh render gives\n%s", hItemsOnly(rerendered), hItemsOnly(fresh))
			}
		})
	}
}

// TestElasticSizesRefused: every way min-size and max-size cannot hold
// is one error, at the field to change, and the JobSet is left as it was.
func TestElasticSizesRefused(t *testing.T) {
	const setting = "metadata.annotations[flux-framework.org/max-size]"
	for _, c := range []struct {
		name, annotations, wTemplate, wSpec string
		labels                              string
		path, says                          string
	}{
		{"a command run over the nodes", `, flux-framework.org/max-size: w=4`, "", "", "", setting, "launcher"},
		{"queued in Kueue", elasticLauncher + `, flux-framework.org/max-size: w=4`, "", "", "kueue.x-k8s.io/queue-name: q", setting, "Kueue suspends the JobSet"},
		{"a quorum of the user's", elasticLauncher + `, flux-framework.org/max-size: w=4, flux-framework.org/broker-attributes: broker.quorum=2`, "", "", "", "metadata.annotations[flux-framework.org/broker-attributes]", "remove broker.quorum"},
		{"an unknown replicatedJob", elasticLauncher + `, flux-framework.org/max-size: "x=4"`, "", "", "", setting, `names replicatedJob "x", which is not in the Flux instance (head, w)`},
		{"a replicatedJob that does not join", elasticLauncher + `, flux-framework.org/replicated-jobs: head, flux-framework.org/max-size: "w=4"`, "", "", "", setting, `names replicatedJob "w", which is not in the Flux instance (head)`},
		{"one number for two replicatedJobs", elasticLauncher + `, flux-framework.org/max-size: "4"`, "", "", "", setting, "give each elastic one its own: w=4"},
		{"min above max", elasticLauncher + `, flux-framework.org/min-size: w=3, flux-framework.org/max-size: w=2`, "", "", "", setting, "above its max-size"},
		{"completions above max", elasticLauncher + `, flux-framework.org/max-size: w=1`, "", "", "", "spec.replicatedJobs[1].template.spec.completions", "above replicatedJob \"w\"'s max-size of 1"},
		{"completions below min", elasticLauncher + `, flux-framework.org/min-size: w=3, flux-framework.org/max-size: w=4`, "", "", "", "spec.replicatedJobs[1].template.spec.completions", "below replicatedJob \"w\"'s min-size of 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := elasticJobSet(c.annotations, c.wTemplate, c.wSpec)
			if c.labels != "" {
				in = strings.Replace(in, "    name: js\n", "    name: js\n    labels: {"+c.labels+"}\n", 1)
			}
			rl, ok, out, err := hKRM(t, hProcessor(t), []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			errs := hErrors(rl)
			if ok || len(errs) != 1 || errs[0].Field == nil || errs[0].Field.Path != c.path || !strings.Contains(errs[0].Message, c.says) {
				t.Fatalf("want one error at %s saying %q (ok %v): %s", c.path, c.says, ok, hDump(rl))
			}
			if strings.Contains(string(out), "entrypoint.sh") || strings.Contains(string(out), "jobset-flux.flux-framework.org/m") {
				t.Errorf("a refused JobSet was rendered:\n%s", out)
			}
		})
	}
}
