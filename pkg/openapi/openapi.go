// Package openapi serves a service's OpenAPI 3.1 document and an interactive
// reference page: GET /openapi.json (the document, written in YAML next to each
// service's API and converted once at start) and GET /docs (Swagger UI, its
// assets embedded in the binary through github.com/swaggo/files/v2, so the page
// works offline). The contract tests in each service check real responses
// against the same document (pkg/openapi/openapitest).
package openapi

import (
	"fmt"
	"io/fs"
	"net/http"
	"path"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
	swaggerfiles "github.com/swaggo/files/v2"
)

// JSON converts a YAML OpenAPI document to JSON.
func JSON(doc []byte) ([]byte, error) {
	b, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return b, nil
}

// assets are the Swagger UI files the page loads.
var assets = map[string]string{
	"swagger-ui.css":       "text/css; charset=utf-8",
	"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
	"favicon-32x32.png":    "image/png",
}

// page loads Swagger UI from /docs/ and the document from /openapi.json.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({url: "/openapi.json", dom_id: "#ui", deepLinking: true, tryItOutEnabled: true});
</script>
</body>
</html>
`

// pageHeaders keep other sites from framing the page (clickjacking its "Try it
// out" forms, which send requests with the visitor's credentials) and browsers
// from guessing content types. The page's own inline script and Swagger UI's
// inline styles would need a script and style policy of their own, so the
// Content-Security-Policy only sets frame-ancestors.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// Mount adds GET /openapi.json, GET /docs and the page's assets to e. doc is the
// YAML document; an unreadable one is an error (the service should not start).
func Mount(e *gin.Engine, name string, doc []byte) error {
	js, err := JSON(doc)
	if err != nil {
		return err
	}
	e.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", js) })
	html := []byte(fmt.Sprintf(page, name))
	e.GET("/docs", func(c *gin.Context) {
		pageHeaders(c.Writer.Header())
		c.Data(http.StatusOK, "text/html; charset=utf-8", html)
	})
	for file, ctype := range assets {
		b, err := fs.ReadFile(swaggerfiles.FS, file)
		if err != nil {
			return fmt.Errorf("docs asset %s: %w", file, err)
		}
		e.GET(path.Join("/docs", file), func(c *gin.Context) {
			c.Header("Cache-Control", "public, max-age=86400")
			c.Data(http.StatusOK, ctype, b)
		})
	}
	return nil
}
