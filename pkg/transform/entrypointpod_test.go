package transform_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Issue 31 class 4 and issue 32 item 2: what the render adds to the
// user's pod for the entrypoint (the startup probe, the flux-installer's
// resources and user), and the warnings where the user's pod keeps it from
// working as they expect.

// epPod renders one JobSet whose only replicatedJob has the given pod
// spec (indented for a pod spec) and returns the result list, the output
// and the rendered pod spec.
func epPod(t *testing.T, annotations, podSpec string) (*fn.ResourceList, []byte, map[string]any) {
	t.Helper()
	in := hRLHead + hJobSetItem("js", annotations, `    replicatedJobs:
    - name: w
      template:
        spec:
          completions: 2
          template:
            spec:
`+podSpec)
	p := hProcessor(t)
	rl, ok, out, err := hKRM(t, p, []byte(in))
	if err != nil || !ok {
		t.Fatalf("render refused (%v): %s", err, hDump(rl))
	}
	js := hFind(rl, "JobSet", "js")
	var m map[string]any
	if err := yaml.Unmarshal([]byte(js.String()), &m); err != nil {
		t.Fatal(err)
	}
	return rl, out, hPod(t, m, 0)
}

// epResult returns the results whose message contains text.
func epResults(rl *fn.ResourceList, text string) []*fn.Result {
	var out []*fn.Result
	for _, r := range rl.Results {
		if strings.Contains(r.Message, text) {
			out = append(out, r)
		}
	}
	return out
}

func epContainer(pod map[string]any, list string, i int) map[string]any {
	items, _ := pod[list].([]any)
	if i >= len(items) {
		return nil
	}
	c, _ := items[i].(map[string]any)
	return c
}

// epRerender renders the output again and fails unless nothing changed.
func epRerender(t *testing.T, out []byte) {
	t.Helper()
	p := hProcessor(t)
	rl, ok, again, err := hKRM(t, p, out)
	if err != nil || !ok {
		t.Fatalf("re-render refused (%v): %s", err, hDump(rl))
	}
	if !bytes.Equal(hItemsOnly(out), hItemsOnly(again)) {
		t.Errorf("the re-render changed the output:\n%s\n---\n%s", hItemsOnly(out), hItemsOnly(again))
	}
}

const epApp = `              containers:
              - name: app
                image: app
                command: [hostname]
`

// TestStartupProbe: the wrapped container gets a startup probe on the
// entrypoint's joined mark, whose failure threshold outlasts
// start-timeout (and is endless without one); a re-render changes
// nothing, and disabling the JobSet takes the probe away with the rest.
func TestStartupProbe(t *testing.T) {
	for _, c := range []struct {
		annotations string
		threshold   int
	}{{"", (600+120)/5 + 1}, {`, flux-framework.org/start-timeout: "90s"`, (90+120)/5 + 1}, {`, flux-framework.org/start-timeout: none`, 1<<31 - 1}} {
		_, out, pod := epPod(t, c.annotations, epApp)
		probe, _ := epContainer(pod, "containers", 0)["startupProbe"].(map[string]any)
		cmd, _ := probe["exec"].(map[string]any)["command"].([]any)
		if len(cmd) != 3 || cmd[0] != "/bin/bash" || cmd[1] != "-c" || !strings.Contains(fmt.Sprint(cmd[2]), "[[ -e /mnt/flux/install/run/joined ]]") {
			t.Fatalf("%q: startupProbe = %v, want bash testing the joined mark", c.annotations, probe)
		}
		if probe["periodSeconds"] != 5 || probe["timeoutSeconds"] != 60 || probe["failureThreshold"] != c.threshold {
			t.Errorf("%q: probe period %v timeout %v threshold %v, want 5, 60 and %d", c.annotations, probe["periodSeconds"], probe["timeoutSeconds"], probe["failureThreshold"], c.threshold)
		}
		epRerender(t, out)
		off := bytes.Replace(out, []byte(`flux-framework.org/enabled: "true"`), []byte(`flux-framework.org/enabled: "false"`), 1)
		rl, ok, _, err := hKRM(t, hProcessor(t), off)
		if err != nil || !ok {
			t.Fatalf("disabling refused: %v %s", err, hDump(rl))
		}
		if s := hFind(rl, "JobSet", "js").String(); strings.Contains(s, "startupProbe") || strings.Contains(s, "joined") {
			t.Errorf("the disabled JobSet keeps the startup probe:\n%s", s)
		}
	}
}

