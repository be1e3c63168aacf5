package itemscan

import (
	"errors"
	"strings"
	"testing"
)

const head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

// TestScanSplits: the shapes kustomize, kpt and Argo CD write (kyaml's
// compact sequence in column 0, or indented), with the functionConfig
// and results before or after the items, blank lines, and a last line
// without a newline: each item's range is its text, and Rest is the list
// without the items.
func TestScanSplits(t *testing.T) {
	a := "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    s: |\n      line\n\n      - not an item\n"
	commented := "- # a package file's first line\n  apiVersion: v1\n  kind: Pod\n"
	b := "- apiVersion: v1\n  kind: ConfigMap # a comment on a line is fine\n  metadata: {name: b}\n"
	indented := "  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: p\n    spec:\n    - x\n"
	config := "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  # inside the config\n  data: {a: b}\n"
	cases := []struct {
		name, in, rest string
		items          []string
		col            int
	}{
		{"compact", head + "items:\n" + a + b, head, []string{a, b}, 0},
		{"head comment after the dash", head + "items:\n" + commented + b + commented, head, []string{commented, b, commented}, 0},
		{"config after", head + "items:\n" + a + b + config, head + config, []string{a, b}, 0},
		{"config before", head + config + "items:\n" + a + b + "results:\n- message: x\n", head + config + "results:\n- message: x\n", []string{a, b}, 0},
		{"indented", head + "items:\n" + indented + indented, head, []string{indented, indented}, 2},
		{"blank lines", head + "items:\n\n" + a + "\n" + b + "\n", head, []string{"\n" + a + "\n", b + "\n"}, 0},
		{"comments: head comments above an entry", head + "items:\n# first\n  # more\n" + a + "# after a\n" + b + "  # end\n# end\nfunctionConfig: {}\n", head + "functionConfig: {}\n", []string{"# first\n  # more\n" + a, "# after a\n" + b + "  # end\n# end\n"}, 0},
		{"no final newline", head + "items:\n" + a + strings.TrimSuffix(b, "\n"), head, []string{a, strings.TrimSuffix(b, "\n")}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Scan([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(s.Rest) != c.rest {
				t.Errorf("rest %q, want %q", s.Rest, c.rest)
			}
			if s.Column != c.col || len(s.Items) != len(c.items) {
				t.Fatalf("column %d, %d items; want %d, %d", s.Column, len(s.Items), c.col, len(c.items))
			}
			for i, r := range s.Items {
				if got := c.in[r.Start:r.End]; got != c.items[i] {
					t.Errorf("item %d: %q, want %q", i, got, c.items[i])
				}
			}
		})
	}
}

// TestScanKeys: Keys are the top-level keys of Rest in order.
func TestScanKeys(t *testing.T) {
	s, err := Scan([]byte(head + "items:\n- a: 1\nfunctionConfig:\n  b: 2\nresults: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Keys, ","); got != "apiVersion,kind,functionConfig,results" {
		t.Fatalf("keys %s", got)
	}
}

// TestScanRefuses: every shape whose split is not proven to read as the
// whole list is refused with ErrUnsafe and a reason.
func TestScanRefuses(t *testing.T) {
	item := "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
	cases := map[string]string{
		"carriage return":             strings.ReplaceAll(head+"items:\n"+item, "\n", "\r\n"),
		"JSON":                        `{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}`,
		"flow items":                  head + "items: [{a: b}]\n",
		"empty flow items":            head + "items: []\n",
		"no items":                    head + "functionConfig: {a: b}\n",
		"items null":                  head + "items:\nfunctionConfig: {}\n",
		"directive":                   "%YAML 1.2\n---\n" + head + "items:\n" + item,
		"document marker":             "---\n" + head + "items:\n" + item,
		"second document":             head + "items:\n" + item + "---\n" + head,
		"document end":                head + "items:\n" + item + "...\n",
		"comment at the top":          "# a list\n" + head + "items:\n" + item,
		"comment before items":        head + "functionConfig:\n  a: b\n  # before\nitems:\n" + item,
		"comment on the items line":   head + "items: # c\n" + item,
		"tab at a line start":         head + "items:\n" + item + "\tkind: x\n",
		"tab indent in items":         head + "items:\n-\ta: b\n",
		"left of the column":          head + "items:\n    - a: 1\n  b: 2\n",
		"entry left of the column":    head + "items:\n    - a: 1\n  - b: 2\n",
		"odd entry spacing":           head + "items:\n-   a: 1\n",
		"empty entry":                 head + "items:\n-\n  a: 1\n",
		"nested sequence entry":       head + "items:\n- - a\n",
		"duplicate top key":           head + "items:\n" + item + "kind: ResourceList\n",
		"duplicate items":             head + "items:\n" + item + "items:\n" + item,
		"quoted top key":              `"apiVersion": v1` + "\nkind: ResourceList\nitems:\n" + item,
		"complex key":                 head + "? items\n: - a\n",
		"anchor on items":             head + "items: &i\n" + item,
		"key without space":           head + "kind:x\nitems:\n" + item,
		"line that is no key at top":  head + "items:\n" + item + "continued\n",
		"byte order mark":             "\ufeff" + head + "items:\n" + item,
		"sequence at the top":         "- a\n",
		"entry line is not a map key": head + "items:\n" + item + "- a\nb\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Scan([]byte(in))
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("split into %+v, want ErrUnsafe", s)
			}
		})
	}
}

// FuzzScan: Scan never panics, and what it splits is the input: Rest
// and the items' text, put back in place, are the input.
func FuzzScan(f *testing.F) {
	f.Add([]byte(head + "items:\n- a: 1\n- b: |\n    x\nfunctionConfig:\n  c: d\n"))
	f.Add([]byte(head + "items:\n  - a: 1\n\n  - b: 2\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Scan(in)
		if err != nil {
			return
		}
		first, last := s.Items[0].Start, s.Items[len(s.Items)-1].End
		var text []byte
		for i, r := range s.Items {
			if r.Start >= r.End || i > 0 && r.Start != s.Items[i-1].End {
				t.Fatalf("ranges %+v", s.Items)
			}
			text = append(text, in[r.Start:r.End]...)
		}
		if string(text) != string(in[first:last]) {
			t.Fatal("the items are not the input's text")
		}
		itemsLine := strings.LastIndexByte(string(in[:first-1]), '\n') + 1
		if !strings.HasPrefix(string(in[itemsLine:]), "items:") || string(s.Rest) != string(in[:itemsLine])+string(in[last:]) || string(s.Tail) != string(in[last:]) {
			t.Fatalf("rest %q is not the input without its items", s.Rest)
		}
	})
}
