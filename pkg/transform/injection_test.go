package transform_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Every setting, from every source, with every payload alone and glued to
// a valid value: refused with an error that does not echo control
// characters, or accepted with a value that is safe everywhere it goes.
func TestInjectionIntoSettings(t *testing.T) {
	p := hProcessor(t)
	baseline := hBaseline(t, p)
	payloads := hPayloads()
	accepted := 0
	for _, name := range settings.Names() {
		for pname, payload := range payloads {
			if len(payload) > 1000 {
				continue // TestMegabyteValues
			}
			variants := map[string]string{
				"alone":                payload,
				"after a valid value":  hValid[name] + payload,
				"before a valid value": payload + hValid[name],
			}
			for vname, value := range variants {
				sources := map[string]func() (hJobSet, map[string]any){
					"annotation": func() (hJobSet, map[string]any) {
						return hJobSet{ann: map[string]string{settings.AnnotationPrefix + name: value}}, nil
					},
					"ConfigMap config": func() (hJobSet, map[string]any) {
						return hJobSet{}, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg"}, "data": map[string]any{name: value}}
					},
					"JobSetFlux config": func() (hJobSet, map[string]any) {
						return hJobSet{}, map[string]any{"apiVersion": settings.ConfigAPIVersion, "kind": settings.ConfigKind, "metadata": map[string]any{"name": "cfg"}, "spec": map[string]any{fieldName(name): value}}
					},
				}
				for env, setting := range settings.EnvNames {
					if setting == name {
						sources["env "+env] = func() (hJobSet, map[string]any) {
							return hJobSet{env: map[string]string{env: value}}, nil
						}
					}
				}
				for sname, source := range sources {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", name, pname, vname, sname), func(t *testing.T) {
						streamCheck := vname == "alone" && !strings.HasPrefix(sname, "env ")
						js, config := source()
						cm := hOutcomeChecked(t, p, js, config, value, baseline, streamCheck)
						if cm == nil {
							return
						}
						accepted++
						if r, bad := hUnsafe(value); bad && !verbatim(name) {
							t.Errorf("accepted %s = %q, which holds %q", name, short(value), r)
						}
					})
				}
			}
		}
	}
	t.Logf("%d hostile setting values accepted (all without unsafe characters)", accepted)
}

// Values that come from the JobSet itself rather than from settings.
func TestInjectionThroughJobSetFields(t *testing.T) {
	p := hProcessor(t)
	baseline := hBaseline(t, p)
	for pname, payload := range hPayloads() {
		long := len(payload) > 1000
		cases := map[string]hJobSet{
			"name":               {name: payload},
			"name suffix":        {name: "js" + payload},
			"namespace":          {namespace: payload},
			"subdomain":          {subdomain: "net" + payload},
			"replicatedJob name": {rjName: "w" + payload},
			"container name":     {container: "app" + payload, ann: map[string]string{"flux-framework.org/container": "app" + payload}},
			"command":            {command: []string{"sh", "-c", payload}},
			"args":               {command: []string{"echo"}, args: []string{payload, "--", payload}},
			"other env":          {env: map[string]string{"FLUX_OTHER": payload, "APP": payload}},
			"annotation key":     {ann: map[string]string{"example.com/" + payload: "x", settings.AnnotationPrefix + payload: "x"}},
		}
		for cname, js := range cases {
			if long && !slices.Contains([]string{"name", "namespace", "command", "annotation key"}, cname) {
				continue // a megabyte costs seconds of YAML; a few fields show it
			}
			t.Run(cname+"/"+pname, func(t *testing.T) {
				cm := hOutcome(t, p, js, nil, payload, baseline)
				if cm == nil {
					return
				}
				// Accepted: names reach broker.toml (quoted, checked
				// above); nothing else from the JobSet reaches a file.
				if slices.Contains([]string{"name", "name suffix", "namespace", "subdomain", "replicatedJob name"}, cname) {
					return
				}
				data, _, _ := cm.NestedStringMap("data")
				for key, text := range data {
					if len(payload) > 1 && strings.Count(text, payload) > strings.Count(baseline[key], payload) {
						t.Errorf("%s holds the payload", key)
					}
				}
			})
		}
	}
}

// The wrapped command keeps the user's argv word for word, whatever it
// holds: it is passed through the pod spec's exec form, never a script.
func TestCommandKeptVerbatim(t *testing.T) {
	p := hProcessor(t)
	var argv []string
	for _, v := range hPayloads() {
		if !strings.ContainsRune(v, 0) && len(v) < 1000 {
			argv = append(argv, v)
		}
	}
	slices.Sort(argv)
	rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{command: append([]string{"prog"}, argv...), args: argv}.object()))
	if !ok {
		t.Fatalf("refused: %s", hDump(rl))
	}
	js := hFind(rl, "JobSet", "js")
	c := hContainer(t, js, "containers", 0)
	cmd, _, _ := c.NestedStringSlice("command")
	args, _, _ := c.NestedStringSlice("args")
	if want := append([]string{plan.EntrypointPath, "prog"}, argv...); !slices.Equal(cmd, want) {
		t.Errorf("command changed:\n got %q\nwant %q", cmd, want)
	}
	if !slices.Equal(args, argv) {
		t.Errorf("args changed")
	}
}
