package fluxfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// The entrypoint's start deadline, its joined mark and the setup script's
// own shell, run in the sandbox with the stub flux (testdata/flux); test/flux
// TestStartTimeout shows the deadline on real brokers.

// TestSandboxStartTimeout: a broker whose instance never forms is stopped
// once start-timeout passes, the pod exits 124 and the log says which
// ranks never joined and what DNS says of them, on rank 0 and on a
// follower; the joined mark is never made.
func TestSandboxStartTimeout(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 3, "js-w-0-[0-2]"}}, func(p *plan.Plan) { p.Settings.StartTimeout = 2 })
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	for _, c := range []struct {
		name string
		env  []string
		want []string
	}{
		{"rank 0 waits for quorum", []string{"STUB_RANK=0", "STUB_STATE=quorum", "STUB_OVERLAY=0 js-w-0-0: partial\n1 js-w-0-1: offline\n2 js-w-0-2: lost"},
			[]string{"did not form within start-timeout (2s)", "rank 0 is in state quorum", "rank 1 (js-w-0-1): js-w-0-1.js does not resolve: its pod was never scheduled", "rank 2 (js-w-0-2): js-w-0-2.js does not resolve"}},
		{"a follower never reaches rank 0", []string{"STUB_RANK=2", "STUB_STATE=join", "STUB_PARENT=tcp://js-w-0-0.js:8050"},
			[]string{"this broker (rank 2, ", "never reached its parent: js-w-0-0.js does not resolve"}},
		{"a follower joined, rank 0 waits", []string{"STUB_RANK=1", "STUB_STATE=quorum"},
			[]string{"this broker (rank 1, ", "joined, but rank 0 still waits for other ranks"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			begin := time.Now()
			r := pd.runAs("app", nil, append([]string{"STUB_HANG=1", "STUB_EXIT=0"}, c.env...), "true")
			took := time.Since(begin)
			if r.code != 124 {
				t.Errorf("exit code %d, want 124:\n%s", r.code, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("the log lacks %q:\n%s", w, r.stderr)
				}
			}
			// 2 s of deadline; the stub stops at once on SIGTERM.
			if took > 15*time.Second {
				t.Errorf("took %v to give up after a 2 s deadline", took)
			}
			if _, err := os.Stat(filepath.Join(pd.install, "run/joined")); err == nil {
				t.Errorf("a broker that never joined made the joined mark")
			}
		})
	}
}

// TestSandboxTerminationMessagePath: the reason for giving up goes to
// the file the wrapped container names as its terminationMessagePath,
// the only one the kubelet reads, on the pods of its group; a group
// whose name starts like it keeps the default file.
func TestSandboxTerminationMessagePath(t *testing.T) {
	requireSandbox(t)
	// The kubelet creates the file before the container starts.
	const message = plan.InstallDir + "/termination-message"
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}, {"w-1", 1, 1, "js-w-1-0-0"}}, func(p *plan.Plan) {
		p.Settings.StartTimeout = 1
		p.Groups[0].TerminationLog = message
	})
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	for _, c := range []struct {
		hostname string
		written  bool
	}{{"js-w-0-1", true}, {"js-w-1-0-0", false}} {
		t.Run(c.hostname, func(t *testing.T) {
			file := filepath.Join(pd.install, filepath.Base(message))
			writeFile(t, file, "", 0o666)
			r := pd.runAs("app", nil, []string{"HOSTNAME=" + c.hostname, "STUB_HANG=1", "STUB_EXIT=0", "STUB_RANK=1", "STUB_STATE=quorum"}, "true")
			if r.code != 124 {
				t.Fatalf("exit code %d, want 124:\n%s", r.code, r.stderr)
			}
			text := string(readFile(t, file))
			if got := strings.Contains(text, "did not form within start-timeout (1s)"); got != c.written {
				t.Errorf("the termination message file holds %q; want the reason written: %v", text, c.written)
			}
		})
	}
}

