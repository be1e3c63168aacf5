// Command checklinks fails when a relative link in the repository's
// Markdown does not resolve: the file or directory it names must exist,
// and a #fragment must be a heading of the Markdown file it points into.
// Moving a page under docs/ then cannot leave a link behind unseen.
//
//	go run ./hack/checklinks [ROOT]
//
// It checks every tracked-looking *.md under ROOT (default "."), skipping
// .git, bin and _out. Links to other schemes (https:, mailto:) are not
// followed.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	broken, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "checklinks:", err)
		os.Exit(2)
	}
	for _, b := range broken {
		fmt.Fprintln(os.Stderr, b)
	}
	if len(broken) > 0 {
		fmt.Fprintf(os.Stderr, "checklinks: %d broken relative links in Markdown\n", len(broken))
		os.Exit(1)
	}
}

// check returns one line per broken link under root, "file:line: link: why",
// in file order.
func check(root string) ([]string, error) {
	files, err := markdownFiles(root)
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{}
	var broken []string
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		for _, l := range links(string(text)) {
			if why := resolve(file, l.target, anchors); why != "" {
				rel, _ := filepath.Rel(root, file)
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", rel, l.line, l.target, why))
			}
		}
	}
	return broken, nil
}

// markdownFiles lists every *.md under root but in directories that hold
// tools, build output or git's own files.
func markdownFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "_out") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

type link struct {
	target string
	line   int
}

var (
	// inline is [text](target) or [text](target "title"); reference is a
	// "[label]: target" definition line.
	inline    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reference = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	scheme    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	fence     = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// links returns the relative link targets of a Markdown text with their
// line numbers, leaving out fenced code blocks and inline code, where
// brackets are not links.
func links(text string) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = stripCode(line)
		var targets []string
		for _, m := range inline.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := reference.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			t = strings.TrimSuffix(strings.TrimPrefix(t, "<"), ">")
			if !scheme.MatchString(t) {
				out = append(out, link{target: t, line: i + 1})
			}
		}
	}
	return out
}

// stripCode removes `inline code` spans from a line.
func stripCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// resolve says why target, linked from file, does not resolve, or "".
func resolve(file, target string, anchors map[string]map[string]bool) string {
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "an absolute path: link relative to the file"
		}
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		info, err := os.Stat(dest)
		if err != nil {
			return "no such file or directory"
		}
		if info.IsDir() || frag == "" {
			return ""
		}
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	known, ok := anchors[dest]
	if !ok {
		text, err := os.ReadFile(dest)
		if err != nil {
			return "cannot read the target: " + err.Error()
		}
		known = headingAnchors(string(text))
		anchors[dest] = known
	}
	if !known[frag] {
		return "no heading with the anchor #" + frag
	}
	return ""
}

var heading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// headingAnchors returns the anchors GitHub gives a Markdown text's
// headings: lower case, punctuation but - and _ dropped, spaces as -, a
// repeated one suffixed -1, -2, ...
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		m := heading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		slug := slugify(m[1])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func slugify(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
