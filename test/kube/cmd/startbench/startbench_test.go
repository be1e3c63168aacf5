package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// A flux-installer log and rank 0's app log as the cluster gave them
// (kubectl logs --timestamps), cut down.
const (
	installerLog = `2026-12-01T10:21:41.518548698Z flux-installer: looking for the Flux view at /opt/view
2026-12-01T10:21:41.954685364Z flux-installer: copying /opt/software to /mnt/flux/software
2026-12-01T10:21:43.008631916Z flux-installer: done
`
	rank0Log = `2026-12-01T10:21:44.736531282Z jobset-flux: using the Flux view in /mnt/flux/install/view: commands:    		0.88.0
2026-12-01T10:21:44.791922451Z jobset-flux: starting: /mnt/flux/install/view/bin/flux start -o\,--config-path=/mnt/flux/config
2026-12-01T10:21:53.069588287Z startbench-output 1796120512.956202834 sb-w-0-0
2026-12-01T10:21:53.076463111Z 2026-12-01T10:21:44.911586Z broker.info[0]: builtins-success: load-builtins->join 40.3025ms
2026-12-01T10:21:53.083438674Z 2026-12-01T10:21:46.492743Z broker.info[0]: rc1-success: init->quorum 1.58106s
2026-12-01T10:21:53.083452139Z 2026-12-01T10:21:51.788299Z broker.info[0]: online: sb-w-0-[0-2] (ranks 0-2)
2026-12-01T10:21:53.083454423Z 2026-12-01T10:21:51.788323Z broker.info[0]: quorum-full: quorum->run 5.29557s
2026-12-01T10:21:53.083460825Z startbench-output 1796120513.013404383 sb-w-0-2
2026-12-01T10:21:53.085063527Z startbench-output 1796120512.972102269 sb-w-0-1
`
)

