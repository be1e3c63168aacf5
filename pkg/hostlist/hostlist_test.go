package hostlist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/hostlist/hostlisttest"
)

// appendJobSet adds one replicatedJob the way the renderer does: whole
// ranges, one expression per job index unless every job has one pod.
func appendJobSet(l *List, jobset, rj string, replicas, completions int) {
	if completions == 1 {
		l.AppendRange(fmt.Sprintf("%s-%s-", jobset, rj), 0, replicas-1, "-0")
		return
	}
	for j := 0; j < replicas; j++ {
		l.AppendRange(fmt.Sprintf("%s-%s-%d-", jobset, rj, j), 0, completions-1, "")
	}
}

// naiveJobSet lists the pod hostnames one by one in rank order.
func naiveJobSet(jobset, rj string, replicas, completions int) []string {
	var hosts []string
	for j := 0; j < replicas; j++ {
		for p := 0; p < completions; p++ {
			hosts = append(hosts, fmt.Sprintf("%s-%s-%d-%d", jobset, rj, j, p))
		}
	}
	return hosts
}

// splitExprs splits at commas outside brackets, independently of the
// parser under test.
func splitExprs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func checkOneBracket(t *testing.T, s string) {
	t.Helper()
	for _, e := range splitExprs(s) {
		if strings.Count(e, "[") > 1 {
			t.Errorf("expression %q of %q has more than one bracket group", e, s)
		}
	}
}

func TestZeroList(t *testing.T) {
	var l List
	if s := l.String(); s != "" {
		t.Errorf("empty String() = %q, want \"\"", s)
	}
	if n := l.Len(); n != 0 {
		t.Errorf("empty Len() = %d, want 0", n)
	}
}

func TestAppendRangeMerging(t *testing.T) {
	for _, tc := range []struct {
		name   string
		build  func(l *List)
		want   string
		length int
	}{
		{"single host", func(l *List) { l.AppendRange("js-w-0-", 0, 0, "") }, "js-w-0-0", 1},
		{"contiguous merge", func(l *List) {
			l.AppendRange("js-w-0-", 0, 3, "")
			l.AppendRange("js-w-0-", 4, 6, "")
		}, "js-w-0-[0-6]", 7},
		{"single hosts merge into a range", func(l *List) {
			for i := 0; i < 4; i++ {
				l.AppendRange("n", i, i, "")
			}
		}, "n[0-3]", 4},
		{"gap stays in the same bracket", func(l *List) {
			l.AppendRange("js-w-", 0, 3, "")
			l.AppendRange("js-w-", 7, 9, "")
			l.AppendRange("js-w-", 11, 11, "")
		}, "js-w-[0-3,7-9,11]", 8},
		{"descending keeps written order", func(l *List) {
			l.AppendRange("n", 5, 6, "")
			l.AppendRange("n", 0, 1, "")
		}, "n[5-6,0-1]", 4},
		{"different suffix starts a new expression", func(l *List) {
			l.AppendRange("js-w-", 0, 1, "-0")
			l.AppendRange("js-w-", 2, 3, "-1")
		}, "js-w-[0-1]-0,js-w-[2-3]-1", 4},
		{"different prefix starts a new expression", func(l *List) {
			l.AppendRange("a", 0, 0, "")
			l.AppendRange("b", 1, 1, "")
			l.AppendRange("a", 1, 1, "")
		}, "a0,b1,a1", 3},
		{"large ids", func(l *List) { l.AppendRange("n", 999999, 1000001, "") }, "n[999999-1000001]", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l List
			tc.build(&l)
			if got := l.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := l.Len(); got != tc.length {
				t.Errorf("Len() = %d, want %d", got, tc.length)
			}
			hosts, err := hostlisttest.Expand(l.String(), 0)
			if err != nil {
				t.Fatalf("hostlisttest.Expand(String()): %v", err)
			}
			if len(hosts) != tc.length {
				t.Errorf("hostlisttest.Expand(String()) has %d hosts, Len() says %d", len(hosts), tc.length)
			}
		})
	}
}

func TestAppendRangePanics(t *testing.T) {
	for _, tc := range []struct {
		name           string
		prefix, suffix string
		lo, hi         int
	}{
		{"negative lo", "n", "", -1, 3},
		{"hi below lo", "n", "", 4, 3},
		{"bracket in prefix", "n[", "", 0, 1},
		{"bracket in suffix", "n", "]", 0, 1},
		{"comma in prefix", "a,n", "", 0, 1},
		{"comma in suffix", "n", ",b", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l List
			defer func() {
				if recover() == nil {
					t.Errorf("AppendRange(%q, %d, %d, %q) did not panic", tc.prefix, tc.lo, tc.hi, tc.suffix)
				}
				if l.Len() != 0 || l.String() != "" {
					t.Errorf("list changed by a rejected AppendRange: %q", l.String())
				}
			}()
			l.AppendRange(tc.prefix, tc.lo, tc.hi, tc.suffix)
		})
	}
}