// TestSandboxNoStartTimeout: start-timeout 0 waits as long as it takes;
// the kubelet's SIGTERM reaches the broker, and the pod exits with the
// broker's status.
func TestSandboxNoStartTimeout(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.StartTimeout = 0 })
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 4 * time.Second
	begin := time.Now()
	r := pd.runAs("app", nil, []string{"STUB_HANG=1", "STUB_RANK=0", "STUB_EXIT=0", "STUB_STATE=quorum"}, "true")
	if took := time.Since(begin); took < pd.term {
		t.Errorf("ended after %v, before the SIGTERM at %v:\n%s", took, pd.term, r.stderr)
	}
	if r.code != 0 || strings.Contains(r.stderr, "did not form") {
		t.Errorf("exit code %d, want the broker's 0 after SIGTERM, without giving up:\n%s", r.code, r.stderr)
	}
}

// TestSandboxJoined: once the broker reports state run the entrypoint
// makes the joined mark, which the startup probe waits for.
func TestSandboxJoined(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 3 * time.Second
	r := pd.runAs("app", nil, []string{"STUB_HANG=1", "STUB_RANK=1", "STUB_EXIT=0", "STUB_STATE=run"}, "true")
	if r.code != 0 {
		t.Errorf("exit code %d:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(pd.install, "run/joined")); err != nil {
		t.Errorf("no joined mark after the broker reached run: %v\n%s", err, r.stderr)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "joined the instance")
}

// TestSandboxPathWithoutBin: an image PATH without /bin (the entrypoint
// calls rm, mkdir, cp, chmod and readlink) still starts Flux, and the
// broker gets the image's PATH first, the standard directories after it
// (Flux's own scripts run tools by name).
func TestSandboxPathWithoutBin(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	r := pd.runAs("app", nil, append(rankEnv(0, 0), "SB_PATH=/opt/app/bin"), "true")
	if r.code != 0 || r.run == nil {
		t.Fatalf("exit code %d, flux run ran: %v:\n%s", r.code, r.run != nil, r.stderr)
	}
	if got, want := r.start.env["PATH"], "/opt/app/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"; got != want {
		t.Errorf("flux start saw PATH=%q, want %q", got, want)
	}
}

// TestSandboxSetupShell: the setup script runs in a shell of its own: an
// exit 0 or return in it ends the script, not the pod, and the command
// still runs with what it exported, its directory, umask and limits; an
// exit N, a failing last command or an exec stop the pod with an error
// before Flux starts.
func TestSandboxSetupShell(t *testing.T) {
	requireSandbox(t)
	const carried = "export SETUP_A=1 SETUP_B='two words $HOME'\nunset SETUP_GONE\ncd /tmp\numask 027\nulimit -S -n 100\nset -- x\nshift\n"
	for _, c := range []struct {
		name, script string
		code         int
		want         string
	}{
		{"exit 0", carried + "exit 0\necho never\nexport SETUP_A=late\n", 0, ""},
		{"return", carried + "return\nexport SETUP_A=late\n", 0, ""},
		{"runs to its end", carried + "true\n", 0, ""},
		{"exit 3", "export SETUP_A=1\nexit 3\n", 1, "failed with exit code 3"},
		{"last command fails", "false\n", 1, "failed with exit code 1"},
		{"exec", "exec true\n", 1, "ended its shell without returning"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.Setup = c.script })
			pd := newPod(t, p, 0o444, 0)
			pd.installView()
			r := pd.runAs("app", nil, append(rankEnv(0, 0), "SETUP_GONE=x"), "true")
			if r.code != c.code {
				t.Fatalf("exit code %d, want %d:\n%s", r.code, c.code, r.stderr)
			}
			if c.code != 0 {
				if r.start != nil {
					t.Errorf("flux started after the setup script failed")
				}
				checkLog(t, r.stderr, "jobset-flux: ", "error: the setup script /mnt/flux/config/setup.sh "+c.want)
				return
			}
			if r.run == nil {
				t.Fatalf("the command never ran:\n%s", r.stderr)
			}
			want := map[string]string{"SETUP_A": "1", "SETUP_B": "two words $HOME", "PWD": "/tmp", "UMASK": "0027", "NOFILE": "100"}
			for k, v := range want {
				if got := r.run.env[k]; got != v {
					t.Errorf("the command's job saw %s=%q, want %q", k, got, v)
				}
			}
			if _, ok := r.run.env["SETUP_GONE"]; ok {
				t.Errorf("SETUP_GONE, unset by the setup script, reached the job")
			}
			if got := readFile(t, filepath.Join(pd.install, "setup.state")); len(got) != 0 {
				t.Errorf("the setup state (the script's environment) was left behind: %d bytes", len(got))
			}
		})
	}
}