func TestParseUnix(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1796120512.956202834": time.Unix(1796120512, 956202834),
		"1796120512.5":         time.Unix(1796120512, 500000000),
		"1796120512":           time.Unix(1796120512, 0),
		"1.0123456789":         time.Unix(1, 12345678),
	} {
		got, err := parseUnix(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseUnix(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseUnix("x.1"); err == nil {
		t.Error("parseUnix(x.1): no error")
	}
}

func TestRank0Log(t *testing.T) {
	logs := parseLog(rank0Log)
	if len(logs) != 9 {
		t.Fatalf("%d lines, want 9", len(logs))
	}
	clocks := map[string]time.Time{}
	if err := outputs(logs, clocks); err != nil {
		t.Fatal(err)
	}
	if len(clocks) != 3 || !clocks["sb-w-0-1"].Equal(time.Unix(1796120512, 972102269)) {
		t.Errorf("clocks %v", clocks)
	}
	// The same line read again (from another log) is not a second run.
	if err := outputs(logs, clocks); err != nil {
		t.Errorf("the same lines twice: %v", err)
	}
	other := parseLog("2026-12-01T10:21:59.0Z startbench-output 1796120599.0 sb-w-0-1\n")
	if err := outputs(other, clocks); err == nil {
		t.Error("a host printing two different clocks was not refused")
	}
	joined, ok := brokerEvent(logs, "quorum-full")
	if want := time.Date(2026, 12, 1, 10, 21, 51, 788323000, time.UTC); !ok || !joined.Equal(want) {
		t.Errorf("quorum-full at %v (%v), want %v", joined, ok, want)
	}
	if _, ok := brokerEvent(logs, "quorum"); ok {
		t.Error("quorum matched quorum-full")
	}
	if at, ok := firstWith(logs, "jobset-flux: starting:"); !ok || at.Nanosecond() != 791922451 {
		t.Errorf("starting at %v (%v)", at, ok)
	}
}

func TestInstallerSpan(t *testing.T) {
	start, done, err := installerSpan(parseLog(installerLog))
	if err != nil {
		t.Fatal(err)
	}
	if got := done.Sub(start); got != 1490083218*time.Nanosecond {
		t.Errorf("copy took %v", got)
	}
	if _, _, err := installerSpan(parseLog(strings.Split(installerLog, "\n")[0])); err == nil {
		t.Error("a log without done was accepted")
	}
}

func TestSummarize(t *testing.T) {
	if s := summarize([]float64{3, 1, 2}); s.med != 2 || s.min != 1 || s.max != 3 || s.String() != "2.00 s (1.00-3.00)" {
		t.Errorf("odd: %+v %s", s, s)
	}
	if s := summarize([]float64{4, 1, 2, 3}); s.med != 2.5 {
		t.Errorf("even: %+v", s)
	}
	if s := summarize(nil); s.String() != "" || ratio(s, summarize([]float64{1})) != "" {
		t.Error("empty summary is not blank")
	}
	if r := ratio(summarize([]float64{6}), summarize([]float64{2})); r != "3.00x" {
		t.Errorf("ratio %s", r)
	}
}

func TestReplaceBlock(t *testing.T) {
	doc := "# T\n\nintro\n" + docBegin + "\nold\n" + docEnd + "\ntail\n"
	out, err := replaceBlock([]byte(doc), "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\nintro\n" + docBegin + "\nnew\n" + docEnd + "\ntail\n"; string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := replaceBlock([]byte("no block"), "x"); err == nil {
		t.Error("a document without the block was accepted")
	}
}

// TestMeasure: like du, hard links count once and symlinks are not followed.
func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.MkdirAll(a, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "f"), make([]byte, 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(a, "f"), filepath.Join(a, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr", filepath.Join(a, "link")); err != nil {
		t.Fatal(err)
	}
	u, err := measure(a)
	if err != nil {
		t.Fatal(err)
	}
	// a, f (= hard), link
	if u.Files != 3 || u.Bytes < 10000 || u.Bytes > 10000+8192 || u.Allocated < 8192 {
		t.Errorf("%+v", u)
	}
}

// TestInput: the floor and the Flux variants differ only in the
// annotations; each is one replicatedJob of N pods running the script
// under bash.
func TestInput(t *testing.T) {
	for _, kind := range []string{kindFloor, kindCopy, kindImage} {
		s := newSpec(variant{kind: kind}, "sbf3-ab12", "ns", "img", 3, false)
		b, err := s.input()
		if err != nil {
			t.Fatal(err)
		}
		var js struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				ReplicatedJobs []struct {
					Replicas int `json:"replicas"`
					Template struct {
						Spec struct {
							Completions, Parallelism int
							Template                 struct {
								Spec struct {
									Containers []struct {
										Image   string   `json:"image"`
										Command []string `json:"command"`
									} `json:"containers"`
								} `json:"spec"`
							} `json:"template"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"replicatedJobs"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &js); err != nil {
			t.Fatal(err)
		}
		rj := js.Spec.ReplicatedJobs
		if len(rj) != 1 || rj[0].Replicas != 1 || rj[0].Template.Spec.Completions != 3 || rj[0].Template.Spec.Parallelism != 3 {
			t.Errorf("%s: shape %+v", kind, rj)
			continue
		}
		c := rj[0].Template.Spec.Template.Spec.Containers
		if len(c) != 1 || c[0].Image != "img" || strings.Join(c[0].Command[:2], " ") != "bash -c" || c[0].Command[2] != jobScript {
			t.Errorf("%s: container %+v", kind, c)
		}
		flux := kind != kindFloor
		if got := js.Metadata.Annotations["flux-framework.org/enabled"] == "true"; got != flux {
			t.Errorf("%s: annotations %v", kind, js.Metadata.Annotations)
		}
		if got, want := js.Metadata.Annotations["flux-framework.org/view-mount"], map[string]string{kindImage: "image"}[kind]; got != want {
			t.Errorf("%s: view-mount annotation %q, want %q", kind, got, want)
		}
	}
}

// TestScripts: every script prints the output line first; the failing one
// then exits 3; the warm-up's only sleeps.
func TestScripts(t *testing.T) {
	for _, c := range []struct {
		v    variant
		hold bool
		want string
	}{{variant{kind: kindCopy}, false, jobScript}, {variant{kind: kindCopy, fail: true}, false, failScript}, {variant{kind: kindImage}, true, holdScript}} {
		if got := newSpec(c.v, "n", "ns", "img", 3, c.hold).script; got != c.want {
			t.Errorf("%v hold=%v: script %q", c.v, c.hold, got)
		}
	}
	for _, s := range []string{jobScript, failScript} {
		if !strings.HasPrefix(s, printLine+"\n") {
			t.Errorf("%q does not start with the output line", s)
		}
	}
	if !strings.HasSuffix(failScript, "\nexit 3") {
		t.Errorf("failScript %q", failScript)
	}
}

// TestImageVolumeMounts: the image volumes are read from containerd's
// mountinfo, with their upper directories; other overlays (containers'
// root file systems) are not.
func TestImageVolumeMounts(t *testing.T) {
	info := `1001 990 0:91 / /var/lib/s/containerd/state/io.containerd.grpc.v1.cri/image-volumes/abc/def rw,relatime - overlay overlay rw,lowerdir=/r/snapshots/3/fs:/r/snapshots/2/fs,upperdir=/r/snapshots/9/fs,workdir=/r/snapshots/9/work,volatile
1002 990 0:92 / /run/containerd/io.containerd.runtime.v2.task/k8s.io/x/rootfs rw - overlay overlay rw,lowerdir=/r/snapshots/1/fs,upperdir=/r/snapshots/8/fs,workdir=/r/snapshots/8/work
1003 990 8:1 / /var/lib/kubelet rw - ext4 /dev/sda1 rw
`
	got := imageVolumeMounts(info)
	if len(got) != 1 || got[0].upper != "/r/snapshots/9/fs" || !strings.HasSuffix(got[0].target, "/image-volumes/abc/def") {
		t.Errorf("got %+v", got)
	}
}

// TestOrder: every repetition runs each kind once, and the first one
// rotates.
func TestOrder(t *testing.T) {
	kinds := timedKinds([]string{kindCopy, kindImage}, []string{kindOperator}, true)
	if strings.Join(kinds, ",") != "floor,flux-own,copy,image,operator" {
		t.Fatalf("kinds %v", kinds)
	}
	firsts := map[string]bool{}
	for rep := 1; rep <= len(kinds); rep++ {
		vs := order(kinds, rep)
		if len(vs) != len(kinds) {
			t.Fatalf("rep %d: %v", rep, vs)
		}
		firsts[vs[0].String()] = true
	}
	if len(firsts) != len(kinds) {
		t.Errorf("the first variant did not rotate over the repetitions: %v", firsts)
	}
	if _, err := parseKinds("view-mounts", "copy,volume", kindCopy, kindImage); err == nil {
		t.Error("parseKinds accepted volume")
	}
	if got, err := parseKinds("anchors", "", kindOperator, kindTrainer); err != nil || len(got) != 0 {
		t.Errorf("parseKinds of nothing: %v %v", got, err)
	}
}
