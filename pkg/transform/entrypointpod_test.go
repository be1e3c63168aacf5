package transform_test

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/api/resource"
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

// TestInstallerAsksWhatTheWrappedContainerAsks: the flux-installer gets
// the wrapped container's cpu, memory and ephemeral-storage limits, and
// its requests (a limit alone is also the request, as the API server
// defaults it), so a ResourceQuota or a LimitRange that admits the
// wrapped container admits the installer, a LimitRange's defaults never
// make it the pod's largest request, a Guaranteed pod stays Guaranteed,
// and the pod requests exactly what it did without the function's init
// container. Resources the user writes into the rendered installer no
// longer make the next render refuse the name: they are derived again.
func TestInstallerAsksWhatTheWrappedContainerAsks(t *testing.T) {
	_, out, _ := epPod(t, "", epGuaranteed)
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

	for _, c := range []struct {
		name, spec       string
		limits, requests map[string]any
	}{
		{"Guaranteed", epGuaranteed, map[string]any{"cpu": "2", "memory": "1Gi"}, map[string]any{"cpu": "2", "memory": "1Gi"}},
		{"Burstable (request only)", epApp + "                resources: {requests: {cpu: 250m}}\n", nil, map[string]any{"cpu": "250m"}},
		{"requests and larger limits", epApp + "                resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: \"1\", memory: 256Mi, ephemeral-storage: 2Gi}}\n",
			map[string]any{"cpu": "1", "memory": "256Mi", "ephemeral-storage": "2Gi"}, map[string]any{"cpu": "250m", "memory": "64Mi", "ephemeral-storage": "2Gi"}},
		{"BestEffort", epApp, nil, nil},
		{"a Burstable sidecar", epGuaranteed + "              - name: side\n                image: side\n", map[string]any{"cpu": "2", "memory": "1Gi"}, map[string]any{"cpu": "2", "memory": "1Gi"}},
		{"an init container of the user's", epGuaranteed + "              initContainers:\n              - name: prep\n                image: prep\n                resources: {limits: {cpu: \"3\"}}\n",
			map[string]any{"cpu": "2", "memory": "1Gi"}, map[string]any{"cpu": "2", "memory": "1Gi"}},
	} {
		_, out, pod := epPod(t, "", c.spec)
		var inst map[string]any
		for i := 0; ; i++ {
			if inst = epContainer(pod, "initContainers", i); inst == nil || inst["name"] == "flux-installer" {
				break
			}
		}
		if inst == nil {
			t.Fatalf("%s: no flux-installer", c.name)
		}
		res, _ := inst["resources"].(map[string]any)
		if got, _ := res["limits"].(map[string]any); !reflect.DeepEqual(got, c.limits) && len(got)+len(c.limits) > 0 {
			t.Errorf("%s: flux-installer limits %v, want %v", c.name, got, c.limits)
		}
		if got, _ := res["requests"].(map[string]any); !reflect.DeepEqual(got, c.requests) && len(got)+len(c.requests) > 0 {
			t.Errorf("%s: flux-installer requests %v, want %v", c.name, got, c.requests)
		}
		for _, r := range []string{"cpu", "memory"} {
			with := podRequest(t, pod, r, true)
			without := podRequest(t, pod, r, false)
			if with.Cmp(without) != 0 {
				t.Errorf("%s: the pod requests %s of %s with the installer, %s without", c.name, with.String(), r, without.String())
			}
		}
		epRerender(t, out)
	}
}

// podRequest is what a pod requests of a resource as the scheduler and a
// ResourceQuota count it: the sum over its containers, or its largest init
// container when that is more; with installer false, the flux-installer
// left out.
func podRequest(t *testing.T, pod map[string]any, name string, installer bool) resource.Quantity {
	t.Helper()
	request := func(c map[string]any) resource.Quantity {
		res, _ := c["resources"].(map[string]any)
		for _, part := range []string{"requests", "limits"} {
			m, _ := res[part].(map[string]any)
			if v, ok := m[name].(string); ok {
				return resource.MustParse(v)
			}
		}
		return resource.Quantity{}
	}
	var sum resource.Quantity
	for i := 0; epContainer(pod, "containers", i) != nil; i++ {
		sum.Add(request(epContainer(pod, "containers", i)))
	}
	for i := 0; epContainer(pod, "initContainers", i) != nil; i++ {
		c := epContainer(pod, "initContainers", i)
		if !installer && c["name"] == "flux-installer" {
			continue
		}
		if r := request(c); r.Cmp(sum) > 0 {
			sum = r
		}
	}
	return sum
}

