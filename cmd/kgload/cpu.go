package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Per-process CPU: utime+stime of /proc/<pid>/stat (all threads) read before and
// after a level, divided by the requests answered, gives the CPU milliseconds one
// query costs each process. /proc/stat gives the whole machine's busy time, so
// what the listed processes do not account for (other work on the machine) is
// visible too.

// clockTicks is USER_HZ, the unit of /proc times: 100 on every Linux ABI Go runs on.
const clockTicks = 100

// Proc is a process whose CPU is measured.
type Proc struct {
	Name string
	PID  int
	From string // the pid file or "flag"
}

// CPU is the CPU cost of one level.
type CPU struct {
	// MSPerQuery is CPU milliseconds per answered request, per process name, plus
	// "machine" (all CPUs' busy time) and "other" (machine minus the processes).
	MSPerQuery map[string]float64 `json:"ms_per_query"`
	// Cores is the average number of cores busy over the level, same keys.
	Cores map[string]float64 `json:"cores"`
	PIDs  map[string]int     `json:"pids"`
}

// defaultCPUProcs names the stack's processes and where their pids are, under
// the state folder.
func defaultCPUProcs(state string) string {
	return strings.Join([]string{
		"search=" + filepath.Join(state, "run", "search.pid"),
		"kg=" + filepath.Join(state, "run", "kg.pid"),
		"mariadb=" + filepath.Join(state, "mariadb", "run", "mariadbd.pid"),
		"neo4j=" + filepath.Join(state, "neo4j", "run", "kgs-server.pid"),
	}, ",")
}

// parseProcs reads "name=pid-or-pidfile,..." ; a pid file that does not exist is
// skipped (the process is not part of this stack), any other problem is an error.
func parseProcs(spec string) ([]Proc, []string, error) {
	var out []Proc
	var skipped []string
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, where, ok := strings.Cut(item, "=")
		if !ok || name == "" || where == "" {
			return nil, nil, fmt.Errorf("-cpu: %q is not name=pid or name=pidfile", item)
		}
		if pid, err := strconv.Atoi(where); err == nil {
			if pid < 1 {
				return nil, nil, fmt.Errorf("-cpu: %s has pid %d", name, pid)
			}
			out = append(out, Proc{Name: name, PID: pid, From: "flag"})
			continue
		}
		b, err := os.ReadFile(where)
		if errors.Is(err, os.ErrNotExist) {
			skipped = append(skipped, fmt.Sprintf("%s (no %s)", name, where))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("-cpu: %s: %w", name, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid < 1 {
			return nil, nil, fmt.Errorf("-cpu: pid file %s holds %q, not a pid", where, strings.TrimSpace(string(b)))
		}
		out = append(out, Proc{Name: name, PID: pid, From: where})
	}
	return out, skipped, nil
}

// procTicks returns utime+stime of pid in clock ticks.
func procTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStat(string(b))
}

// parseStat reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat
// line; the command name (field 2) is in parentheses and may hold spaces.
func parseStat(s string) (int64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("no command name in /proc stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat has %d fields after the command, want at least 13", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q stime %q are not numbers", f[11], f[12])
	}
	return u + st, nil
}

// machineTicks returns the busy and total ticks of all CPUs from /proc/stat.
func machineTicks() (busy, total int64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseMachine(string(b))
}

func parseMachine(s string) (busy, total int64, err error) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, errors.New("/proc/stat does not start with the cpu line")
	}
	for i, x := range f[1:] {
		if i >= 8 { // guest times are already in user and nice
			break
		}
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat cpu field %q: %w", x, err)
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, nil
}

// cpuSample is a reading of every process and the machine.
type cpuSample struct {
	procs   map[string]int64
	machine int64
	ok      bool
}

func sampleCPU(procs []Proc) cpuSample {
	s := cpuSample{procs: map[string]int64{}}
	for _, p := range procs {
		if t, err := procTicks(p.PID); err == nil {
			s.procs[p.Name] = t
		}
	}
	if busy, _, err := machineTicks(); err == nil {
		s.machine, s.ok = busy, true
	}
	return s
}

// cpuCost turns two samples into the cost per query; a process missing from
// either sample (it exited or restarted) is left out.
func cpuCost(procs []Proc, before, after cpuSample, answered int, elapsedS float64) *CPU {
	c := &CPU{MSPerQuery: map[string]float64{}, Cores: map[string]float64{}, PIDs: map[string]int{}}
	perQ := func(ticks int64) float64 {
		if answered == 0 {
			return 0
		}
		return float64(ticks) * 1000 / clockTicks / float64(answered)
	}
	cores := func(ticks int64) float64 {
		if elapsedS <= 0 {
			return 0
		}
		return float64(ticks) / clockTicks / elapsedS
	}
	var sum int64
	for _, p := range procs {
		b, ok1 := before.procs[p.Name]
		a, ok2 := after.procs[p.Name]
		if !ok1 || !ok2 || a < b {
			continue
		}
		sum += a - b
		c.MSPerQuery[p.Name], c.Cores[p.Name], c.PIDs[p.Name] = perQ(a-b), cores(a-b), p.PID
	}
	if before.ok && after.ok {
		m := after.machine - before.machine
		c.MSPerQuery["machine"], c.Cores["machine"] = perQ(m), cores(m)
		c.MSPerQuery["other"], c.Cores["other"] = perQ(max(m-sum, 0)), cores(max(m-sum, 0))
	}
	return c
}

// cpuOrder lists the keys of a CPU report: the processes in flag order, then
// other and machine.
func cpuOrder(procs []Proc) []string {
	out := make([]string, 0, len(procs)+2)
	for _, p := range procs {
		out = append(out, p.Name)
	}
	return append(out, "other", "machine")
}