// TestSandboxHungRankCutOff: rank 0 reads the resource journal once the
// instance has formed; for each rank of a torpid event that is torpid
// still, it raises an exception naming the rank on the jobs running
// there, then disconnects it. A rank torpid once and lively again since
// is left alone, as are the events of other names.
func TestSandboxHungRankCutOff(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 4, "js-w-0-[0-3]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 4 * time.Second
	events := strings.Join([]string{
		`{"timestamp": 1.0, "name": "online", "context": {"idset": "0-3"}}`,
		`{"timestamp": 2.0, "name": "torpid", "context": {"idset": "1"}}`,
		`{"timestamp": 3.0, "name": "lively", "context": {"idset": "1"}}`,
		`{"timestamp": 4.0, "name": "torpid", "context": {"idset": "2-3"}}`,
	}, "\n") + "\n"
	env := []string{"STUB_HANG=1", "STUB_RANK=0", "STUB_EXIT=0", "STUB_STATE=run",
		"STUB_EVENTS=" + events, "STUB_TORPID=2-3", "STUB_JOBS=f2XyZ\n"}
	r := pd.runAs("app", nil, env, "true")
	var got []string
	for _, c := range r.cutOff {
		got = append(got, strings.Join(c.argv, " "))
	}
	slices.Sort(got)
	why := func(rank int) string {
		return fmt.Sprintf("rank %d (host-%d) hung: its broker sent nothing for tbon.torpid_max; jobset-flux cut it off the instance", rank, rank)
	}
	want := []string{
		"job raise --type=hang f2XyZ -- " + why(2),
		"job raise --type=hang f2XyZ -- " + why(3),
		"overlay disconnect 2",
		"overlay disconnect 3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rank 0 cut off\n%q\nwant\n%q\n%s", got, want, r.stderr)
	}
	checkLog(t, r.stderr, "jobset-flux: ", why(2))
}

// TestSandboxFollowerWatchesNoHangs: only rank 0 reads the journal; a
// follower given the same torpid event cuts nothing off. Its watch on
// rank 0 reads Flux's defaults (tbon.torpid_max and heartbeat.period
// unset) without a shell error.
func TestSandboxFollowerWatchesNoHangs(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 4, "js-w-0-[0-3]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 3 * time.Second
	env := []string{"STUB_HANG=1", "STUB_RANK=1", "STUB_EXIT=0", "STUB_STATE=run",
		`STUB_EVENTS={"timestamp": 4.0, "name": "torpid", "context": {"idset": "2"}}` + "\n", "STUB_TORPID=2", "STUB_JOBS=f2XyZ\n"}
	r := pd.runAs("app", nil, env, "true")
	if len(r.cutOff) != 0 {
		t.Errorf("a follower cut ranks off: %d calls\n%s", len(r.cutOff), r.stderr)
	}
	if strings.Contains(r.stderr, plan.EntrypointPath+": line") {
		t.Errorf("the entrypoint's shell reported an error:\n%s", r.stderr)
	}
}