// TestInstallerRunAsNonRoot: a pod or a wrapped container that asks for
// runAsNonRoot without a runAsUser would leave the flux-installer (the view
// image runs as root) stuck in Init, and Pod Security "restricted" refuses
// a pod with any container that is not asked to run as non-root: it runs
// as the wrapped container's runAsUser, else 65534, with an info at the
// field that asked, and says runAsNonRoot itself when the container's own
// securityContext asked (the pod's reaches it anyway); with a pod
// runAsUser it inherits that.
func TestInstallerRunAsNonRoot(t *testing.T) {
	for _, c := range []struct {
		name, podSC, containerSC string
		want                     any
		nonRoot                  any
		field                    string
	}{
		{"pod runAsNonRoot only", "{runAsNonRoot: true}", "", 65534, nil, "template.spec.securityContext.runAsNonRoot"},
		{"the container's runAsUser", "{runAsNonRoot: true}", "                securityContext: {runAsUser: 1000}\n", 1000, nil, "template.spec.securityContext.runAsNonRoot"},
		{"pod runAsUser", "{runAsNonRoot: true, runAsUser: 2000}", "", nil, nil, ""},
		{"no runAsNonRoot", "{runAsUser: 0}", "", nil, nil, ""},
		{"the container's runAsNonRoot", "{}", "                securityContext: {runAsNonRoot: true, allowPrivilegeEscalation: false}\n", 65534, true, "containers[0].securityContext.runAsNonRoot"},
		{"the container's runAsNonRoot and runAsUser", "{}", "                securityContext: {runAsNonRoot: true, runAsUser: 1001}\n", 1001, true, "containers[0].securityContext.runAsNonRoot"},
		{"both", "{runAsNonRoot: true}", "                securityContext: {runAsNonRoot: true}\n", 65534, nil, "containers[0].securityContext.runAsNonRoot"},
		{"the container's runAsNonRoot with a pod runAsUser", "{runAsUser: 3000}", "                securityContext: {runAsNonRoot: true}\n", nil, true, ""},
	} {
		rl, out, pod := epPod(t, "", "              securityContext: "+c.podSC+"\n"+epApp+c.containerSC)
		sc, _ := epContainer(pod, "initContainers", 0)["securityContext"].(map[string]any)
		if sc["runAsUser"] != c.want {
			t.Errorf("%s: flux-installer runAsUser %v, want %v", c.name, sc["runAsUser"], c.want)
		}
		if sc["runAsNonRoot"] != c.nonRoot {
			t.Errorf("%s: flux-installer runAsNonRoot %v, want %v", c.name, sc["runAsNonRoot"], c.nonRoot)
		}
		infos := epResults(rl, "the flux-installer init container runs as uid")
		if (len(infos) == 1) != (c.want != nil) {
			t.Errorf("%s: %d infos about the installer's uid: %s", c.name, len(infos), hDump(rl))
		}
		if len(infos) == 1 && !strings.Contains(infos[0].Message, c.field) {
			t.Errorf("%s: the info does not name %s: %s", c.name, c.field, infos[0].Message)
		}
		epRerender(t, out)
	}
}

// TestEntrypointPodWarnings: a read-only /dev/shm of the user's is kept,
// with a warning; an ephemeral-storage limit the view's copy does not fit
// in warns with both sizes when the copy is on the node's disk
// (view-copy-medium: disk); not with the default medium, memory, whose
// emptyDir the kubelet counts as memory, nor with view-mount: image,
// which copies nothing.
func TestEntrypointPodWarnings(t *testing.T) {
	rl, _, _ := epPod(t, "", epApp+`                volumeMounts: [{name: shm, mountPath: /dev/shm, readOnly: true}]
              volumes: [{name: shm, emptyDir: {medium: Memory}}]
`)
	if w := epResults(rl, "own /dev/shm is kept read-only"); len(w) != 1 || w[0].Severity != fn.Warning || !strings.HasSuffix(w[0].Field.Path, "volumeMounts[0].readOnly") {
		t.Errorf("want one warning at the read-only /dev/shm mount: %s", hDump(rl))
	}
	eph := epApp + "                resources: {limits: {ephemeral-storage: 500Mi}}\n"
	const disk = `, flux-framework.org/view-copy-medium: disk`
	rl, _, _ = epPod(t, disk, eph)
	if w := epResults(rl, "limits the pod's ephemeral storage to 500Mi, less than the copy of the Flux view (about 1Gi"); len(w) != 1 || w[0].Severity != fn.Warning {
		t.Errorf("want one warning about the ephemeral-storage limit: %s", hDump(rl))
	}
	for _, ok := range []struct{ annotations, spec string }{
		{disk, epApp + "                resources: {limits: {ephemeral-storage: 2Gi}}\n"},
		{"", eph},
		{`, flux-framework.org/view-mount: image`, eph},
	} {
		if rl, _, _ := epPod(t, ok.annotations, ok.spec); len(epResults(rl, "ephemeral storage")) != 0 {
			t.Errorf("%q: an ephemeral-storage warning: %s", ok.annotations, hDump(rl))
		}
	}
}
