/* cgread: what a cgroup v1 detector does, for memcgfs-run's tests (built
 * dynamic, and static so that no libc hook could help it): find the v1
 * memory hierarchy in /proc/self/mountinfo (fstype cgroup, "memory" among
 * its super options), find this process's memory group in
 * /proc/self/cgroup, and print the group, the hierarchy's statfs type
 * (statfs on the mount point, fstatfs on the open limit file) and the
 * group's memory.limit_in_bytes:
 *   group /demo
 *   magic 27e0eb 27e0eb
 *   limit 268435456
 * Exits 1 with a message if any step fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

static int cgread_has(const char *list, const char *name)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!strcmp(t, name))
			return 1;
	return 0;
}

int main(void)
{
	char line[4096], root[1024] = "", mp[1024] = "", group[1024] = "", path[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	struct statfs st, fst;
	long long limit;

	if (!f)
		return perror("mountinfo"), 1;
	while (fgets(line, sizeof(line), f)) {
		char r[1024], m[1024], type[64], src[256], opts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*d %*d %*s %1023s %1023s", r, m) != 2 ||
		    sscanf(sep + 3, "%63s %255s %1023s", type, src, opts) != 3)
			continue;
		if (!strcmp(type, "cgroup") && cgread_has(opts, "memory")) {
			strcpy(root, r);
			strcpy(mp, m);
		}
	}
	fclose(f);
	if (!mp[0])
		return fprintf(stderr, "cgread: no cgroup v1 memory mount\n"), 1;
	if (!(f = fopen("/proc/self/cgroup", "r")))
		return perror("cgroup"), 1;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		if (cgread_has(c1 + 1, "memory")) {
			c2[1 + strcspn(c2 + 1, "\n")] = '\0';
			strcpy(group, c2 + 1);
		}
	}
	fclose(f);
	if (!group[0])
		return fprintf(stderr, "cgread: no memory line in /proc/self/cgroup\n"), 1;
	/* the mount shows ROOT of the hierarchy at MP */
	if (strcmp(root, "/") && !strncmp(group, root, strlen(root)))
		snprintf(path, sizeof(path), "%s%s", mp, group + strlen(root));
	else
		snprintf(path, sizeof(path), "%s%s", mp, strcmp(group, "/") ? group : "");
	if (statfs(mp, &st))
		return perror("statfs"), 1;
	strcat(path, "/memory.limit_in_bytes");
	if (!(f = fopen(path, "r")) || fscanf(f, "%lld", &limit) != 1)
		return perror(path), 1;
	if (fstatfs(fileno(f), &fst))
		return perror("fstatfs"), 1;
	fclose(f);
	printf("group %s\nmagic %lx %lx\nlimit %lld\n", group, (long)st.f_type, (long)fst.f_type,
	       limit);
	return 0;
}
