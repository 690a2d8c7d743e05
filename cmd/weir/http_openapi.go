package main

import _ "embed"

// spec/openapi.yaml is the one source of the API's OpenAPI document. go:embed
// cannot reach outside this package's directory, so openapi.yaml here is a
// copy made by `go generate`; TestOpenAPICopyIsCurrent fails when the two
// differ.
//
//go:generate cp ../../spec/openapi.yaml openapi.yaml

// openAPIDoc is the OpenAPI 3 document served at /v1/openapi.yaml.
//
//go:embed openapi.yaml
var openAPIDoc []byte
