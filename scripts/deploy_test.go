package scripts_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// TestStackUpSaysWhatItInstalls runs deploy/local/stack.sh up with stand-in
// component scripts: it says before the installs what it installs and where the
// logs are, every KGS_STACK_HEARTBEAT seconds which installs still run, and each
// install that took a while when it ends (the first run's downloads take
// minutes, and the terminal used to stay silent through them); a failed install
// is reported with its log's last lines and fails the command.
func TestStackUpSaysWhatItInstalls(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not on PATH")
	}
	dir := t.TempDir()
	src, err := os.ReadFile("../deploy/local/stack.sh")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("stack.sh", string(src))
	write("mariadb.sh", `case $1 in install) exit 0 ;; start) echo "mariadb: started" ;; esac`)
	write("neo4j.sh", `case $1 in install) sleep 4 ;; start) echo "neo4j: started" ;; esac`)
	run := func(model string) (string, string, error) {
		write("model.sh", model)
		cmd := exec.Command("bash", filepath.Join(dir, "stack.sh"), "up")
		cmd.Env = append(os.Environ(), "KGS_STATE="+filepath.Join(dir, "state"), "KGS_STACK_HEARTBEAT=1")
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		err := cmd.Run()
		return out.String(), errs.String(), err
	}
	out, errs, err := run(`case $1 in install) echo fetching; sleep 1 ;; esac`)
	if err != nil {
		t.Fatalf("stack.sh up: %v\n%s%s", err, out, errs)
	}
	for _, want := range []string{
		"stack: installing what is missing of mariadb neo4j and the model (the first run downloads about 300 MB: a few minutes; logs in " + filepath.Join(dir, "state") + "/logs/install-*.log)\n",
		"stack: still installing neo4j (",
		"stack: neo4j installed (",
		"neo4j: started\n",
		"stack: up in ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stack.sh up said\n%s\nwant a line with %q", out, want)
		}
	}
	if strings.Contains(out, "mariadb installed") {
		t.Errorf("stack.sh up said an install that took no time: %s", out)
	}
	if i, j := strings.Index(out, "neo4j installed"), strings.Index(out, "mariadb: started"); i < 0 || j < i {
		t.Errorf("the servers started before the installs ended: %s", out)
	}

	out, errs, err = run(`case $1 in install) echo "no pip here"; exit 1 ;; esac`)
	if err == nil || !strings.Contains(errs, "stack: installing model failed; last lines of") || !strings.Contains(errs, "no pip here") ||
		strings.Contains(out, "started") {
		t.Errorf("a failed install: %v, stdout %q, stderr %q; want a failure with the log's lines and nothing started", err, out, errs)
	}
}

// TestMakeStatusShowsDocSites: make status lists the doc sites that run (make
// run's manual among them), as make down stops them; it showed only the stack
// and the services, so the manual's server at :8099 was nowhere.
func TestMakeStatusShowsDocSites(t *testing.T) {
	for _, tool := range []string{"bash", "make", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	state := t.TempDir()
	// A stand-in for the manual's static server: docsite.sh knows it by its pid
	// file and its command line (python3 -m http.server).
	srv := exec.Command("python3", "-m", "http.server", "--bind", "127.0.0.1", "0")
	srv.Dir = state
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	if err := os.MkdirAll(filepath.Join(state, "pydocs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "pydocs", "server.pid"), []byte(strconv.Itoa(srv.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "-s", "-C", "..", "status")
	cmd.Env = append(os.Environ(), "KGS_STATE="+state, "KGS_PYDOCS_PORT=38990")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make status: %v\n%s", err, out)
	}
	want := "pydocs: running (pid " + strconv.Itoa(srv.Process.Pid) + ") at http://127.0.0.1:38990/index.html\n"
	if !strings.Contains(string(out), want) || strings.Contains(string(out), "gitdocs") {
		t.Errorf("make status said\n%s\nwant the running manual (%q) and no line for the sites that do not run", out, want)
	}
}