// TestEarlierProbeRerendered: renders of earlier releases, whose probe
// ran one file test per exec every 2 s, then every 5 s, with no timeout,
// are recognised as the function's own: the re-render writes today's
// probe in its place, keeps no second probe and gives the bytes of a
// fresh render, and it warns of no user's startup probe.
func TestEarlierProbeRerendered(t *testing.T) {
	_, out, pod := epPod(t, "", epApp)
	probe := epContainer(pod, "containers", 0)["startupProbe"].(map[string]any)
	script := fmt.Sprint(probe["exec"].(map[string]any)["command"].([]any)[2])
	lines := map[string]string{
		"- " + script: "- '[[ -e /mnt/flux/install/run/joined ]]'",
		fmt.Sprintf("periodSeconds: %v\n", probe["periodSeconds"]):       "periodSeconds: 2\n",
		fmt.Sprintf("failureThreshold: %v\n", probe["failureThreshold"]): "failureThreshold: 361\n",
	}
	earlier := regexp.MustCompile(fmt.Sprintf(`\n *timeoutSeconds: %v\n`, probe["timeoutSeconds"])).ReplaceAll(out, []byte("\n"))
	if bytes.Equal(earlier, out) {
		t.Fatalf("the render has no timeoutSeconds:\n%s", out)
	}
	for now, then := range lines {
		if !bytes.Contains(earlier, []byte(now)) {
			t.Fatalf("the render has no %q:\n%s", now, out)
		}
		earlier = bytes.Replace(earlier, []byte(now), []byte(then), 1)
	}
	for _, period := range []string{"2", "5"} {
		in := bytes.Replace(earlier, []byte("periodSeconds: 2\n"), []byte("periodSeconds: "+period+"\n"), 1)
		rl, ok, again, err := hKRM(t, hProcessor(t), in)
		if err != nil || !ok {
			t.Fatalf("re-render of the earlier probe refused (%v, ok %v)", err, ok)
		}
		if !bytes.Equal(hItemsOnly(out), hItemsOnly(again)) {
			t.Errorf("the earlier render (period %s) did not re-render as a fresh one:\n%s\n---\n%s", period, hItemsOnly(in), hItemsOnly(again))
		}
		if r := epResults(rl, "startupProbe"); len(r) != 0 {
			t.Errorf("the function's own earlier probe was taken for the user's: %v", r)
		}
	}
}

// TestUserStartupProbeKept: a startup probe of the user's own stays as it
// is, with a warning that Ready then no longer waits for the broker; a
// readinessProbe of theirs gets the function's startup probe beside it.
func TestUserStartupProbeKept(t *testing.T) {
	rl, out, pod := epPod(t, "", epApp+`                startupProbe: {tcpSocket: {port: 80}, periodSeconds: 7}
`)
	probe, _ := epContainer(pod, "containers", 0)["startupProbe"].(map[string]any)
	if probe["periodSeconds"] != 7 || probe["exec"] != nil {
		t.Errorf("the user's startupProbe became %v", probe)
	}
	if w := epResults(rl, "jobset-flux adds none, so the pod is Ready when your probes pass"); len(w) != 1 || w[0].Severity != fn.Warning || w[0].Field.Path != "spec.replicatedJobs[0].template.spec.template.spec.containers[0].startupProbe" {
		t.Errorf("want one warning at the user's startupProbe: %s", hDump(rl))
	}
	epRerender(t, out)

	_, _, pod = epPod(t, "", epApp+`                readinessProbe: {exec: {command: [/bin/true]}}
`)
	c := epContainer(pod, "containers", 0)
	if c["readinessProbe"] == nil || c["startupProbe"] == nil {
		t.Errorf("with the user's readinessProbe: readiness %v, startup %v; want both", c["readinessProbe"], c["startupProbe"])
	}
}

const epGuaranteed = `              containers:
              - name: app
                image: app
                command: [hostname]
                resources:
                  limits: {cpu: "2", memory: 1Gi}
`