func TestJobSetShapes(t *testing.T) {
	known := map[[2]int]string{
		{1, 4}: "js-w-0-[0-3]",
		{4, 1}: "js-w-[0-3]-0",
		{2, 2}: "js-w-0-[0-1],js-w-1-[0-1]",
		{1, 1}: "js-w-0-0",
		{2, 1}: "js-w-[0-1]-0",
		{3, 5}: "js-w-0-[0-4],js-w-1-[0-4],js-w-2-[0-4]",
	}
	for _, names := range [][2]string{{"js", "w"}, {"js1", "w2"}} {
		for r := 1; r <= 5; r++ {
			for c := 1; c <= 5; c++ {
				var l List
				appendJobSet(&l, names[0], names[1], r, c)
				s := l.String()
				if want, ok := known[[2]int{r, c}]; ok && names[0] == "js" && s != want {
					t.Errorf("R=%d C=%d: String() = %q, want %q", r, c, s, want)
				}
				want := naiveJobSet(names[0], names[1], r, c)
				if l.Len() != len(want) {
					t.Errorf("%s R=%d C=%d: Len() = %d, want %d", names, r, c, l.Len(), len(want))
				}
				got, err := hostlisttest.Expand(s, len(want))
				if err != nil {
					t.Errorf("%s R=%d C=%d: hostlisttest.Expand(%q): %v", names, r, c, s, err)
					continue
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s R=%d C=%d: hostlisttest.Expand(%q) = %q, want %q", names, r, c, s, got, want)
				}
				checkOneBracket(t, s)
			}
		}
	}
}

func TestSeveralReplicatedJobs(t *testing.T) {
	type rjob struct {
		name      string
		r, c      int
		wantExprs string
	}
	jobs := []rjob{
		{"l2", 1, 1, "js1-l2-0-0"},
		{"w2", 3, 4, "js1-w2-0-[0-3],js1-w2-1-[0-3],js1-w2-2-[0-3]"},
		{"p", 5, 1, "js1-p-[0-4]-0"},
		{"q10", 1, 12, "js1-q10-0-[0-11]"},
	}
	var l List
	var want []string
	var wantText []string
	for _, j := range jobs {
		appendJobSet(&l, "js1", j.name, j.r, j.c)
		want = append(want, naiveJobSet("js1", j.name, j.r, j.c)...)
		wantText = append(wantText, j.wantExprs)
	}
	if got := l.String(); got != strings.Join(wantText, ",") {
		t.Errorf("String() = %q, want %q", got, strings.Join(wantText, ","))
	}
	if l.Len() != len(want) {
		t.Errorf("Len() = %d, want %d", l.Len(), len(want))
	}
	got, err := hostlisttest.Expand(l.String(), 0)
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("hostlisttest.Expand(String()) = %q, want %q", got, want)
	}
	checkOneBracket(t, l.String())
}

func TestAppendRangeMemoryIndependentOfHosts(t *testing.T) {
	// A million-pod replicatedJob with one pod per job is one range: the
	// allocations must be the same as for a two-host range.
	build := func(hi int, want string) float64 {
		return testing.AllocsPerRun(10, func() {
			var l List
			l.AppendRange("js-w-", 0, hi, "-0")
			if l.Len() != hi+1 {
				t.Fatalf("Len() = %d, want %d", l.Len(), hi+1)
			}
			if s := l.String(); s != want {
				t.Fatalf("String() = %q, want %q", s, want)
			}
		})
	}
	small := build(1, "js-w-[0-1]-0")
	large := build(999999, "js-w-[0-999999]-0")
	if large != small {
		t.Errorf("1,000,000-host range took %.0f allocations, 2-host range %.0f; want equal", large, small)
	}
}

// fuzzName maps a byte to a short name from a safe hostname alphabet,
// including digits so that ids next to digits are exercised.
func fuzzName(b byte) string {
	const safe = "ab9-.0z"
	n := int(b % 4)
	out := make([]byte, n)
	for i := range out {
		b /= 4
		out[i] = safe[(int(b)+i)%len(safe)]
	}
	return string(out)
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0, 0, 4, 2})
	f.Add([]byte{1, 2, 0, 0, 1, 2, 7, 0, 5, 5, 0, 9})
	f.Add([]byte{0xff, 0x13, 200, 15, 0xff, 0x13, 100, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 4*64 {
			ops = ops[:4*64]
		}
		var l List
		var want []string
		for i := 0; i+4 <= len(ops); i += 4 {
			prefix, suffix := fuzzName(ops[i]), fuzzName(ops[i+1])
			lo := int(ops[i+2])
			hi := lo + int(ops[i+3]%16)
			l.AppendRange(prefix, lo, hi, suffix)
			for id := lo; id <= hi; id++ {
				want = append(want, prefix+strconv.Itoa(id)+suffix)
			}
		}
		s := l.String()
		if l.Len() != len(want) {
			t.Fatalf("Len() = %d, want %d", l.Len(), len(want))
		}
		checkOneBracket(t, s)
		got, err := hostlisttest.Expand(s, len(want))
		if err != nil {
			t.Fatalf("hostlisttest.Expand(%q): %v", s, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("hostlisttest.Expand(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkString10000(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var l List
		appendJobSet(&l, "js", "w", 100, 100)
		if s := l.String(); len(s) == 0 {
			b.Fatal("empty")
		}
	}
}

func BenchmarkAppendRange1M(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var l List
		for j := 0; j < 1000; j++ {
			l.AppendRange("js-w-"+strconv.Itoa(j)+"-", 0, 999, "")
		}
		if l.Len() != 1000000 {
			b.Fatalf("Len() = %d", l.Len())
		}
	}
}
