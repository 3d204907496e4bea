package api

import _ "embed"

// OpenAPI is the kg service's OpenAPI 3.1 document (YAML); pkg/openapi serves it
// as /openapi.json with the /docs page, and the contract test checks real answers
// against it.
//
//go:embed openapi.yaml
var OpenAPI []byte
