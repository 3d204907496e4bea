package scripts_test

import (
	"bytes"
	"os/exec"
	"testing"
)

// TestFindServerChildQuiet: neo4j.sh's find_server_child reads the command line
// of each child of the launcher; a child that exits meanwhile (pgrep still
// listed it) is skipped without a word. The failed redirection used to print
// "/proc/N/cmdline: No such file or directory" in the middle of make run.
func TestFindServerChildQuiet(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not on PATH")
	}
	// The function alone, with pgrep answering a child that no longer exists.
	script := `eval "$(sed -n '/^find_server_child() {/,/^}/p' ../deploy/local/neo4j.sh)"
pgrep() { echo 2147483646; }
if find_server_child 1; then echo found; else echo none; fi`
	cmd := exec.Command("bash", "-c", script)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v (%s)", err, errs.String())
	}
	if out.String() != "none\n" || errs.Len() != 0 {
		t.Errorf("find_server_child with a vanished child: stdout %q, stderr %q; want none and nothing on stderr", out.String(), errs.String())
	}
}