// TestSandboxCutOffFailsSuccess: when rank 0 cut off a hung rank, whose
// pod cannot end, a command that succeeded still fails the pod (exit 122,
// naming the rank, in the log and the termination message), and a failed
// command keeps its exit code.
func TestSandboxCutOffFailsSuccess(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 4, "js-w-0-[0-3]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 4 * time.Second
	events := `{"timestamp": 4.0, "name": "torpid", "context": {"idset": "3"}}` + "\n"
	for _, c := range []struct{ broker, want int }{{0, 122}, {3, 3}} {
		t.Run(fmt.Sprintf("broker exit %d", c.broker), func(t *testing.T) {
			env := []string{"STUB_HANG=1", fmt.Sprintf("STUB_HANG_EXIT=%d", c.broker), "STUB_RANK=0", "STUB_EXIT=0",
				"STUB_STATE=run", "STUB_EVENTS=" + events, "STUB_TORPID=3"}
			r := pd.runAs("app", nil, env, "true")
			if r.code != c.want {
				t.Errorf("exit code %d, want %d:\n%s", r.code, c.want, r.stderr)
			}
			checkLog(t, r.stderr, "jobset-flux: ", "rank 0 cut off hung ranks, whose pods cannot end by themselves: 3 (host-3)")
		})
	}
}

// TestSandboxLeaderHung: a follower that hears no heartbeat from rank 0
// for tbon.torpid_max and two heartbeat periods stops its broker and
// exits 122 naming rank 0; one whose heartbeat stream ends (its broker
// went, as at every instance's end) exits with its broker's status.
func TestSandboxLeaderHung(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 8 * time.Second
	begin := time.Now()
	r := pd.runAs("app", nil, []string{"STUB_HANG=1", "STUB_RANK=1", "STUB_EXIT=0", "STUB_STATE=run",
		"STUB_NO_PULSE=1", "STUB_TORPID_MAX=1", "STUB_PERIOD=0"}, "true")
	if r.code != 122 {
		t.Errorf("exit code %d, want 122:\n%s", r.code, r.stderr)
	}
	if took := time.Since(begin); took >= pd.term {
		t.Errorf("ended after %v, at the SIGTERM, not after the 1 s without a heartbeat:\n%s", took, r.stderr)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "error: rank 0 (host-0) hung, or this broker is cut off from it: no heartbeat for 1s (tbon.torpid_max and two heartbeat periods): stopping this broker")

	pd.term = 3 * time.Second
	r = pd.runAs("app", nil, []string{"STUB_HANG=1", "STUB_RANK=1", "STUB_EXIT=0", "STUB_STATE=run", "STUB_TORPID_MAX=1", "STUB_PERIOD=0"}, "true")
	if r.code != 0 || strings.Contains(r.stderr, "hung") {
		t.Errorf("with the heartbeat stream ended: exit code %d, want the broker's 0:\n%s", r.code, r.stderr)
	}
}

// TestSandboxLeaderHungBeforeFirstPulse: rank 0 hangs once the instance
// has formed but before the follower's watch has heard a single pulse.
// With Flux's Python bindings the watch is timed from the local broker's
// run state, so the follower still exits 122; without them it falls back
// to waiting for a first pulse, and ends only when stopped.
func TestSandboxLeaderHungBeforeFirstPulse(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	pd.term = 8 * time.Second
	env := []string{"STUB_HANG=1", "STUB_RANK=1", "STUB_EXIT=0", "STUB_STATE=run", "STUB_NO_PULSE=none", "STUB_TORPID_MAX=1", "STUB_PERIOD=0"}
	begin := time.Now()
	r := pd.runAs("app", nil, env, "true")
	if r.code != 122 || time.Since(begin) >= pd.term {
		t.Errorf("exit code %d after %v, want 122 before the SIGTERM at %v:\n%s", r.code, time.Since(begin), pd.term, r.stderr)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "error: rank 0 (host-0) hung, or this broker is cut off from it: no heartbeat for 1s (tbon.torpid_max and two heartbeat periods): stopping this broker")

	pd.term = 3 * time.Second
	r = pd.runAs("app", nil, append(env, "STUB_NO_PYTHON=1"), "true")
	if r.code == 122 || strings.Contains(r.stderr, "hung") {
		t.Errorf("without the bindings and without a first pulse: exit code %d, want no hang found:\n%s", r.code, r.stderr)
	}
}
