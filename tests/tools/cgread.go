// cgread.go: cgread.c's detector in Go, which makes its system calls
// without libc (the runtime's own openat and statfs), for memcgfs-run's
// tests. Prints the same three lines: group, magic (statfs, fstatfs),
// limit.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
)

func has(list, name string) bool {
	for _, t := range strings.Split(list, ",") {
		if t == name {
			return true
		}
	}
	return false
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "cgread-go: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		fail("%v", err)
	}
	var root, mp string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		halves := strings.SplitN(sc.Text(), " - ", 2)
		if len(halves) != 2 {
			continue
		}
		pre, post := strings.Fields(halves[0]), strings.Fields(halves[1])
		if len(pre) < 5 || len(post) < 3 {
			continue
		}
		if post[0] == "cgroup" && has(post[2], "memory") {
			root, mp = pre[3], pre[4]
		}
	}
	f.Close()
	if mp == "" {
		fail("no cgroup v1 memory mount")
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		fail("%v", err)
	}
	group := ""
	for _, l := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) == 3 && has(parts[1], "memory") {
			group = parts[2]
		}
	}
	if group == "" {
		fail("no memory line in /proc/self/cgroup")
	}
	rel := group
	if root != "/" && strings.HasPrefix(group, root) {
		rel = group[len(root):]
	}
	if rel == "/" {
		rel = ""
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mp, &st); err != nil {
		fail("statfs: %v", err)
	}
	lf, err := os.Open(mp + rel + "/memory.limit_in_bytes")
	if err != nil {
		fail("%v", err)
	}
	var fst syscall.Statfs_t
	if err := syscall.Fstatfs(int(lf.Fd()), &fst); err != nil {
		fail("fstatfs: %v", err)
	}
	buf := make([]byte, 64)
	n, err := lf.Read(buf)
	if err != nil {
		fail("%v", err)
	}
	lf.Close()
	fmt.Printf("group %s\nmagic %x %x\nlimit %s\n", group, st.Type, fst.Type,
		strings.TrimSpace(string(buf[:n])))
}
