package workflowfile

import "go.yaml.in/yaml/v3"

// id decodes the id of a workflow file or a job document: a string, not
// empty. An empty id is refused, never read as "generate one" (leaving the
// field out is how a file asks for a generated ID; spec/rest.md).
func (d *fileDecoder) id(w where, n *yaml.Node) (string, error) {
	s, err := d.str(w, n)
	if err == nil && s == "" {
		return "", d.fail(w, n, "an empty ID: give one, or leave the field out for a generated one")
	}
	return s, err
}

// optStr decodes an optional string field: a string, not empty. An empty
// string is refused, never read as the field left out (which is how a
// file asks for the default), as the OpenAPI document's patterns refuse
// it too.
func (d *fileDecoder) optStr(w where, n *yaml.Node) (string, error) {
	s, err := d.str(w, n)
	if err == nil && s == "" {
		return "", d.fail(w, n, "an empty value: leave the field out for the default")
	}
	return s, err
}
