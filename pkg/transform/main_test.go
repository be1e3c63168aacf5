package transform_test

import (
	"flag"
	"os"
	"testing"
)

// fzMinimizeTime bounds how long the fuzzer minimizes one input, when
// -fuzzminimizetime is not given. Go's default is 60s, and it spends it on
// every input that finds new coverage, not only on failures: the engine
// first cuts the tail and removes single bytes (about one execution per
// byte), then tries removing every range of bytes, about n²/2 executions.
// FuzzProcess's inputs are whole ResourceLists (the example seeds are
// 0.9 to 2.3 KB), so that last pass needs millions of executions and the
// worker minimizes until the 60s run out, fuzzing nothing and reporting
// no executions meanwhile: the run showed 0 execs/sec after its first
// hundred executions (docs/contributing/fuzzing.md, "Minimization").
//
// 2s is enough for the linear passes on a 2 KB input at the 2,000 to
// 3,000 executions per second measured on the shared 2-core machine; a
// minimization that runs out keeps what it has removed so far. To minimize
// a failing input thoroughly, pass -fuzzminimizetime explicitly.
const fzMinimizeTime = "2s"

// TestMain sets fzMinimizeTime when fuzzing and -fuzzminimizetime was not
// given; the coordinator passes it to the workers with each input.
func TestMain(m *testing.M) {
	flag.Parse()
	fzMinimizeTimeGiven = fzFlagGiven("test.fuzzminimizetime")
	if fuzz := flag.Lookup("test.fuzz"); fuzz != nil && fuzz.Value.String() != "" && !fzMinimizeTimeGiven {
		if err := flag.Set("test.fuzzminimizetime", fzMinimizeTime); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// fzMinimizeTimeGiven records whether the command line set -fuzzminimizetime.
var fzMinimizeTimeGiven bool

// fzFlagGiven reports whether the command line set the flag.
func fzFlagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}

// TestFuzzMinimizeTime: the bound applies only when fuzzing and only when
// the command line does not set the flag; plain test runs keep Go's value.
func TestFuzzMinimizeTime(t *testing.T) {
	if fzMinimizeTimeGiven {
		t.Skip("-fuzzminimizetime given on the command line")
	}
	got := flag.Lookup("test.fuzzminimizetime").Value.String()
	want := "1m0s"
	if flag.Lookup("test.fuzz").Value.String() != "" {
		want = fzMinimizeTime
	}
	if got != want {
		t.Errorf("-fuzzminimizetime is %s, want %s", got, want)
	}
}
