package kubelet_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
)

// buildShim builds podshim once per test binary.
func buildShim(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the pod runner needs root")
		}
		t.Skip("the pod runner needs root")
	}
	bin := filepath.Join(t.TempDir(), "podshim")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/podshim").CombinedOutput()
	if err != nil {
		t.Fatalf("build podshim: %v\n%s", err, out)
	}
	return bin
}

const twoPods = `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: demo, namespace: team}
spec:
  network: {subdomain: net}
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        completions: 2
        parallelism: 2
        backoffLimit: 0
        completionMode: Indexed
        template:
          spec:
            restartPolicy: Never
            securityContext: {runAsUser: 1001, runAsGroup: 1001, fsGroup: 1001}
            volumes:
            - {name: cfg, configMap: {name: cfg, defaultMode: 0400}}
            - {name: scratch, emptyDir: {}}
            containers:
            - name: main
              image: host
              env: [{name: WHO, value: "pod $(JOB_COMPLETION_INDEX) $$(HOME)"}]
              volumeMounts:
              - {name: cfg, mountPath: /cfg, readOnly: true}
              - {name: scratch, mountPath: /scratch}
              command: [bash, -c]
              args:
              - |
                set -e
                echo "host=$(hostname) id=$(id -u):$(id -g) groups=$(id -G) who=$WHO"
                stat -L -c 'cfg %a %u:%g' /cfg/greeting
                cat /cfg/greeting
                getent hosts demo-w-0-0.net demo-w-0-1.net | awk '{print "resolves", $2}'
                ip -4 -o addr show eth0 | awk '{print "eth0", $4}'
                touch /scratch/x && stat -c 'scratch %g' /scratch/x
                if getent hosts demo-w-0-9.net; then echo "unexpected name"; exit 3; fi
                exit $JOB_COMPLETION_INDEX
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: team}
data: {greeting: hello}
`

func TestTwoPods(t *testing.T) {
	shim := buildShim(t)
	objs, err := kubelet.Decode([]byte(twoPods))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubelet.Start(kubelet.Options{Shim: shim, Images: map[string]kubelet.Image{"host": kubelet.HostImage(nil)}, Logf: t.Logf}, objs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.Wait(ctx)
	if err != nil {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if res[0].State != "Failed" {
		t.Errorf("JobSet state %s, want Failed (pod 1 exits 1)", res[0].State)
	}
	for _, p := range res[0].Pods {
		for _, r := range p.Results() {
			t.Logf("%s %s exit %d:\n%s", p.Hostname, r.Name, r.ExitCode, r.Log)
		}
		r, _ := p.Result("main")
		for _, want := range []string{"host=" + p.Hostname, "id=1001:1001", "groups=1001", "cfg 440 0:1001", "hello", "resolves demo-w-0-0.net.team.svc.cluster.local", "resolves demo-w-0-1.net.team.svc.cluster.local", "eth0 " + p.IP + "/16", "scratch 1001", "$(HOME)"} {
			if !strings.Contains(r.Log, want) {
				t.Errorf("%s: log lacks %q", p.Hostname, want)
			}
		}
		if r.ExitCode != p.Index {
			t.Errorf("%s: exit %d, want %d", p.Hostname, r.ExitCode, p.Index)
		}
	}
}
