package jobsetrender

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// keyNode returns the key node of key in the map m, nil when it has none.
func keyNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

// takeComments removes the comments under n and returns those the
// function did not write itself (the octal mode after a defaultMode).
func takeComments(n *yaml.Node) []string {
	var out []string
	for _, c := range []*string{&n.HeadComment, &n.LineComment, &n.FootComment} {
		if *c != "" && !(c == &n.LineComment && isModeComment(*c)) {
			out = append(out, *c)
		}
		*c = ""
	}
	for _, child := range n.Content {
		out = append(out, takeComments(child)...)
	}
	return out
}

// addFootComments appends comments to n's foot comment.
func addFootComments(n *yaml.Node, comments []string) {
	if n == nil || len(comments) == 0 {
		return
	}
	if n.FootComment != "" {
		comments = append([]string{n.FootComment}, comments...)
	}
	n.FootComment = strings.Join(comments, "\n")
}

// removeKey removes key from the map m, keeping the user's comments on
// the pair: after the pair before it, or before the pair after it.
func removeKey(m *yaml.Node, key string) {
	i := slices.IndexFunc(m.Content, func(k *yaml.Node) bool { return k.Value == key })
	if i < 0 || i%2 != 0 || i+1 >= len(m.Content) {
		return
	}
	comments := append(takeComments(m.Content[i]), takeComments(m.Content[i+1])...)
	m.Content = append(m.Content[:i], m.Content[i+2:]...)
	switch {
	case len(comments) == 0:
	case i >= 2:
		addFootComments(m.Content[i-2], comments)
	case i < len(m.Content):
		k := m.Content[i]
		k.HeadComment = strings.Join(append(comments, k.HeadComment), "\n")
		k.HeadComment = strings.TrimSuffix(k.HeadComment, "\n")
	default:
		addFootComments(m, comments)
	}
}
