package embed

import (
	"os"
	"testing"

	"github.com/kgsearch/kgsearch/internal/testenv"
)

// modelPaths returns the installed model folder and ONNX Runtime library, or
// skips the test (fails it under KGS_INTEGRATION=1) when they are not set up.
func modelPaths(t testing.TB) (dir, lib string) {
	t.Helper()
	dir, lib = os.Getenv("KGS_EMBED_MODEL_DIR"), os.Getenv("KGS_ORT_LIB")
	if dir != "" && lib != "" {
		return dir, lib
	}
	const how = "KGS_EMBED_MODEL_DIR and KGS_ORT_LIB are not set: run deploy/local/model.sh install " +
		`and eval "$(deploy/local/model.sh env)" to test the real embedding model`
	if testenv.Required() {
		t.Fatal(how + " (required because KGS_INTEGRATION=1)")
	}
	t.Skip(how)
	return "", ""
}