// TestInstallerKeepsQoS: in a Guaranteed pod the flux-installer gets the
// wrapped container's cpu and memory as requests and limits, so the pod
// stays Guaranteed and requests no more (the largest init container is
// no larger than the app containers' sum); a Burstable or BestEffort pod
// gets an installer without resources, as before; resources the user
// writes into the rendered installer no longer make the next render
// refuse the name: they are derived again.
func TestInstallerKeepsQoS(t *testing.T) {
	_, out, pod := epPod(t, "", epGuaranteed)
	inst := epContainer(pod, "initContainers", 0)
	res, _ := inst["resources"].(map[string]any)
	want := map[string]any{"cpu": "2", "memory": "1Gi"}
	for _, k := range []string{"limits", "requests"} {
		got, _ := res[k].(map[string]any)
		if len(got) != 2 || got["cpu"] != want["cpu"] || got["memory"] != want["memory"] {
			t.Errorf("flux-installer resources.%s = %v, want %v", k, got, want)
		}
	}
	epRerender(t, out)

	edited := bytes.Replace(out, []byte("cpu: \"2\"\n                    memory: 1Gi\n                  requests"), []byte("cpu: \"1\"\n                    memory: 1Gi\n                  requests"), 1)
	if bytes.Equal(edited, out) {
		t.Fatalf("the test's edit did not apply:\n%s", out)
	}
	rl, ok, again, err := hKRM(t, hProcessor(t), edited)
	if err != nil || !ok {
		t.Fatalf("a user's edit of the installer's resources made the render refuse (%v): %s", err, hDump(rl))
	}
	if !bytes.Equal(hItemsOnly(again), hItemsOnly(out)) {
		t.Errorf("the installer's resources were not derived again:\n%s", hItemsOnly(again))
	}

	for name, spec := range map[string]string{
		"Burstable (request only)": epApp + "                resources: {requests: {cpu: \"1\"}}\n",
		"BestEffort":               epApp,
		"a Burstable sidecar": epGuaranteed + `              - name: side
                image: side
`,
		"a Burstable init container of the user's": epGuaranteed + `              initContainers:
              - name: prep
                image: prep
`,
	} {
		_, out, pod := epPod(t, "", spec)
		for i := 0; ; i++ {
			c := epContainer(pod, "initContainers", i)
			if c == nil {
				t.Fatalf("%s: no flux-installer", name)
			}
			if c["name"] == "flux-installer" {
				if c["resources"] != nil {
					t.Errorf("%s: the installer got resources %v", name, c["resources"])
				}
				break
			}
		}
		epRerender(t, out)
	}
}

// TestInstallerRunAsNonRoot: a pod that asks for runAsNonRoot without a
// runAsUser would leave the flux-installer (the view image runs as root)
// stuck in Init: it runs as the wrapped container's runAsUser, else
// 65534, with an info; with a pod runAsUser it inherits that.
func TestInstallerRunAsNonRoot(t *testing.T) {
	for _, c := range []struct {
		name, podSC, containerSC string
		want                     any
	}{
		{"pod runAsNonRoot only", "{runAsNonRoot: true}", "", 65534},
		{"the container's runAsUser", "{runAsNonRoot: true}", "                securityContext: {runAsUser: 1000}\n", 1000},
		{"pod runAsUser", "{runAsNonRoot: true, runAsUser: 2000}", "", nil},
		{"no runAsNonRoot", "{runAsUser: 0}", "", nil},
	} {
		rl, out, pod := epPod(t, "", "              securityContext: "+c.podSC+"\n"+epApp+c.containerSC)
		sc, _ := epContainer(pod, "initContainers", 0)["securityContext"].(map[string]any)
		if sc["runAsUser"] != c.want {
			t.Errorf("%s: flux-installer runAsUser %v, want %v", c.name, sc["runAsUser"], c.want)
		}
		if infos := epResults(rl, "the flux-installer init container runs as uid"); (len(infos) == 1) != (c.want != nil) {
			t.Errorf("%s: %d infos about the installer's uid: %s", c.name, len(infos), hDump(rl))
		}
		epRerender(t, out)
	}
}

// TestEntrypointPodWarnings: a read-only /dev/shm of the user's is kept,
// with a warning; an ephemeral-storage limit the view's copy does not fit
// in warns with both sizes (not with view-mount: image, which copies
// nothing).
func TestEntrypointPodWarnings(t *testing.T) {
	rl, _, _ := epPod(t, "", epApp+`                volumeMounts: [{name: shm, mountPath: /dev/shm, readOnly: true}]
              volumes: [{name: shm, emptyDir: {medium: Memory}}]
`)
	if w := epResults(rl, "own /dev/shm is kept read-only"); len(w) != 1 || w[0].Severity != fn.Warning || !strings.HasSuffix(w[0].Field.Path, "volumeMounts[0].readOnly") {
		t.Errorf("want one warning at the read-only /dev/shm mount: %s", hDump(rl))
	}
	eph := epApp + "                resources: {limits: {ephemeral-storage: 500Mi}}\n"
	rl, _, _ = epPod(t, "", eph)
	if w := epResults(rl, "limits the pod's ephemeral storage to 500Mi, less than the copy of the Flux view (about 1Gi"); len(w) != 1 || w[0].Severity != fn.Warning {
		t.Errorf("want one warning about the ephemeral-storage limit: %s", hDump(rl))
	}
	for _, ok := range []struct{ annotations, spec string }{
		{"", epApp + "                resources: {limits: {ephemeral-storage: 2Gi}}\n"},
		{`, flux-framework.org/view-mount: image`, eph},
	} {
		if rl, _, _ := epPod(t, ok.annotations, ok.spec); len(epResults(rl, "ephemeral storage")) != 0 {
			t.Errorf("%q: an ephemeral-storage warning: %s", ok.annotations, hDump(rl))
		}
	}
}
