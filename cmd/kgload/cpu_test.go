package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	line := "4262 (java (neo4j) x) S 4224 4224 4224 0 -1 1077936384 91 0 0 0 1234 567 0 0 20 0 80 0 123 456 789\n"
	got, err := parseStat(line)
	if err != nil || got != 1234+567 {
		t.Fatalf("parseStat: got %d, %v; want 1801", got, err)
	}
	if _, err := parseStat("4262 (x) S 1 2"); err == nil {
		t.Errorf("parseStat of a short line: no error")
	}
}

func TestParseMachine(t *testing.T) {
	busy, total, err := parseMachine("cpu  100 5 50 1000 20 3 2 1 7 0\ncpu0 1 2 3 4\n")
	if err != nil || busy != 100+5+50+3+2+1 || total != 100+5+50+1000+20+3+2+1 {
		t.Fatalf("parseMachine: got busy %d total %d, %v", busy, total, err)
	}
}

func TestParseProcsAndCost(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, "kg.pid")
	if err := os.WriteFile(pf, []byte("4321\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	procs, skipped, err := parseProcs("search=1234,kg=" + pf + ",neo4j=" + filepath.Join(dir, "none.pid"))
	if err != nil {
		t.Fatalf("parseProcs: %v", err)
	}
	if len(procs) != 2 || procs[0].PID != 1234 || procs[1].PID != 4321 || len(skipped) != 1 {
		t.Fatalf("parseProcs: got %+v, skipped %v", procs, skipped)
	}
	for _, bad := range []string{"search", "=12", "kg=0", "kg=" + dir} {
		if _, _, err := parseProcs(bad); err == nil {
			t.Errorf("parseProcs(%q): no error", bad)
		}
	}
	before := cpuSample{procs: map[string]int64{"search": 100, "kg": 50}, machine: 1000, ok: true}
	after := cpuSample{procs: map[string]int64{"search": 300, "kg": 60}, machine: 1400, ok: true}
	c := cpuCost(procs, before, after, 100, 2)
	// search: 200 ticks = 2000 ms over 100 queries = 20 ms/query, 1 core over 2 s.
	want := map[string]float64{"search": 20, "kg": 1, "other": 19, "machine": 40}
	for k, v := range want {
		if c.MSPerQuery[k] != v {
			t.Errorf("%s: got %v ms/query, want %v", k, c.MSPerQuery[k], v)
		}
	}
	if c.Cores["search"] != 1 || c.Cores["machine"] != 2 {
		t.Errorf("cores: got %v", c.Cores)
	}
}

func TestProcTicksSelf(t *testing.T) {
	if _, err := procTicks(os.Getpid()); err != nil {
		t.Fatalf("procTicks of this process: %v", err)
	}
}
